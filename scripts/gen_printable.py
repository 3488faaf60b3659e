"""Write the printable non-ASCII characters of the running Python's Unicode database as
ranges: src/unveil/decompiler/render/printable_table.py.

Run it by CPython 3.10 (Unicode 13.0, the oldest database of a Python unveil runs on):

    python3.10 scripts/gen_printable.py > src/unveil/decompiler/render/printable_table.py
    python3.X scripts/gen_printable.py --ranges     # (any version: its ranges as JSON)
"""

from __future__ import annotations

import json
import sys
import unicodedata


def printable_ranges() -> list[tuple[int, int]]:
    """The ``(first, last)`` code points of each run of characters above ASCII that
    ``str.isprintable`` says are printable here."""
    ranges: list[tuple[int, int]] = []
    start = None
    for cp in range(0x80, sys.maxunicode + 2):
        printable = cp <= sys.maxunicode and chr(cp).isprintable()
        if printable and start is None:
            start = cp
        elif not printable and start is not None:
            ranges.append((start, cp - 1))
            start = None
    return ranges


def main() -> int:
    ranges = printable_ranges()
    if sys.argv[1:] == ["--ranges"]:
        print(json.dumps(ranges))
        return 0
    version = "{}.{}.{}".format(*sys.version_info[:3])
    print(f'"""The printable characters above ASCII of Unicode {unicodedata.unidata_version}, '
          f'as ranges of code points\n(first and last, flattened): made by '
          f'``scripts/gen_printable.py`` with Python {version}; do\nnot edit."""\n')
    print(f'UNICODE = "{unicodedata.unidata_version}"')
    print("RANGES = (")
    flat = [str(n) for pair in ranges for n in pair]
    line = "   "
    for item in flat:
        if len(line) + len(item) + 2 > 95:
            print(line)
            line = "   "
        line += f" {item},"
    print(line)
    print(")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
