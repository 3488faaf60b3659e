"""``unveil run script.py [args]``: run an unmodified script under ``prepare_debug`` (like
``TORCH_COMPILE_DEBUG=1``, no code change), then print a summary and write the HTML
report. The script's exit status is the command's; a script that raises keeps its
traceback, and what was dumped until then is still summarised."""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from pathlib import Path

from .errors import BadInputError


def _exit_status(code: object) -> int:
    """What ``sys.exit(code)`` makes the process exit with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


class ScriptInterrupted(KeyboardInterrupt):
    """The script ended with ``KeyboardInterrupt`` (Ctrl-C), its traceback printed: the
    process should end as Python's does then (killed by SIGINT, status 130 in a shell)."""


def _print_traceback(exc: BaseException, script: str) -> None:
    """Print ``exc``'s traceback as ``python script`` would: from the script's frame on,
    without the frames of unveil and runpy that ran it."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__)


def run_script(script: str, args: list[str], dump: str, backend: str | None = None,
               report: bool = True, simplify: bool = True, record: bool = False) -> int:
    """Run ``script`` with ``args`` as ``__main__`` under ``prepare_debug(dump,
    simplify=simplify)`` (``record``: under ``unveil.record``, the files written after the
    script ends); print the summary (and write the report); return the script's
    exit status. Raises :class:`ScriptInterrupted` after the summary when the script was
    interrupted (Ctrl-C)."""
    path = Path(script)
    if not path.is_file():
        raise BadInputError(f"{script!r} is not a file: give the Python script to run")
    from .torch import _dynamo
    from .torch.dump import prepare_debug
    from .torch.record import record as recorder

    rank = _dynamo.distributed_rank()
    debug = (recorder(dump, finish="exit", simplify=simplify) if record
             else prepare_debug(dump, simplify=simplify))
    old_argv, old_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args]
    main = os.path.abspath(path)  # __main__.__file__, as python gives it
    sys.path.insert(0, str(path.resolve().parent))  # as `python script.py` does
    status, interrupted = 0, False
    try:
        with debug, _dynamo.forced_backend(backend):
            try:
                runpy.run_path(main, run_name="__main__")
            except SystemExit as exc:
                status = _exit_status(exc.code)
            except BaseException as exc:  # the script's own error: its traceback, as python shows
                _print_traceback(exc, main)
                status, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    _report(Path(dump), rank, report)
    if interrupted:
        raise ScriptInterrupted
    return status


def _report(dump: Path, rank: int | None, report: bool) -> None:
    """Summarise (and report) the dump. With several ranks, rank 0 waits for the others'
    manifests (``WORLD_SIZE``), then writes one report across them."""
    from .report.html import write_report
    from .report.load import load_run
    from .report.summary import summary

    if rank not in (None, 0):
        return  # rank 0 reports for all
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if rank == 0 and world > 1:
        deadline = time.monotonic() + float(os.environ.get("UNVEIL_RANK_WAIT", "120"))
        while time.monotonic() < deadline:
            done = [r for r in range(world) if any((dump / f"rank_{r}").glob("manifest*.json"))]
            if len(done) == world:
                break
            time.sleep(0.2)
    try:
        run = load_run(dump)
    except BadInputError as exc:
        print(f"unveil: {exc}", file=sys.stderr)
        return
    out = None
    if report:
        try:
            out = str(write_report(run))
        except OSError as exc:
            print(f"unveil: cannot write the report in {str(dump)!r}: {exc}", file=sys.stderr)
    print(summary(run, out), end="", file=sys.stderr)
