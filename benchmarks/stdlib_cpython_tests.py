"""Run CPython's own test suite against whole decompiled standard-library modules.

For each module M (``textwrap``, the ``json`` package, ``urllib.parse``, ...) every
source file is compiled, decompiled with ``unveil.decompile`` (in this process) and
written to a temporary directory with the stdlib's layout. Then ``test.test_<M>`` runs
with ``unittest`` in a fresh child process of the same interpreter (``-I -S -B``, plus
``-X frozen_modules=off`` on 3.11+, no ``PYTHONPATH``) in which unveil is not importable
(the child checks this), with M removed from ``sys.modules`` and imported again from the
temporary directory (the child checks ``M.__file__``). The same runner, on an unmodified
copy of M's files laid out the same way, gives the baseline; a module passes when its
tests run/fail/error/skip in the same numbers and the same tests fail. Run it with the
interpreter whose standard library and test suite you want::

    PYTHONPATH=src .cache/venv-3.11/bin/python benchmarks/stdlib_cpython_tests.py

Limits: modules imported before M in the child keep references to the original M (few:
``-S`` skips ``site`` and M is imported before ``unittest``, but ``io``'s classes keep the
original ``abc.ABCMeta`` and ``encodings`` the original ``codecs``, for example); tests that start another interpreter
(``script_helper``, command-line tests) import the original M; no test resources
(``-u``) are enabled, as in a plain ``python -m test`` run; the decompiled source has
other line numbers, so a test that checks line numbers inside M would see them change.
A module that still comes from elsewhere after the re-import is reported as
"not shadowed", not as a pass.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import os
import pkgutil
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import CodeType

try:
    import unveil
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import unveil

#: The default selection: pure-Python modules with a test module on 3.10-3.13 whose
#: tests take seconds, not minutes.
DEFAULT_MODULES = (
    "_pydecimal", "abc", "argparse", "ast", "base64", "bisect", "calendar", "collections",
    "colorsys", "configparser", "contextlib", "copy", "csv", "dataclasses", "difflib",
    "email", "enum", "fnmatch", "fractions", "functools", "getopt", "gettext", "glob",
    "graphlib", "gzip", "heapq", "html", "html.parser", "inspect", "ipaddress", "json",
    "keyword", "operator", "optparse", "pathlib", "pickle", "pprint", "quopri", "reprlib",
    "sched", "shlex", "shutil", "statistics", "string", "tarfile", "tempfile", "textwrap",
    "tokenize", "typing", "urllib.parse", "xmlrpc", "zipfile",
)

#: Test modules not named ``test.test_<name with dots as underscores>``.
TEST_NAMES = {
    "urllib.parse": "test.test_urlparse",
    "html.parser": "test.test_htmlparser",
    "http.cookies": "test.test_http_cookies",
    "http.cookiejar": "test.test_http_cookiejar",
    "xml.etree.ElementTree": "test.test_xml_etree",
    "_pydecimal": "test.test_decimal",
    "_pyio": "test.test_io",
    "_pydatetime": "test.test_datetime",
    "_strptime": "test.test_strptime",
    "_collections_abc": "test.test_collections",
}

#: Never tried by ``--all``: the test suite itself, GUI and demo code, 2to3.
EXCLUDE_ALL = frozenset({
    "test", "idlelib", "tkinter", "turtle", "turtledemo", "lib2to3", "ensurepip",
    "antigravity", "this", "__hello__", "__phello__",
})

#: Package directories copied as they are (their files are not decompiled).
DATA_DIRS = frozenset({"test", "tests", "idle_test", "__pycache__"})

VERDICTS = ("same", "DIFFERS", "decompile failed", "not shadowed", "timeout",
            "baseline failed")

#: The child: runs with only the standard library; writes its result file at the end.
RUNNER = r'''
"""stdlib_cpython_tests.py's child: shadow one module, run its CPython tests."""
import sys


def one_line(text, limit=300):
    lines = [s.strip() for s in str(text).strip().splitlines() if s.strip()]
    return (lines[-1] if lines else "")[:limit].replace("\t", " ")


def main(root, name, test_name, out_path):
    lines = []

    def finish(status):
        with open(out_path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        sys.stdout.flush()
        sys.stderr.flush()
        import os
        os._exit(status)

    try:
        import unveil
    except ImportError:
        pass
    else:
        lines.append("fatal\tunveil is importable: " + str(getattr(unveil, "__file__", "")))
        finish(3)
    sys.path.insert(0, root)
    for key in list(sys.modules):
        if key == name or key.startswith(name + "."):
            del sys.modules[key]
    try:
        if "." in name:
            parent_name = name.rpartition(".")[0]
            __import__(parent_name)
            sys.modules[parent_name].__path__.insert(
                0, root + "/" + parent_name.replace(".", "/"))
        __import__(name)
        module = sys.modules[name]
    except BaseException as exc:
        lines.append("import-failed\t" + type(exc).__name__ + ": " + one_line(exc))
        finish(0)
    origin = getattr(module, "__file__", None) or ""
    if not origin.startswith(root + "/"):
        lines.append("not-shadowed\t" + (origin or repr(module)))
        finish(0)

    import unittest
    from test import support
    support.use_resources = []  # as regrtest without -u
    support.verbose = 0
    counts = [0, 0, 0, 0, 0]  # run, failures, errors, skipped, expected failures
    bad = []

    def run_suite(suite):
        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
        counts[0] += result.testsRun
        counts[1] += len(result.failures) + len(result.unexpectedSuccesses)
        counts[2] += len(result.errors)
        counts[3] += len(result.skipped)
        counts[4] += len(result.expectedFailures)
        for kind, pairs in (("failure", result.failures), ("error", result.errors)):
            for test, tb in pairs:
                bad.append(kind + "\t" + test.id() + "\t" + one_line(tb))
        for test in result.unexpectedSuccesses:
            bad.append("failure\t" + test.id() + "\tunexpected success")
        return result

    def run_doctest(module, verbosity=None, optionflags=0):
        import doctest
        run_suite(doctest.DocTestSuite(module, optionflags=optionflags))
        return 0, 0

    try:
        import importlib
        tests = importlib.import_module(test_name)
        if hasattr(tests, "test_main") and not hasattr(tests, "load_tests"):
            support._run_suite = run_suite  # old style (3.10): support.run_unittest
            support.run_doctest = run_doctest
            tests.test_main()
        else:
            run_suite(unittest.defaultTestLoader.loadTestsFromModule(tests))
    except unittest.SkipTest as exc:
        counts[3] += 1
        bad.append("skip\t" + test_name + "\t" + one_line(exc))
    except BaseException as exc:
        counts[2] += 1
        bad.append("error\t" + test_name + "\t" + type(exc).__name__ + ": " + one_line(exc))
    lines.append("counts\t" + " ".join(map(str, counts)))
    lines.extend(bad)
    finish(0)


main(*sys.argv[1:5])
'''


@dataclass
class RunResult:
    """What one child run reported."""

    status: str  # ok, import-failed, not-shadowed, timeout, crashed, fatal, not run
    counts: tuple[int, ...] = ()  # run, failures, errors, skipped, expected failures
    failed: dict[str, str] = field(default_factory=dict)  # test id -> last line
    message: str = ""
    seconds: float = 0.0
    log: str = ""

    def short(self) -> str:
        """``run/fail/err/skip``, or what happened instead."""
        if self.status == "ok":
            return "/".join(map(str, self.counts[:4]))
        return self.status


@dataclass
class ModuleResult:
    """One module's outcome."""

    module: str
    test: str
    verdict: str
    detail: str = ""
    baseline: RunResult | None = None
    decompiled: RunResult | None = None
    decompile_s: float = 0.0
    files: int = 0

    def seconds(self) -> float:
        """Decompiling and both test runs."""
        runs = (r.seconds for r in (self.baseline, self.decompiled) if r)
        return self.decompile_s + sum(runs)

    def newly_failing(self) -> dict[str, str]:
        """Tests that fail on the decompiled module but not on the original."""
        if not (self.baseline and self.decompiled):
            return {}
        return {k: v for k, v in self.decompiled.failed.items() if k not in self.baseline.failed}


@dataclass
class Prepared:
    """A module laid out twice, ready for its two test runs (or a decompile failure)."""

    module: str
    test: str
    work: Path
    decompile_s: float = 0.0
    files: int = 0
    error: str = ""


def stdlib_root() -> Path:
    """The directory of the running interpreter's pure-Python standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def test_name_for(module: str) -> str:
    """The CPython test module for ``module``."""
    return TEST_NAMES.get(module, "test.test_" + module.replace(".", "_"))


def _has_spec(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def source_of(module: str) -> tuple[Path, bool]:
    """The module's ``.py`` file, or its package directory (then True)."""
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.origin == "frozen" and "." not in module:  # 3.11+: abc, os
        spec = importlib.machinery.PathFinder.find_spec(module, [str(stdlib_root())])
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise LookupError(f"{module} is not a pure-Python module here")
    if spec.submodule_search_locations:
        return Path(spec.origin).parent, True
    return Path(spec.origin), False


def all_modules() -> list[str]:
    """Every top-level pure-Python stdlib module that has a CPython test module."""
    names = []
    for info in pkgutil.iter_modules([str(stdlib_root())]):
        if info.name in EXCLUDE_ALL or (info.name.startswith("_")
                                        and info.name not in TEST_NAMES):
            continue
        if _has_spec(test_name_for(info.name)):
            names.append(info.name)
    return sorted(names)


def _one_sentence(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:160]


def lay_out(module: str, lib: Path, decompile: Callable[[CodeType], str] | None) -> int:
    """Write ``module``'s files under ``lib`` in the stdlib's layout; return how many
    were decompiled. ``decompile=None`` copies the originals (the baseline). Raises
    ``RuntimeError`` with one sentence when a file does not decompile or the output does
    not compile."""
    path, is_package = source_of(module)
    rel = Path(*module.split("."))
    if is_package:
        dest_dir = lib / rel
        shutil.copytree(path, dest_dir, ignore=shutil.ignore_patterns("__pycache__"))
        files = [(p, dest_dir / p.relative_to(path)) for p in sorted(path.rglob("*.py"))
                 if not DATA_DIRS & set(p.relative_to(path).parts[:-1])]
    else:
        dest = lib / rel.with_suffix(".py")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        files = [(path, dest)]
    if decompile is None:
        return 0
    count = 0
    for original, dest in files:
        name = dest.relative_to(lib).as_posix()
        try:
            code = compile(original.read_bytes(), str(original), "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue  # data, not code, on this version: keep the original
        try:
            source = decompile(code)
        except Exception as exc:  # noqa: BLE001 - any failure is a verdict
            raise RuntimeError(f"{name}: {_one_sentence(exc)}") from exc
        try:
            compile(source, str(dest), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise RuntimeError(f"{name} does not compile: {_one_sentence(exc)}") from exc
        dest.write_text(source, encoding="utf-8")
        count += 1
    return count


def prepare(module: str, work: Path, *, test: str | None = None,
            decompile: Callable[[CodeType], str] = unveil.decompile) -> Prepared:
    """Lay out the original and the decompiled module under ``work``."""
    prep = Prepared(module, test or test_name_for(module), work)
    lay_out(module, work / "baseline" / "lib", None)
    t0 = time.perf_counter()
    try:
        prep.files = lay_out(module, work / "decompiled" / "lib", decompile)
    except RuntimeError as exc:
        prep.error = str(exc)
    prep.decompile_s = time.perf_counter() - t0
    return prep


def child_command(runner: Path, lib: Path, module: str, test: str, out: Path) -> list[str]:
    """The child's command line: isolated (no site-packages, no unveil, no .pyc files)."""
    flags = ["-I", "-S", "-B"]
    if sys.version_info >= (3, 11):
        flags += ["-X", "frozen_modules=off"]  # so that os, stat, codecs... can be shadowed
    return [sys.executable, *flags, str(runner), str(lib), module, test, str(out)]


def run_tests(lib: Path, module: str, test: str, *, timeout: float) -> RunResult:
    """Run ``test`` in a child with ``module`` imported from ``lib``."""
    side = lib.parent
    cwd, tmp = side / "cwd", side / "tmp"
    cwd.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    runner, out, log = side / "runner.py", side / "result.txt", side / "log.txt"
    runner.write_text(RUNNER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TMPDIR"] = str(tmp)
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(child_command(runner, lib.resolve(), module, test, out),
                                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=fh,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child's leftover processes too
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    seconds = time.perf_counter() - t0
    tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
    if code is None:
        return RunResult("timeout", message=f"no result in {timeout:g} s", seconds=seconds,
                         log=tail)
    if not out.exists():
        return RunResult("crashed", message=f"exit status {code}", seconds=seconds, log=tail)
    result = RunResult("ok", seconds=seconds, log=tail)
    for line in out.read_text(encoding="utf-8").splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "counts":
            result.counts = tuple(int(n) for n in rest.split())
        elif kind in ("failure", "error"):
            test_id, _, message = rest.partition("\t")
            result.failed[test_id] = f"{kind}: {message}"
        elif kind in ("import-failed", "not-shadowed", "fatal"):
            result.status, result.message = kind, rest
    return result


def verdict(prep: Prepared, base: RunResult | None, dec: RunResult | None) -> tuple[str, str]:
    """The verdict and a one-line detail."""
    if prep.error:
        return "decompile failed", prep.error
    assert base is not None and dec is not None
    if "timeout" in (base.status, dec.status):
        which = "baseline" if base.status == "timeout" else "decompiled"
        return "timeout", f"{which}: {(base if which == 'baseline' else dec).message}"
    for side in (base, dec):
        if side.status == "not-shadowed":
            return "not shadowed", f"imported from {side.message}"
    if base.status != "ok":
        return "baseline failed", f"{base.status}: {base.message}"
    if dec.status != "ok":
        return "DIFFERS", f"{dec.status}: {dec.message}"
    if dec.counts[:4] == base.counts[:4] and set(dec.failed) == set(base.failed):
        return "same", ""
    new = sorted(set(dec.failed) - set(base.failed))
    fixed = sorted(set(base.failed) - set(dec.failed))
    parts = []
    if new:
        parts.append(f"{len(new)} more failing, e.g. {new[0]} ({dec.failed[new[0]]})")
    if fixed:
        parts.append(f"{len(fixed)} fail only on the original, e.g. {fixed[0]}")
    if not parts:
        parts.append(f"counts {base.short()} -> {dec.short()}")
    return "DIFFERS", "; ".join(parts)[:300]


def run_prepared(prep: Prepared, *, timeout: float = 300.0) -> ModuleResult:
    """Run the baseline and the decompiled module's tests and compare."""
    base = dec = None
    if not prep.error:
        base = run_tests(prep.work / "baseline" / "lib", prep.module, prep.test,
                         timeout=timeout)
        if base.status == "timeout":  # the decompiled module would only time out too
            dec = RunResult("not run", message="the baseline timed out")
        else:
            dec = run_tests(prep.work / "decompiled" / "lib", prep.module, prep.test,
                            timeout=timeout)
    name, detail = verdict(prep, base, dec)
    return ModuleResult(prep.module, prep.test, name, detail, base, dec, prep.decompile_s,
                        prep.files)


def check_module(module: str, *, timeout: float = 300.0, test: str | None = None,
                 decompile: Callable[[CodeType], str] = unveil.decompile,
                 keep: Path | None = None) -> ModuleResult:
    """Decompile ``module`` and compare its CPython tests with the original's."""
    if keep is not None:
        work = keep / module
        shutil.rmtree(work, ignore_errors=True)
        return run_prepared(prepare(module, work, test=test, decompile=decompile),
                            timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="unveil-cpt-") as tmp:
        return run_prepared(prepare(module, Path(tmp), test=test, decompile=decompile),
                            timeout=timeout)


def run(modules: list[tuple[str, str]], *, jobs: int = 2, timeout: float = 300.0,
        progress: bool = False, keep: Path | None = None) -> list[ModuleResult]:
    """Check ``(module, test module)`` pairs; decompile here, run tests ``jobs`` at a time."""
    results: dict[str, ModuleResult] = {}
    lock = threading.Lock()

    def report(res: ModuleResult) -> None:
        with lock:
            results[res.module] = res
            done = len(results)
        if progress:
            extra = f": {res.detail}" if res.detail and res.verdict != "same" else ""
            print(f"[{done}/{len(modules)}] {res.module}: {res.verdict} "
                  f"({res.seconds():.1f} s){extra}"[:300], file=sys.stderr, flush=True)

    root = keep or Path(tempfile.mkdtemp(prefix="unveil-cpt-"))
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = []
            for module, test in modules:
                work = root / module
                shutil.rmtree(work, ignore_errors=True)
                prep = prepare(module, work, test=test)  # unveil runs in this thread only
                if prep.error:
                    report(run_prepared(prep))
                    continue
                fut = pool.submit(run_prepared, prep, timeout=timeout)
                fut.add_done_callback(lambda f: report(f.result()))
                futures.append(fut)
            for fut in futures:
                fut.result()
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return [results[m] for m, _ in modules]


def format_table(results: list[ModuleResult]) -> str:
    """The table and the totals line."""
    rows = [("module", "baseline", "decompiled", "verdict", "time")]
    for r in results:
        detail = f": {r.detail}" if r.detail and r.verdict != "same" else ""
        rows.append((r.module, r.baseline.short() if r.baseline else "-",
                     r.decompiled.short() if r.decompiled else "-",
                     f"{r.verdict}{detail}"[:160], f"{r.seconds():.1f} s"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"unveil vs CPython's tests: Python {sys.version.split()[0]} "
             "(counts: run/failures/errors/skipped)"]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True))
                     + "  " + row[4].rjust(8))
    tally = Counter(r.verdict for r in results)
    others = ", ".join(f"{k} {tally[k]}" for k in VERDICTS[1:] if tally[k])
    lines.append(f"{tally['same']} of {len(results)} modules: CPython's tests give the same "
                 f"result on the decompiled module" + (f" ({others})" if others else ""))
    return "\n".join(lines)


def to_json(results: list[ModuleResult], wall_s: float) -> dict[str, object]:
    """Everything, JSON-ready (logs cut to their tails)."""
    tally = Counter(r.verdict for r in results)
    return {
        "python": sys.version.split()[0], "executable": sys.executable,
        "modules": len(results), "same": tally["same"], "verdicts": dict(tally),
        "wall_s": round(wall_s, 1),
        "results": [dict(asdict(r), newly_failing=r.newly_failing(),
                         seconds=round(r.seconds(), 2)) for r in results],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 0 unless the arguments are bad."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", "-m", nargs="+", metavar="NAME[=TEST]",
                        help="modules to check, optionally with their test module "
                             f"(default: a selection of {len(DEFAULT_MODULES)})")
    parser.add_argument("--all", action="store_true",
                        help="every top-level stdlib module with a test.test_<name>")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="test runs at a time (2)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="S",
                        help="seconds allowed per test run of a module (300)")
    parser.add_argument("--json", metavar="OUT", help="write every result as JSON")
    parser.add_argument("--keep", metavar="DIR", help="keep the laid-out modules, "
                        "results and logs in DIR (DIR/<module>/{baseline,decompiled})")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.all and args.modules:
        parser.error("--all and --modules exclude each other")
    if not _has_spec("test.support"):
        parser.error("this Python has no test package (CPython's test suite)")

    if args.all:
        names = [(m, test_name_for(m)) for m in all_modules()]
    else:
        names = []
        for item in args.modules or DEFAULT_MODULES:
            module, _, test = item.partition("=")
            names.append((module, test or test_name_for(module)))
    pairs, missing = [], []
    for module, test in names:
        try:
            source_of(module)
        except (LookupError, ImportError, ValueError):
            missing.append(f"{module} (no pure-Python module)")
            continue
        if not _has_spec(test):
            missing.append(f"{module} (no {test})")
            continue
        pairs.append((module, test))
    if args.modules and missing:
        parser.error("not on this Python: " + ", ".join(missing))

    t0 = time.perf_counter()
    results = run(pairs, jobs=args.jobs, timeout=args.timeout, progress=not args.quiet,
                  keep=Path(args.keep).resolve() if args.keep else None)
    wall = time.perf_counter() - t0
    print(format_table(results))
    if missing:
        print(f"not on this Python: {', '.join(missing)}")
    print(f"wall time {wall:.0f} s with {args.jobs} jobs")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(to_json(results, wall), fh, indent=1)
            fh.write("\n")
        print(f"json: {args.json}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
