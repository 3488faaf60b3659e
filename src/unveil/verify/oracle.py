"""The oracle behind ``unveil check``: normalise bytecode, and compare two code objects by it.

The comparison oracle (:func:`normalize`, :func:`compare`) is deliberately independent
of the decompiler: it only uses :func:`dis.get_instructions` and the code object's own
attributes, so a bug in ``unveil.bytecode`` cannot hide itself.

What :func:`normalize` ignores, and why (keep this list minimal):

* line numbers, positions, ``co_firstlineno``, ``co_linetable``: source layout only;
* ``CACHE``, ``EXTENDED_ARG``, ``NOP``, ``RESUME`` and 3.14's ``NOT_TAKEN``: inline
  caches, argument width, line-number placeholders, the function-entry marker and a
  branch-monitoring marker carry no program logic (whether an exception-table range
  covers a ``NOT_TAKEN`` even depends on the lines);
* table *indices* in arguments: constants are compared by value (floats by ``repr``,
  nested code by name and normalized form), names and local, cell and free variables by
  name, jump targets by the index of the target in the normalized stream (a target on a
  dropped instruction maps to the next kept one);
* the ``CO_NESTED`` flag: purely informational, and it is set when a function is
  recompiled inside a wrapper that provides its free variables (and 3.14's
  ``CO_HAS_DOCSTRING``, as the docstring itself is compared);
* exception-table entries are rewritten to instruction indices; entries that become
  empty once the dropped instructions are gone are removed, and adjacent entries with
  the same handler, depth and lasti are merged (dropping a NOP may join two ranges).

Extra rewrites, each needed because CPython's code generation depends on *line
numbers* (found by compiling the standard library's source and its ``ast.unparse``
round trip, which must compare equal):

* a jump to an unconditional jump is followed to the final target (the compiler only
  threads jumps between instructions on the same line);
* "conditional jump over an unconditional jump to L" becomes "inverted conditional jump
  to L" (3.12 has no backward conditional jump and emits the first form when the test
  and the loop are on one line, the second otherwise);
* 3.11's ``POP_JUMP_FORWARD_IF_X`` / ``POP_JUMP_BACKWARD_IF_X`` become ``POP_JUMP_IF_X``
  (the direction follows from the target);
* 3.13+ super-instructions (``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ...) are
  split in two: they are only formed from instructions on the same line;
* 3.14's ``LOAD_FAST_BORROW`` (a reference-counting optimization decided on the
  control-flow graph, whose blocks depend on lines) counts as ``LOAD_FAST``;
* 3.13+ class bodies store their first line number in ``__firstlineno__``; that constant
  is replaced by a placeholder.

Known residue: on 3.10/3.11 ``JUMP_IF_FALSE_OR_POP`` to a conditional jump is sometimes
rewritten to ``POP_JUMP_IF_FALSE`` past it, again depending on lines (3 code objects
in the 3.10/3.11 standard library); that is reported as a difference.

Everything else counts: opcodes, argument values, the low flag bits packed next to a
name index (``LOAD_GLOBAL``'s push-NULL bit, ``LOAD_ATTR``'s method bit, ...), the code
object's name, argument counts and names, flags, cell and free variables and docstring.
"""

from __future__ import annotations

import difflib
import dis
import sys
from bisect import bisect_left
from dataclasses import dataclass
from types import CodeType
from typing import cast

from ..codeobj import CodeFlag, code_kind

SKIPPED_OPNAMES = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "RESUME", "NOT_TAKEN"})
# CodeFlag.NESTED is informational; CodeFlag.HAS_DOCSTRING is covered by the docstring field.
IGNORED_FLAGS = CodeFlag.NESTED | (CodeFlag.HAS_DOCSTRING if sys.version_info >= (3, 14) else 0)

HEADER_TAG = "<code>"
EXCEPTION_TAG = "<exception>"
HEADER_FIELDS = (
    "name", "argcount", "posonlyargcount", "kwonlyargcount", "parameter names", "flags",
    "cellvars", "freevars", "docstring",
)

_JUMP_OPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
_CONST_OPS = frozenset(dis.hasconst)
_NAME_OPS = frozenset(dis.hasname)
_VAR_OPS = frozenset(dis.haslocal) | frozenset(dis.hasfree)

# 3.13+ combines two adjacent local-variable ops into one only when they are on the same
# line, so they are split back (3.14 adds the borrowed variant).
_SUPERINSTRUCTIONS = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("LOAD_FAST", "LOAD_FAST"),
}
# Jumps whose target is followed when it is another unconditional jump (the compiler
# threads jumps only between instructions of the same line).
_UNCONDITIONAL_JUMPS = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
    "JUMP_NO_INTERRUPT",
})
# 3.11 has forward and backward conditional jumps; the target index says which.
_OPNAME_ALIASES = {
    f"POP_JUMP_{way}_IF_{cond}": f"POP_JUMP_IF_{cond}"
    for way in ("FORWARD", "BACKWARD") for cond in ("TRUE", "FALSE", "NONE", "NOT_NONE")
}
# 3.14 turns LOAD_FAST into LOAD_FAST_BORROW (no reference count) where an analysis of
# the control-flow graph allows, and that graph depends on the lines too.
_OPNAME_ALIASES["LOAD_FAST_BORROW"] = "LOAD_FAST"
_INVERTED = {
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE",
}

# Opcodes whose argument packs flag bits below the co_names index: opname -> bit count.
_NAME_FLAG_BITS: dict[str, int] = {}
if sys.version_info >= (3, 11):
    _NAME_FLAG_BITS["LOAD_GLOBAL"] = 1
if sys.version_info >= (3, 12):
    _NAME_FLAG_BITS.update(LOAD_ATTR=1, LOAD_SUPER_ATTR=2)


def _norm_const(value: object, nested: bool) -> tuple:
    """A hashable, type-exact stand-in for a constant."""
    if isinstance(value, CodeType):
        if nested:
            return ("code", value.co_name, tuple(normalize(value)))
        return ("code", value.co_name)
    if isinstance(value, (float, complex)):
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_norm_const(v, nested) for v in value))
    if isinstance(value, frozenset):
        items = sorted((_norm_const(v, nested) for v in value), key=repr)
        return ("frozenset", tuple(items))
    if isinstance(value, slice):
        parts = (value.start, value.stop, value.step)
        return ("slice", tuple(_norm_const(v, nested) for v in parts))
    return (type(value).__name__, value)


def _docstring(code: CodeType) -> str | None:
    """The function docstring stored in ``co_consts`` (not visible in instructions)."""
    if sys.version_info >= (3, 14):
        has = code.co_flags & CodeFlag.HAS_DOCSTRING
        return code.co_consts[0] if has else None
    if not code.co_flags & CodeFlag.OPTIMIZED or code.co_name.startswith("<"):
        return None  # modules and classes store __doc__ explicitly; lambdas have none
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def _header(code: CodeType) -> tuple:
    nparams = code.co_argcount + code.co_kwonlyargcount
    nparams += bool(code.co_flags & CodeFlag.VARARGS) + bool(code.co_flags & CodeFlag.VARKEYWORDS)
    return (
        HEADER_TAG, code.co_name, code.co_argcount, code.co_posonlyargcount,
        code.co_kwonlyargcount, code.co_varnames[:nparams], code.co_flags & ~IGNORED_FLAGS,
        code.co_cellvars, code.co_freevars, _docstring(code),
    )


def _parse_exception_table(code: CodeType) -> list[tuple[int, int, int, int, int]]:
    """``(start, end, target, depth, lasti)`` in byte offsets, end exclusive (3.11+)."""
    data = getattr(code, "co_exceptiontable", b"")
    entries = []
    it = iter(data)

    def varint(byte: int) -> int:
        value = byte & 63
        while byte & 64:
            byte = next(it)
            value = (value << 6) | (byte & 63)
        return value

    for first in it:
        start = varint(first) * 2
        end = start + varint(next(it)) * 2
        target = varint(next(it)) * 2
        depth_lasti = varint(next(it))
        entries.append((start, end, target, depth_lasti >> 1, depth_lasti & 1))
    return entries


def _jump_target(ins: dis.Instruction) -> int:
    target = getattr(ins, "jump_target", None)
    return ins.argval if target is None else target


def normalize(code: CodeType, *, nested: bool = True) -> list[tuple]:
    """Return ``code`` as a list of comparable tuples.

    The first tuple is a header (name, argument layout, flags, cell/free variables,
    docstring), then one ``(opname, argument)`` tuple per kept instruction (name ops
    with flag bits give ``(opname, name, flags)``), then one
    ``("<exception>", start, end, target, depth, lasti)`` tuple per exception-table
    entry, all positions being indices into this instruction list. With
    ``nested=False`` a nested code object constant is represented by its name only
    (it is checked on its own).
    """
    instructions = list(dis.get_instructions(code))
    kept = [ins for ins in instructions if ins.opname not in SKIPPED_OPNAMES]
    kept_offsets = [ins.offset for ins in kept]

    def kept_index(offset: int) -> int:
        return bisect_left(kept_offsets, offset)

    # "jump if C over an unconditional jump to L" is "jump if not C to L" (3.12 can only
    # emit the first form for a conditional jump backwards on one line)
    fused: dict[int, str] = {}  # index of the conditional jump -> inverted opname
    for n in range(len(kept) - 1):
        cond = _OPNAME_ALIASES.get(kept[n].opname, kept[n].opname)
        if (cond in _INVERTED and kept[n + 1].opname in _UNCONDITIONAL_JUMPS
                and n not in fused and n - 1 not in fused
                and kept_index(_jump_target(kept[n])) == n + 2):
            fused[n] = _INVERTED[cond]
    # output position of each kept instruction (super-instructions expand to two)
    positions = []
    pos = 0
    for n, ins in enumerate(kept):
        positions.append(pos)
        if n - 1 not in fused:
            pos += 2 if ins.opname in _SUPERINSTRUCTIONS else 1
    positions.append(pos)

    def resolve(offset: int) -> int:
        k = kept_index(offset)
        seen = set()
        while k < len(kept) and kept[k].opname in _UNCONDITIONAL_JUMPS and k not in seen:
            seen.add(k)
            k = kept_index(_jump_target(kept[k]))
        return positions[k]

    firstlineno_store = sys.version_info >= (3, 13) and code_kind(code) == "class"
    out: list[tuple] = [_header(code)]
    for n, ins in enumerate(kept):
        opname = _OPNAME_ALIASES.get(ins.opname, ins.opname)
        if n in fused:
            out.append((fused[n], ("->", resolve(_jump_target(kept[n + 1])))))
            continue
        if n - 1 in fused:
            continue
        if ins.opname in _SUPERINSTRUCTIONS:
            first, second = _SUPERINSTRUCTIONS[ins.opname]
            out.append((first, ins.argval[0]))
            out.append((second, ins.argval[1]))
            continue
        if (firstlineno_store and n + 1 < len(kept) and kept[n + 1].opname == "STORE_NAME"
                and kept[n + 1].argval == "__firstlineno__"):
            out.append(("LOAD_CONST", ("firstlineno", None)))
            continue
        if ins.opcode in _JUMP_OPS:
            out.append((opname, ("->", resolve(_jump_target(ins)))))
        elif ins.opcode in _CONST_OPS:
            out.append((opname, _norm_const(ins.argval, nested)))
        elif ins.opcode in _NAME_OPS:
            bits = _NAME_FLAG_BITS.get(ins.opname, 0)
            if bits:
                out.append((opname, ins.argval, cast(int, ins.arg) & ((1 << bits) - 1)))
            else:
                out.append((opname, ins.argval))
        elif ins.opcode in _VAR_OPS:
            out.append((opname, ins.argval))
        else:
            out.append((opname, ins.arg))

    merged: list[list[int]] = []
    for start, end, target, depth, lasti in _parse_exception_table(code):
        s = positions[kept_index(start)]
        e = positions[kept_index(end)]
        t = positions[kept_index(target)]
        if s >= e:
            continue
        if merged and merged[-1][1] == s and merged[-1][2:] == [t, depth, lasti]:
            merged[-1][1] = e
        else:
            merged.append([s, e, t, depth, lasti])
    out.extend((EXCEPTION_TAG, *entry) for entry in merged)
    return out


def _fmt_const(norm: tuple) -> str:
    kind, value = norm[0], norm[1]
    if kind == "firstlineno":
        return "<first line number>"
    if kind == "code":
        return f"<code {value}>"
    if kind in ("float", "complex"):
        return str(value)
    if kind in ("tuple", "frozenset", "slice"):
        inner = ", ".join(_fmt_const(v) for v in value)
        if kind == "tuple":
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"frozenset({{{inner}}})" if kind == "frozenset" else f"slice({inner})"
    return repr(value)


def format_item(item: tuple) -> str:
    """One normalized tuple as a readable line."""
    tag = item[0]
    if tag == HEADER_TAG:
        fields = zip(HEADER_FIELDS, item[1:])  # noqa: B905 - (3.8/3.9 run it: no strict)
        return "code " + ", ".join(f"{n}={v!r}" for n, v in fields)
    if tag == EXCEPTION_TAG:
        s, e, t, depth, lasti = item[1:]
        return f"exception [{s}, {e}) -> {t} depth={depth}{' lasti' if lasti else ''}"
    if len(item) == 3:
        return f"{item[0]} {item[1]!r} (flags {item[2]})"
    opname, arg = item
    if arg is None:
        return opname
    if isinstance(arg, tuple) and arg and arg[0] == "->":
        return f"{opname} -> {arg[1]}"
    if opname in dis.opmap and dis.opmap[opname] in _CONST_OPS and isinstance(arg, tuple):
        return f"{opname} {_fmt_const(arg)}"
    return f"{opname} {arg!r}"


@dataclass(frozen=True)
class Difference:
    """The first place where two normalized code objects disagree."""

    where: str
    expected: str
    actual: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.where}: expected {self.expected}, got {self.actual}"


def _split(items: list[tuple]) -> tuple[tuple, list[tuple], list[tuple]]:
    body = [i for i in items[1:] if i[0] != EXCEPTION_TAG]
    table = [i for i in items[1:] if i[0] == EXCEPTION_TAG]
    return items[0], body, table


def _listing(items: list[tuple]) -> list[str]:
    return [f"{n:4d} {format_item(i)}" for n, i in enumerate(items)]


def compare(original: CodeType, recompiled: CodeType, *, nested: bool = True,
            context: int = 3) -> Difference | None:
    """Return the first difference between two code objects' normalized forms, or None.

    ``detail`` holds a unified diff of the instruction listings around that point.
    """
    a_items = normalize(original, nested=nested)
    b_items = normalize(recompiled, nested=nested)
    if a_items == b_items:
        return None
    a_head, a_body, a_table = _split(a_items)
    b_head, b_body, b_table = _split(b_items)
    detail = "\n".join(difflib.unified_diff(
        _listing(a_body + a_table), _listing(b_body + b_table), "original", "recompiled",
        n=context, lineterm=""))
    if a_head != b_head:
        for name, x, y in zip(HEADER_FIELDS, a_head[1:], b_head[1:]):  # noqa: B905 - (3.8/3.9)
            if x != y:
                shown = (hex(x), hex(y)) if name == "flags" else (repr(x), repr(y))
                return Difference(f"code object {name}", *shown, detail)
    for n, (x, y) in enumerate(zip(a_body, b_body)):  # noqa: B905 - (3.8/3.9: no strict)
        if x != y:
            return Difference(f"instruction {n}", format_item(x), format_item(y), detail)
    if len(a_body) != len(b_body):
        n = min(len(a_body), len(b_body))
        more = a_body if len(a_body) > n else b_body
        extra = f"{len(more) - n} more instructions, first {format_item(more[n])}"
        exp, act = (extra, "end of code") if more is a_body else ("end of code", extra)
        return Difference(f"instruction {n}", exp, act, detail)
    for n in range(max(len(a_table), len(b_table))):
        x = format_item(a_table[n]) if n < len(a_table) else "no entry"
        y = format_item(b_table[n]) if n < len(b_table) else "no entry"
        if x != y:
            return Difference(f"exception table entry {n}", x, y, detail)
    raise AssertionError("normalized forms differ but no difference was found")

