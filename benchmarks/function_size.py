"""Cost against function size: decompile one function of 1,000 to 20,000 lines, of each shape.

Each size of each shape is a fresh process. A shape is a block of code the function
repeats with varying names and constants: ``block`` (an assignment, an ``if``/``else``, a
``for`` loop, a ``try``/``except``, calls), ``ifexp`` (``acc = acc + (x if acc % k else
-x)``), ``boolops`` (``and``/``or`` chains), ``comprehensions`` (one per statement),
``try_with`` (``try``/``except`` and ``with`` blocks), ``elif`` (``if``/``elif`` chains of
500 arms) and ``closures`` (a small nested function per block). Reported per shape and size:
the time of ``unveil.decompile``, the peak memory the process gained while decompiling
(``ru_maxrss``), the same function's ``compile()`` time as the baseline, and whether the
output has the shape of the input (no ``_s<n>``/``_t<n>`` temporaries, no state machine:
the style must not change with size); per shape, how the time per line grows from the
smallest size to the largest (1.00 = linear). Targets (issues 13 and 45): every shape at
5,000 lines in <= 10 s, 20,000 lines in <= 40 s and <= 200 MB, growing linearly. A size
that takes longer than ``--timeout`` is reported as such.

    PYTHONPATH=src python benchmarks/function_size.py [--shapes block,ifexp] \
        [--sizes 1000,5000,20000] [--timeout 120] [--json F]
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

HEADER = "def big(a, b, c, f, g, h, x, k):\n    acc = y = 0\n"
SHAPES = {
    "block": """\
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
""",
    "ifexp": "    acc = acc + (x if acc % k else -x)\n",
    "boolops": "    acc = acc + (x and k or {i}) + (a or b and c)\n",
    "comprehensions": "    acc = acc + sum([j * x for j in range(k) if j != {i}])\n",
    "try_with": """\
    try:
        acc = f(acc, {i})
    except ValueError:
        acc -= 1
    with g(x) as v{n}:
        acc += v{n}
""",
    "elif": """\
    {kw} x == {i}:
        acc = {i}
""",
    "closures": """\
    def c{i}():
        return x + {i}
    acc = acc + c{i}()
""",
}
CHAIN = 500  # arms of one elif chain (CPython's parser cannot take 10,000 in one)


def source(shape: str, lines: int) -> str:
    """A function of about ``lines`` lines of ``shape``."""
    block = SHAPES[shape]
    count = max(1, lines // block.count("\n"))
    body = "".join(block.format(i=i, n=i % 50, kw="elif" if i % CHAIN else "if")
                   for i in range(count))
    return HEADER + body + "    return acc, y\n"


def measure(shape: str, lines: int) -> dict[str, object]:
    """In this process: decompile a function of ``lines`` lines of ``shape``."""
    import resource

    import unveil

    text = source(shape, lines)
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
    return {"shape": shape, "lines": text.count("\n"), "compile_s": round(compile_s, 3),
            "decompile_s": round(decompile_s, 2), "ratio": round(decompile_s / compile_s, 1),
            "peak_mb": round((after - before) * scale / 2**20, 1),
            "temporaries": temporaries, "state_machine": "_state" in out,
            "output_lines": out.count("\n")}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per size")
    parser.add_argument("--json", help="write the numbers as JSON")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # (a child process)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return 0
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), src) if p)
    rows: list[dict[str, object]] = []
    print(f"{'shape':>15} {'lines':>7} {'decompile':>10} {'compile':>8} {'ratio':>6} "
          f"{'peak MB':>8} {'temps':>6} {'machine':>8}", flush=True)
    growths = {}
    for shape in args.shapes.split(","):
        done_rows = []
        for size in (int(s) for s in args.sizes.split(",")):
            try:
                done = subprocess.run([sys.executable, __file__, "--one", shape, str(size)],
                                      env=env, capture_output=True, text=True, check=True,
                                      timeout=args.timeout)
            except subprocess.TimeoutExpired:
                rows.append({"shape": shape, "lines": size, "timeout_s": args.timeout})
                print(f"{shape:>15} {size:>7}  over {args.timeout:.0f} s", flush=True)
                break  # (the larger sizes take longer still)
            except subprocess.CalledProcessError as exc:
                error = (exc.stderr.strip().splitlines() or ["?"])[-1]
                rows.append({"shape": shape, "lines": size, "error": error})
                print(f"{shape:>15} {size:>7}  failed: {error}", flush=True)
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            done_rows.append(row)
            print(f"{shape:>15} {row['lines']:>7} {row['decompile_s']:>9}s "
                  f"{row['compile_s']:>7}s {row['ratio']:>6} {row['peak_mb']:>8} "
                  f"{row['temporaries']:>6} {str(row['state_machine']):>8}", flush=True)
        if len(done_rows) > 1:
            first, last = done_rows[0], done_rows[-1]
            growths[shape] = (float(last["decompile_s"]) / max(float(first["decompile_s"]), 1e-3)) \
                / (int(last["lines"]) / int(first["lines"]))
    for shape, growth in growths.items():
        print(f"{shape}: time per line, largest vs smallest size: {growth:.2f}x (1.00 = linear)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
