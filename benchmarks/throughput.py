"""Throughput: decompile the whole standard library of the running Python, once.

Every module of the standard library (the same selection as ``stdlib_roundtrip.py``) is
compiled and its module code object decompiled with ``unveil.decompile``: one call per
file, which decompiles every function, class and comprehension in it. Reported: the time
spent in ``unveil.decompile`` in total and per file (p50/p99, slowest files), against
``compile()`` of the same files measured in the same run as the baseline. A small module
is decompiled first, untimed, so that loading the decompiler is not counted against the
first file.

    PYTHONPATH=src python benchmarks/throughput.py            # one process
    PYTHONPATH=src python benchmarks/throughput.py --jobs 2   # split the files over 2

The targets: at most 60 s of wall time for a whole version on this 2-core machine (issue 2);
at most 12x ``compile()`` (issue 45).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

try:
    import unveil
except ImportError:  # a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import unveil

EXCLUDED = {"test", "tests", "idle_test", "idlelib", "tkinter", "lib2to3", "turtledemo",
            "site-packages", "dist-packages"}


def stdlib_files(root: Path) -> list[Path]:
    """The standard library's ``.py`` files, without tests and GUI packages."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED)
        out += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py")]
    return out


_WARM_UP = """\
import os
def f(a, *b, c=1, **d):
    try:
        with open(a) as g:
            return [x for x in g if x or c] + {k: v for k, v in d.items()}
    except OSError as e:
        raise ValueError(f"{a!r}") from e
class C:
    y: int = 2
"""


def warm_up() -> None:
    """Decompile a small module once, outside the timing: what unveil imports on first use
    (``unveil.decompile`` loads the decompiler lazily) is not a cost per file; nor is
    ``compile()``'s first call counted."""
    unveil.decompile(compile(_WARM_UP, "<warm-up>", "exec", dont_inherit=True))


def measure(path: Path) -> tuple[str, float, float, str | None]:
    """(file, compile seconds, decompile seconds, error) for one file."""
    try:
        source = path.read_text(encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            code = compile(source, str(path), "exec", dont_inherit=True)
            t1 = time.perf_counter()
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return str(path), 0.0, 0.0, "does not compile"
    try:
        t1 = time.perf_counter()
        unveil.decompile(code)
        t2 = time.perf_counter()
    except Exception as exc:  # noqa: BLE001 - counted and reported
        return str(path), t1 - t0, time.perf_counter() - t1, f"{type(exc).__name__}: {exc}"
    return str(path), t1 - t0, t2 - t1, None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", "-j", type=int, default=1, help="processes (1)")
    parser.add_argument("--stdlib", type=Path, default=Path(os.__file__).parent,
                        help="standard library directory (default: the running one)")
    parser.add_argument("--json", type=Path, help="write the numbers as JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    args = parser.parse_args(argv)

    files = stdlib_files(args.stdlib)
    started = time.perf_counter()
    warm_up()
    results: list[tuple[str, float, float, str | None]] = []
    if args.jobs > 1 and sys.platform not in ("emscripten", "wasi"):
        with ProcessPoolExecutor(args.jobs, initializer=warm_up) as pool:
            for i, r in enumerate(pool.map(measure, files, chunksize=4), 1):
                results.append(r)
                if not args.quiet and i % 50 == 0:
                    print(f"\r{i}/{len(files)} files", end="", file=sys.stderr, flush=True)
    else:
        for i, f in enumerate(files, 1):
            results.append(measure(f))
            if not args.quiet and i % 50 == 0:
                print(f"\r{i}/{len(files)} files", end="", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    if not args.quiet:
        print(file=sys.stderr)

    ok = [r for r in results if r[3] is None]
    failed = [r for r in results if r[3] not in (None, "does not compile")]
    decompile = [r[2] for r in ok]
    compile_s = sum(r[1] for r in ok)
    summary = {
        "python": ".".join(map(str, sys.version_info[:3])),
        "files": len(ok), "failed": len(failed),
        "skipped": sum(r[3] == "does not compile" for r in results),
        "decompile_s": round(sum(decompile), 2), "compile_s": round(compile_s, 2),
        "ratio_to_compile": round(sum(decompile) / compile_s, 1) if compile_s else None,
        "wall_s": round(wall, 2), "jobs": args.jobs,
        "p50_file_ms": round(percentile(decompile, 50) * 1000, 1),
        "p99_file_ms": round(percentile(decompile, 99) * 1000, 1),
        "slowest": [(Path(r[0]).name, round(r[2], 2))
                    for r in sorted(ok, key=lambda r: -r[2])[:5]],
        "errors": [(r[0], r[3]) for r in failed[:20]],
    }
    print(f"unveil throughput: Python {summary['python']} ({args.stdlib})")
    print(f"files:        {summary['files']} decompiled, {summary['failed']} failed, "
          f"{summary['skipped']} do not compile")
    print(f"decompile:    {summary['decompile_s']} s in unveil.decompile "
          f"({summary['ratio_to_compile']}x the {summary['compile_s']} s compile() takes)")
    print(f"wall time:    {summary['wall_s']} s with {args.jobs} process(es)")
    print(f"per file:     p50 {summary['p50_file_ms']} ms, p99 {summary['p99_file_ms']} ms; "
          f"slowest {summary['slowest']}")
    for path, err in summary["errors"]:
        print(f"  failed: {path}: {err}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
