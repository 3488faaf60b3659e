"""The ``unveil`` command line: ``decompile``, ``check``, ``run`` and ``report``.

Every bad input ends with one sentence on stderr and exit status 2; a function the
decompiler cannot handle gives exit status 1; nothing prints a traceback unless
``--debug`` is given.

To add a subcommand, write ``_configure_x(parser)`` and ``_run_x(args) -> int`` and append
one :class:`Command` to :data:`COMMANDS` at the bottom of this file.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import textwrap
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, NoReturn, TextIO

from . import __version__
from .bytecode.pyc import load_pyc
from .errors import BadInputError, DecompilationError

if TYPE_CHECKING:
    from .report.load import Run
    from .verify.foreign import PycCheck
    from .verify.report import CheckReport

class UsageError(Exception):
    """A bad command line (argparse's complaint, turned into one sentence)."""


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


def _this_python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


# --------------------------------------------------------------------------- loading


def _compile_source(path: Path) -> CodeType:
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise BadInputError(f"{path} does not compile: {exc.msg}{where}") from None
    except ValueError as exc:  # e.g. null bytes
        raise BadInputError(f"{path} does not compile: {exc}") from None


def _import(modname: str) -> object:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: local modules are importable
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        raise BadInputError(f"cannot import module {modname!r}: {exc}") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the module's own failure
        raise BadInputError(
            f"importing module {modname!r} raised {type(exc).__name__}: {exc}") from None


def _lookup(modname: str, qualname: str) -> object:
    obj = _import(modname)
    done = modname
    for part in qualname.split("."):
        if part == "<locals>":
            raise BadInputError(
                f"{done} has local objects that cannot be reached by name; "
                f"decompile {done} itself instead")
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BadInputError(f"{done} has no attribute {part!r}") from None
        except Exception as exc:  # noqa: BLE001 - a property or __getattr__ raising
            raise BadInputError(
                f"getting {part!r} from {done} raised {type(exc).__name__}: {exc}") from None
        done = f"{done}.{part}"
    return obj


def _is_dotted_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def load_target(target: str) -> object:
    """Turn a decompile TARGET (file.py, file.pyc, module:qualname, module) into an object."""
    path = Path(target)
    if path.is_dir():
        raise BadInputError(
            f"{target} is a directory; decompile takes a .py file, a .pyc file or "
            f"module:qualname (use 'unveil check' for a directory)")
    if target.endswith(".pyc") or (path.is_file() and path.suffix == ".pyc"):
        if not path.exists():
            raise BadInputError(f"no such file: {target}")
        return load_pyc(path)
    if path.is_file():
        return _compile_source(path)
    if ":" in target:
        modname, _, qualname = target.partition(":")
        if not _is_dotted_name(modname) or not all(
                p.isidentifier() or p == "<locals>" for p in qualname.split(".")):
            raise BadInputError(f"{target} is neither a file nor of the form module:qualname")
        return _lookup(modname, qualname)
    if target.endswith(".py") or os.sep in target or not _is_dotted_name(target):
        raise BadInputError(f"no such file: {target}")
    spec = _find_spec(target)
    origin = spec.origin
    if origin == "frozen":
        origin = getattr(spec.loader_state, "filename", None)
    if not origin or not origin.endswith(".py") or not os.path.isfile(origin):
        raise BadInputError(f"module {target!r} has no Python source file to decompile")
    return _compile_source(Path(origin))


def _find_spec(name: str) -> importlib.machinery.ModuleSpec:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a parent package failing
        raise BadInputError(f"cannot find module {name!r}: {exc}") from None
    if spec is None:
        raise BadInputError(f"{name} is not a file, and no module of that name exists")
    return spec


# --------------------------------------------------------------------------- output


def _use_color(choice: str, stream: TextIO) -> bool:
    if choice == "never":
        return False
    if choice == "always":
        return True
    return bool(stream.isatty()) and not os.environ.get("NO_COLOR")


def highlight(source: str, stream: TextIO, color: str = "auto") -> str:
    """Return ``source`` syntax-highlighted for ``stream`` when wanted and possible."""
    if not _use_color(color, stream):
        return source
    try:
        from pygments import highlight as _highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return source
    return _highlight(source, PythonLexer(), TerminalFormatter())


# --------------------------------------------------------------------------- decompile


def _configure_decompile(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET",
                   help="file.py, file.pyc (of this Python), module:qualname or a module")
    p.add_argument("-o", "--output", metavar="FILE", help="write the source to FILE")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="syntax highlighting (auto: when stdout is a terminal)")


def _run_decompile(args: argparse.Namespace) -> int:
    obj = load_target(args.target)
    import unveil

    source = unveil.decompile(obj)
    if not source.endswith("\n"):
        source += "\n"
    if args.output:
        try:
            Path(args.output).write_text(source, encoding="utf-8")
        except OSError as exc:
            raise BadInputError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        return 0
    sys.stdout.write(highlight(source, sys.stdout, args.color))
    sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------- check


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not at least 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds >= 0")
    return value


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("targets", metavar="TARGET", nargs="+",
                   help="file.py, file.pyc, directory or importable module name")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter of a .pyc's version, which compiles what was "
                        "decompiled (default: pythonX.Y on the path, or pyenv's)")
    p.add_argument("-j", "--jobs", type=_positive_int, default=os.cpu_count() or 1,
                   help="worker processes (default: number of CPUs)")
    p.add_argument("--json", metavar="FILE", help="write the full report as JSON to FILE")
    p.add_argument("--show-diffs", action="store_true",
                   help="print the bytecode diff of each function that differs")
    p.add_argument("--timeout", type=_seconds, default=10.0, metavar="S",
                   help="seconds allowed per function (default 10; 0: no limit)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any function differs, not only when one fails")
    p.add_argument("--exclude", action="append", default=[], metavar="DIR",
                   help="skip directories with this name (repeatable)")
    p.add_argument("--max-lines", type=int, default=50, metavar="N",
                   help="print at most N non-identical functions (0: all; default 50)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _check_pycs(paths: list[str], python: str | None, details: bool, jobs: int,
                progress: bool = True) -> list[PycCheck]:
    """Each ``.pyc`` checked by the interpreter of its version (in ``jobs`` processes),
    and its lines printed in order: one for the file, one per code object that differs
    (``details``: with its listing's diff); with ``progress`` and several files, a
    progress line on stderr (files done, how many whole files are identical, the rate)."""
    from itertools import repeat

    from .verify.foreign import check_pyc
    from .verify.report import Progress

    bar = Progress(len(paths), progress and len(paths) > 1, unit="files")

    def shown(found: PycCheck) -> PycCheck:
        bar.clear()
        _print_pyc(found)
        file = found.file
        bar.update("failed" if file.failed else
                   "identical" if file.whole_file_identical else "differs")
        bar.redraw()
        return found

    try:
        if jobs <= 1 or len(paths) <= 1 or sys.platform == "emscripten":
            return [shown(check_pyc(p, python, details)) for p in paths]
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(jobs, len(paths))) as pool:
            return [shown(found) for found in
                    pool.map(check_pyc, paths, repeat(python), repeat(details))]
    finally:
        bar.close()


def _print_pyc(found: PycCheck) -> PycCheck:
    path = found.file.path
    failed = next((r for r in found.results if r.status == "failed"), None)
    if failed is not None:
        line = f"{_display(path)}: failed: {failed.message}"
    else:
        version = ".".join(map(str, found.version))
        line = (f"{_display(path)}: {found.file.identical} of {found.file.functions} code "
                f"objects identical")
        if found.file.whole_file_identical:
            line += " (the whole file)"
        line += f" (checked by Python {version}: {found.python})"
        for r in found.results:
            if r.status == "differs":
                line += f"\n  differs: {r.qualname}: {r.message}"
                if r.detail:
                    line += "\n" + textwrap.indent(r.detail, "    ")
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return found


def _run_check(args: argparse.Namespace) -> int:
    from .verify.batch import check_targets
    from .verify.report import CheckReport
    from .verify.targets import pyc_files

    started = time.perf_counter()
    pycs = _check_pycs(pyc_files(args.targets, exclude=args.exclude), args.python,
                       args.show_diffs, args.jobs, progress=not args.quiet)
    pyc_s = time.perf_counter() - started
    rest = [t for t in args.targets if not t.endswith(".pyc")]
    report = check_targets(rest, jobs=args.jobs, progress=not args.quiet,
                           timeout=args.timeout or None, exclude=args.exclude,
                           details=args.show_diffs) if rest else CheckReport()
    if not report.files:  # (each .pyc's lines are printed: the JSON report has them all)
        _add_pycs(report, pycs, pyc_s)
        if len(pycs) > 1:
            sys.stdout.write(report.summary() + "\n")
        _write_json(report, args.json)
        return 1 if report.failed or (args.strict and report.differs) else 0
    out = sys.stdout
    bad = [r for r in report.results if r.status != "identical"]
    shown = bad if args.max_lines <= 0 else bad[:args.max_lines]
    for r in shown:
        label = r.status if r.reason is None else f"{r.status} ({r.reason})"
        out.write(f"{_display(r.file)}:{r.line} {r.qualname}: {label}: {r.message}\n")
        if args.show_diffs and r.detail:
            out.write("".join(f"    {line}\n" for line in r.detail.splitlines()))
    if len(shown) < len(bad):
        out.write(f"... and {len(bad) - len(shown)} more non-identical functions "
                  f"(--max-lines 0 shows all, --json FILE writes all)\n")
    for f in report.files:
        if f.error:
            out.write(f"{_display(f.path)}: skipped: {f.error}\n")
    per_file = Counter(r.file for r in bad)
    if len(per_file) > 1:
        out.write("files with the most non-identical functions:\n")
        by_path = {f.path: f for f in report.files}
        for path, _ in per_file.most_common(10):
            f = by_path[path]
            out.write(f"  {_display(path)}: {f.functions} functions, {f.identical} identical, "
                      f"{f.differs} differ, {f.failed} failed\n")
    _add_pycs(report, pycs, pyc_s)
    out.write(report.summary() + "\n")
    _write_json(report, args.json)
    return 1 if report.failed or (args.strict and report.differs) else 0


def _add_pycs(report: CheckReport, pycs: list[PycCheck], seconds: float) -> None:
    report.wall_s += seconds
    for found in pycs:
        report.files.append(found.file)
        report.results.extend(found.results)


def _write_json(report: CheckReport, path: str | None) -> None:
    if path:
        try:
            report.write_json(path)
        except OSError as exc:
            raise BadInputError(f"cannot write {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- main


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, one-line help, argument setup and handler."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# Add `run` and `report` here.
COMMANDS: list[Command] = [
    Command("decompile", "print the Python source of a file, .pyc or module:qualname",
            _configure_decompile, _run_decompile),
    Command("check", "decompile and recompile every function, compare the bytecode",
            _configure_check, _run_check),
]


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dump", default="unveil_dump", metavar="DIR",
                   help="where to dump (default: ./unveil_dump)")
    p.add_argument("--backend", default=None,
                   help="make every torch.compile in the script use this backend")
    p.add_argument("--no-report", action="store_true", help="do not write report.html")
    p.add_argument("--faithful", action="store_true",
                   help="write each transformed frame statement for statement, not simplified")
    p.add_argument("--record", action="store_true",
                   help="unveil.record instead of prepare_debug: Dynamo's own code runs and "
                        "the files are written after the script ends (no cost while it runs)")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")


def _run_run(args: argparse.Namespace) -> int:
    from .runner import run_script

    try:
        import torch  # noqa: F401
    except ImportError:
        raise BadInputError("unveil run needs PyTorch: pip install torch") from None
    return run_script(args.script, args.args, args.dump, args.backend,
                      report=not args.no_report, simplify=not args.faithful,
                      record=args.record)


def _configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("dump", metavar="DIR", help="a directory unveil run or prepare_debug "
                                               "dumped into")
    p.add_argument("-o", "--output", default=None,
                   help="where to write the report (default: DIR/report.html)")
    p.add_argument("--no-html", action="store_true", help="do not write the HTML report")
    p.add_argument("--quiet", action="store_true", help="do not print the summary")


def _complete(dump: str) -> list[str]:
    """Write the files of what ``unveil.record`` kept in ``dump`` (if anything); one
    sentence (also printed) per recording that could not be."""
    if not Path(dump).is_dir():
        return []
    from .torch.record import complete

    problems = complete(Path(dump))[1]
    for problem in problems:
        _fail(problem, 0)
    return problems


def _with_notes(run: Run, notes: list[str]) -> Run:
    """``run`` with ``notes`` (what could not be read) among its first dump's notes."""
    if notes and run.ranks:
        run.ranks[0].notes.extend(notes)
    return run


def _run_report(args: argparse.Namespace) -> int:
    from .report.html import write_report
    from .report.load import load_run
    from .report.summary import summary

    problems = _complete(args.dump)
    run = _with_notes(load_run(args.dump), problems)
    out = None
    try:
        if not args.no_html:
            out = str(write_report(run, args.output))
    except OSError as exc:
        raise BadInputError(f"cannot write the report {args.output or 'report.html'!r}: "
                            f"{exc.strerror or exc}") from None
    if not args.quiet:
        sys.stdout.write(summary(run, str(out)))
    return 0


COMMANDS.extend([
    Command("run", "run a script under unveil.prepare_debug; summary and HTML report",
            _configure_run, _run_run),
    Command("report", "write the HTML report of a dump directory and print its summary",
            _configure_report, _run_report),
])


def _configure_diff(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="DIR_A", help="a dump directory (the old run)")
    p.add_argument("new", metavar="DIR_B", help="a dump directory (the new run)")
    p.add_argument("--html", metavar="PATH", default=None,
                   help="also write the whole comparison as one HTML page")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the verdict")


def _run_diff(args: argparse.Namespace) -> int:
    """Exit 0 when the dumps are the same (once normalised), 1 when they differ."""
    from .report.diff import compare, html_report, text_report
    from .report.load import load_run

    old_problems, new_problems = _complete(args.old), _complete(args.new)
    result = compare(_with_notes(load_run(args.old), old_problems),
                     _with_notes(load_run(args.new), new_problems), args.old, args.new)
    if args.html:
        try:
            Path(args.html).write_text(html_report(result), encoding="utf-8")
        except OSError as exc:
            raise BadInputError(f"cannot write {args.html}: {exc.strerror or exc}") from None
    sys.stdout.write(text_report(result, quiet=args.quiet, html_path=args.html))
    return 0 if result.same else 1


COMMANDS.append(Command("diff", "compare two dump directories: frames, graphs, code, guards, "
                                "graph breaks, recompiles", _configure_diff, _run_diff))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per entry of :data:`COMMANDS`."""
    parser = _Parser(prog="unveil", description="A Python bytecode decompiler.")
    parser.add_argument("--version", action="version", version=f"unveil {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks of unexpected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        command.configure(p)
        p.set_defaults(_run=command.run)
    return parser


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"unveil: {message}\n")
    sys.stderr.flush()
    return status


INTERRUPTED = 130  # what a shell reports for a process killed by SIGINT (Ctrl-C)
_interrupted = False  # the last main() ended with Ctrl-C


def console_main() -> NoReturn:
    """``unveil`` and ``python -m unveil``: exit with main()'s status; after Ctrl-C, end as
    Python does after an uncaught ``KeyboardInterrupt`` (killed by SIGINT once
    finalised, 130 in a shell), the traceback already printed."""
    status = main()
    if _interrupted:
        sys.excepthook = lambda *_: None  # (printed already)
        raise KeyboardInterrupt
    raise SystemExit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    global _interrupted
    _interrupted = False
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _Exit as exc:
        return exc.status
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    if args.command is None:
        names = ", ".join(c.name for c in COMMANDS)
        return _fail(f"choose a command: {names} (see 'unveil --help')", 2)
    try:
        return args._run(args)
    except KeyboardInterrupt as exc:
        from .runner import ScriptInterrupted

        if not isinstance(exc, ScriptInterrupted):  # (the script's traceback says it all)
            _fail("interrupted", INTERRUPTED)
        _interrupted = True
        return INTERRUPTED
    except BadInputError as exc:
        return _fail(str(exc), 2)
    except DecompilationError as exc:
        return _fail(f"could not decompile {getattr(args, 'target', '')}: {exc}", 1)
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - one sentence unless --debug
        if args.debug:
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} "
                     f"(run 'unveil --debug ...' for the traceback)", 1)
