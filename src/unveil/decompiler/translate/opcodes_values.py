"""Opcode families of the executor that compute values: loads, stores, stack shuffles,
operators and displays (see :mod:`.executor`)."""

from __future__ import annotations

import ast
import dis
import functools
from typing import cast

from ...bytecode import Instr, layout_of
from ..ir import syntax
from ..ir.exprs import (
    MUTABLE_DISPLAYS,
    Cell,
    ExcMatch,
    Func,
    Iterator,
    Marker,
    MethodSelf,
    Null,
    Shared,
    Special,
    UnpackItem,
    const,
    is_stable,
    name,
    set_items,
)
from ..ir.facts import KIND, SEQ, TARGETS, WRITES, attach, fact
from ..ir.markers import ClassBuild, ImportItem, ImportValue
from ..ir.nodes import LOAD, STORE
from .machine import (
    BINOPS,
    CMPOPS,
    NAME_STORES,
    Machine,
    Unpack,
    chained_stores,
    family,
    plain_import_chain,
    stamp,
)


@family({
    "LOAD_CONST": "load_const", "LOAD_FAST": "load_fast", "LOAD_DEREF": "load_deref",
    "LOAD_CLASSDEREF": "load_deref", "LOAD_GLOBAL": "load_global", "LOAD_NAME": "load_name",
    "LOAD_FROM_DICT_OR_GLOBALS": "load_dict_or_globals", "LOAD_ATTR": "load_attr",
    "LOAD_METHOD": "load_method", "LOAD_SUPER_ATTR": "load_super_attr",
    "LOAD_SPECIAL": "load_special", "LOAD_COMMON": "load_common", "PUSH_NULL": "push_null",
    "LOAD_CLOSURE": "load_closure", "LOAD_BUILD_CLASS": "load_build_class",
    "LOAD_LOCALS": "load_locals", "LOAD_FAST_AND_CLEAR": "load_fast_and_clear",
    "LOAD_FROM_DICT_OR_DEREF": "load_dict_or_deref",
})
class Loads(Machine):
    """Instructions that push one value (two for method loads)."""

    def load_const(self, ins: Instr) -> None:
        self.push(const(ins.argval))

    def load_fast(self, ins: Instr) -> None:
        self.push(name(ins.argval, "fast"))

    def load_deref(self, ins: Instr) -> None:
        self.push(stamp(name(ins.argval, "deref")))

    def load_global(self, ins: Instr) -> None:
        self.push(stamp(name(ins.argval, "global")))

    def load_name(self, ins: Instr) -> None:
        self.push(stamp(name(ins.argval, "name")))

    def load_dict_or_globals(self, ins: Instr) -> None:
        self.pop()
        self.push(stamp(name(ins.argval, "name")))

    def load_dict_or_deref(self, ins: Instr) -> None:
        self.pop()
        self.push(stamp(name(ins.argval, "deref")))

    def load_attr(self, ins: Instr) -> None:
        obj = self.pop()
        self.push(stamp(ast.Attribute(obj, ins.argval, LOAD)))

    def load_method(self, ins: Instr) -> None:
        obj = self.pop()
        meth = stamp(ast.Attribute(obj, ins.argval, LOAD))
        self.push(meth)
        self.push(MethodSelf(meth))

    def load_super_attr(self, ins: Instr) -> None:
        sup, cls, self_arg = self.popn(3)
        flags = ins.arg or 0
        if flags & 2:
            args = [cls, self_arg]
        else:
            args = []
        call = stamp(ast.Call(sup, args, []))
        attach(call, zero_arg_super=not flags & 2)
        attr = stamp(ast.Attribute(call, ins.argval, LOAD))
        self.push(attr)
        if flags & 1:
            self.push(MethodSelf(attr))

    def load_special(self, ins: Instr) -> None:
        obj = self.pop()
        meth = stamp(ast.Attribute(obj, str(ins.argval), LOAD))
        self.push(meth)
        self.push(MethodSelf(meth))

    def load_common(self, ins: Instr) -> None:
        node = name(ins.argval, "global")
        attach(node, common=True)
        self.push(node)

    def push_null(self, ins: Instr) -> None:
        self.push(Null())

    def load_closure(self, ins: Instr) -> None:
        self.push(Cell(ins.argval))

    def load_build_class(self, ins: Instr) -> None:
        self.push(Special("build_class"))

    def load_locals(self, ins: Instr) -> None:
        self.push(stamp(ast.Call(name("locals", "global"), [], [])))

    def load_fast_and_clear(self, ins: Instr) -> None:
        self.push(Special("saved", const(ins.argval)))


# (tuples, made once: ``isinstance`` with ``A | B`` builds the union on every call)
# values that are no plain item of ``a, b = x, y``: they wait for stores, are used
# twice, or stand for what the interpreter pushes
_NOT_PLAIN = (UnpackItem, Shared, ImportValue, ImportItem, Special, Null, MethodSelf)
# markers that stay as a statement when dropped
_STATEMENT_MARKERS = (Func, ClassBuild, ExcMatch, Iterator, ImportItem)

_STORE_KIND = {"STORE_FAST": "fast", "STORE_DEREF": "deref", "STORE_GLOBAL": "global",
               "STORE_NAME": "name"}
_DELETE_KIND = {"DELETE_FAST": "fast", "DELETE_DEREF": "deref", "DELETE_GLOBAL": "global",
                "DELETE_NAME": "name"}


@family({
    "STORE_FAST": "store_var", "STORE_DEREF": "store_var", "STORE_GLOBAL": "store_var",
    "STORE_NAME": "store_var", "STORE_ATTR": "store_attr", "STORE_SUBSCR": "store_subscr",
    "STORE_SLICE": "store_slice", "DELETE_FAST": "delete_var", "DELETE_DEREF": "delete_var",
    "DELETE_GLOBAL": "delete_var", "DELETE_NAME": "delete_var", "DELETE_ATTR": "delete_attr",
    "DELETE_SUBSCR": "delete_subscr",
})
class Stores(Machine):
    """Instructions that bind or unbind: each emits a statement."""

    def store_var(self, ins: Instr) -> None:
        if self.multi_store(ins):
            return
        value = self.pop()
        kind = _STORE_KIND[ins.op]
        target = ast.Name(ins.argval, STORE)
        target.__dict__["kind"] = kind  # (``attach(target, kind=kind)``: a hot path)
        self.store(target, value, (ins.argval,) if kind == "fast" else ())

    def multi_store(self, ins: Instr) -> bool:
        """``a, b = x, y``: values pushed one by one, then stored to names in a row."""
        instrs, at = self._instrs, self._at
        if at + 1 >= len(instrs) or instrs[at + 1].op not in _STORE_KIND:
            return False  # (most stores: one store, not several in a row)
        names: list[tuple[str, str]] = [(ins.argval, _STORE_KIND[ins.op])]
        for j in range(at + 1, min(at + 64, len(instrs))):  # (``following``, not sliced)
            nxt = instrs[j]
            if nxt.op not in _STORE_KIND or len(names) >= len(self.state.stack):
                break
            names.append((nxt.argval, _STORE_KIND[nxt.op]))
        k = len(names)
        if k < 2 or len({n for n, _ in names}) != k:
            return False
        values = self.state.stack[-k:]
        if all(v is values[0] for v in values):
            # ``a = b = 0``: one value copied, stored in order
            del self.state.stack[-k:]
            targets = []
            if isinstance(values[0], Shared) and values[0].name is None \
                    and not any(e is values[0] for e in self.state.stack):
                # ``x = y = z = v``: the first store waits in the shared value
                targets = list(fact(values[0], TARGETS, None) or [])
                attach(values[0], targets=[])
            for ident, kind in names:
                t = ast.Name(ident, STORE)
                attach(t, kind=kind)
                targets.append(t)
            self.skip = k - 1
            self.emit(ast.Assign(targets, values[0]),
                      tuple(n for n, kind in names if kind == "fast"))
            return True
        if any(isinstance(v, _NOT_PLAIN) for v in values):
            return False
        if any(fact(v, TARGETS, None) for v in values):
            return False
        del self.state.stack[-k:]
        targets = []
        for ident, kind in reversed(names):
            t = ast.Name(ident, STORE)
            attach(t, kind=kind)
            targets.append(t)
        if all(kind == "fast" for _, kind in names):
            # 3.10 rotates the values into place before the stores: write them in the
            # order they were made (the order of stores to locals shows nowhere)
            # (a value not stamped, a constant, keeps its place after the one before it)
            keys: list[tuple[int, int]] = []
            for n, v in enumerate(values):
                keys.append((fact(v, SEQ, keys[-1][0] if keys else -1), n))
            order = sorted(range(len(values)), key=keys.__getitem__)
            targets, values = [targets[n] for n in order], [values[n] for n in order]
        self.skip = k - 1
        writes = tuple(n for n, kind in names if kind == "fast")
        self.emit(ast.Assign([ast.Tuple(targets, STORE)],
                             ast.Tuple(values, LOAD)), writes)
        return True

    def store_attr(self, ins: Instr) -> None:
        obj = self.pop()
        value = self.pop()
        self.store(ast.Attribute(obj, ins.argval, STORE), value)

    def store_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        value = self.pop()
        self.store(ast.Subscript(obj, _slice_of(key), STORE), value)

    def store_slice(self, ins: Instr) -> None:
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        value = self.pop()
        sl = ast.Slice(_none_to_missing(start), _none_to_missing(stop))
        self.store(ast.Subscript(obj, sl, STORE), value)

    def delete_var(self, ins: Instr) -> None:
        kind = _DELETE_KIND[ins.op]
        target = ast.Name(ins.argval, ast.Del())
        attach(target, kind=kind)
        self.emit(ast.Delete(targets=[target]), (ins.argval,) if kind == "fast" else ())

    def delete_attr(self, ins: Instr) -> None:
        obj = self.pop()
        self.emit(ast.Delete(targets=[ast.Attribute(obj, ins.argval, ast.Del())]))

    def delete_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        self.emit(ast.Delete(targets=[ast.Subscript(obj, _slice_of(key),
                                                    ast.Del())]))


@family({"POP_TOP": "pop_top", "COPY": "copy", "SWAP": "swap", "NOP": "nop"})
class StackOps(Machine):
    """Instructions that only move values around."""

    def nop(self, ins: Instr) -> None:
        """(3.10's handler that opens with a ``try`` keeps one, outside that try.)"""

    def pop_top(self, ins: Instr) -> None:
        value = self.pop()
        self.discard(value)

    def discard(self, value: ast.expr) -> None:
        if isinstance(value, Shared):
            if value.name is not None:
                return
            if self.bump(value, "discards", 0) < self.count(value, "refs", 2):
                return  # another reference evaluates it
            targets = fact(value, TARGETS, None)
            if targets:
                attach(value, targets=[])
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    self.emit(ast.Expr(ast.NamedExpr(
                        targets[0], value.value)))
                else:
                    self.emit(ast.Assign(targets, value.value))
                return
            value = value.value
        if isinstance(value, ImportValue):
            self.finish_import(value)
            return
        if isinstance(value, ImportItem) and plain_import_chain(value):
            return  # the intermediate module of ``import a.b.c as d``
        if isinstance(value, UnpackItem):
            self.store(ast.Name(self._stored_again() or "_", STORE), value)
            return
        # (a function made and dropped, ``lambda: x`` as a statement, stays: its closure
        # makes cells of the names it reads)
        if is_stable(value) and not (isinstance(value, Func) and not value.copied) \
                or isinstance(value, Marker) \
                and not isinstance(value, _STATEMENT_MARKERS):
            if not (isinstance(value, Special) and value.kind in ("enter", "awaited")) \
                    and not self.local_statement(value):
                return
        self.emit(ast.Expr(value))

    def _stored_again(self) -> str | None:
        """The local an unpacked item dropped here is stored to again next: 3.13+
        writes ``x, x = t`` as ``POP_TOP; STORE_FAST x`` (a store another one
        overwrites at once is dropped)."""
        k = 0
        while k < len(self.following) and self.following[k].op == "POP_TOP":
            k += 1
        stack = self.state.stack
        if k < len(self.following) and self.following[k].op == "STORE_FAST" \
                and len(stack) > k and isinstance(stack[-1 - k], UnpackItem):
            return str(self.following[k].argval)
        return None

    def local_statement(self, value: ast.expr) -> bool:
        """``x`` alone as a statement (``LOAD_FAST x; POP_TOP``): it stays, as it raises
        UnboundLocalError when ``x`` is unbound."""
        prev = self.previous
        return isinstance(value, ast.Name) and fact(value, KIND, "") == "fast" \
            and prev is not None and prev.op.startswith("LOAD_FAST") and prev.argval == value.id

    def finish_import(self, value: ImportValue) -> None:
        if value.fromlist is None or not value.aliases:
            if value.fromlist is not None and not value.aliases:
                # ``from m import ()`` cannot be written; keep the import for its effect
                self.emit(ast.Expr(ast.Call(
                    name("__import__", "global"),
                    [const(value.module), name("globals", "global")],
                    [])))
            return
        self.emit(ast.ImportFrom(module=value.module or None, names=value.aliases,
                                 level=value.level), fact(value, WRITES, ()))

    def copy(self, ins: Instr) -> None:
        depth = ins.arg or 1
        value = self.top(depth)
        if isinstance(value, Shared):
            self.bump(value, "refs", 2)
            self.push(value)
            return
        # (a function stored by a walrus is one object: ``g(f := lambda: 0)``)
        if is_stable(value) and not isinstance(value, MUTABLE_DISPLAYS) and (
                isinstance(value, Marker) and not isinstance(value, Func) or not (
                depth == 1 and self.following and (self.following[0].op in NAME_STORES
                                                   or chained_stores(self.following, 2)))):
            if isinstance(value, Func):
                value.copied = True
            self.push(value)
            return
        # a copy stored to a name right away is ``a = b = v`` or ``(a := v)``
        shared = Shared(value)
        self.shares = True
        if fact(value, SEQ, None) is None:
            stamp(shared)  # (made now: a branch being explored may name it)
        else:
            attach(shared, _seq=value._seq)  # type: ignore[attr-defined]  # a fact, no field
        stack = self.state.stack
        stack[-depth] = shared
        self.push(shared)

    def swap(self, ins: Instr) -> None:
        depth = ins.arg or 2
        stack = self.state.stack
        if len(stack) < depth:
            self.fail("stack underflow")
        if self._swaps_into_targets(ins):
            return
        stack[-1], stack[-depth] = stack[-depth], stack[-1]
        if depth <= 3 and self._swapped_into_targets(depth, self.following):
            return
        start = len(stack) - depth
        self.order_from = start if self.order_from is None else min(self.order_from, start)

    def _swaps_into_targets(self, ins: Instr) -> bool:
        """Several swaps in a row (3.10's ``ROT_THREE; ROT_TWO`` of ``a, b, c = x, y,
        z``) that put the values into place for the stores after them, as one."""
        run = [ins]
        for nxt in self.following:
            if nxt.op != "SWAP":
                break
            run.append(nxt)
        stack = self.state.stack
        deepest = max(i.arg or 2 for i in run)
        if len(run) < 2 or deepest > 3 or len(stack) < deepest or self.order_from is not None:
            return False
        saved = stack[-deepest:]
        for i in run:
            d = i.arg or 2
            stack[-1], stack[-d] = stack[-d], stack[-1]
        if self._swapped_into_targets(deepest, self.following[len(run) - 1:]):
            self.skip = len(run) - 1
            return True
        stack[-deepest:] = saved
        return False

    def _swapped_into_targets(self, depth: int, following: list[Instr]) -> bool:
        """``a.x, b[k] = v1, v2``: values swapped into place for stores that follow (3.10
        swaps for names too; 3.11+ stores those in another order instead): one pending
        assignment whose items the stores fill in, its value the tuple in push order."""
        stack = self.state.stack
        values = stack[-depth:]
        if self.order_from is not None or len(stack) < depth \
                or not chained_stores(following, depth, copies=False) \
                or any(isinstance(v, _NOT_PLAIN) or fact(v, TARGETS, None)
                       for v in values):
            return False
        self.check_speculation()
        unpack = Unpack(ast.Tuple(values[::-1], LOAD), depth, None)
        for i in range(depth):
            stack[-1 - i] = UnpackItem(unpack, i)
        return True


_UNARY = {"UNARY_NOT": ast.Not, "UNARY_NEGATIVE": ast.USub, "UNARY_INVERT": ast.Invert,
          "UNARY_POSITIVE": ast.UAdd}


def _folded_format(left: ast.expr, right: ast.expr) -> bool:
    """Would ``left % right`` compile to an f-string (3.11+ folds ``'%s' % (a, b)``)?"""
    return isinstance(left, ast.Constant) and type(left.value) is str \
        and isinstance(right, ast.Tuple) and bool(right.elts) \
        and not any(isinstance(e, ast.Starred) for e in right.elts) \
        and _folds_format(left.value, len(right.elts))


@functools.lru_cache(maxsize=256)
def _folds_format(fmt: str, n: int) -> bool:
    """Ask the running compiler: is ``fmt % (x0, ..., xn)`` still a ``%``?"""
    args = ", ".join(f"_{k}" for k in range(n))
    try:
        code = compile(f"{fmt!r} % ({args},)", "<format>", "eval", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError):
        return False
    return not any(i.opname in ("BINARY_OP", "BINARY_MODULO") for i in dis.get_instructions(code))


@family({
    "UNARY_NOT": "unary", "UNARY_NEGATIVE": "unary", "UNARY_INVERT": "unary",
    "UNARY_POSITIVE": "unary", "TO_BOOL": "to_bool", "BINARY_OP": "binary_op",
    "BINARY_SUBSCR": "binary_subscr", "BINARY_SLICE": "binary_slice",
    "COMPARE_OP": "compare", "IS_OP": "is_op", "CONTAINS_OP": "contains_op",
    "GET_ITER": "get_iter", "GET_YIELD_FROM_ITER": "get_yield_from_iter",
    "GET_LEN": "get_len",
})
class Operators(Machine):
    """Unary, binary and comparison operators."""

    def unary(self, ins: Instr) -> None:
        operand = self.pop()
        self.push(stamp(ast.UnaryOp(_UNARY[ins.op](), operand)))

    def to_bool(self, ins: Instr) -> None:
        value = self.pop()
        self.push(stamp(ast.Call(name("bool", "global"), [value], [])))

    def binary_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        sym = str(ins.argval)
        inplace = sym.endswith("=")
        if sym == "%" and layout_of(self.ctx.code).folded_percent_formats \
                and _folded_format(left, right):
            # ``'%s' % (a,)`` would compile to an f-string: the source kept its ``%``
            # by writing the format as an f-string
            left = ast.JoinedStr(values=[left])
        node = stamp(ast.BinOp(left, BINOPS[sym.rstrip("=")](), right))
        attach(node, inplace=inplace)
        self.push(node)

    def binary_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        self.push(stamp(ast.Subscript(obj, _slice_of(key), LOAD)))

    def binary_slice(self, ins: Instr) -> None:
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        sl = ast.Slice(_none_to_missing(start), _none_to_missing(stop))
        self.push(stamp(ast.Subscript(obj, sl, LOAD)))

    def compare(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        self.push(stamp(ast.Compare(left, [CMPOPS[ins.argval]()],
                                    [right])))

    def is_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        op = ast.IsNot() if ins.arg else ast.Is()
        self.push(stamp(ast.Compare(left, [op], [right])))

    def contains_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        op = ast.NotIn() if ins.arg else ast.In()
        self.push(stamp(ast.Compare(left, [op], [_as_display(right)])))

    def get_iter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(_as_display(self.pop()))))

    def get_yield_from_iter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(self.pop(), "yield_from")))

    def get_len(self, ins: Instr) -> None:
        self.push(stamp(ast.Call(name("len", "global"), [self.top()], [])))


def _slice_of(key: ast.expr) -> ast.expr:
    """``x[a:b]`` is ``BUILD_SLICE`` + subscript; a tuple of slices keeps its form."""
    return key


def _none_to_missing(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return node


def unpacked_display(kind: str, items: list[ast.expr]) -> ast.expr:
    """The display 3.8's ``BUILD_*_UNPACK`` builds of ``items`` (``kind``: ``list``,
    ``tuple``, ``set``, ``map``, ``call_args``, ``call_kwargs``), as 3.9's code of the same
    source reads (``LIST_EXTEND``/``SET_UPDATE``/``DICT_UPDATE``/``DICT_MERGE`` of each item
    into a new display; a tuple's is a list, then ``LIST_TO_TUPLE``): a display or constant
    among them is written out in it (``[1, *a]``, ``{'k': 1, **b}``); a call's keywords
    display is the dict the rest merge into."""
    def plain(item: ast.expr) -> bool:
        return isinstance(item, ast.List | ast.Tuple | ast.Set) \
            and not any(isinstance(e, ast.Starred) for e in item.elts)

    if kind in ("map", "call_kwargs"):
        keys: list[ast.expr | None] = []
        values: list[ast.expr] = []
        for k, item in enumerate(items):
            if isinstance(item, ast.Dict) and None not in item.keys \
                    and (kind == "map" or k == 0):
                keys.extend(item.keys)
                values.extend(item.values)
            else:
                keys.append(None)
                values.append(item)
        return ast.Dict(keys, values)
    elts: list[ast.expr] = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, tuple):
            elts.extend(const(v) for v in item.value)
        elif plain(item) and (kind == "set" or not isinstance(item, ast.Set)):
            elts.extend(cast("ast.List", item).elts)
        else:
            elts.append(ast.Starred(item, LOAD))
    return ast.Set(elts) if kind == "set" else ast.List(elts, LOAD)


@family({
    "BUILD_TUPLE": "build_tuple", "BUILD_LIST": "build_list", "BUILD_SET": "build_set",
    "BUILD_MAP": "build_map", "BUILD_CONST_KEY_MAP": "build_const_key_map",
    "BUILD_STRING": "build_string", "BUILD_SLICE": "build_slice",
    "LIST_APPEND": "list_append", "SET_ADD": "set_add", "MAP_ADD": "map_add",
    "LIST_EXTEND": "list_extend", "SET_UPDATE": "set_update", "DICT_UPDATE": "dict_update",
    "DICT_MERGE": "dict_update", "LIST_TO_TUPLE": "list_to_tuple", "BUILD_UNPACK": "build_unpack",
    "UNPACK_SEQUENCE": "unpack_sequence", "UNPACK_EX": "unpack_ex",
    "FORMAT_VALUE": "format_value", "CONVERT_VALUE": "convert_value",
    "FORMAT_SIMPLE": "format_simple", "FORMAT_WITH_SPEC": "format_with_spec",
    "BUILD_INTERPOLATION": "build_interpolation", "BUILD_TEMPLATE": "build_template",
})
class Displays(Machine):
    """Tuple, list, set, dict and string displays, unpacking and f-strings."""

    def build_tuple(self, ins: Instr) -> None:
        items = self.popn(ins.arg or 0)
        if items and all(isinstance(i, Cell) for i in items):
            self.push(ast.Tuple(items, LOAD))
            return
        self.push(stamp(ast.Tuple(items, LOAD)))

    def build_list(self, ins: Instr) -> None:
        self.push(stamp(ast.List(self.popn(ins.arg or 0), LOAD)))

    def build_set(self, ins: Instr) -> None:
        self.push(stamp(ast.Set(self.popn(ins.arg or 0))))

    def build_map(self, ins: Instr) -> None:
        flat = self.popn(2 * (ins.arg or 0))
        self.push(stamp(ast.Dict(cast("list[ast.expr | None]", flat[0::2]),
                                 flat[1::2])))

    def build_const_key_map(self, ins: Instr) -> None:
        keys = self.pop()
        values = self.popn(ins.arg or 0)
        if not isinstance(keys, ast.Constant) or not isinstance(keys.value, tuple):
            self.fail("BUILD_CONST_KEY_MAP without constant keys")
        self.push(stamp(ast.Dict([const(k) for k in keys.value], values)))

    def build_string(self, ins: Instr) -> None:
        parts = self.popn(ins.arg or 0)
        values: list[ast.expr] = []
        for part in parts:
            if isinstance(part, ast.JoinedStr):
                values.extend(part.values)
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                values.append(part)
            elif isinstance(part, ast.FormattedValue):
                values.append(part)
            else:
                values.append(ast.FormattedValue(value=part, conversion=-1, format_spec=None))
        self.push(stamp(ast.JoinedStr(values=values)))

    def build_slice(self, ins: Instr) -> None:
        parts = self.popn(ins.arg or 2)
        step = _none_to_missing(parts[2]) if len(parts) == 3 else None
        self.push(ast.Slice(_none_to_missing(parts[0]), _none_to_missing(parts[1]),
                            step))

    def _container(self, depth: int) -> ast.expr:
        container = self.top(depth)
        self.check_speculation(container)
        if not isinstance(container, MUTABLE_DISPLAYS):
            # mutated by a statement and still on the stack: give it a name first
            self.flush()
            container = self.top(depth)
        return container

    def list_append(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.List):
            target.elts.append(value)
        else:
            self.emit(ast.Expr(_append_call(target, "append", value)))

    def set_add(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Set):
            target.elts.append(value)
        else:
            self.emit(ast.Expr(_append_call(target, "add", value)))

    def map_add(self, ins: Instr) -> None:
        value = self.pop()
        key = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Dict):
            target.keys.append(key)
            target.values.append(value)
        else:
            stmt = ast.Assign([ast.Subscript(target, key, STORE)],
                              value)
            attach(stmt, map_add=True)
            self.emit(stmt)

    def list_extend(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.List):
            if isinstance(value, ast.Constant) and isinstance(value.value, tuple):
                target.elts.extend(const(v) for v in value.value)
            elif isinstance(value, ast.List | ast.Tuple) \
                    and not any(isinstance(e, ast.Starred) for e in value.elts):
                target.elts.extend(value.elts)  # ``[*[a, b]]`` is ``[a, b]``
            else:
                target.elts.append(ast.Starred(value, LOAD))
        else:
            # ``[*value]`` raises what LIST_EXTEND raises for a non-iterable
            if not isinstance(value, ast.List | ast.Tuple | ast.Constant):
                value = ast.List([ast.Starred(value, LOAD)],
                                 LOAD)
            self.emit(ast.Expr(_append_call(target, "extend", value)))

    def set_update(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Set):
            if isinstance(value, ast.Constant) and isinstance(value.value, frozenset):
                target.elts.extend(const(v) for v in set_items(value.value))
            else:
                target.elts.append(ast.Starred(value, LOAD))
        else:
            self.emit(ast.Expr(_append_call(target, "update", value)))

    def dict_update(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Dict):
            target.keys.append(None)
            target.values.append(value)
        else:
            # ``{**value}``: DICT_UPDATE takes mappings only, not pairs like dict.update
            if not isinstance(value, ast.Dict):
                value = ast.Dict([None], [value])
            self.emit(ast.Expr(_append_call(target, "update", value)))

    def build_unpack(self, ins: Instr) -> None:
        """3.8's ``BUILD_*_UNPACK n`` (:func:`unpacked_display`)."""
        self.push(stamp(unpacked_display(ins.argval, self.popn(ins.arg or 0))))
        if ins.argval in ("tuple", "call_args"):
            self.list_to_tuple(ins)

    def list_to_tuple(self, ins: Instr) -> None:
        value = self.pop()
        if isinstance(value, ast.List):
            self.push(stamp(ast.Tuple(value.elts, LOAD)))
        else:
            call = ast.Call(name("tuple", "global"), [value], [])
            attach(call, list_to_tuple=True)
            self.push(stamp(call))

    def unpack_sequence(self, ins: Instr) -> None:
        self._unpack(ins.arg or 0, None)

    def unpack_ex(self, ins: Instr) -> None:
        before, after = ins.argval
        self._unpack(before + 1 + after, before)

    def _unpack(self, count: int, star: int | None) -> None:
        value = self.pop()
        if count == 0:  # ``() = value``: no item to store, the unpacking is the store
            self.store(ast.Tuple([], STORE), value)
            return
        unpack = Unpack(value, count, star)
        if isinstance(value, UnpackItem):
            unpack.parent = (value.unpack, value.index)
            unpack.value = value
        for i in reversed(range(count)):
            self.push(UnpackItem(unpack, i))

    def format_value(self, ins: Instr) -> None:
        flags = ins.arg or 0
        spec = self.pop() if flags & 4 else None
        value = self.pop()
        conversion = {0: -1, 1: 115, 2: 114, 3: 97}[flags & 3]
        self.push(_formatted(value, conversion, spec))

    def convert_value(self, ins: Instr) -> None:
        value = self.pop()
        conv = {1: 115, 2: 114, 3: 97}.get(ins.arg or 0, -1)
        self.push(Special("convert", ast.FormattedValue(value=value, conversion=conv,
                                                        format_spec=None)))

    def format_simple(self, ins: Instr) -> None:
        value = self.pop()
        if isinstance(value, Special) and value.kind == "convert":
            assert isinstance(value.value, ast.FormattedValue)
            self.push(stamp(ast.JoinedStr(values=[value.value])))
        else:
            self.push(_formatted(value, -1, None))

    def format_with_spec(self, ins: Instr) -> None:
        spec = self.pop()
        value = self.pop()
        if isinstance(value, Special) and value.kind == "convert":
            assert isinstance(value.value, ast.FormattedValue)
            fv = value.value
            self.push(_formatted(fv.value, fv.conversion, spec))
        else:
            self.push(_formatted(value, -1, spec))

    def build_interpolation(self, ins: Instr) -> None:
        flags = ins.arg or 0
        spec = self.pop() if flags & 1 else None
        text = self.pop()
        value = self.pop()
        conversion = {0: -1, 1: 115, 2: 114, 3: 97}[(flags >> 2) & 3]
        fmt = None
        if spec is not None:
            fmt = spec if isinstance(spec, ast.JoinedStr) else ast.JoinedStr(values=[spec])
        str_text = text.value if isinstance(text, ast.Constant) else ""
        self.push(stamp(syntax.Interpolation(  # type: ignore[arg-type, call-arg, unused-ignore]  # its fields
            value=value, str=str_text, conversion=conversion, format_spec=fmt)))

    def build_template(self, ins: Instr) -> None:
        interps = self.pop()
        strings = self.pop()
        if isinstance(interps, ast.Constant) and cast(object, interps.value) == ():
            interps = ast.Tuple([], LOAD)  # ``t""``: no interpolations
        if not isinstance(strings, ast.Constant) or not isinstance(interps, ast.Tuple):
            self.fail("template without constant strings")
        values: list[ast.expr] = []
        items = list(interps.elts)
        for i, s in enumerate(cast(tuple[str, ...], strings.value)):
            if s:
                values.append(const(s))
            if i < len(items):
                values.append(items[i])
        self.push(stamp(syntax.TemplateStr(values=values)))  # type: ignore[arg-type, call-arg, unused-ignore]  # its fields


def _formatted(value: ast.expr, conversion: int, spec: ast.expr | None) -> ast.expr:
    """``f"{value!conv:spec}"``: a formatted value is only valid inside an f-string, so it
    comes wrapped in one (``BUILD_STRING`` flattens the parts)."""
    fmt: ast.expr | None = None
    if spec is not None:
        if isinstance(spec, ast.JoinedStr):
            fmt = spec
        else:
            fmt = ast.JoinedStr(values=[spec if isinstance(spec, ast.Constant | ast.FormattedValue)
                                        else ast.FormattedValue(value=spec, conversion=-1,
                                                                format_spec=None)])
    part = ast.FormattedValue(value=value, conversion=conversion, format_spec=fmt)
    return stamp(ast.JoinedStr(values=[part]))


def _as_display(node: ast.expr) -> ast.expr:
    """A frozenset constant where a set display means the same (``in``, ``for``): the
    compiler folds ``x in {1, 2}`` to one; anywhere else it is ``frozenset({1, 2})``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, frozenset):
        node = stamp(ast.Constant(node.value))
        attach(node, display=True)
    return node


def _append_call(target: ast.expr, method: str, value: ast.expr) -> ast.Call:
    call = ast.Call(ast.Attribute(target, method, LOAD), [value],
                    [])
    attach(call, container_op=method)
    return call
