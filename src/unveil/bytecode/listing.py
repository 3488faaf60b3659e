"""The raw listing of a code object: what :func:`dis.get_instructions` gives, read faster.

:func:`instructions` decodes ``co_code`` itself with the tables of the running
interpreter's ``dis``/``opcode`` modules and the rules of its ``dis`` (``EXTENDED_ARG``,
inline caches skipped, names and constants resolved, jump targets as byte offsets). ``dis``
takes 2.5-6 µs an instruction (line numbers, positions, labels and an ``argrepr`` for each);
unveil lists every code object it decompiles and checks, Dynamo's on its compile path.

A :class:`Raw` holds ``opname``, ``opcode``, ``arg``, ``argval``, ``offset`` as ``dis``
gives them and ``argrepr`` only where unveil reads it (operators, comparisons,
intrinsics, 3.14's common constants and special methods; otherwise empty). Constants
are never ``repr``'d: Dynamo's code holds tensors, modules and config dicts. A code
object with an opcode this reader does not know (specialised, instrumented, a version
whose tables it cannot find) is listed by ``dis`` instead, through the same record.
"""

from __future__ import annotations

import dis
import opcode as _opcode
import sys
import weakref
from types import CodeType
from typing import Any, Generic, NamedTuple, TypeVar, cast

from ..errors import BadInputError

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


# ---------------------------------------------------------------- the interpreter's tables


def _cache_counts() -> list[int] | None:
    """Inline cache entries after each opcode (3.11+), or None where unknown."""
    entries = getattr(_opcode, "_inline_cache_entries", None)
    if VERSION < (3, 11):
        return [0] * 256
    if isinstance(entries, dict):  # 3.13+: by name
        return [entries.get(name, 0) for name in dis.opname[:256]]
    if isinstance(entries, list | tuple) and len(entries) >= 256:
        return list(entries[:256])
    return None


def _names_of(table: str, key: int = 1) -> list[str]:
    found = getattr(_opcode, table, None) or getattr(dis, table, None) or []
    return [entry[key] if isinstance(entry, tuple) else str(entry) for entry in found]


_CACHES = _cache_counts()
_OPNAME = dis.opname
_HAS_ARG = set(getattr(dis, "hasarg", ())) if VERSION >= (3, 12) else \
    set(range(dis.HAVE_ARGUMENT, 256))
_EXTENDED_ARG = dis.EXTENDED_ARG
_INT_OVERFLOW = 2 ** 31
# base opcodes only: a specialised or instrumented one (never in co_code) sends the code to dis
_SPECIALISED = {name for names in getattr(_opcode, "_specializations", {}).values()
                for name in names} | set(getattr(_opcode, "_specialized_instructions", ()))
_KNOWN = {op for op in range(256) if not _OPNAME[op].startswith(("<", "INSTRUMENTED_"))
          and _OPNAME[op] not in _SPECIALISED}
_HAS_JREL, _HAS_JABS = set(dis.hasjrel), set(dis.hasjabs)
_HAS_CONST, _HAS_NAME = set(dis.hasconst), set(dis.hasname)
_HAS_LOCAL, _HAS_FREE, _HAS_COMPARE = set(dis.haslocal), set(dis.hasfree), set(dis.hascompare)
_BACKWARD = {_opcode.opmap[n] for n in ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
             + (("END_ASYNC_FOR",) if VERSION >= (3, 14) else ()) if n in _opcode.opmap}
if VERSION < (3, 13):  # (the name test of 3.11/3.12's dis)
    _BACKWARD = {op for op in range(256) if "JUMP_BACKWARD" in _OPNAME[op]}
_JUMP_CACHES = VERSION >= (3, 12)  # jumps count from after their caches


def _op(name: str) -> int:
    return _opcode.opmap.get(name, -1)


_LOAD_GLOBAL, _LOAD_ATTR, _LOAD_SUPER_ATTR = _op("LOAD_GLOBAL"), _op("LOAD_ATTR"), \
    _op("LOAD_SUPER_ATTR")
_PAIRS = {_op(n) for n in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
                           "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST")} - {-1}
_FORMAT_VALUE, _CONVERT_VALUE = _op("FORMAT_VALUE"), _op("CONVERT_VALUE")
_BINARY_OP = _op("BINARY_OP")
_INTRINSIC_1, _INTRINSIC_2 = _op("CALL_INTRINSIC_1"), _op("CALL_INTRINSIC_2")
_COMMON_CONSTANT, _LOAD_SPECIAL = _op("LOAD_COMMON_CONSTANT"), _op("LOAD_SPECIAL")
_IS_OP, _CONTAINS_OP = _op("IS_OP"), _op("CONTAINS_OP")
_NB_OPS = _names_of("_nb_ops")
_INTRINSIC_1_NAMES = _names_of("_intrinsic_1_descs", 0)
_INTRINSIC_2_NAMES = _names_of("_intrinsic_2_descs", 0)
_SPECIAL_NAMES = _names_of("_special_method_names", 0)
_COMMON_CONSTANTS = list(getattr(_opcode, "_common_constants", ()) or
                         getattr(dis, "_common_constants", ()))
_FORMAT_CONVERTERS = (None, str, repr, ascii)
_COMPARE_SHIFT = 5 if VERSION >= (3, 13) else 4 if VERSION >= (3, 12) else 0


# ---------------------------------------------------------------- reading

# every conditional jump of every version (and/or, chained comparisons, if, while...)
_CONDITIONAL = frozenset(op for op in _KNOWN if "_IF_" in _OPNAME[op])


def branches(code: CodeType) -> bool:
    """Whether ``code`` has a conditional jump (without one there is no ``and``, ``or``
    or chained comparison in it)."""
    return not _CONDITIONAL.isdisjoint(code.co_code[::2])


def qualname_constants(code: CodeType) -> set[int]:
    """Indices in ``co_consts`` of the strings that give nested code its ``__qualname__``:
    on 3.10 the one ``MAKE_FUNCTION`` takes; in a class body, the one stored to
    ``__qualname__`` (3.11+ keeps a function's in its code object, ``co_qualname``)."""
    found: set[int] = set()
    listed = instructions(code)
    for ins, after in zip(listed, listed[1:], strict=False):
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, str) and (
                (after.opname == "MAKE_FUNCTION" and VERSION < (3, 11))
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
    listed = _RECENT.get(code)
    if listed is not None:
        return list(listed)
    try:
        result = _decode(code) if _CACHES is not None else None
        if result is None:
            result = _from_dis(code)
    except (IndexError, KeyError, ValueError) as exc:  # (an argument past its table)
        raise BadInputError(f"malformed bytecode in {where(code)}: an instruction's "
                            f"argument is out of range ({exc})") from None
    starts = {r.offset for r in result}
    for r in result:
        if (r.opcode in _HAS_JREL or r.opcode in _HAS_JABS) and r.argval not in starts:
            raise BadInputError(f"malformed bytecode in {where(code)}: the jump at offset "
                                f"{r.offset} goes to offset {r.argval}, where no "
                                "instruction starts")
    _RECENT.put(code, tuple(result))
    return result


class RecentCodes(Generic[_T]):
    """A value per code object for the last ``size`` code objects, newest first, each
    held weakly: an entry goes with its code object, so the constants it holds (a
    tensor, say) are not kept alive here."""

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


_RECENT: RecentCodes[tuple[Raw, ...]] = RecentCodes()  # (code, its instructions)


def _decode(code: CodeType) -> list[Raw] | None:
    """The listing, or None where the code holds an opcode this reader does not know."""
    raw = code.co_code
    consts, names = code.co_consts, code.co_names
    if VERSION >= (3, 11):
        local_name = code._varname_from_oparg  # type: ignore[attr-defined]  # CPython's private helper, 3.11+
        free_name = local_name
    else:
        local_name = code.co_varnames.__getitem__
        free_name = (code.co_cellvars + code.co_freevars).__getitem__
    caches = _CACHES
    assert caches is not None
    out: list[Raw] = []
    append = out.append
    new = tuple.__new__  # (Raw(...) goes through a Python-level __new__)
    extended = 0
    skip = 0
    for offset in range(0, len(raw), 2):
        if skip:
            skip -= 1
            continue
        op = raw[offset]
        if op not in _KNOWN:
            return None
        skip = caches[op]
        if op not in _HAS_ARG:
            extended = 0
            append(new(Raw, (_OPNAME[op], op, None, None, "", offset)))
            continue
        arg = raw[offset + 1] | extended
        if op == _EXTENDED_ARG:
            extended = arg << 8
            if extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
            append(new(Raw, (_OPNAME[op], op, arg, arg, "", offset)))
            continue
        extended = 0
        argval: Any = arg
        argrepr = ""
        if op in _HAS_CONST:
            argval = consts[arg]
        elif op in _HAS_NAME:
            if op == _LOAD_GLOBAL and VERSION >= (3, 11) or op == _LOAD_ATTR and VERSION >= (3, 12):
                argval = names[arg >> 1]
            elif op == _LOAD_SUPER_ATTR:
                argval = names[arg >> 2]
            else:
                argval = names[arg]
        elif op in _HAS_JABS:
            argval = arg * 2
        elif op in _HAS_JREL:
            argval = offset + 2 + (-arg if op in _BACKWARD else arg) * 2
            if _JUMP_CACHES:
                argval += 2 * skip
        elif op in _PAIRS:
            argval = (local_name(arg >> 4), local_name(arg & 15))
        elif op in _HAS_LOCAL:
            argval = local_name(arg)
        elif op in _HAS_FREE:
            argval = free_name(arg)
        elif op in _HAS_COMPARE:
            argval = argrepr = dis.cmp_op[arg >> _COMPARE_SHIFT]
            if VERSION >= (3, 13) and arg & 16:
                argrepr = f"bool({argrepr})"
        elif op == _FORMAT_VALUE:
            argval = (_FORMAT_CONVERTERS[arg & 3], bool(arg & 4))
        elif op == _CONVERT_VALUE:
            argval = _FORMAT_CONVERTERS[arg]
        elif op == _BINARY_OP:
            argrepr = _NB_OPS[arg]
        elif op == _INTRINSIC_1:
            argrepr = _INTRINSIC_1_NAMES[arg]
        elif op == _INTRINSIC_2:
            argrepr = _INTRINSIC_2_NAMES[arg]
        elif op == _COMMON_CONSTANT:
            value = _COMMON_CONSTANTS[arg]
            argrepr = value.__name__ if isinstance(value, type) else repr(value)
        elif op == _LOAD_SPECIAL:
            argrepr = _SPECIAL_NAMES[arg]
        elif op == _IS_OP and VERSION >= (3, 14):
            argrepr = "is not" if arg else "is"
        elif op == _CONTAINS_OP and VERSION >= (3, 14):
            argrepr = "not in" if arg else "in"
        append(new(Raw, (_OPNAME[op], op, arg, argval, argrepr, offset)))
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


_ARGREPR_READ = {_BINARY_OP, *_HAS_COMPARE, _INTRINSIC_1, _INTRINSIC_2, _COMMON_CONSTANT,
                 _LOAD_SPECIAL} | ({_IS_OP, _CONTAINS_OP} if VERSION >= (3, 14) else set())


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
