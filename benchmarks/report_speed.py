"""How long ``unveil report`` takes on a dump of about 200 compiled frames (issue 4's
target: under 5 s), against reading the same dump's files in the same run.

The dump is real: ``--functions`` generated functions, each with a graph break (so two
frames each: the function and its resume function), compiled with the eager backend
under ``unveil.prepare_debug``. Needs the torch venv::

    .cache/venv-3.11-torch/bin/python benchmarks/report_speed.py [--functions 100]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path


def make_dump(directory: Path, functions: int) -> int:
    """Compile ``functions`` generated functions under prepare_debug; return the number
    of frames dumped."""
    import torch

    import unveil

    namespace: dict[str, object] = {"torch": torch}
    source = "\n".join(
        f"def f{i}(x):\n    y = torch.sin(x) * {i + 1}\n    print('break {i}')\n"
        f"    return y.cos() + {i}\n" for i in range(functions))
    exec(compile(source, str(directory / "generated.py"), "exec"), namespace)
    (directory / "generated.py").write_text(source)
    torch._dynamo.reset()
    torch._dynamo.config.cache_size_limit = max(8, functions)
    with unveil.prepare_debug(directory / "dump"), contextlib.redirect_stdout(io.StringIO()):
        for i in range(functions):
            torch.compile(namespace[f"f{i}"], backend="eager")(torch.ones(3))
    import json

    return len(json.loads((directory / "dump" / "manifest.json").read_text())["frames"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from unveil.report.html import write_report
    from unveil.report.load import load_run
    from unveil.report.summary import summary

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        frames = make_dump(root, args.functions)
        print(f"dumped {frames} frames in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        dump = root / "dump"
        reads, reports = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            total = sum(len(p.read_bytes()) for p in dump.iterdir() if p.is_file())
            reads.append(time.perf_counter() - t)
            t = time.perf_counter()
            run = load_run(dump)
            out = write_report(run)
            summary(run, str(out))
            reports.append(time.perf_counter() - t)
        size = out.stat().st_size
    report_s, read_s = statistics.median(reports), statistics.median(reads)
    print(f"frames {frames}, dump {total / 1e6:.1f} MB, report {size / 1e6:.1f} MB")
    print(f"unveil report (load, HTML, summary): {report_s:.2f} s (median of {args.repeat}); "
          f"target < 5 s: {'ok' if report_s < 5 else 'NOT OK'}")
    print(f"baseline, reading every dumped file: {read_s:.3f} s; ratio {report_s / read_s:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
