"""``unveil.explain(fn, *args)``: compile one function, call it under ``prepare_debug`` and
return what happened, for a notebook cell (shown as the report: :mod:`unveil.report.notebook`)."""

from __future__ import annotations

import tempfile
import types
from pathlib import Path
from typing import Any

from ..report.notebook import Explanation
from .dump import prepare_debug


def _fresh(fn: Any) -> Any:
    """``fn`` with a copy of its code object, so Dynamo compiles it anew (its cache is per
    code object) without resetting the caches of everything else."""
    import torch

    if isinstance(fn, torch.nn.Module):
        forward = fn.forward.__func__
        return types.MethodType(_fresh(forward), fn)
    if isinstance(fn, types.MethodType):
        return types.MethodType(_fresh(fn.__func__), fn.__self__)
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"unveil.explain needs a function, method or nn.Module, not "
                        f"{type(fn).__name__}")
    copy = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def explain(fn: Any, *args: Any, backend: str = "eager", dump_dir: str | Path | None = None,
            **kwargs: Any) -> Explanation:
    """Compile ``fn`` with ``torch.compile(backend=...)``, call it on ``args``/``kwargs``
    under ``prepare_debug`` and return what happened (``.result`` is the call's result)."""
    import torch

    target = Path(dump_dir) if dump_dir is not None else Path(
        tempfile.mkdtemp(prefix="unveil_explain_"))
    compiled = torch.compile(_fresh(fn), backend=backend)
    with prepare_debug(target):
        result = compiled(*args, **kwargs)
    return Explanation(result, target)
