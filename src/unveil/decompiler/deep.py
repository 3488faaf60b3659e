"""How one whole decompile runs: with room for deep recursion, the cyclic collector paused.

The phases walk expression trees recursively, as ``ast.unparse`` and ``compile`` do. A
long chain (``a + b + ...`` with a thousand terms, a long ``elif`` chain, a 300-term
comparison) nests deeper than Python's default recursion limit, though CPython compiles
it. Such input is run a second time in a thread with a large stack and a raised limit;
only where that is impossible (no threads, as in Pyodide) or not enough does it end in
one :class:`DecompilationError`.

The decompiler allocates many small objects that live until the decompile ends (the
graph, the IR, the trees) and makes almost no cyclic garbage, so the cyclic collector's
passes over them find nothing and cost more the larger the function: a quarter to a
third of the time of a 20,000-line function, 3% of the standard library's. It is paused for the
decompile (as mypy raises its thresholds for a build) and set back as it was after;
garbage cycles made meanwhile are collected then.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ..errors import DecompilationError

T = TypeVar("T")

# frames the retry may use, and the stack they get (3.10 keeps every Python frame on
# the C stack; reserved, not touched, until used)
DEEP_LIMIT = 200_000
DEEP_STACK = 1024 * 1024 * 1024
_NO_THREADS = ("emscripten", "wasi")


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside, as it was after (a nested use, or one
    where it was off already, leaves it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def with_room(work: Callable[[], T], what: str) -> T:
    """``work()``, the collector paused; if it runs out of recursion, ``work()`` again
    with room for ``DEEP_LIMIT`` frames. ``what`` names the input for the error."""
    with collector_paused():
        return _with_room(work, what)


def _with_room(work: Callable[[], T], what: str) -> T:
    try:
        return work()
    except RecursionError:
        pass
    if sys.platform in _NO_THREADS:
        raise DecompilationError(f"{what} is nested too deeply to decompile on this "
                                 "platform (no threads for a larger stack)") from None
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, DEEP_LIMIT))
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome.append((False, exc))
        finally:
            sys.setrecursionlimit(old)

    size = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK)
        thread = threading.Thread(target=run, name="unveil-deep", daemon=True)
        thread.start()
    except (RuntimeError, ValueError, MemoryError):
        raise DecompilationError(f"{what} is nested too deeply to decompile (no thread "
                                 "with a larger stack could be started)") from None
    finally:
        threading.stack_size(size)
    thread.join()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[return-value]  # the worker's result
    if isinstance(value, RecursionError):
        raise DecompilationError(f"{what} is nested more than {DEEP_LIMIT:,} levels "
                                 "deep") from None
    raise value  # type: ignore[misc]  # the worker's exception
