"""Line numbers of any CPython 3.8-3.14 code object, from its own line table.

A live code object has ``co_lines()``; one read from another version's file has only the
bytes of its version's table, read here as that version's ``dis.findlinestarts`` reads them:
3.8/3.9 ``co_lnotab`` (pairs of an unsigned byte-offset increment and a signed line
increment), 3.10 ``co_linetable`` (byte-offset delta, signed line delta; -128: no
line), 3.11+ the location table of PEP 657 in ``co_linetable`` (entries of one to eight code
units: a form in bits 3-6 of the first byte, then a line delta by form, then columns).
3.13+'s ``dis`` also starts a line where a range without a line begins.

The tables by offset the reader asks of a code object, live or read, are built here too:
:class:`Lines` (:func:`line_table`, the line of each instruction offset) and the
positions of each code unit (:func:`shared_runs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import CodeType

from ..codeobj import code_version
from .opcodes import OpcodeTable, table

_NOTHING = object()  # no line seen yet (0 and None are lines)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    b = data[pos]
    val = b & 63
    shift = 0
    while b & 64:
        pos += 1
        b = data[pos]
        shift += 6
        val |= (b & 63) << shift
    return val, pos + 1


def _co_lines(code: object, t: OpcodeTable) -> Iterator[tuple[int, int | None]]:
    """(start offset, line or None) per address range, as ``co_lines()`` (3.10+)."""
    data = bytes(getattr(code, "co_linetable", b"") or b"")
    line: int = getattr(code, "co_firstlineno", 1)
    end = 0
    pos = 0
    if t.line_table == "linetable":  # 3.10: (byte delta, signed line delta) pairs
        while pos + 1 < len(data):
            start = end
            end += data[pos]
            delta = data[pos + 1] - 256 if data[pos + 1] >= 128 else data[pos + 1]
            pos += 2
            if delta != -128:
                line += delta
            if start != end:
                yield start, (None if delta == -128 or line < 0 else line)
        return
    last: object = _NOTHING  # 3.11+: co_lines merges runs of one line
    while pos < len(data):
        first = data[pos]
        kind = (first >> 3) & 15
        start = end
        end += ((first & 7) + 1) * 2
        delta = 0
        if kind in (13, 14):  # no columns, long form: a signed varint line delta
            uval, _ = _varint(data, pos + 1)
            delta = -(uval >> 1) if uval & 1 else uval >> 1
        elif kind in (10, 11, 12):  # one-line forms
            delta = kind - 10
        line += delta
        pos += 1
        while pos < len(data) and not data[pos] & 128:
            pos += 1
        here = None if kind == 15 or line < 0 else line
        if here != last:
            last = here
            yield start, here


def line_starts(code: object, version: tuple[int, int]) -> dict[int, int | None]:
    """Offset -> line of each line start, as that version's ``dis.findlinestarts``."""
    t = table(version)
    starts: dict[int, int | None] = {}
    if t.line_table == "lnotab":
        data = bytes(getattr(code, "co_lnotab", b"") or b"")
        size = len(getattr(code, "co_code", b""))
        lineno: int = getattr(code, "co_firstlineno", 1)
        addr = 0
        last_line: int | None = None
        for i in range(0, len(data) - 1, 2):
            if data[i]:
                if lineno != last_line:
                    starts[addr] = last_line = lineno
                addr += data[i]
                if addr >= size:
                    return starts
            lineno += data[i + 1] - 256 if data[i + 1] >= 128 else data[i + 1]
        if lineno != last_line:
            starts[addr] = lineno
        return starts
    last: object = _NOTHING
    for start, line in _co_lines(code, t):
        if line is None and not t.line_starts_none:
            continue
        if line != last:
            last = line
            starts[start] = line
    return starts


def co_lines(code: object, version: tuple[int, int]) -> Iterator[tuple[int, int, int | None]]:
    """``(start, end, line)`` per address range, as ``code.co_lines()`` gives them on 3.12+
    (3.10/3.11 split a line's range where their table does; 3.8/3.9 have no ``co_lines``:
    the ranges between line starts)."""
    t = table(version)
    size = len(getattr(code, "co_code", b""))
    if t.line_table == "lnotab":
        starts = sorted(line_starts(code, version).items())
        for k, (start, line) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else size
            if start < end:
                yield start, end, line
        return
    ranges = list(_co_lines(code, t))
    for k, (start, line) in enumerate(ranges):
        end = ranges[k + 1][0] if k + 1 < len(ranges) else size
        if start < end:
            yield start, end, line


def co_positions(code: object) -> list[tuple[int | None, int | None, int | None, int | None]]:
    """``(line, end line, column, end column)`` per code unit, as ``code.co_positions()``
    gives them, from a 3.11+ location table (PEP 657)."""
    data = bytes(getattr(code, "co_linetable", b"") or b"")
    line: int = getattr(code, "co_firstlineno", 1)
    out: list[tuple[int | None, int | None, int | None, int | None]] = []
    pos = 0
    while pos < len(data):
        first = data[pos]
        kind = (first >> 3) & 15
        units = (first & 7) + 1
        pos += 1
        entry: tuple[int | None, int | None, int | None, int | None]
        if kind == 15:  # no location
            entry = (None, None, None, None)
        elif kind == 14:  # long form: line delta, end line delta, column + 1, end column + 1
            delta, pos = _varint(data, pos)
            line += -(delta >> 1) if delta & 1 else delta >> 1
            end_delta, pos = _varint(data, pos)
            column, pos = _varint(data, pos)
            end_column, pos = _varint(data, pos)
            entry = (line, line + end_delta, column - 1, end_column - 1)
        elif kind == 13:  # no columns
            delta, pos = _varint(data, pos)
            line += -(delta >> 1) if delta & 1 else delta >> 1
            entry = (line, line, None, None)
        elif kind >= 10:  # one line, with a line delta of 0-2
            line += kind - 10
            entry = (line, line, data[pos], data[pos + 1])
            pos += 2
        else:  # short form: same line, a column of up to 7 bits and a width of up to 15
            second = data[pos]
            pos += 1
            column = kind << 3 | second >> 4
            entry = (line, line, column, column + (second & 15))
        entry = tuple(None if v is not None and v < 0 else v  # type: ignore[assignment]  # four items
                      for v in entry)
        out.extend([entry] * units)
    return out


# ---------------------------------------------------------------- tables by offset

class Lines:
    """The source line of each instruction offset of a code object: ``get(offset)``, as a
    dict's (None where there is none). One entry per code unit, in a list: a long
    function's table is a list of pointers to a few line numbers, not a dict of offsets."""

    __slots__ = ("_by_unit",)

    def __init__(self, by_unit: list[int | None]) -> None:
        self._by_unit = by_unit

    def get(self, offset: int, default: int | None = None) -> int | None:
        k = offset >> 1
        by_unit = self._by_unit
        return by_unit[k] if 0 <= k < len(by_unit) and not offset & 1 else default


def line_table(code: CodeType) -> Lines:
    """The source line of each instruction offset of ``code`` (None: no line)."""
    ranges = code.co_lines() if isinstance(code, CodeType) else co_lines(code, code_version(code))
    by_unit: list[int | None] = []
    for start, end, line in ranges:
        if start == 2 * len(by_unit):  # (the ranges in order, one after another: extended)
            if end > start:
                by_unit += [line] * ((end - start + 1) // 2)
            continue
        for off in range(start, end, 2):  # (else filled range by range: a later one wins)
            k = off >> 1
            if k >= len(by_unit):
                by_unit += [None] * (k + 1 - len(by_unit))
            by_unit[k] = line
    return Lines(by_unit)


# (below this many code units the table is kept as it comes: sharing runs is for the
# memory of long functions, and costs a step per unit)
_SHARED_FROM = 4096


def shared_runs(positions: Iterable[tuple[int | None, ...]]) -> list[tuple[int | None, ...]]:
    """``list(positions)``, in a long function a run of equal positions one tuple (an
    instruction's inline caches have its position: a long function's table is mostly
    repeats)."""
    out = list(positions)
    if len(out) < _SHARED_FROM:
        return out
    last: tuple[int | None, ...] | None = None
    for k, p in enumerate(out):
        if p == last:
            out[k] = last
        else:
            last = p
    return out
