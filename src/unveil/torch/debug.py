"""``unveil.debug()``: run code so that breakpoints set in the files of the last
``prepare_debug`` dump (transformed code, and graph code with the eager and aot_eager
backends) are hit, in pdb or in an IDE's debugger (VS Code through debugpy)."""

from __future__ import annotations

import sys
from types import TracebackType

from ..errors import BadInputError
from .dump import last_dump, prepare_debug


def _debugger_attached() -> bool:
    """An IDE's debugger (debugpy) or a trace function (pdb, coverage) is active."""
    debugpy = sys.modules.get("debugpy")
    if debugpy is not None:
        try:
            if debugpy.is_client_connected():
                return True
        except Exception:  # noqa: BLE001 (an old debugpy: assume none)
            pass
    return sys.gettrace() is not None


class debug:  # noqa: N801 (a context manager named like the function its users call)
    """Run the body with the dump of the last ``prepare_debug`` in force.

    Frames compiled inside are dumped to the same directory. Without a debugger attached,
    entering stops in pdb (``pause=True``, the default then) so breakpoints can be set in
    the dumped files (``b /dump/__transformed_code_0_for_f.py:5``, then ``c``). With VS Code
    (debugpy) attached, set them in the editor: in the files of the previous run (a new
    run of the program writes the same names), or with ``pause=True``, which stops in the
    IDE once the files exist. ``pause=False`` never stops.
    """

    def __init__(self, *, pause: bool | None = None) -> None:
        self.pause = pause
        self._dump: prepare_debug | None = None
        self._paused = False

    def __enter__(self) -> debug:
        dump = last_dump()
        if dump is None:
            raise BadInputError("unveil.debug() needs a dump: run the code once under "
                                "`with unveil.prepare_debug(dump_dir):` first")
        if not dump.active:
            dump.__enter__()
            self._dump = dump
        files = sorted(p.name for p in dump.dump_dir.glob("*.py"))
        print(f"unveil.debug: breakpoints in the {len(files)} files in {dump.dump_dir} are hit "
              f"from here on (the code that runs is compiled from them)", file=sys.stderr)
        attached = _debugger_attached()
        pause = (not attached) if self.pause is None else self.pause
        if pause:
            print("unveil.debug: set breakpoints in those files (b FILE:LINE), then continue "
                  "(c)", file=sys.stderr)
            # Only a pdb session this starts is ended at exit; an IDE's tracer stays.
            self._paused = not attached and sys.breakpointhook is sys.__breakpointhook__
            breakpoint()  # noqa: T100 (the point of this function)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._paused:
            sys.settrace(None)  # the pdb session this started ends with the block
        if self._dump is not None:
            self._dump.__exit__(exc_type, exc, tb)
            self._dump = None
