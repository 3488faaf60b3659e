"""Opcode tables of CPython 3.8-3.14 as committed data, independent of the running Python.

Each ``pyXY.json`` beside this file was written by ``scripts/gen_opcode_tables.py`` run by
CPython X.Y itself (3.14: in Pyodide); tests/test_opcode_tables.py regenerates them with every
installed interpreter and fails on drift. :func:`table` loads one as an :class:`OpcodeTable`:
``opcode``'s facts (names, the ``has*`` sets, inline cache sizes, binary-op and intrinsic
names) plus the rules by which that version's ``dis`` computes ``argval`` (:class:`JumpRule`,
:class:`ArgRule`), which :mod:`unveil.bytecode.listing` applies, and before 3.11 what that
version's ``dis.stack_effect`` says (:meth:`OpcodeTable.stack_effect`), by which
:mod:`unveil.bytecode.exceptions` finds 3.10's handlers.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, cast

__all__ = ["SUPPORTED", "ArgKind", "ArgRule", "Effect", "JumpRule", "OpcodeTable", "table"]

#: The versions with a table, oldest first.
SUPPORTED: tuple[tuple[int, int], ...] = ((3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14))

#: How an argument becomes ``argval`` (the branch of that version's dis chain it takes).
ArgKind = Literal[
    "const", "unknown", "name", "jump", "varname", "cellname", "localsplus", "local_pair",
    "compare", "format_value", "convert_value", "function_flags", "binary_op", "intrinsic1",
    "intrinsic2", "common_constant", "special_method", "is_op", "contains_op",
]
JumpKind = Literal["forward", "backward", "absolute"]
LineTable = Literal["lnotab", "linetable", "locations"]


#: A stack effect as a function of the instruction's argument.
Effect = Callable[[int], int]


@dataclass(frozen=True, slots=True)
class JumpRule:
    """Where a jump goes: relative ``offset + 2 + ±arg*unit + 2*caches``, or ``arg*unit``."""

    kind: JumpKind
    unit: int  # bytes per argument step: 1 (3.8/3.9) or 2
    caches: int  # inline cache code units the jump starts after (3.12+)
    repr: str  # argrepr format with {offset} or {label} ("" for 3.8/3.9's absolute jumps)

    def target(self, offset: int, arg: int) -> int:
        """The byte offset jumped to by this opcode at ``offset`` with argument ``arg``."""
        if self.kind == "absolute":
            return arg * self.unit
        step = -arg if self.kind == "backward" else arg
        return offset + 2 + step * self.unit + 2 * self.caches


@dataclass(frozen=True, slots=True)
class ArgRule:
    """How dis renders an opcode's argument."""

    kind: ArgKind
    shift: int = 0  # name: the index is arg >> shift; compare: cmp_op[arg >> shift]
    flag: str = ""  # name: argrepr format when the low bit is set ("NULL + {}")
    bool_flag: int = 0  # compare (3.13+): the bit that makes argrepr "bool(...)"


@dataclass(frozen=True, eq=False)
class OpcodeTable:
    """One CPython version's opcode facts; opcodes are ints, sets frozensets of them."""

    version: tuple[int, int]
    magic: bytes  # importlib.util.MAGIC_NUMBER
    magic_number: int  # its first two bytes, little-endian
    have_argument: int
    extended_arg: int
    opname: tuple[str | None, ...]  # opcode.opname; None for its '<N>' placeholders
    all_opname: tuple[str, ...]  # 256+ names as dis reports them: specialized filled, '<N>'
    opmap: Mapping[str, int]
    specialized_opmap: Mapping[str, int]
    specializations: Mapping[str, tuple[str, ...]]
    deopt: tuple[int, ...]  # opcode -> its base opcode (itself unless specialized)
    has_arg: frozenset[int]  # opcodes (< 256) that take an argument, by this version's test
    hasconst: frozenset[int]
    hasname: frozenset[int]
    hasjrel: frozenset[int]
    hasjabs: frozenset[int]
    haslocal: frozenset[int]
    hasfree: frozenset[int]
    hascompare: frozenset[int]
    hasjump: frozenset[int] | None  # 3.13+
    hasexc: frozenset[int] | None  # 3.12+
    cmp_op: tuple[str, ...]
    nb_ops: tuple[tuple[str, str], ...]  # 3.11+: BINARY_OP arg -> (name, symbol)
    intrinsic1: tuple[str, ...]  # 3.12+
    intrinsic2: tuple[str, ...]
    special_method_names: tuple[str, ...]  # 3.14
    common_constants: tuple[str, ...]  # 3.14: LOAD_COMMON_CONSTANT argreprs
    function_flags: tuple[str, ...]  # MAKE_FUNCTION / SET_FUNCTION_ATTRIBUTE flag names
    cache_entries: Mapping[int, int]  # base opcode -> inline CACHE code units (3.11+)
    cache_format: Mapping[str, Mapping[str, int]]
    jumps: Mapping[int, JumpRule]  # hasjrel | hasjabs
    args: Mapping[int, ArgRule]  # base opcodes whose argval is not the raw argument
    extended_arg_bits: int | None  # 3.11+: EXTENDED_ARG wraps to a signed int of this width
    extended_arg_resets: bool  # 3.10+: an opcode without argument clears EXTENDED_ARG
    localsplus: bool  # 3.11+: local and free indexes both index localsplus
    line_table: LineTable
    line_starts_none: bool  # 3.13+: line starts include ranges without a line
    # before 3.11: opcode -> its stack effect (without jump, with jump) as a function of arg
    stack_effects: Mapping[int, tuple[Effect, Effect]] | None

    def name(self, op: int) -> str:
        """The name dis gives ``op``."""
        return self.all_opname[op] if op < len(self.all_opname) else f"<{op}>"

    def stack_effect(self, op: int, arg: int | None = None, *, jump: bool | None = None) -> int:
        """What this version's ``dis.stack_effect(op, arg, jump=jump)`` gives (3.8-3.10):
        ``jump=None`` is the larger of the two. ValueError for an opcode it does not know,
        an argument an opcode with one lacks, or a version whose table has no stack effects."""
        if self.stack_effects is None:
            raise ValueError(f"the opcode table of Python {self.version[0]}.{self.version[1]} "
                             "has no stack effects")
        effects = self.stack_effects.get(op)
        if effects is None:
            raise ValueError(f"stack_effect: {self.name(op)} is no opcode of Python "
                             f"{self.version[0]}.{self.version[1]}")
        if arg is None:
            if op in self.has_arg:
                raise ValueError(f"stack_effect: {self.name(op)} needs an argument")
            arg = 0
        if jump is None:
            return max(effects[0](arg), effects[1](arg))
        return effects[1 if jump else 0](arg)


_BINARY: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.BitAnd: operator.and_, ast.RShift: operator.rshift,
}


def _formula(text: str) -> Effect:
    """A stack-effect formula of the table as a function: ints, ``arg``, ``+ - * & >>``,
    unary ``-`` and ``x if arg == k else y`` (what scripts/gen_opcode_tables.py writes)."""

    def build(node: ast.expr) -> Effect:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            value: int = node.value
            return lambda arg: value
        if isinstance(node, ast.Name) and node.id == "arg":
            return lambda arg: arg
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = build(node.operand)
            return lambda arg: -inner(arg)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            fn, left, right = _BINARY[type(node.op)], build(node.left), build(node.right)
            return lambda arg: fn(left(arg), right(arg))
        if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) \
                and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Eq):
            a, b = build(node.test.left), build(node.test.comparators[0])
            then, other = build(node.body), build(node.orelse)
            return lambda arg: then(arg) if a(arg) == b(arg) else other(arg)
        raise ValueError(f"stack effect {text!r}: {ast.unparse(node)!r} is not a formula of "
                         "the opcode tables")

    return build(ast.parse(text, mode="eval").body)


def _effect(value: int | str) -> Effect:
    if isinstance(value, int):
        return lambda arg: value
    return _formula(value)


def _stack_effects(raw: dict[str, Any], op_of: Callable[[str], int]
                   ) -> dict[int, tuple[Effect, Effect]] | None:
    effects = cast("dict[str, int | str | list[int | str]] | None", raw.get("stack_effects"))
    if effects is None:
        return None
    out: dict[int, tuple[Effect, Effect]] = {}
    for name, value in effects.items():
        if isinstance(value, list):
            out[op_of(name)] = (_effect(value[0]), _effect(value[1]))
        else:
            one = _effect(value)
            out[op_of(name)] = (one, one)
    return out


def _opset(raw: dict[str, Any], key: str) -> frozenset[int] | None:
    values = raw.get(key)
    return None if values is None else frozenset(cast("list[int]", values))


def _parse(raw: dict[str, Any]) -> OpcodeTable:
    opname = tuple(cast("list[str | None]", raw["opname"]))
    specialized = cast("dict[str, int]", raw["specialized_opmap"])
    all_opname = [n if n is not None else f"<{op}>" for op, n in enumerate(opname)]
    all_opname += [f"<{op}>" for op in range(len(all_opname), 256)]
    for n, op in specialized.items():
        all_opname[op] = n
    by_name = {n: op for op, n in enumerate(all_opname)}

    def op_of(key: str) -> int:
        if key in by_name:
            return by_name[key]
        if key.startswith("<") and key.endswith(">"):
            return int(key[1:-1])
        raise ValueError(f"opcode table {raw['version']}: unknown opcode {key!r}")

    families = cast("dict[str, list[str]]", raw.get("specializations") or {})
    deopt = list(range(len(all_opname)))
    for base, family in families.items():
        for n in family:
            if n in by_name:
                deopt[by_name[n]] = by_name[base]
    rules = cast("dict[str, Any]", raw["rules"])
    have_argument = cast(int, raw["HAVE_ARGUMENT"])
    if rules["arg"] == "hasarg":
        has_arg = frozenset(op for op in cast("list[int]", raw["hasarg"]) if op < 256)
    else:
        has_arg = frozenset(range(have_argument, 256))
    caches = cast("dict[str, int]", raw.get("inline_cache_entries") or {})
    jumps = {op_of(k): JumpRule(**v) for k, v in cast("dict[str, Any]", raw["jumps"]).items()}
    args = {op_of(k): ArgRule(**v) for k, v in cast("dict[str, Any]", raw["args"]).items()}

    def strings(key: str) -> tuple[str, ...]:
        return tuple(cast("list[str]", raw.get(key) or ()))

    version = cast("list[int]", raw["version"])
    return OpcodeTable(
        version=(version[0], version[1]),
        magic=bytes.fromhex(cast(str, raw["magic"])),
        magic_number=cast(int, raw["magic_number"]),
        have_argument=have_argument,
        extended_arg=cast(int, raw["EXTENDED_ARG"]),
        opname=opname,
        all_opname=tuple(all_opname),
        opmap={n: op for op, n in enumerate(opname) if n is not None and n not in specialized},
        specialized_opmap=dict(specialized),
        specializations={base: tuple(family) for base, family in families.items()},
        deopt=tuple(deopt),
        has_arg=has_arg,
        hasconst=frozenset(raw["hasconst"]),
        hasname=frozenset(raw["hasname"]),
        hasjrel=frozenset(raw["hasjrel"]),
        hasjabs=frozenset(raw["hasjabs"]),
        haslocal=frozenset(raw["haslocal"]),
        hasfree=frozenset(raw["hasfree"]),
        hascompare=frozenset(raw["hascompare"]),
        hasjump=_opset(raw, "hasjump"),
        hasexc=_opset(raw, "hasexc"),
        cmp_op=strings("cmp_op"),
        nb_ops=tuple((p[0], p[1]) for p in cast("list[list[str]]", raw.get("nb_ops") or ())),
        intrinsic1=strings("intrinsic1"),
        intrinsic2=strings("intrinsic2"),
        special_method_names=strings("special_method_names"),
        common_constants=strings("common_constants"),
        function_flags=strings("function_flags"),
        cache_entries={op_of(k): n for k, n in caches.items()},
        cache_format=cast("dict[str, dict[str, int]]", raw.get("cache_format") or {}),
        jumps=jumps,
        args=args,
        extended_arg_bits=cast("int | None", rules["extended_arg_bits"]),
        extended_arg_resets=bool(rules["extended_arg_resets"]),
        localsplus=bool(rules["localsplus"]),
        line_table=cast(LineTable, rules["line_table"]),
        line_starts_none=bool(rules["line_starts_none"]),
        stack_effects=_stack_effects(raw, op_of),
    )


def raw_table(version: tuple[int, int]) -> dict[str, Any]:
    """The JSON of ``version``'s table as committed (what the generator prints)."""
    if tuple(version) not in SUPPORTED:
        raise ValueError(f"no opcode table for Python {version[0]}.{version[1]}")
    text = resources.files(__name__).joinpath(f"py{version[0]}{version[1]}.json").read_text("utf-8")
    return cast("dict[str, Any]", json.loads(text))


@cache
def table(version: tuple[int, int]) -> OpcodeTable:
    """The opcode table of CPython ``version`` (``(3, 12)``); cached. ValueError if unsupported."""
    return _parse(raw_table(version))
