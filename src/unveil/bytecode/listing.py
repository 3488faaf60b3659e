"""The raw listing of a code object: what :func:`dis.get_instructions` gives, read faster
and for any CPython 3.8-3.14.

:func:`instructions` decodes ``co_code`` itself with the opcode table of the code's own
version (:mod:`.opcodes`, committed data: a code object read from another version's file
is listed as that version's ``dis`` would list it) and the rules of that version's ``dis``
(``EXTENDED_ARG``, inline caches skipped, names and constants resolved, jump targets as byte
offsets). ``dis`` takes 2.5-6 µs an instruction (line numbers, positions, labels and an
``argrepr`` for each); unveil lists every code object it decompiles and checks, Dynamo's on
its compile path.

A :class:`Raw` holds ``opname``, ``opcode`` (the number in that version), ``arg``,
``argval``, ``offset`` as ``dis`` gives them and ``argrepr`` only where unveil reads it
(operators, comparisons, intrinsics, 3.14's common constants and special methods;
otherwise empty). Constants are never ``repr``'d: Dynamo's code holds tensors, modules and
config dicts. A live code object with an opcode this reader does not know (specialised,
instrumented) is listed by the running interpreter's ``dis`` instead, through the same
record; in another version's code such an opcode is malformed input.
"""

from __future__ import annotations

import dis
import sys
import weakref
from types import CodeType
from typing import Any, Generic, NamedTuple, TypeVar, cast

from ..codeobj import code_version
from ..errors import BadInputError
from . import opcodes

_T = TypeVar("_T")

VERSION = sys.version_info[:2]


class Raw(NamedTuple):
    """One instruction as ``dis`` lists it (``argrepr`` as described above)."""

    opname: str
    opcode: int
    arg: int | None
    argval: Any
    argrepr: str
    offset: int


# ---------------------------------------------------------------- each version's tables

# what an opcode's argument stands for, as the reading loop tests it (ints: fast to compare)
(_PLAIN, _CONST, _NAME, _JUMP, _VARNAME, _CELLNAME, _LOCALSPLUS, _PAIR, _COMPARE, _FORMAT,
 _CONVERT, _BINARY, _INTRINSIC_1, _INTRINSIC_2, _COMMON, _SPECIAL, _IS, _CONTAINS) = range(18)
_KINDS = {"const": _CONST, "unknown": _CONST, "name": _NAME, "jump": _JUMP,
          "varname": _VARNAME, "cellname": _CELLNAME, "localsplus": _LOCALSPLUS,
          "local_pair": _PAIR, "compare": _COMPARE, "format_value": _FORMAT,
          "convert_value": _CONVERT, "binary_op": _BINARY, "intrinsic1": _INTRINSIC_1,
          "intrinsic2": _INTRINSIC_2, "common_constant": _COMMON, "special_method": _SPECIAL,
          "is_op": _IS, "contains_op": _CONTAINS, "function_flags": _PLAIN}
_FORMAT_CONVERTERS = (None, str, repr, ascii)
_INT_OVERFLOW = 2 ** 31


class _Tables:
    """One CPython version's opcode facts (its committed :mod:`.opcodes` table) in the form
    the reading loop wants: lists by opcode, sets of opcodes."""

    def __init__(self, version: tuple[int, int]) -> None:
        t = opcodes.table(version)
        self.version = version
        self.opname = [t.name(op) for op in range(256)]
        self.caches = [t.cache_entries.get(op, 0) for op in range(256)]
        self.has_arg = t.has_arg
        self.extended_arg = t.extended_arg
        self.wraps = t.extended_arg_bits is not None  # (3.11+: a signed 32-bit argument)
        self.localsplus = t.localsplus  # (3.11+: locals, cells and free variables, one list)
        # base opcodes only: a specialised or instrumented one (never in a file, nor in
        # co_code) sends a live code object to dis
        self.known = frozenset(op for op in range(256) if t.opname[op] is not None
                               and not t.opname[op].startswith("INSTRUMENTED_")  # type: ignore[union-attr]  # not None
                               and t.deopt[op] == op)
        self.kind = [_PLAIN] * 256
        self.shift = [0] * 256
        for op, rule in t.args.items():
            if op < 256:
                self.kind[op] = _KINDS[rule.kind]
                self.shift[op] = rule.shift
        self.jumps = {op: rule for op, rule in t.jumps.items() if op < 256}
        self.bool_flag = next((r.bool_flag for r in t.args.values() if r.kind == "compare"), 0)
        self.cmp_op = t.cmp_op
        self.nb_ops = [symbol for _, symbol in t.nb_ops]
        self.intrinsic1, self.intrinsic2 = t.intrinsic1, t.intrinsic2
        self.common_constants = t.common_constants
        self.special_names = t.special_method_names
        #: every conditional jump (and/or, chained comparisons, if, while...)
        self.conditional = frozenset(op for op in self.known if "_IF_" in self.opname[op])
        #: opcode numbers of sets of names (:func:`has_opcode`)
        self.numbers: dict[tuple[str, ...], frozenset[int]] = {}
        #: the opcodes whose ``argrepr`` unveil reads (operators, comparisons...)
        self.argrepr_read = frozenset(op for op in range(256) if self.kind[op] in (
            _COMPARE, _BINARY, _INTRINSIC_1, _INTRINSIC_2, _COMMON, _SPECIAL, _IS, _CONTAINS))


_TABLES: dict[tuple[int, int], _Tables] = {}


def tables(version: tuple[int, int]) -> _Tables:
    """The reader's tables of CPython ``version`` (BadInputError for one without)."""
    known = _TABLES.get(version)
    if known is None:
        if version not in opcodes.SUPPORTED:
            raise BadInputError(f"no opcode table for Python {version[0]}.{version[1]}: "
                                "unveil reads the bytecode of Python 3.8-3.14")
        known = _TABLES[version] = _Tables(version)
    return known


#: the running interpreter's tables (None on a Python newer than every table: its live
#: code objects are listed by its own dis)
_HOST = tables(VERSION) if VERSION in opcodes.SUPPORTED else None


# ---------------------------------------------------------------- reading

def has_opcode(code: CodeType, names: tuple[str, ...]) -> bool:
    """Whether ``code`` may hold one of the instructions ``names`` (a quick test of its
    bytes: every code unit starts with its opcode; an argument byte may match too)."""
    t = tables(code_version(code))
    wanted = t.numbers.get(names)
    if wanted is None:
        wanted = t.numbers[names] = frozenset(op for op in range(256) if t.opname[op] in names)
    return not wanted.isdisjoint(code.co_code[::2])


def branches(code: CodeType) -> bool:
    """Whether ``code`` has a conditional jump (without one there is no ``and``, ``or``
    or chained comparison in it)."""
    return not tables(code_version(code)).conditional.isdisjoint(code.co_code[::2])



_COPIES = ("COPY", "DUP_TOP", "DUP_TOP_TWO")


def chains(code: CodeType) -> bool:
    """Whether ``code`` may hold a chained comparison: a conditional jump, and an
    instruction that copies a stack value (the operand two comparisons share)."""
    return branches(code) and has_opcode(code, _COPIES)


def qualname_constants(code: CodeType) -> set[int]:
    """Indices in ``co_consts`` of the strings that give nested code its ``__qualname__``:
    on 3.10 the one ``MAKE_FUNCTION`` takes; in a class body, the one stored to
    ``__qualname__`` (3.11+ keeps a function's in its code object, ``co_qualname``)."""
    found: set[int] = set()
    listed = instructions(code)
    for ins, after in zip(listed, listed[1:], strict=False):
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, str) and (
                (after.opname == "MAKE_FUNCTION" and code_version(code) < (3, 11))
                or (after.opname == "STORE_NAME" and after.argval == "__qualname__")):
            found.add(cast(int, ins.arg))  # LOAD_CONST has an argument
    return found


def where(code: CodeType) -> str:
    """``qualname (file)``, for messages about ``code``."""
    return f"{getattr(code, 'co_qualname', code.co_name)} ({code.co_filename})"


def instructions(code: CodeType) -> list[Raw]:
    """``dis.get_instructions(code)`` as :class:`Raw` records (see the module docstring).
    The last few code objects listed are remembered (weakly, by identity): Dynamo's code
    is read by the decompiler and then by the equivalence check."""
    return list(_listed(code)[0])


def instruction_starts(code: CodeType) -> set[int]:
    """The offsets where the instructions of ``code`` (:func:`instructions`) start (not to
    be changed)."""
    return _listed(code)[1]


def may_extend(code: CodeType) -> bool:
    """Whether ``code`` may hold an ``EXTENDED_ARG`` (a quick test of its bytes, as
    :func:`has_opcode`'s; True where no table gives its number)."""
    t = _HOST if isinstance(code, CodeType) else tables(code_version(code))
    return t is None or t.extended_arg in code.co_code[::2]


def _listed(code: CodeType) -> tuple[tuple[Raw, ...], set[int]]:
    """:func:`instructions` and :func:`instruction_starts` of ``code``."""
    known = _RECENT.get(code)
    if known is not None:
        return known
    live = isinstance(code, CodeType)  # (else read from a file, of any version)
    t = _HOST if live else tables(code_version(code))
    try:
        result = _decode(code, t) if t is not None else None
        if result is None:
            if not live:
                assert t is not None
                op = next((op for op in code.co_code[::2] if op not in t.known), -1)
                raise BadInputError(f"malformed bytecode in {where(code)}: opcode {op} is no "
                                    f"instruction of Python {t.version[0]}.{t.version[1]}")
            result = _from_dis(code)
    except (IndexError, KeyError, ValueError) as exc:  # (an argument past its table)
        raise BadInputError(f"malformed bytecode in {where(code)}: an instruction's "
                            f"argument is out of range ({exc})") from None
    starts = {r.offset for r in result}
    jumps = t.jumps if t is not None else set(dis.hasjrel) | set(dis.hasjabs)
    if not {r.argval for r in result if r.opcode in jumps} <= starts:
        r = next(r for r in result if r.opcode in jumps and r.argval not in starts)
        raise BadInputError(f"malformed bytecode in {where(code)}: the jump at offset "
                            f"{r.offset} goes to offset {r.argval}, where no "
                            "instruction starts")
    known = (tuple(result), starts)
    _RECENT.put(code, known)
    return known


class RecentCodes(Generic[_T]):
    """A value per code object for the last ``size`` code objects, newest first, each
    held weakly: an entry goes with its code object, so the constants it holds (a
    tensor, say) are not kept alive here. (A list, not a dict by id: the weak
    reference's callback may run in the middle of any allocation, a look-up's included,
    and a list read meanwhile does not fail.)"""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: list[tuple[weakref.ref[CodeType], _T]] = []

    def get(self, code: CodeType) -> _T | None:
        for known, value in self._entries:
            if known() is code:
                return value
        return None

    def put(self, code: CodeType, value: _T) -> None:
        self._entries.insert(0, (weakref.ref(code, self._forget), value))
        del self._entries[self.size:]

    def _forget(self, gone: weakref.ref[CodeType]) -> None:
        self._entries[:] = [entry for entry in self._entries if entry[0] is not gone]


_RECENT: RecentCodes[tuple[tuple[Raw, ...], set[int]]] = RecentCodes()  # (its listing, starts)


def _decode(code: CodeType, t: _Tables | None = None) -> list[Raw] | None:
    """The listing, with the tables ``t`` (by default the code's version's), or None where
    the code holds an opcode this reader does not know."""
    if t is None:
        t = tables(code_version(code))
    raw = code.co_code
    consts, names = code.co_consts, code.co_names
    if not t.localsplus:  # (3.8-3.10)
        local_name = code.co_varnames.__getitem__
        free_name = (code.co_cellvars + code.co_freevars).__getitem__
    elif hasattr(code, "_varname_from_oparg"):  # (a live code object)
        local_name = free_name = code._varname_from_oparg
    else:  # (a code read from a file has its names; else they are in CPython's order)
        names_plus = getattr(code, "co_localsplusnames", None) or (
            *code.co_varnames, *(c for c in code.co_cellvars if c not in code.co_varnames),
            *code.co_freevars)
        local_name = free_name = names_plus.__getitem__
    opname, caches, has_arg, known, kinds, shifts = \
        t.opname, t.caches, t.has_arg, t.known, t.kind, t.shift
    extended_arg, wraps = t.extended_arg, t.wraps
    out: list[Raw] = []
    append = out.append
    new = tuple.__new__  # (Raw(...) goes through a Python-level __new__)
    extended = 0
    size = len(raw)
    next_offset = 0
    while next_offset < size:
        offset = next_offset
        op = raw[offset]
        if op not in known:
            return None
        next_offset = offset + 2 + 2 * caches[op]  # (past its inline caches)
        if op not in has_arg:
            extended = 0
            append(new(Raw, (opname[op], op, None, None, "", offset)))
            continue
        arg = raw[offset + 1] | extended
        if op == extended_arg:
            extended = arg << 8
            if wraps and extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
            append(new(Raw, (opname[op], op, arg, arg, "", offset)))
            continue
        extended = 0
        argval: Any = arg
        argrepr = ""
        kind = kinds[op]
        if kind == _PLAIN:
            pass
        elif kind == _CONST:
            argval = consts[arg]
        elif kind == _NAME:
            argval = names[arg >> shifts[op]]
        elif kind == _JUMP:
            argval = t.jumps[op].target(offset, arg)
        elif kind == _LOCALSPLUS or kind == _VARNAME:
            argval = local_name(arg)
        elif kind == _CELLNAME:
            argval = free_name(arg)
        elif kind == _PAIR:
            argval = (local_name(arg >> 4), local_name(arg & 15))
        elif kind == _COMPARE:
            argval = argrepr = t.cmp_op[arg >> shifts[op]]
            if arg & t.bool_flag:
                argrepr = f"bool({argrepr})"
        elif kind == _FORMAT:
            argval = (_FORMAT_CONVERTERS[arg & 3], bool(arg & 4))
        elif kind == _CONVERT:
            argval = _FORMAT_CONVERTERS[arg]
        elif kind == _BINARY:
            argrepr = t.nb_ops[arg]
        elif kind == _INTRINSIC_1:
            argrepr = t.intrinsic1[arg]
        elif kind == _INTRINSIC_2:
            argrepr = t.intrinsic2[arg]
        elif kind == _COMMON:
            argrepr = t.common_constants[arg]
        elif kind == _SPECIAL:
            argrepr = t.special_names[arg]
        elif kind == _IS:
            argrepr = "is not" if arg else "is"
        elif kind == _CONTAINS:
            argrepr = "not in" if arg else "in"
        append(new(Raw, (opname[op], op, arg, argval, argrepr, offset)))
    return out


class _Unshown:
    """Stands in for a constant while :mod:`dis` lists the code: dis writes every loaded
    constant's ``repr``, which for objects Dynamo puts in its code (a dict of a model's
    configuration, a tensor) costs milliseconds and may run their code."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<constant>"


# the types of constants a compiler writes as literals (their repr is cheap and runs no
# user code); Dynamo's code also holds other objects: modules, functions, tensors, dicts
LITERAL_TYPES = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))
_SHOWN = (*LITERAL_TYPES, CodeType)


def _shown(value: object) -> bool:
    """Whether ``dis`` may write ``value``'s repr: literals, code, and tuples or frozensets
    of those."""
    if type(value) in (tuple, frozenset):
        return all(_shown(v) for v in value)  # type: ignore[attr-defined]  # a tuple or frozenset
    return type(value) in _SHOWN


_ARGREPR_READ = _HOST.argrepr_read if _HOST is not None else frozenset(dis.hascompare)


def _from_dis(code: CodeType) -> list[Raw]:
    """The listing through ``dis`` itself, with stand-ins for constants other than literals
    and code objects (``argval`` is still the constant)."""
    consts = code.co_consts
    stand_ins = {k: _Unshown() for k, c in enumerate(consts) if not _shown(c)}
    shown = code.replace(co_consts=tuple(stand_ins.get(k, c) for k, c in enumerate(consts))) \
        if stand_ins else code
    back = {id(v): consts[k] for k, v in stand_ins.items()}
    return [Raw(i.opname, i.opcode, i.arg, back.get(id(i.argval), i.argval),
                i.argrepr if i.opcode in _ARGREPR_READ else "", i.offset)
            for i in dis.get_instructions(shown)]
