"""The one place that touches PyTorch internals, each with a version check.

PyTorch 2.x: ``torch._dynamo.convert_frame.register_bytecode_hook(hook)`` calls
``hook(code, new_code)`` for every frame Dynamo transforms and installs what the hook
returns (a code object, or None for Dynamo's own); it returns a handle with ``remove()``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import CodeType
from typing import Any

BytecodeHook = Callable[[CodeType, CodeType], "CodeType | None"]


def torch_version() -> str | None:
    """The installed PyTorch version, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    return str(torch.__version__)


def add_bytecode_hook(hook: BytecodeHook) -> Callable[[], None]:
    """Register ``hook`` with Dynamo; returns the function that removes it. On a PyTorch
    without the hook, warns once (one line) and does nothing."""
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook
    except ImportError as exc:  # torch missing, or a PyTorch that moved the hook
        version = torch_version()
        if version is None:
            raise ImportError("unveil.prepare_debug needs PyTorch: pip install torch") from exc
        warnings.warn(f"unveil: PyTorch {version} has no register_bytecode_hook; "
                      "nothing will be dumped", RuntimeWarning, stacklevel=3)
        return lambda: None
    handle: Any = register_bytecode_hook(hook)
    return handle.remove  # type: ignore[no-any-return]


def distributed_rank() -> int | None:
    """This process's rank when ``torch.distributed`` is initialised, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not (dist.is_available() and dist.is_initialized()):
        return None
    return int(dist.get_rank())


def bytecode_logger() -> Any:
    """The logger ``TORCH_LOGS=+bytecode`` turns on (Dynamo's bytecode artifact), or None."""
    try:
        import torch._logging
    except ImportError:
        return None
    try:
        return torch._logging.getArtifactLogger("torch._dynamo.convert_frame", "bytecode")
    except (AttributeError, ValueError):
        return None
