"""Does ``bytecode.legacy`` rewrite 3.8's listing as 3.9 lays out the same source?

CPython 3.8 and 3.9 (pyenv's) each compile the same sources (by default 3.8's standard
library, without tests) to ``.pyc`` files; this Python reads both, rewrites each 3.8 code
object's listing (``bytecode.read_listing``) and compares it with 3.9's own, instruction by
instruction (jump targets as instruction indices). Code objects whose 3.9 listing uses
what 3.9 compiles differently anyway (``LIST_EXTEND``, ``DICT_MERGE``... of displays and
calls, ``LOAD_ASSERTION_ERROR``) are skipped; ``-v`` prints each difference.

    PYTHONPATH=src python scripts/legacy_vs_39.py [SOURCE_DIR] [-v]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

from unveil.bytecode import Raw, instructions, read_listing  # noqa: E402
from unveil.bytecode.pyc import load_pyc  # noqa: E402
from unveil.codeobj import iter_code_objects  # noqa: E402
from unveil.verify.foreign import find_interpreter  # noqa: E402

_JUMPS = {"JUMP_FORWARD", "JUMP_ABSOLUTE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
          "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_NOT_EXC_MATCH",
          "SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH", "FOR_ITER"}
_SKIPPED = {"LIST_EXTEND", "DICT_MERGE", "SET_UPDATE", "DICT_UPDATE", "LIST_TO_TUPLE",
            "LOAD_ASSERTION_ERROR"}


def normalised(raw: list[Raw]) -> list[tuple[str, object]]:
    """(name, argument) of each instruction, jumps by index, ``EXTENDED_ARG`` dropped
    (a jump to one goes to the instruction it extends)."""
    index: dict[int, int] = {}
    pending: list[int] = []
    kept = []
    for r in raw:
        if r.opname == "EXTENDED_ARG":
            pending.append(r.offset)
            continue
        for off in pending + [r.offset]:
            index[off] = len(kept)
        pending = []
        kept.append(r)
    out: list[tuple[str, object]] = []
    for r in kept:
        name = "JUMP" if r.opname in ("JUMP_FORWARD", "JUMP_ABSOLUTE") else r.opname
        if r.opname in _JUMPS:
            out.append((name, index.get(r.argval, "?")))
        elif hasattr(r.argval, "co_code"):
            out.append((name, "<code>"))
        else:
            out.append((name, r.argval if isinstance(r.argval, int | str | None) else
                        repr(r.argval)[:40]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="?", help="a directory of .py files (default: "
                        "3.8's standard library)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each difference")
    args = parser.parse_args()
    p38, p39 = find_interpreter((3, 8)), find_interpreter((3, 9))
    if p38 is None or p39 is None:
        print("legacy_vs_39: needs CPython 3.8 and 3.9 (pyenv's)", file=sys.stderr)
        return 2
    sources = Path(args.sources or subprocess.run(
        [p38, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    total = same = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        trees = {v: Path(tmp) / v for v in ("38", "39")}
        for v, python in (("38", p38), ("39", p39)):
            shutil.copytree(sources, trees[v], ignore=shutil.ignore_patterns(
                "test", "tests", "idle_test", "site-packages", "__pycache__", "*.pyc"))
            subprocess.run([python, "-m", "compileall", "-q", "-b", str(trees[v])],
                           capture_output=True, check=False)
        for root, _, files in os.walk(trees["38"]):
            for name in sorted(f for f in files if f.endswith(".pyc")):
                a = Path(root) / name
                b = trees["39"] / a.relative_to(trees["38"])
                if not b.exists():
                    continue
                codes = [[e.code for e in iter_code_objects(load_pyc(p))] for p in (a, b)]
                if len(codes[0]) != len(codes[1]):
                    continue
                for old, new in zip(*codes, strict=True):
                    theirs = instructions(new)
                    if any(r.opname in _SKIPPED for r in theirs):
                        skipped += 1
                        continue
                    total += 1
                    mine, want = normalised(read_listing(old)), normalised(theirs)
                    if mine == want:
                        same += 1
                    elif args.verbose:
                        k = next((i for i, (x, y) in enumerate(zip(mine, want, strict=False))
                                  if x != y), min(len(mine), len(want)))
                        print(f"{a.relative_to(trees['38'])} {old.co_name} at {k}: "
                              f"{mine[max(0, k - 2):k + 3]} || {want[max(0, k - 2):k + 3]}")
    print(f"{same} of {total} code objects laid out as 3.9 lays them out "
          f"({skipped} skipped: what 3.9 compiles differently anyway)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
