"""The tables of a code object itself, not of its instructions as rewritten: its listing
as :func:`.instructions.read` reads it, the line of each offset, the position of each code
unit and the ``NOP`` before each offset.

Each is made on first use, once for all the :class:`~.instructions.Bytecode` of one code
(each pass, each inlined comprehension's region makes a new one: building them again for
each is quadratic in a long function) and the scans of its listing; the last few codes'
are remembered (weakly, :class:`.listing.RecentCodes`). None is changed once made.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from ..codeobj import code_version
from . import legacy
from .lines import Lines, co_positions, line_table, shared_runs
from .listing import Raw, RecentCodes, instructions, may_extend


@dataclass(slots=True)
class _CodeTables:
    """What is known of one code object (None: not made yet)."""

    #: the listing without caches and ``EXTENDED_ARG`` (:func:`_plain_listing`)
    plain: tuple[Raw, ...] | None = None
    #: what :func:`.instructions.read` reads (3.8's: as 3.9's) and the line of each
    #: offset (:func:`code_listing`)
    listing: tuple[Raw, ...] | None = None
    lines: Lines | dict[int, int | None] | None = None
    #: the position of each code unit (3.11+; empty before)
    positions: list[tuple[int | None, ...]] | None = None
    #: offset -> (offset, line) of the ``NOP`` right before it
    nops: dict[int, tuple[int, int | None]] | None = None


_CODES: RecentCodes[_CodeTables] = RecentCodes()


def _tables_of(code: CodeType) -> _CodeTables:
    known = _CODES.get(code)
    if known is None:
        known = _CodeTables()
        _CODES.put(code, known)
    return known


def read_listing(code: CodeType) -> list[Raw]:
    """The raw instructions :func:`.instructions.read` reads (without caches and
    ``EXTENDED_ARG``; 3.8's as :func:`.legacy.as_39` rewrites them): what to scan for the
    names the code uses."""
    if code_version(code) != (3, 8):
        return _plain_listing(code)  # (no line table: the scans need none)
    return code_listing(code)[0]


def _plain_listing(code: CodeType) -> list[Raw]:
    known = _tables_of(code)
    if known.plain is None:
        listed = instructions(code)
        if may_extend(code):  # (else nothing to drop: the listing has no caches either)
            listed = [i for i in listed if i.opname not in ("CACHE", "EXTENDED_ARG")]
        known.plain = tuple(listed)
    return list(known.plain)


def code_listing(code: CodeType) -> tuple[list[Raw], Lines | dict[int, int | None]]:
    """The instructions :func:`.instructions.read` reads (without caches and
    ``EXTENDED_ARG``) and the line of each offset; for 3.8, the listing
    :func:`.legacy.as_39` makes of its own. (The line table is shared: not to be
    changed.)"""
    known = _tables_of(code)
    if known.listing is None or known.lines is None:
        raw = _plain_listing(code)
        lines: Lines | dict[int, int | None]
        if hasattr(code, "co_positions"):
            # (the line of each code unit is the first item of its position, both read
            # from the same location table: one pass over it makes both)
            lines = Lines([p[0] for p in code_positions(code)])
        else:
            lines = line_table(code)
        if code_version(code) == (3, 8):
            none_index = next((k for k, c in enumerate(code.co_consts) if c is None), None)
            rewritten, origins = legacy.as_39(raw, none_index,
                                              getattr(code, "co_qualname", code.co_name))
            table = lines
            raw, lines = rewritten, {r.offset: table.get(o)
                                     for r, o in zip(rewritten, origins, strict=True)}
        known.listing, known.lines = tuple(raw), lines
    return list(known.listing), known.lines


def code_positions(code: CodeType) -> list[tuple[int | None, ...]]:
    """The position of each code unit of ``code``: (line, end line, column, end column),
    3.11+ (empty before)."""
    known = _tables_of(code)
    if known.positions is None:
        known.positions = \
            shared_runs(code.co_positions()) if hasattr(code, "co_positions") else \
            shared_runs(co_positions(code)) if code_version(code) >= (3, 11) else []  # (read from a file)
    return known.positions


def code_nops(code: CodeType) -> dict[int, tuple[int, int | None]]:
    """The ``NOP`` (or 3.10's ``POP_BLOCK``) right before each offset of ``code`` (that
    :func:`.instructions.read` drops): its offset and line."""
    known = _tables_of(code)
    if known.nops is None:
        nops: dict[int, tuple[int, int | None]] = {}
        listed, lines = code_listing(code)
        n = len(listed)
        for k in [k for k, ins in enumerate(listed) if ins.opname in ("NOP", "POP_BLOCK")]:
            after = k + 1  # (the next instruction, past 3.14's NOT_TAKEN)
            while after < n and listed[after].opname == "NOT_TAKEN":
                after += 1
            if after < n:
                nop = listed[k].offset
                nops[listed[after].offset] = (nop, lines.get(nop))
        known.nops = nops
    return known.nops
