"""Rich display in Jupyter: a ``prepare_debug`` dump and ``unveil.explain(fn, *args)``
show as the HTML report (in an ``<iframe srcdoc>``, so its styles and search box stay its
own), and as the summary in plain text."""

from __future__ import annotations

import html
import tempfile
import types
from pathlib import Path
from typing import Any

from .load import Run, load_run


def report_iframe(run: Run, height: int = 640) -> str:
    """The HTML report of ``run`` for a notebook cell."""
    from .html import render

    return (f'<iframe style="width:100%;height:{height}px;border:1px solid #d0d7de" '
            f'srcdoc="{html.escape(render(run), quote=True)}"></iframe>')


class Explanation:
    """What ``torch.compile`` made of one call: the result, the dump, its summary.

    Shown in a notebook as the report; ``str()`` is the terminal summary."""

    def __init__(self, result: Any, dump_dir: Path) -> None:
        self.result = result
        self.dump_dir = dump_dir
        self.run = load_run(dump_dir)

    @property
    def frames(self) -> list[dict[str, Any]]:
        return self.run.frames

    def summary(self) -> str:
        from .summary import summary

        return summary(self.run)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<unveil.Explanation of {len(self.frames)} frame(s) in {self.dump_dir}>"

    def _repr_html_(self) -> str:
        return report_iframe(self.run)


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

    from ..torch.dump import prepare_debug

    target = Path(dump_dir) if dump_dir is not None else Path(
        tempfile.mkdtemp(prefix="unveil_explain_"))
    compiled = torch.compile(_fresh(fn), backend=backend)
    with prepare_debug(target):
        result = compiled(*args, **kwargs)
    return Explanation(result, target)
