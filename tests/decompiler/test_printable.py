"""String literals are written the same whichever Python writes them: a character above
ASCII as it is only where Unicode 13.0 (Python 3.10's database) prints it."""
# pyodide-compatible

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from unveil.decompiler.render.emit import unparse
from unveil.decompiler.render.printable import printable, string_repr
from unveil.decompiler.render.printable_table import RANGES, UNICODE

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "scripts" / "gen_printable.py"
TABLE = [(RANGES[k], RANGES[k + 1]) for k in range(0, len(RANGES), 2)]


def _strings(seed: int, count: int) -> list[str]:
    """Random strings of ASCII, quotes, backslashes, controls, surrogates, characters of
    the table, characters outside it and astral ones."""
    rng = random.Random(seed)
    pools = [range(0, 0x80), range(0x80, 0x800), range(0xD800, 0xE000), range(0xFD00, 0xFE00),
             range(0x1F900, 0x1FB00), range(0xE0000, 0xE0080), range(0x10FF00, 0x110000)]
    out = []
    for _ in range(count):
        chars = [chr(rng.choice(rng.choice(pools))) for _ in range(rng.randint(0, 12))]
        out.append("".join(chars + rng.sample(["'", '"', "\\", "\n", "\t"], rng.randint(0, 3))))
    return out


def test_every_character_of_the_table_prints_here() -> None:
    """Each database since 13.0 prints what 13.0 does (so the text is repr's on 3.10, and
    the same on every host)."""
    missing = [hex(cp) for first, last in TABLE for cp in range(first, last + 1)
               if not chr(cp).isprintable()]
    assert not missing, missing[:20]


def test_string_repr_is_a_literal_of_the_same_string() -> None:
    for s in _strings(20261205, 3000):
        text = string_repr(s)
        assert ast.literal_eval(text) == s, text
        assert all(printable(c) or c.isascii() for c in text), text
        if all(c.isascii() or printable(c) for c in s):
            assert text == repr(s), s  # (what this host's repr writes, where 13.0 prints all)


def test_a_character_newer_than_unicode_13_is_escaped_on_every_host() -> None:
    """U+FDCF (printable since Unicode 14) and U+1FAE8 (15.0) are escaped in constants,
    docstrings and f-strings, whichever host writes them."""
    source = ('def f():\n    """doc \ufdcf"""\n'
              "    return ('\ufdcf\U0001fae8', f'{x}\ufdcf', '\u00e9')\n")
    text = unparse(ast.parse(source))
    assert "\\ufdcf" in text and "\\U0001fae8" in text and "\u00e9" in text, text
    assert "\ufdcf" not in text and "\U0001fae8" not in text, text
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(source))


def test_the_table_is_python_3_10s() -> None:
    """The committed table is what ``scripts/gen_printable.py`` writes with 3.10."""
    if sys.platform == "emscripten":
        pytest.skip("no subprocesses in Pyodide")
    from unveil.verify.foreign import find_interpreter

    python = sys.executable if sys.version_info[:2] == (3, 10) else find_interpreter((3, 10))
    if python is None:
        pytest.skip("no CPython 3.10 to compare the table with")
    done = subprocess.run([python, str(GENERATOR), "--ranges"], capture_output=True,
                          text=True, check=True)
    assert [tuple(r) for r in json.loads(done.stdout)] == TABLE
    assert UNICODE == "13.0.0"
