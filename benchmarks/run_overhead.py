"""What ``unveil run`` adds to a script, next to ``prepare_debug`` written into the
script (issue 4: no more than the prepare_debug overhead of benchmarks/torch_overhead.py).

Three ways to run the same script (the 4-layer transformer of torch_overhead.py, two
graph breaks, eager backend, one call), each in a fresh process, interleaved, medians of
``--repeat`` wall times: plain ``python script.py``; the script entering
``unveil.prepare_debug`` itself; ``python -m unveil run --no-report script.py``. The report
is timed apart (``unveil report``), as it runs after the script::

    .cache/venv-3.11-torch/bin/python benchmarks/run_overhead.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

SCRIPT = textwrap.dedent("""\
    import contextlib, io, os, sys
    sys.path.insert(0, {bench!r})
    import torch
    from torch_overhead import build_model

    model, x = build_model()
    compiled = torch.compile(model, backend="eager")
    if os.environ.get("UNVEIL_BENCH_INLINE"):
        import unveil
        ctx = unveil.prepare_debug(os.environ["UNVEIL_BENCH_INLINE"])
    else:
        ctx = contextlib.nullcontext()
    with ctx, contextlib.redirect_stdout(io.StringIO()):
        compiled(x)
""")


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env, timeout=600)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    import os

    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "prog.py"
        script.write_text(SCRIPT.format(bench=bench))
        py = sys.executable
        times: dict[str, list[float]] = {"plain": [], "prepare_debug": [], "unveil run": []}
        runs = {
            "plain": lambda: timed([py, str(script)]),
            "prepare_debug": lambda: timed(
                [py, str(script)], dict(os.environ, UNVEIL_BENCH_INLINE=str(root / "d1"))),
            "unveil run": lambda: timed([py, "-m", "unveil", "run", "--no-report", "--dump",
                                         str(root / "d2"), str(script)]),
        }
        timed([py, str(script)])  # warm the file-system caches
        order = list(runs)
        for i in range(args.repeat):
            for name in (order if i % 2 == 0 else order[::-1]):
                times[name].append(runs[name]())
                print(f"  run {i + 1}/{args.repeat} {name}: {times[name][-1]:.2f} s",
                      file=sys.stderr)
        report = statistics.median(
            timed([py, "-m", "unveil", "report", "--quiet", str(root / "d2")])
            for _ in range(3))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["plain"]
    print(f"median wall time of the whole process, {args.repeat} runs each:")
    for name, value in med.items():
        print(f"  {name:<14} {value:6.2f} s  +{value - base:5.2f} s  ({value / base:.3f}x)")
    extra = med["unveil run"] - med["prepare_debug"]
    print(f"unveil run over prepare_debug in the script: {extra:+.2f} s "
          f"({'ok' if extra <= 0.05 * base else 'more than 5% of the run'}); "
          f"unveil report afterwards: {report:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
