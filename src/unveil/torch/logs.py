"""``unveil.install()`` / ``unveil.uninstall()``: with ``TORCH_LOGS=+bytecode``, Dynamo's
log shows the decompiled source of each transformed frame next to its bytecode. The
program keeps running Dynamo's own code."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import CodeType

from ..errors import UnveilError
from . import _dynamo

_remove: Callable[[], None] | None = None


def _log_source(code: CodeType, new_code: CodeType, *_: object, **__: object) -> None:
    log = _dynamo.bytecode_logger()
    if log is None or not log.isEnabledFor(logging.DEBUG):
        return None
    from ..decompiler.api import decompile

    where = f"{code.co_name} {code.co_filename} line {code.co_firstlineno}"
    try:
        source = decompile(new_code)
    except (UnveilError, RecursionError) as exc:
        log.debug("unveil could not decompile the MODIFIED BYTECODE of %s: %s", where, exc)
        return None
    log.debug("DECOMPILED SOURCE (unveil) of the MODIFIED BYTECODE %s\n%s", where, source)
    return None


def install() -> None:
    """Log the decompiled source of every frame Dynamo transforms (``TORCH_LOGS=+bytecode``
    shows it). Installing twice is the same as once."""
    global _remove
    if _remove is None:
        _remove = _dynamo.add_bytecode_hook(_log_source)


def uninstall() -> None:
    """Stop logging decompiled source."""
    global _remove
    if _remove is not None:
        _remove()
        _remove = None
