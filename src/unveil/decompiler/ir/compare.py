"""Comparing statements and values of the IR: the keys that find the compiler's copies.

The compiler copies code: a ``finally`` body on every way out of its ``try``, a loop's
test at its end, a short ``return`` at each ``break``. The structurer finds such copies
by comparing what blocks do, so each copy must give the same :func:`key` as the
original and code that differs a different one.

A key is a tree of tuples, built from the IR as it stands (never through rendering):
node types and fields, names, constants by value (exactly: ``0``, ``False`` and ``0.0``
differ, so do ``0.0`` and ``-0.0``; a ``nan`` is the same as itself), functions by their
name (a ``def``'s copies are separate code objects) and lambdas by their code object.
Values that only the interpreter holds differ from everything, even a copy of
themselves, unless they are values a block is entered with: those are their place on
that stack (:class:`Keyer`'s ``entry``).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Hashable
from typing import Any, TypeAlias

from .exprs import Cell, ExcMatch, Func, Iterator, Marker, MatchCase, Shared, Slot, Special
from .facts import BIND_FIRST, COUNT, DISPLAY, EXIT_SELF, INPLACE, SLOT, TARGETS, fact
from .markers import ExcMarker, ImportItem, ImportValue

#: what :func:`key` gives: comparable with ``==``, usable as a dict key
Key: TypeAlias = Hashable

#: the values of their own (primitives) a :class:`Special` stands for
_PRIMITIVES = frozenset({"match_sequence", "match_mapping", "match_keys", "match_class",
                         "dict_without_keys", "reraise_star", "eg_split"})
#: bookkeeping values only the interpreter reads (the same wherever they are)
_BOOKKEEPING = frozenset({"prev_exc", "lasti", "prev_tb", "prev_value", "prev_type"})
_LITERALS = (int, str, bytes, bool, type(None), type(...))


class _Unique(Exception):
    """A value with no comparable form: the statement holding it is like no other."""


class Keyer:
    """Keys of the statements of one block, entered with the stack ``entry``.

    :attr:`uses_entry` says whether a key made so far read one of the entry's values
    (an exception, a ``with``'s exit) by its place."""

    def __init__(self, entry: list[ast.expr] | None = None) -> None:
        self.entry: dict[int, int] = {id(e): k for k, e in enumerate(entry or ())
                                      if isinstance(e, Special)}
        self.in_block = bool(entry)  # (values of the interpreter are read as in a handler)
        self.uses_entry = False

    def stmt(self, stmt: ast.stmt) -> Key:
        """The key of ``stmt`` (see the module docstring)."""
        try:
            return self._node(stmt)
        except _Unique:
            return ("unique", id(stmt))

    def expr(self, node: ast.expr) -> Key:
        """The key of the value ``node``."""
        try:
            return self._node(node)
        except _Unique:
            return ("unique", id(node))

    # ------------------------------------------------------------ nodes

    def _node(self, node: Any) -> Key:
        if isinstance(node, list):
            return tuple(self._node(n) for n in node)
        if not isinstance(node, ast.AST):
            return node if isinstance(node, Hashable) else ("object", id(node))
        if isinstance(node, ast.expr_context):
            return None  # (a name is the same name loaded or stored)
        special = _SPECIAL.get(type(node))
        if special is not None:
            made: Key = special(self, node)
            return made
        if isinstance(node, Marker):
            raise _Unique
        return (type(node).__name__, *(self._node(getattr(node, f, None)) for f in node._fields))

    def _name(self, node: ast.Name) -> Key:
        slot = fact(node, SLOT, None)
        return ("Slot", slot) if slot is not None else ("Name", node.id)

    def _constant(self, node: ast.Constant) -> Key:
        return ("Constant", constant_key(node.value), bool(fact(node, DISPLAY, False)))

    def _binop(self, node: ast.BinOp) -> Key:
        return ("BinOp", self._node(node.left), type(node.op).__name__, self._node(node.right),
                bool(fact(node, INPLACE, False)))

    def _return(self, node: ast.Return) -> Key:
        value = node.value
        if value is None or isinstance(value, Cell) or (
                isinstance(value, ast.Constant) and value.value is None):
            return ("Return", None)  # (a class body returns its cell)
        return ("Return", self._node(value))

    def _slot(self, node: Slot) -> Key:
        return ("Slot", node.index)

    def _shared(self, node: Shared) -> Key:
        if node.name is not None:
            return ("Shared", node.name, bool(fact(node, BIND_FIRST, False)))
        targets = fact(node, TARGETS, None)
        if targets:
            return ("Walrus", tuple(self._node(t) for t in targets), self._node(node.value))
        return self._node(node.value)

    def _iterator(self, node: Iterator) -> Key:
        return ("Iterator", node.kind, self._node(node.value))

    def _func(self, node: Func) -> Key:
        code = node.code  # (a lambda by its code object; a def's copies are code objects apart)
        who = id(code) if code.co_name == "<lambda>" else code.co_name
        return ("Func", who, *(self._node(getattr(node, f)) for f in
                               ("defaults", "kwdefaults", "annotations", "closure")))

    def _special(self, node: Special) -> Key:
        place = self.entry.get(id(node))
        if place is not None:
            self.uses_entry = True
            return ("Entry", place)
        if node.kind == "stopiteration_error" and node.value is not None:
            return self._node(node.value)
        if node.kind in _PRIMITIVES:
            return ("Primitive", node.kind, self._node(node.value), fact(node, COUNT, 0))
        if self.in_block:
            if node.kind in _BOOKKEEPING:
                return ("Constant", None)
            if node.kind in ("with_exit_result", "anext_value"):
                return ("Special", node.kind, self._node(node.value),
                        self._node(getattr(node, "exit", None)),
                        self._node(fact(node, EXIT_SELF, None)))
        raise _Unique

    def _exc_match(self, node: ExcMatch) -> Key:
        if not self.in_block or node.star:
            raise _Unique
        return ("ExcMatch", self._node(node.exc), self._node(node.types))

    def _match_case(self, node: MatchCase) -> Key:
        return ("MatchCase", self._node(node.subject), ast.dump(node.pattern))

    def _cell(self, node: Cell) -> Key:
        return ("Cell", node.name)

    def _import_value(self, node: ImportValue) -> Key:
        return ("ImportValue", node.module)

    def _import_item(self, node: ImportItem) -> Key:
        return ("ImportItem", self._node(node.source), node.attr)

    def _exc_marker(self, node: ExcMarker) -> Key:
        return ("ExcMarker", node.kind, self._node(node.value), node.flag)

    def _leaf(self, node: ast.stmt) -> Key:
        return (type(node).__name__, ast.dump(node))  # (built by the decompiler, whole)


_SPECIAL: dict[type, Any] = {
    ast.Name: Keyer._name, ast.Constant: Keyer._constant, ast.BinOp: Keyer._binop,
    ast.Return: Keyer._return, Slot: Keyer._slot, Shared: Keyer._shared,
    Iterator: Keyer._iterator, Func: Keyer._func, Special: Keyer._special,
    ExcMatch: Keyer._exc_match, MatchCase: Keyer._match_case, Cell: Keyer._cell,
    ImportValue: Keyer._import_value, ImportItem: Keyer._import_item,
    ExcMarker: Keyer._exc_marker,
    **{t: Keyer._leaf for t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)},
}


def constant_key(value: Any) -> Key:
    """A constant by its exact value: its type counts (``1``, ``True``, ``1.0``), floats by
    their bits (``-0.0`` is not ``0.0``; a ``nan`` equals a ``nan``), containers by their
    items; an object without a literal form by its identity."""
    kind = type(value)
    if kind is float:
        return ("float", "nan" if math.isnan(value) else value.hex())
    if kind is complex:
        return ("complex", constant_key(value.real), constant_key(value.imag))
    if kind in _LITERALS:
        return (kind.__name__, value)
    if kind is tuple:
        return ("tuple", *(constant_key(v) for v in value))
    if kind is frozenset:
        return ("frozenset", frozenset(constant_key(v) for v in value))
    if kind is slice:
        return ("slice", constant_key(value.start), constant_key(value.stop),
                constant_key(value.step))
    return ("object", id(value))


def stmt_key(stmt: ast.stmt, entry: list[ast.expr] | None = None) -> Key:
    """The key of one statement of a block entered with ``entry`` (see :class:`Keyer`)."""
    return Keyer(entry).stmt(stmt)


def expr_key(node: ast.expr) -> Key:
    """The key of the value ``node`` (a test, a returned value)."""
    return Keyer().expr(node)
