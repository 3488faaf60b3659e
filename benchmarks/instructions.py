"""Decompiling cost in machine instructions: a measure that other work on the machine does
not move, for comparing two trees on a busy machine.

Every ``--step``-th module of the standard library (the selection of ``throughput.py``) is
compiled, then decompiled with ``unveil.decompile``, in a Python run under valgrind's
callgrind; a second run does everything but the decompiling, and the difference is the
cost of decompiling. ``--baseline REV`` measures that git revision of this repository the
same way (checked out in a temporary worktree) and reports the ratio.

    python benchmarks/instructions.py [--step 20] [--baseline REV] [--python PATH]

Needs valgrind. Decompiling runs ~50x slower under it: every 20th file takes about two
minutes a tree. The counts repeat to within 0.1% run to run (``PYTHONHASHSEED=0``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# (run inside the measured Python: compile the files, warm up, then decompile or not)
_CHILD = r"""
import sys, warnings
src, bench, step, offset, decompile = sys.argv[1:6]
sys.path[:0] = [src, bench]
import os
from pathlib import Path
import unveil
from throughput import stdlib_files
codes = []
for f in stdlib_files(Path(os.__file__).parent)[int(offset)::int(step)]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            codes.append(compile(f.read_text(encoding="utf-8"), str(f), "exec", dont_inherit=True))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        pass
unveil.decompile(compile("def f(x):\n    return x\n", "<warm-up>", "exec"))
if decompile == "1":
    for c in codes:
        unveil.decompile(c)
print(len(codes))
"""


def collected(python: str, src: Path, step: int, offset: int, decompile: bool) -> int:
    """Instructions callgrind counted for one run of the child."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c",
         _CHILD, str(src), str(HERE), str(step), str(offset), "1" if decompile else "0"],
        env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def cost(python: str, src: Path, step: int, offset: int) -> int:
    """Instructions spent decompiling the selected files with the unveil in ``src``."""
    return collected(python, src, step, offset, True) - collected(python, src, step, offset, False)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--step", type=int, default=20, help="every N-th stdlib file (20)")
    parser.add_argument("--offset", type=int, default=0, help="starting at this one (0)")
    parser.add_argument("--baseline", help="a git revision to measure the same way")
    parser.add_argument("--python", default=sys.executable, help="the Python to measure")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py needs valgrind (apt-get install valgrind)")
    trees = [("this tree", REPO / "src")]
    scratch = None
    if args.baseline:
        scratch = Path(tempfile.mkdtemp(prefix="unveil-baseline-"))
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(scratch),
                        args.baseline], check=True, capture_output=True)
        trees.insert(0, (f"baseline {args.baseline}", scratch / "src"))
    try:
        counts = []
        for label, src in trees:
            print(f"{label}: measuring every {args.step}th stdlib file ...", file=sys.stderr,
                  flush=True)
            counts.append((label, cost(args.python, src, args.step, args.offset)))
    finally:
        if scratch is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                            str(scratch)], check=False, capture_output=True)
    for label, n in counts:
        print(f"{label:>30}: {n / 1e6:,.0f} M instructions")
    if len(counts) == 2:
        print(f"{'ratio':>30}: {counts[1][1] / counts[0][1]:.3f} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
