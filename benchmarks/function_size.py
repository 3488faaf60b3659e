"""Cost against function size: decompile one function of 1,000 to 20,000 lines.

Each size is a fresh process. The function repeats a block of ordinary code (an
assignment, an ``if``/``else``, a ``for`` loop, a ``try``/``except``, calls) with
varying names, and is decompiled with ``unveil.decompile``. Reported per size: the
time, the peak memory the process gained while decompiling (``ru_maxrss``), the
same function's ``compile()`` time as the baseline, and whether the output has the
shape of the input (no ``_s<n>``/``_t<n>`` temporaries, no state machine: the style
must not change with size). Targets (issue 13): 5,000 lines in <= 10 s, 20,000 lines in
<= 40 s and <= 200 MB, time and memory growing linearly.

    PYTHONPATH=src python benchmarks/function_size.py [--sizes 1000,5000,20000] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

BLOCK = """\
    x{n} = a + {i} * b
    if x{n} > c:
        y = f(x{n}, {i})
    else:
        y = g(y, x{n})
    for k in range(3):
        acc += k * x{n}
    try:
        acc = h(acc, y)
    except ValueError:
        acc = 0
"""
BLOCK_LINES = BLOCK.count("\n")


def source(lines: int) -> str:
    """A function of about ``lines`` lines."""
    body = "".join(BLOCK.format(i=i, n=i % 50) for i in range(max(1, lines // BLOCK_LINES)))
    return "def big(a, b, c, f, g, h):\n    acc = y = 0\n" + body + "    return acc, y\n"


def measure(lines: int) -> dict[str, object]:
    """In this process: decompile a function of ``lines`` lines."""
    import resource

    import unveil

    text = source(lines)
    t0 = time.perf_counter()
    module = compile(text, "<big>", "exec")
    compile_s = time.perf_counter() - t0
    code = next(c for c in module.co_consts if hasattr(c, "co_code"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    out = unveil.decompile(code)
    decompile_s = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024  # (kilobytes on Linux)
    temporaries = len(re.findall(r"\b_[st]\d+\b", out))
    return {"lines": text.count("\n"), "compile_s": round(compile_s, 3),
            "decompile_s": round(decompile_s, 2), "ratio": round(decompile_s / compile_s, 1),
            "peak_mb": round((after - before) * scale / 2**20, 1),
            "temporaries": temporaries, "state_machine": "_state" in out,
            "output_lines": out.count("\n")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--json", help="write the numbers as JSON")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # (a child process)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), src) if p)
    rows = []
    print(f"{'lines':>7} {'decompile':>10} {'compile':>8} {'ratio':>6} {'peak MB':>8} "
          f"{'temps':>6} {'machine':>8}", flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        done = subprocess.run([sys.executable, __file__, "--one", str(size)], env=env,
                              capture_output=True, text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['lines']:>7} {row['decompile_s']:>9}s {row['compile_s']:>7}s "
              f"{row['ratio']:>6} {row['peak_mb']:>8} {row['temporaries']:>6} "
              f"{str(row['state_machine']):>8}", flush=True)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = (last["decompile_s"] / first["decompile_s"]) / (last["lines"] / first["lines"])
        print(f"time per line, largest vs smallest: {growth:.2f}x (1.00 = linear)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
