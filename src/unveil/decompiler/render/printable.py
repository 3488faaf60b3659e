"""String literals that read the same whichever Python writes them.

``repr`` and ``ast.unparse`` escape each character ``str.isprintable`` calls unprintable,
and that follows the running Python's Unicode database (3.10's is Unicode 13.0, 3.13's
15.1): a character assigned since is escaped by one host and written as it is by another.
Here a character above ASCII is written as it is only where Unicode 13.0 prints it
(:mod:`.printable_table`, made by ``scripts/gen_printable.py`` with Python 3.10; every later
database prints those too), on every host.
"""

from __future__ import annotations

import bisect

from .printable_table import RANGES

_STARTS = RANGES[0::2]
_ENDS = RANGES[1::2]


def printable(c: str) -> bool:
    """Whether the literal writes ``c`` as it is (``str.isprintable`` on Unicode 13.0)."""
    if c.isascii():
        return c.isprintable()
    cp = ord(c)
    k = bisect.bisect_right(_STARTS, cp) - 1
    return k >= 0 and cp <= _ENDS[k]


def escaped(c: str) -> str:
    """``c`` as ``repr`` escapes a character it does not print."""
    return c.encode("unicode_escape").decode("ascii")


def string_repr(s: str) -> str:
    """``repr(s)``, as Python 3.10 (Unicode 13.0) writes it, on every host."""
    if s.isascii() or all(c.isprintable() == printable(c) for c in set(s) if not c.isascii()):
        return repr(s)  # (where the host prints the same characters, its repr is that)
    quote = '"' if "'" in s and '"' not in s else "'"
    out = [quote]
    for c in s:
        if c == quote or c == "\\":
            out.append("\\" + c)
        elif printable(c):
            out.append(c)
        else:  # (\t, \n and \r as repr writes them, the rest \xhh, \uhhhh or \Uhhhhhhhh)
            out.append(escaped(c))
    out.append(quote)
    return "".join(out)
