"""Round-trip every function of the running Python's standard library through unveil.

Each code object (module, class body, function, lambda, comprehension) of every stdlib
source file is decompiled, recompiled with ``unveil.recompile`` and compared with the
original by ``unveil.verify`` (normalized bytecode). Run it with the interpreter whose
stdlib you want to measure::

    PYTHONPATH=src $(pyenv root)/versions/3.12.1/bin/python benchmarks/stdlib_roundtrip.py

Skipped: the test suites (``test``/``tests``/``idle_test`` directories), idlelib, tkinter,
lib2to3, turtledemo, site-packages/dist-packages, and files that do not compile on this
version.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
from collections import Counter
from pathlib import Path

try:
    import unveil  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from unveil.verify.batch import check_targets  # noqa: E402
from unveil.verify.report import CheckReport  # noqa: E402

EXCLUDE = (
    "test", "tests", "idle_test", "idlelib", "tkinter", "lib2to3", "turtledemo",
    "site-packages", "dist-packages",
)


def stdlib_root() -> Path:
    """The directory of the running interpreter's pure-Python standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} ms"


def format_report(report: CheckReport, root: Path) -> str:
    """The human-readable summary."""
    t = report.totals()
    n = t["functions"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(t["functions_by_kind"].items(),
                                                      key=lambda kv: -kv[1]))
    lines = [
        f"unveil stdlib round trip: Python {t['python']} ({root})",
        f"files:       {t['files'] - t['files_skipped']} checked, "
        f"{t['files_skipped']} skipped (do not compile)",
        f"functions:   {n} ({kinds})",
        f"decompiled:  {t['decompiled']:>6} {t['pct_decompiled']:6.2f}%",
        f"compiling:   {t['compiled']:>6} {t['pct_compiled']:6.2f}%",
        f"identical:   {t['identical']:>6} {t['pct_identical']:6.2f}%",
        f"state machine: {t['lowered']:>4} {t['pct_lowered']:6.2f}% (bodies written as the "
        "while-True dispatch)",
        f"differs:     {t['differs']:>6}",
        f"failed:      {t['failed']:>6}"
        + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(t["failures_by_reason"].items()))
           + ")" if t["failures_by_reason"] else ""),
    ]
    by_kind: dict[str, Counter[str]] = {}
    for r in report.results:
        by_kind.setdefault(r.kind, Counter())[r.status] += 1
    for kind, c in sorted(by_kind.items(), key=lambda kv: -sum(kv[1].values())):
        total = sum(c.values())
        lines.append(f"  {kind:<14}{total:>6}: identical {100 * c['identical'] / total:6.2f}%,"
                     f" differs {c['differs']}, failed {c['failed']}")
    lines += [
        f"per function (decompile + recompile): p50 {_ms(t['p50_ms'])}, "
        f"p99 {_ms(t['p99_ms'])}; decompile alone: p50 {_ms(t['p50_decompile_ms'])}, "
        f"p99 {_ms(t['p99_decompile_ms'])}",
        f"throughput:  {t['functions_per_s'] or 0:.0f} functions/s with {t['jobs']} jobs; "
        f"wall time {t['wall_s']:.1f} s",
    ]
    return "\n".join(lines)


def write_failures(report: CheckReport, path: str) -> int:
    """Write one tab-separated line per non-identical function, grouped by reason."""
    bad = [r for r in report.results if r.status != "identical"]
    bad.sort(key=lambda r: (r.status, r.reason or "", r.file, r.line))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("# status\treason\tfile:line\tqualname\tmessage\n")
        for r in bad:
            message = (r.message or "").replace("\t", " ").replace("\n", " ")
            fh.write(f"{r.status}\t{r.reason or '-'}\t{r.file}:{r.line}\t{r.qualname}\t"
                     f"{message}\n")
    return len(bad)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 0 unless the arguments are bad."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", "-j", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="stop after N functions (files in sorted order)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds allowed per function (10)")
    parser.add_argument("--json", metavar="OUT", help="write totals, per-file counts and "
                        "every non-identical function as JSON")
    parser.add_argument("--failures", metavar="FILE",
                        help="write failing/differing qualnames with reasons (TSV)")
    parser.add_argument("--stdlib", metavar="DIR", help="standard library directory "
                        "(default: the running interpreter's)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    root = Path(args.stdlib) if args.stdlib else stdlib_root()
    report = check_targets([root], jobs=args.jobs, progress=not args.quiet,
                           timeout=args.timeout or None, exclude=EXCLUDE, limit=args.limit)
    print(format_report(report, root))
    if args.json:
        data = report.to_dict(include_identical=False)
        data["benchmark"] = {"stdlib": str(root), "excluded": list(EXCLUDE),
                             "limit": args.limit, "executable": sys.executable}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
            fh.write("\n")
        print(f"json:        {args.json}")
    if args.failures:
        n = write_failures(report, args.failures)
        print(f"failures:    {n} written to {args.failures}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except OSError as exc:
        print(f"stdlib_roundtrip: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
