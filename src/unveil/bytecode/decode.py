"""Decode any CPython 3.8-3.14 bytecode as that version's ``dis.get_instructions`` does.

:func:`decode` reads a code object of CPython ``version`` (a live ``CodeType`` or anything with
its attributes) using only the committed :mod:`.opcodes` table of that version, never the
running interpreter's ``opcode``/``dis``; tests/test_opcode_tables.py checks it against each
version's own ``dis``. The rules, per version (each is data in the table):

* Code units are 2 bytes: opcode, then an argument byte that counts when the opcode has an
  argument (3.8-3.11: ``op >= HAVE_ARGUMENT``; 3.12+: ``op in hasarg``). ``EXTENDED_ARG``
  shifts its argument into the next one's high bits; it stays in the listing, as in dis.
  3.10+: an opcode without argument clears a pending ``EXTENDED_ARG`` (3.8/3.9 keep it);
  3.11+: the sum wraps to a signed 32-bit int.
* 3.11+: after an opcode come ``_inline_cache_entries`` CACHE code units, skipped (dis's
  ``show_caches=False``). Specialized opcodes are looked up as their base opcode.
* Jumps (``hasjrel``/``hasjabs``; ``argval`` is the target byte offset): 3.8/3.9 count bytes
  (relative: ``offset + 2 + arg``; absolute: ``arg``, which 3.8/3.9's dis reports without
  argrepr); 3.10 counts code units (``offset + 2 + 2*arg``, ``2*arg``); 3.11 adds backward
  jumps (``JUMP_BACKWARD*``, ``POP_JUMP_BACKWARD_IF_*``: ``offset + 2 - 2*arg``) and has no
  absolute ones; 3.12+ relative jumps start after the jump's own caches
  (``+ 2*caches``); 3.14's ``END_ASYNC_FOR`` jumps backward. ``is_jump_target`` is set on the
  targets of these jumps only (``get_instructions`` leaves exception handlers out).
  Argrepr: ``to N`` (3.8-3.12) or ``to Lk`` (3.13+, labels numbered in offset order).
* Constants index ``co_consts`` (3.11's ``KW_NAMES``: dis gives :data:`UNKNOWN`). Names index
  ``co_names``; 3.11+ ``LOAD_GLOBAL`` and 3.12+ ``LOAD_ATTR`` use ``arg >> 1`` (the low bit
  pushes a NULL), 3.12+ ``LOAD_SUPER_ATTR`` ``arg >> 2``.
* Locals: 3.8-3.10 ``haslocal`` indexes ``co_varnames`` and ``hasfree``
  ``co_cellvars + co_freevars``; 3.11+ both index localsplus: ``co_localsplusnames`` where the
  object has it (non-empty), else ``co_varnames``, the cells not among them, ``co_freevars`` (a live
  code object's ``_varname_from_oparg``). 3.13+ ``LOAD_FAST_LOAD_FAST`` and kin pack two
  4-bit indexes (``argval`` is a pair of names).
* ``COMPARE_OP``: ``cmp_op[arg]`` (3.8-3.11), ``cmp_op[arg >> 4]`` (3.12),
  ``cmp_op[arg >> 5]`` (3.13+, bit 16: argrepr ``bool(...)``). ``FORMAT_VALUE`` (to 3.12):
  ``(converter, has_format)``; ``CONVERT_VALUE`` (3.13+): the converter. Other arguments
  (``BINARY_OP``, intrinsics, function flags...) keep ``argval = arg``, with an argrepr.
* Lines: 3.8/3.9 ``co_lnotab``; 3.10 ``co_linetable`` (byte-offset/line-delta pairs); 3.11+
  the location table in ``co_linetable``. A line starts where the line changes; 3.13+ also
  where a range without line begins (its ``line_number`` is None).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from .opcodes import ArgRule, OpcodeTable, table

__all__ = ["UNKNOWN", "CodeLike", "DecodedInstr", "decode", "line_starts", "unpack"]


class _Unknown:
    def __repr__(self) -> str:
        return "<unknown>"


#: ``argval`` where dis cannot tell the value (3.11's ``KW_NAMES``), as ``dis.UNKNOWN``.
UNKNOWN = _Unknown()

_NOTHING = object()  # no line seen yet (0 and None are lines)
_CONVERTERS: tuple[tuple[object, str], ...] = (
    (None, ""), (str, "str"), (repr, "repr"), (ascii, "ascii"))


class CodeLike(Protocol):
    """What :func:`decode` reads: a ``CodeType`` of any version, or a stand-in for one."""

    @property
    def co_code(self) -> bytes: ...
    @property
    def co_consts(self) -> Sequence[object]: ...
    @property
    def co_names(self) -> Sequence[str]: ...
    @property
    def co_varnames(self) -> Sequence[str]: ...
    @property
    def co_cellvars(self) -> Sequence[str]: ...
    @property
    def co_freevars(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class DecodedInstr:
    """One instruction, with the ``dis.Instruction`` fields of the code's own version.

    ``starts_line`` and ``line_number`` follow 3.13's dis: whether a line starts here, and the
    line in force. Before 3.13 dis's ``starts_line`` is ``line_number if starts_line else None``.
    """

    opname: str
    opcode: int
    arg: int | None
    argval: object
    argrepr: str
    offset: int
    start_offset: int  # offset of the first EXTENDED_ARG before it (else offset)
    starts_line: bool
    line_number: int | None
    is_jump_target: bool
    jump_target: int | None  # byte offset, for jumps (also argval, where dis gives it)


def unpack(co_code: bytes, t: OpcodeTable) -> Iterator[tuple[int, int, int, int | None]]:
    """(offset, start_offset, opcode, arg) per instruction, as dis's ``_unpack_opargs``."""
    ext = 0
    ext_count = 0
    caches = 0
    bits = t.extended_arg_bits
    for i in range(0, len(co_code) - 1, 2):
        if caches:
            caches -= 1
            continue
        op = co_code[i]
        deop = t.deopt[op]
        caches = t.cache_entries.get(deop, 0)
        arg: int | None
        if deop in t.has_arg:
            arg = co_code[i + 1] | ext
            ext = (arg << 8) if deop == t.extended_arg else 0
            if bits is not None and ext >= 1 << (bits - 1):
                ext -= 1 << bits
        else:
            arg = None
            if t.extended_arg_resets:
                ext = 0
        if deop == t.extended_arg:
            ext_count += 1
            yield i, i, op, arg
        else:
            yield i, i - 2 * ext_count, op, arg
            ext_count = 0


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


def _localsplus(code: CodeLike) -> tuple[str, ...]:
    names: Sequence[str] | None = getattr(code, "co_localsplusnames", None)
    if names:  # (empty also where a stand-in leaves it out: then so are the fallback's parts)
        return tuple(names)
    varnames = tuple(code.co_varnames)
    cells = tuple(c for c in code.co_cellvars if c not in varnames)
    return varnames + cells + tuple(code.co_freevars)


def decode(code: CodeLike, version: tuple[int, int]) -> list[DecodedInstr]:
    """The instructions of ``code``, compiled by CPython ``version``, as its dis lists them.

    ``code.co_code`` must be that version's plain (unspecialized) bytecode, as ``co_code`` and
    marshal give it. Line numbers need ``co_firstlineno`` and ``co_lnotab`` (3.8/3.9) or
    ``co_linetable``; without them every ``line_number`` is None.
    """
    t = table(version)
    raw = bytes(code.co_code)
    units = list(unpack(raw, t))
    targets: dict[int, int] = {}  # offset of a jump -> its target
    for offset, _, op, arg in units:
        jump = t.jumps.get(t.deopt[op])
        if jump is not None and arg is not None:
            targets[offset] = jump.target(offset, arg)
    labels = {offset: n for n, offset in enumerate(sorted(set(targets.values())), 1)}
    has_lines = hasattr(code, "co_lnotab" if t.line_table == "lnotab" else "co_linetable")
    starts = line_starts(code, version) if has_lines else {}
    if t.localsplus:
        local_names: Sequence[str] = _localsplus(code)
        cell_names: Sequence[str] = local_names
    else:
        local_names = code.co_varnames
        cell_names = tuple(code.co_cellvars) + tuple(code.co_freevars)
    out: list[DecodedInstr] = []
    line: int | None = None
    for offset, start_offset, op, arg in units:
        deop = t.deopt[op]
        if offset in starts:
            line = starts[offset]
        argval: object = None
        argrepr = ""
        if arg is not None:
            rule = t.args.get(deop)
            if rule is None:
                argval = arg
            elif rule.kind == "jump":
                argval = targets.get(offset)
                jumprule = t.jumps.get(deop)
                if jumprule is not None and argval is not None:
                    argrepr = jumprule.repr.format(offset=argval, label=labels.get(argval))
            else:
                argval, argrepr = _arg(rule, arg, code, t, local_names, cell_names)
        out.append(DecodedInstr(
            opname=t.name(op), opcode=op, arg=arg, argval=argval, argrepr=argrepr,
            offset=offset, start_offset=start_offset, starts_line=offset in starts,
            line_number=line, is_jump_target=offset in labels,
            jump_target=targets.get(offset)))
    return out


def _arg(rule: ArgRule, arg: int, code: CodeLike, t: OpcodeTable, local_names: Sequence[str],
         cell_names: Sequence[str]) -> tuple[object, str]:
    """(argval, argrepr) of a non-jump argument."""
    kind = rule.kind
    if kind == "const":
        value = code.co_consts[arg]
        return value, repr(value)
    if kind == "unknown":
        return UNKNOWN, ""
    if kind == "name":
        name = code.co_names[arg >> rule.shift]
        return name, rule.flag.format(name) if rule.flag and arg & 1 and name else name
    if kind in ("varname", "localsplus"):
        return local_names[arg], local_names[arg]
    if kind == "cellname":
        return cell_names[arg], cell_names[arg]
    if kind == "local_pair":
        first, second = local_names[arg >> 4], local_names[arg & 15]
        return (first, second), f"{first}, {second}"
    if kind == "compare":
        op = t.cmp_op[arg >> rule.shift]
        return op, f"bool({op})" if rule.bool_flag and arg & rule.bool_flag else op
    if kind == "format_value":
        conv, text = _CONVERTERS[arg & 3]
        if arg & 4:
            text = f"{text}, with format" if text else "with format"
        return (conv, bool(arg & 4)), text
    if kind == "convert_value":
        return _CONVERTERS[arg][0], _CONVERTERS[arg][1]
    if kind == "function_flags":
        return arg, ", ".join(s for i, s in enumerate(t.function_flags) if arg & (1 << i))
    if kind == "binary_op":
        return arg, t.nb_ops[arg][1]
    if kind == "intrinsic1":
        return arg, t.intrinsic1[arg]
    if kind == "intrinsic2":
        return arg, t.intrinsic2[arg]
    if kind == "common_constant":
        return arg, t.common_constants[arg]
    if kind == "special_method":
        return arg, t.special_method_names[arg]
    if kind == "is_op":
        return arg, "is not" if arg else "is"
    if kind == "contains_op":
        return arg, "not in" if arg else "in"
    raise AssertionError(f"unhandled argument kind {kind!r}")
