"""CPython 3.14 (Pyodide): CPython's tests against whole decompiled standard-library modules.

The 3.14 counterpart of ``stdlib_cpython_tests.py``. Pyodide ships no ``test`` package
and cannot start processes, so the tests are those of the newest native CPython here
(3.13's ``test`` package, ``--tests``), and each run is a Node process of its own
(``scripts/pyodide_python.mjs``). Each module M is decompiled under 3.14 from Pyodide's
own source of it; then ``test.test_<M>`` runs twice, on a copy of that source and on the
decompiled one, each first on ``sys.path``, from an empty working directory, with the
repository's ``src`` taken off ``sys.path`` (the child checks that unveil cannot be
imported and where M came from). A module passes when both runs give the same numbers
of tests run, failures, errors and skips; tests written for 3.13 that fail on 3.14 fail
in both runs, so only the comparison counts::

    python benchmarks/pyodide_cpython_tests.py [--modules M ...] [--tests DIR]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# (the package the runner loads: the same variable and default as scripts/pyodide_python.mjs)
PYODIDE = Path(os.environ.get("UNVEIL_PYODIDE_DIR",
                              REPO / ".cache/pyodide/node_modules/pyodide"))
RUNNER = REPO / "scripts/pyodide_python.mjs"

#: Single-file modules whose 3.13 tests load and run in Pyodide (``copy``,
#: ``functools``, ``tokenize`` and ``stat`` do not: their tests fail to load on both).
MODULES = (
    "argparse base64 bisect calendar colorsys configparser contextlib csv dataclasses "
    "difflib enum fnmatch fractions gettext glob graphlib heapq inspect ipaddress keyword "
    "linecache operator plistlib pprint quopri reprlib sched shlex shutil statistics "
    "tempfile textwrap uuid").split()

DECOMPILE = """\
import sys, unveil
std, out = sys.argv[1], sys.argv[2]
for m in sys.argv[3:]:
    with open(f"{std}/{m}.py", encoding="utf-8") as f:
        text = unveil.decompile(compile(f.read(), f"{m}.py", "exec"))
    with open(f"{out}/{m}.py", "w", encoding="utf-8") as f:
        f.write(text)
"""

CHILD = """\
import io, json, os, sys, tempfile, unittest
where, mod, tests = sys.argv[1:4]
os.chdir(tempfile.mkdtemp())
sys.path[:] = [where] + [p for p in sys.path if not p.startswith("/repo")] + [tests]
sys.modules.pop(mod, None)
try:
    import unveil  # noqa: F401
    raise SystemExit("unveil is importable")
except ImportError:
    pass
m = __import__(mod)
assert m.__file__.startswith(where), m.__file__
suite = unittest.defaultTestLoader.loadTestsFromName(f"test.test_{mod}")
r = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
print(json.dumps([r.testsRun, len(r.failures), len(r.errors), len(r.skipped)]))
"""


def _node(*args: str | Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["node", str(RUNNER), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, check=False)


def _counts(run: subprocess.CompletedProcess[str]) -> list[int] | None:
    lines = run.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=MODULES, metavar="M")
    parser.add_argument("--tests", help="a directory holding CPython's test package "
                        "(default: pyenv's 3.13)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    # (pyenv's root as scripts/_lib.sh finds it without ``pyenv``: $PYENV_ROOT, ~/.pyenv)
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    tests = args.tests or next(iter(sorted(glob.glob(
        os.path.join(root, "versions/3.13*/lib/python3.13")))), None)
    if tests is None or not Path(tests, "test").is_dir():
        parser.error("no CPython test package: give --tests DIR (DIR/test/)")
    # (under the repository: the runner mounts a host path given as an argument, and
    # Pyodide's own /tmp is its memory)
    work = REPO / ".cache/pyodide-cpython-tests"
    shutil.rmtree(work, ignore_errors=True)
    orig, dec = work / "original", work / "decompiled"
    orig.mkdir(parents=True)
    dec.mkdir()
    with zipfile.ZipFile(PYODIDE / "python_stdlib.zip") as z:
        for m in args.modules:
            (orig / f"{m}.py").write_bytes(z.read(f"{m}.py"))
    (work / "decompile.py").write_text(DECOMPILE, encoding="utf-8")
    (work / "child.py").write_text(CHILD, encoding="utf-8")
    t0 = time.perf_counter()
    done = _node(work / "decompile.py", orig, dec, *args.modules, timeout=args.timeout * 4)
    if done.returncode:
        print(done.stderr[-2000:], file=sys.stderr)
        return 1
    results = {}
    for m in args.modules:
        base = _counts(_node(work / "child.py", orig, m, tests, timeout=args.timeout))
        ours = _counts(_node(work / "child.py", dec, m, tests, timeout=args.timeout))
        verdict = "same" if base is not None and base == ours else "DIFFERS"
        results[m] = {"original": base, "decompiled": ours, "verdict": verdict}
        print(f"{m:14} {base!s:22} {ours!s:22} {verdict}", flush=True)
    same = sum(r["verdict"] == "same" for r in results.values())
    print(f"{same} of {len(results)} modules: CPython's tests (run/failures/errors/skipped) "
          f"give the same result on the decompiled module; "
          f"{time.perf_counter() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0 if same == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
