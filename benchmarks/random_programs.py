"""Property benchmark: decompile every code object of random valid programs.

Programs come from ``pysource-codegen`` (seeded, so a run is reproducible); each is
compiled and every code object goes through ``unveil.verify`` (decompile, recompile,
compare, with a per-function timeout in a worker process). A failure is

* a clean ``DecompilationError`` (reported on its own line: the decompiler knew it
  could not handle the code), or
* a crash: any other exception from ``unveil.decompile``, source that does not compile,
  ``unveil.recompile`` failing, a timeout or a dead worker.

Bytecode that merely differs is counted but is not a failure. With
``--save-regressions`` each failing program is shrunk with ``pysource-minimize`` and
written to ``tests/decompiler/regressions/<hash>.py``.

    pip install pysource-codegen pysource-minimize
    PYTHONPATH=src python benchmarks/random_programs.py --count 500 --seed 0

``--programs DIR`` keeps the generated programs, so that a later run over the same seeds
(against later code) only checks them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

try:
    import unveil  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from unveil.verify.batch import check_targets  # noqa: E402
from unveil.verify.report import CheckReport, FunctionResult  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
REGRESSIONS = REPO / "tests" / "decompiler" / "regressions"

#: Failure kinds, in report order: the clean one first, then the crashes.
CLEAN = "decompile-error"
CRASHES = ("crash", "imports-unveil", "compile-error", "recompile-error", "timeout",
           "worker-died")


@dataclass
class Program:
    """One generated program."""

    seed: int
    source: str
    path: Path | None = None
    results: list[FunctionResult] = field(default_factory=list)

    def failures(self) -> list[FunctionResult]:
        """Its functions that failed (clean DecompilationError included)."""
        return [r for r in self.results if r.status == "failed"]


@dataclass
class Outcome:
    """What a run found."""

    programs: list[Program]
    report: CheckReport
    skipped: Counter[str]
    generate_s: float
    check_s: float
    minimize_s: float = 0.0
    saved: list[Path] = field(default_factory=list)

    def failing_programs(self) -> list[Program]:
        """Programs with at least one failed function."""
        return [p for p in self.programs if p.failures()]

    def summary(self) -> dict[str, object]:
        """Counts and times, JSON-ready."""
        results = self.report.results
        by_reason = Counter(r.reason for r in results if r.status == "failed")
        programs_by_reason = Counter(
            reason for p in self.programs for reason in {r.reason for r in p.failures()})
        return {
            "python": sys.version.split()[0],
            "programs": len(self.programs),
            "skipped": dict(self.skipped),
            "functions": len(results),
            "identical": sum(r.status == "identical" for r in results),
            "differs": sum(r.status == "differs" for r in results),
            "decompilation_errors": by_reason.get(CLEAN, 0),
            "crashes": sum(by_reason.get(k, 0) for k in CRASHES),
            "failures_by_reason": dict(by_reason),
            "failing_programs": len(self.failing_programs()),
            "failing_programs_by_reason": dict(programs_by_reason),
            "generate_s": round(self.generate_s, 2),
            "check_s": round(self.check_s, 2),
            "minimize_s": round(self.minimize_s, 2),
            "saved": [str(p) for p in self.saved],
        }


def generate(seed: int, *, node_limit: int = 300, depth_limit: int = 6) -> str | None:
    """The program for ``seed``, or None when the generator fails on it."""
    import pysource_codegen

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pysource_codegen.generate(seed, node_limit=node_limit,
                                             depth_limit=depth_limit)
    except (Exception, SystemExit, RecursionError):  # noqa: BLE001 - a generator bug
        return None


def compiles(source: str) -> bool:
    """Whether ``source`` compiles on this Python."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _kept_paths(seed: int, store: Path, node_limit: int, depth_limit: int) -> tuple[Path, Path]:
    """Where :func:`stored` keeps the program for ``seed``, and its generator's failure."""
    where = store / f"n{node_limit}_d{depth_limit}"
    return where / f"seed_{seed}.py", where / f"seed_{seed}.failed"


def kept(seed: int, store: Path, *, node_limit: int, depth_limit: int) -> bool:
    """Whether :func:`stored` has the program for ``seed`` (or its generator's failure)."""
    return any(p.exists() for p in _kept_paths(seed, store, node_limit, depth_limit))


def stored(seed: int, store: Path | None, *, node_limit: int, depth_limit: int) -> str | None:
    """The program for ``seed``, read from ``store`` (a directory) when generated there
    before, else generated (and kept there): generating takes most of a run's time, so
    the same programs can be checked again against later code. A program is specific to
    the Python that generated it (the generator follows its grammar)."""
    if store is None:
        return generate(seed, node_limit=node_limit, depth_limit=depth_limit)
    path, failed = _kept_paths(seed, store, node_limit, depth_limit)
    if path.exists():
        return path.read_text(encoding="utf-8")
    if failed.exists():
        return None
    source = generate(seed, node_limit=node_limit, depth_limit=depth_limit)
    path.parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        failed.touch()
    else:
        path.write_text(source, encoding="utf-8")
    return source


def run(seeds: list[int], *, jobs: int = 2, timeout: float = 10.0, node_limit: int = 300,
        depth_limit: int = 6, progress: bool = False, store: Path | None = None) -> Outcome:
    """Generate a program per seed (or read it from ``store``, see :func:`stored`) and
    check every code object in it."""
    skipped: Counter[str] = Counter()
    programs: list[Program] = []
    t0 = time.perf_counter()
    for seed in seeds:
        source = stored(seed, store, node_limit=node_limit, depth_limit=depth_limit)
        if source is None:
            skipped["generator failed"] += 1
        elif not compiles(source):
            skipped["does not compile"] += 1
        else:
            programs.append(Program(seed, source))
    generate_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="unveil-random-") as tmp:
        by_path: dict[str, Program] = {}
        for p in programs:
            p.path = Path(tmp, f"seed_{p.seed}.py")
            p.path.write_text(p.source, encoding="utf-8")
            by_path[str(p.path)] = p
        report = check_targets([p.path for p in programs if p.path], jobs=jobs,
                               progress=progress, timeout=timeout)
        for r in report.results:
            by_path[r.file].results.append(r)
    return Outcome(programs, report, skipped, generate_s, time.perf_counter() - t1)


def _signature(r: FunctionResult) -> tuple[str, str]:
    kind = (r.message or "").split(":", 1)[0]
    return (r.reason or "", kind)


def still_fails(source: str, signature: tuple[str, str], timeout: float) -> bool:
    """Whether ``source`` still has a function failing with ``signature``."""
    with tempfile.TemporaryDirectory(prefix="unveil-min-") as tmp:
        path = Path(tmp, "candidate.py")
        path.write_text(source, encoding="utf-8")
        try:
            report = check_targets([path], jobs=1, progress=False, timeout=timeout)
        except Exception:  # noqa: BLE001 - e.g. the candidate does not compile
            return False
    return any(r.status == "failed" and _signature(r) == signature for r in report.results)


def minimize(program: Program, *, timeout: float = 5.0) -> tuple[str, FunctionResult]:
    """Shrink ``program`` keeping its first failure; return the source and that failure."""
    import pysource_minimize

    first = program.failures()[0]
    signature = _signature(first)
    try:
        source = pysource_minimize.minimize(
            program.source, lambda s: still_fails(s, signature, timeout))
    except Exception:  # noqa: BLE001 - CouldNotMinimize and friends: keep the original
        source = program.source
    return source, first


def save_regression(source: str, failure: FunctionResult, seed: int,
                    directory: Path = REGRESSIONS) -> Path:
    """Write a minimized program to ``directory/<hash>.py`` (same program, same name)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{digest}.py"
    header = (
        f"# Found by benchmarks/random_programs.py: pysource-codegen seed {seed}, "
        f"Python {sys.version.split()[0]}.\n"
        f"# {failure.reason} in {failure.qualname}: {(failure.message or '')[:200]}\n"
    )
    path.write_text(header + source.rstrip("\n") + "\n", encoding="utf-8")
    return path


def format_summary(s: dict[str, object]) -> str:
    """The human-readable report."""
    reasons = s["failures_by_reason"]
    assert isinstance(reasons, dict)
    crash_detail = ", ".join(f"{k} {reasons[k]}" for k in CRASHES if reasons.get(k))
    lines = [
        f"unveil random programs: Python {s['python']}",
        f"programs:      {s['programs']} checked"
        + (f" ({', '.join(f'{v} {k}' for k, v in s['skipped'].items())} skipped)"  # type: ignore[attr-defined]
           if s["skipped"] else ""),
        f"functions:     {s['functions']}: {s['identical']} identical, {s['differs']} differ",
        f"DecompilationError: {s['decompilation_errors']} functions",
        f"crashes:       {s['crashes']} functions" + (f" ({crash_detail})" if crash_detail else ""),
        f"failing programs: {s['failing_programs']}",
        f"time:          generate {s['generate_s']}s, check {s['check_s']}s, "
        f"minimize {s['minimize_s']}s",
    ]
    for path in s["saved"]:  # type: ignore[attr-defined]
        lines.append(f"saved:         {path}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 when any function failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="programs to generate (500)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (0)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds allowed per function (10)")
    parser.add_argument("--node-limit", type=int, default=300,
                        help="pysource-codegen node limit: program size (300)")
    parser.add_argument("--depth-limit", type=int, default=6,
                        help="pysource-codegen depth limit (6)")
    parser.add_argument("--save-regressions", action="store_true",
                        help=f"minimize failing programs into {REGRESSIONS.relative_to(REPO)}/")
    parser.add_argument("--max-minimize", type=int, default=20, metavar="N",
                        help="minimize at most N failing programs (20)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="print the first N failures (10)")
    parser.add_argument("--json", metavar="OUT", help="write the summary and failures as JSON")
    parser.add_argument("--programs", metavar="DIR", type=Path,
                        help="keep the generated programs in DIR and read them from there "
                             "on later runs (one directory per Python version)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    seeds = list(range(args.seed, args.seed + args.count))
    try:
        # (programs kept before need no generator: Pyodide has none)
        if args.programs is None or not all(
                kept(seed, args.programs, node_limit=args.node_limit,
                     depth_limit=args.depth_limit) for seed in seeds):
            import pysource_codegen  # noqa: F401
        if args.save_regressions:
            import pysource_minimize  # noqa: F401
    except ImportError as exc:
        parser.error(f"{exc.name} is not installed: pip install pysource-codegen "
                     "pysource-minimize")

    outcome = run(seeds, jobs=args.jobs, timeout=args.timeout, node_limit=args.node_limit,
                  depth_limit=args.depth_limit, progress=not args.quiet, store=args.programs)
    failing = outcome.failing_programs()
    for p in failing[:args.show]:
        r = p.failures()[0]
        print(f"seed {p.seed}: {r.qualname} (line {r.line}): {r.reason}: {r.message}")
    if args.save_regressions and failing:
        t = time.perf_counter()
        seen: set[str] = set()
        for p in failing[:args.max_minimize]:
            source, failure = minimize(p, timeout=min(args.timeout, 5.0))
            if source not in seen:
                seen.add(source)
                outcome.saved.append(save_regression(source, failure, p.seed))
        outcome.minimize_s = time.perf_counter() - t
    summary = outcome.summary()
    print(format_summary(summary))
    if args.json:
        failures = [dict(seed=p.seed, qualname=r.qualname, line=r.line, reason=r.reason,
                         message=r.message)
                    for p in failing for r in p.failures()]
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "failures": failures}, fh, indent=1)
            fh.write("\n")
    return 1 if failing else 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
