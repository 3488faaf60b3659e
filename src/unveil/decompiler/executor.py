"""Symbolic execution of straight-line code: stack operations become expressions.

The executor runs the instructions of one basic block on a symbolic :class:`State`:
a stack of expression trees and the statements emitted so far. Each opcode family
is one handler (loads, stores, operators, displays, calls, functions, imports,
exceptions, generators, pattern matching); terminators (jumps, returns, raises)
are left to the translator.

Evaluation order is kept exactly: when a statement is emitted, every value still
waiting on the stack that the statement could change, or whose evaluation has
effects, is first assigned to a temporary; when a ``SWAP`` would let a later value
be evaluated before an earlier one, both are assigned to temporaries. Values used
twice (``COPY``) become :class:`~unveil.decompiler.exprs.Shared`.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from typing import Any

from ..bytecode import Instr
from ..codeobj import COMPREHENSIONS, GENERIC_PREFIX, CodeFlag
from ..errors import DecompilationError
from .exprs import (
    Cell,
    ExcMatch,
    Func,
    Iterator,
    Marker,
    MatchCase,
    MethodSelf,
    Names,
    Null,
    Shared,
    Special,
    UnpackItem,
    const,
    is_stable,
    name,
)
from .ir import ClassBuild, ExcMarker, ImportItem, ImportValue, intrinsic
from .nodes import children, walk

_BINOPS: dict[str, type[ast.operator]] = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
    "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr,
    "^": ast.BitXor, "@": ast.MatMult,
}
_CMPOPS: dict[str, type[ast.cmpop]] = {
    "<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE,
}
_seq = itertools.count(1)


def stamp(node: ast.expr) -> ast.expr:
    """Give ``node`` an evaluation sequence number (the order values were computed)."""
    node._seq = next(_seq)  # type: ignore[attr-defined]
    return node


class Unpack:
    """A pending ``a, b = value``: targets are filled in as the items are stored."""

    def __init__(self, value: ast.expr, count: int, star: int | None) -> None:
        self.value = value
        self.targets: list[ast.expr | None] = [None] * count
        self.star = star
        self.parent: tuple[Unpack, int] | None = None

    def target(self) -> ast.Tuple:
        elts: list[ast.expr] = []
        for i, t in enumerate(self.targets):
            assert t is not None
            elts.append(ast.Starred(value=t, ctx=ast.Store()) if i == self.star else t)
        return ast.Tuple(elts=elts, ctx=ast.Store())


class State:
    """The symbolic stack and the statements emitted so far."""

    __slots__ = ("stack", "stmts")

    def __init__(self, stack: list[ast.expr] | None = None,
                 stmts: list[ast.stmt] | None = None) -> None:
        self.stack = stack if stack is not None else []
        self.stmts = stmts if stmts is not None else []

    def fork(self) -> State:
        return State(list(self.stack), [])


class Context:
    """What the executor needs to know about the code object being decompiled."""

    def __init__(self, code: Any, names: Names,
                 make_function: Callable[[Func], ast.expr] | None = None,
                 make_comprehension: Callable[[Func, ast.expr], ast.expr] | None = None,
                 make_class: Callable[[ast.Call], ast.expr] | None = None) -> None:
        self.code = code
        self.names = names
        self.make_function = make_function
        self.make_comprehension = make_comprehension
        self.make_class = make_class
        self.make_generic: Callable[[Func, list[ast.expr]], ast.expr] | None = None
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.imported: set[str] = set()


#: Instructions that only move values or push ones that evaluate nothing: the order
#: check after a ``SWAP`` waits until they are done.
_SHUFFLES = {"SWAP", "COPY", "LOAD_CONST", "MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE",
             "PUSH_NULL", "NOP"}

_NAME_STORES = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}
_UNPACK_CONSUMERS = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR",
                     "STORE_SUBSCR", "STORE_SLICE", "POP_TOP", "UNPACK_SEQUENCE", "UNPACK_EX",
                     "SWAP", "COPY"}


class Speculation(Exception):
    """Raised while exploring a branch speculatively when it would have an effect."""


class Machine:
    """Stack primitives, statement emission and evaluation-order bookkeeping."""

    following: list[Instr] = []
    skip: int = 0
    order_from: int | None = None  # a SWAP's order check still to do
    previous: Instr | None = None  # the instruction before the current one, in its block
    ctx: Context
    state: State
    ins: Instr | None
    _table: dict[str, Callable[[Instr], None]]
    speculative: bool = False
    spec_floor: int = 0
    spec_counts: dict[tuple[int, str], int]
    # stores left as a walrus in a value not evaluated yet (``(x := v)``), by name, with
    # the state (block) that made them
    walrus: dict[str, list[tuple[State, Shared]]]

    def bump(self, node: ast.expr, key: str, start: int) -> int:
        """Increment counter ``key`` of ``node``; while speculating, only in an overlay."""
        if self.speculative:
            k = (id(node), key)
            value = self.spec_counts.get(k, getattr(node, key, start)) + 1
            self.spec_counts[k] = value
            return value
        value = getattr(node, key, start) + 1
        setattr(node, key, value)
        return value

    def count(self, node: ast.expr, key: str, start: int) -> int:
        if self.speculative:
            return self.spec_counts.get((id(node), key), getattr(node, key, start))
        return getattr(node, key, start)

    def check_speculation(self, container: ast.expr | None = None) -> None:
        """Refuse effects that cannot be undone while exploring speculatively."""
        if self.speculative and (container is None
                                 or getattr(container, "_seq", 0) <= self.spec_floor):
            raise Speculation

    # ------------------------------------------------------------ driving

    def run(self, state: State, instrs: list[Instr]) -> None:
        """Execute ``instrs`` (no terminators among them) on ``state``."""
        self.state = state
        table = self._table
        self.skip = 0
        self.order_from = None
        for i, ins in enumerate(instrs):
            if self.skip:
                self.skip -= 1
                continue
            self.ins = ins
            self.following = instrs[i + 1:i + 8]
            handler = table.get(ins.op)
            if handler is None:
                self.fail("no translation for instruction")
            if self.order_from is not None and ins.op not in _SHUFFLES:
                self.settle_order()
            self.previous = instrs[i - 1] if i else None
            handler(ins)
        if self.order_from is not None:
            self.settle_order()

    def settle_order(self) -> None:
        """Check the evaluation order after the stack shuffles just done (a second
        ``SWAP`` often undoes the first, as around a generic function's defaults)."""
        start, self.order_from = self.order_from, None
        if start is not None:
            self.check_order(min(start, len(self.state.stack)))

    def fail(self, message: str) -> None:
        ins = self.ins
        raise DecompilationError(
            message, code_name=self.ctx.qualname,
            offset=None if ins is None else ins.offset,
            instruction=None if ins is None else (
                ins.op if ins.argval is None else f"{ins.op} {ins.argval!r}"))

    # ------------------------------------------------------------ stack primitives

    def push(self, node: ast.expr) -> None:
        self.state.stack.append(node)

    def pop(self) -> ast.expr:
        if not self.state.stack:
            self.fail("stack underflow")
        value = self.state.stack.pop()
        if isinstance(value, UnpackItem) and self.ins is not None \
                and self.ins.op not in _UNPACK_CONSUMERS:
            value = self.force_unpack(value)
        return value

    def force_unpack(self, item: UnpackItem) -> ast.expr:
        """An unpacked item used as a value, not stored: unpack into temporaries now."""
        unpack: Unpack = item.unpack
        temps = getattr(unpack, "temps", None)
        if temps is None:
            self.check_speculation()
            if unpack.parent is not None:
                parent, index = unpack.parent
                holder = UnpackItem(parent, index)
                unpack.value = self.force_unpack(holder)
                unpack.parent = None
            temps = []
            for i, t in enumerate(unpack.targets):
                if t is None:
                    tmp = self.ctx.names.fresh()
                    unpack.targets[i] = ast.Name(id=tmp, ctx=ast.Store())
                    temps.append(name(tmp, "temp"))
                else:
                    temps.append(None)
            unpack.temps = temps  # type: ignore[attr-defined]
            self.append(ast.Assign(targets=[unpack.target()], value=unpack.value))
            stack = self.state.stack
            for k, entry in enumerate(stack):
                if isinstance(entry, UnpackItem) and entry.unpack is unpack:
                    stack[k] = temps[entry.index]
        value = temps[item.index]
        if value is None:
            self.fail("unpacked item used twice")
        return value

    def popn(self, n: int) -> list[ast.expr]:
        if n == 0:
            return []
        stack = self.state.stack
        if len(stack) < n:
            self.fail("stack underflow")
        items = stack[-n:]
        del stack[-n:]
        return items

    def top(self, depth: int = 1) -> ast.expr:
        if len(self.state.stack) < depth:
            self.fail("stack underflow")
        value = self.state.stack[-depth]
        if isinstance(value, UnpackItem):
            value = self.force_unpack(value)  # read in place: used as a value
        return value

    # ------------------------------------------------------------ statements

    def emit(self, stmt: ast.stmt, writes: tuple[str, ...] = ()) -> None:
        """Append ``stmt`` after assigning pending unstable values to temporaries."""
        self.check_speculation()
        self.flush(writes)
        self.append(stmt)

    def append(self, stmt: ast.stmt) -> None:
        """Add ``stmt``, noting the shared values it evaluates (see :meth:`materialize`),
        and the source line of the instruction that made it (``line``)."""
        if self.walrus and any(self.walrus.values()):
            self.settle_walrus(stmt)
        if self.ins is not None and not hasattr(stmt, "line"):
            stmt.line = self.ins.line  # type: ignore[attr-defined]
        todo: list[Any] = [stmt]
        while todo:
            n = todo.pop()
            if isinstance(n, Shared):
                if n.name is None:
                    n.embedded = True  # type: ignore[attr-defined]
                    if self.walrus:  # the shared values it holds are evaluated here too
                        for inner in walk(n.value):
                            if isinstance(inner, Shared):
                                inner.evaluated = True  # type: ignore[attr-defined]
                continue
            todo.extend(children(n))
        self.state.stmts.append(stmt)

    def flush(self, writes: tuple[str, ...] = ()) -> None:
        """Assign to temporaries the stack values a statement must not overtake."""
        stack = self.state.stack
        for i in _evaluation_order(stack):
            node = stack[i]
            if isinstance(node, UnpackItem):
                # the unpacking (and its stores so far) happened before the statement
                stack[i] = self.force_unpack(node)
            elif self.needs_temp(node, writes):
                stack[i] = self.materialize(node)

    def needs_temp(self, node: ast.expr, writes: tuple[str, ...]) -> bool:
        if isinstance(node, UnpackItem | ImportValue):
            return False
        if isinstance(node, ImportItem):
            return False
        if isinstance(node, Shared):
            if node.name is not None:
                return False
            # (a display referred to twice must be one object: it needs its name)
            return not is_stable(node.value) or bool(getattr(node, "targets", None)) \
                or isinstance(node.value, ast.List | ast.Set | ast.Dict)
        if isinstance(node, ast.Name):
            if getattr(node, "kind", "fast") in ("fast",):
                return node.id in writes
            return getattr(node, "kind", "") != "temp"
        return not is_stable(node)

    def materialize(self, node: ast.expr) -> ast.expr:
        """Emit ``_tN = node`` and return what now stands for the value."""
        self.check_speculation()
        if isinstance(node, Shared):
            if node.name is None and getattr(node, "embedded", False) \
                    and not getattr(node, "targets", None):
                # an earlier statement evaluates it: bind the name there, with a walrus
                node.name = self.ctx.names.fresh()
                node.bind_first = True  # type: ignore[attr-defined]
            elif node.name is None:
                tmp = self.ctx.names.fresh()
                targets = list(getattr(node, "targets", None) or [])
                node.targets = []  # type: ignore[attr-defined]
                self.append(
                    ast.Assign(targets=[*targets, ast.Name(tmp, ast.Store())], value=node.value))
                node.name = tmp
            return node
        tmp = self.ctx.names.fresh()
        self.append(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=node))
        named = name(tmp, "temp")
        named.origin = node  # type: ignore[attr-defined]  # (the display it holds)
        return named

    def materialize_all(self, loads: bool = False) -> None:
        """Name what a block leaves on the stack (a display too: successors mutate it);
        ``loads``: a variable's value too (reading it can raise where it is unbound).
        Without ``loads``, an ``async with``'s awaited ``__aenter__`` stays for the body's
        first statement, as a ``with``'s ``__enter__`` does (the statement does both)."""
        stack = self.state.stack
        for i in _evaluation_order(stack):
            node = stack[i]
            if not loads and _awaited_enter(node):
                continue
            if loads and (isinstance(node, ast.Await | ast.Yield | ast.YieldFrom) or isinstance(
                    node, ast.Name) and getattr(node, "kind", "") != "temp" or isinstance(
                    node, Special) and node.kind == "anext_value"):  # (awaits, and can raise)
                stack[i] = self.materialize(node)
            elif isinstance(node, UnpackItem):
                stack[i] = self.force_unpack(node)
            elif isinstance(node, ast.Tuple) and any(_class_body(e) for e in node.elts):
                # a class's arguments for ``__build_class__`` (the body cannot be named):
                # name the bases instead
                for k, e in enumerate(node.elts):
                    if self.needs_temp(e, ()) or isinstance(e, ast.List | ast.Set | ast.Dict):
                        node.elts[k] = self.materialize(e)
            elif self.needs_temp(node, ()) or isinstance(node, ast.List | ast.Set | ast.Dict):
                stack[i] = self.materialize(node)

    # ------------------------------------------------------------ stores

    def store(self, target: ast.expr, value: ast.expr, writes: tuple[str, ...] = ()) -> None:
        """``target = value``, recognising unpacking, chained assignment and walrus."""
        if isinstance(target, ast.Name) and isinstance(value, ImportValue | ImportItem):
            if self.store_import(target.id, value, writes):
                return
        if isinstance(value, UnpackItem):
            self.store_unpacked(value, target, writes)
            return
        if isinstance(value, Special) and value.kind == "saved":
            return  # 3.12+ comprehension restoring its iteration variable
        if isinstance(value, Cell) and isinstance(target, ast.Name) \
                and target.id in ("__classcell__", "__classdictcell__"):
            return  # a class body hands its cells to type(): implicit in source
        if isinstance(target, ast.Name) and target.id in ("__annotate__", "__annotate_func__") \
                and getattr(target, "kind", "") == "name" \
                and isinstance(value, Func) and value.code.co_name == "__annotate__":
            self.emit(ExcMarker("annotate", value))  # 3.14: read back by the scope
            return
        if isinstance(value, Shared) and value.name is None:
            refs = sum(1 for e in self.state.stack if e is value)
            if refs:
                self.check_speculation()
                targets = getattr(value, "targets", None) or []
                value.targets = [*targets, target]  # type: ignore[attr-defined]
                if not isinstance(target, ast.Name):
                    # walrus cannot store an attribute or item: assign now
                    self.materialize_shared_targets(value)
                else:
                    self.walrus.setdefault(target.id, []).append((self.state, value))
                return
            targets = getattr(value, "targets", None) or []
            value.targets = []  # type: ignore[attr-defined]
            self.emit(ast.Assign(targets=[*targets, target], value=value), writes)
            return
        self.emit(ast.Assign(targets=[target], value=value), writes)

    def store_import(self, ident: str, value: ast.expr, writes: tuple[str, ...]) -> bool:
        """``import m``, ``import a.b as c``, ``from m import x as y`` from the stores."""
        if isinstance(value, ImportValue):
            if value.fromlist is not None or value.level:
                return False
            top = value.module.split(".")[0]
            if ident == top:
                alias = ast.alias(name=value.module)
            elif "." not in value.module:
                alias = ast.alias(name=value.module, asname=ident)
            else:
                return False
            self.emit(ast.Import(names=[alias]), writes)
            return True
        assert isinstance(value, ImportItem)
        source = value.source
        if isinstance(source, ImportValue) and source.fromlist is not None:
            if any(e is source for e in self.state.stack):
                alias = ast.alias(name=value.attr, asname=None if ident == value.attr else ident)
                source.aliases.append(alias)
                if writes:
                    source.writes = (*getattr(source, "writes", ()), *writes)  # type: ignore
                return True
            return False
        # ``import a.b.c as d``: IMPORT_NAME a.b.c, then IMPORT_FROM b, c down the chain
        path = [value.attr]
        while isinstance(source, ImportItem):
            path.append(source.attr)
            source = source.source
        if isinstance(source, ImportValue) and source.fromlist is None and not source.level:
            dotted = source.module.split(".")
            if dotted[1:] == list(reversed(path)):
                self.emit(ast.Import(names=[ast.alias(name=source.module, asname=ident)]),
                          writes)
                return True
        return False

    def materialize_shared_targets(self, shared: Shared) -> None:
        self.flush_below(shared)
        self.materialize(shared)

    def settle_walrus(self, stmt: ast.stmt) -> None:
        """Before ``stmt`` is added: a name it reads whose store still waits as a walrus in
        a value not evaluated yet (a later statement evaluates it) is stored first: the
        read comes after the store in the bytecode."""
        reads = {n.id for n in walk(stmt) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load) and n.id in self.walrus}
        if not reads:
            return
        inside = {id(n) for n in walk(stmt) if isinstance(n, Shared)}
        for ident in reads:
            # (embedded: a statement made already evaluates it, walrus included)
            pending = self.walrus[ident] = [
                (state, shared) for state, shared in self.walrus[ident]
                if shared.name is None and not getattr(shared, "embedded", False)
                and not getattr(shared, "evaluated", False) and any(
                    isinstance(t, ast.Name) and t.id == ident
                    for t in getattr(shared, "targets", None) or ())]
            # (a block's own: another block's may be evaluated by its branch test)
            for entry in [p for p in pending if p[0] is self.state and id(p[1]) not in inside]:
                pending.remove(entry)  # (settled once: what settling adds reads it too)
                shared = entry[1]
                self.check_speculation()
                if not is_stable(shared.value):
                    self.flush()  # what the stack evaluated before it, in order
                if shared.name is None:
                    self.materialize(shared)

    def flush_below(self, node: ast.expr) -> None:
        stack = self.state.stack
        for i, entry in enumerate(stack):
            if entry is node:
                break
            if self.needs_temp(entry, ()):
                stack[i] = self.materialize(entry)

    def store_unpacked(self, item: UnpackItem, target: ast.expr,
                       writes: tuple[str, ...]) -> None:
        unpack: Unpack = item.unpack
        if getattr(unpack, "temps", None) is not None:
            self.emit(ast.Assign(targets=[target], value=self.force_unpack(item)), writes)
            return
        self.check_speculation()  # the pending unpacking is shared with other paths
        unpack.targets[item.index] = target
        while all(t is not None for t in unpack.targets):
            if unpack.parent is None:
                self.emit(ast.Assign(targets=[unpack.target()], value=unpack.value), writes)
                return
            parent, index = unpack.parent
            parent.targets[index] = unpack.target()
            unpack = parent

    # ------------------------------------------------------------ order of evaluation

    def check_order(self, start: int) -> None:
        """After a stack shuffle, make sure values are still evaluated in push order."""
        stack = self.state.stack
        window_nodes = stack[start:]
        if sum(not is_stable(node) for node in window_nodes) < 2:
            return  # (one value with effects cannot be out of order with the others)
        seen: set[int] = set()
        last = 0
        ok = True
        for node in stack[:start]:
            _collect_seqs(node, seen)
        for k, node in enumerate(window_nodes):
            if is_stable(node):
                continue  # evaluated whenever, it gives the same value and effects
            if isinstance(node, Shared) and any(n is node for n in window_nodes[k + 1:]):
                continue  # a copy above it is consumed, and so evaluated, first
            seqs = _collect_seqs(node, seen)
            if seqs:
                if min(seqs) < last:
                    ok = False
                    break
                last = max(seqs)
        if ok:
            return
        window = [(i, node) for i, node in enumerate(stack)
                  if i >= start and self.needs_temp(node, ())]
        window.sort(key=lambda item: _first_seq(item[1]))
        for i, node in window:
            stack[i] = self.materialize(node)


def _plain_import_chain(item: ImportItem) -> bool:
    source: ast.expr = item
    while isinstance(source, ImportItem):
        source = source.source
    return isinstance(source, ImportValue) and source.fromlist is None


def _collect_seqs(node: ast.expr, seen: set[int]) -> list[int]:
    out: list[int] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Shared):
            if n.name is not None or id(n) in seen:
                continue
            seen.add(id(n))
        seq = getattr(n, "_seq", None)
        if seq is not None and not is_stable(n):
            out.append(seq)
        for field in n._fields:
            child = getattr(n, field, None)
            if isinstance(child, ast.AST):
                todo.append(child)  # type: ignore[arg-type]
            elif isinstance(child, list):
                todo.extend(c for c in child if isinstance(c, ast.AST))
    return out


def _evaluation_order(stack: list[ast.expr]) -> list[int]:
    """Stack positions in the order their values were computed (the stack order, but
    for values a shuffle moved)."""
    if len(stack) < 2:
        return list(range(len(stack)))
    return sorted(range(len(stack)), key=lambda i: (_first_seq(stack[i]), i))


def _first_seq(node: ast.expr) -> int:
    seqs = _collect_seqs(node, set())
    return min(seqs) if seqs else 0


# ---------------------------------------------------------------- opcode families


def _family(ops: dict[str, str]) -> Callable[[type], type]:
    def deco(cls: type) -> type:
        cls.ops = ops  # type: ignore[attr-defined]
        return cls
    return deco


@_family({
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
        self.push(stamp(ast.Attribute(value=obj, attr=ins.argval, ctx=ast.Load())))

    def load_method(self, ins: Instr) -> None:
        obj = self.pop()
        meth = stamp(ast.Attribute(value=obj, attr=ins.argval, ctx=ast.Load()))
        self.push(meth)
        self.push(MethodSelf(meth))

    def load_super_attr(self, ins: Instr) -> None:
        sup, cls, self_arg = self.popn(3)
        flags = ins.arg or 0
        if flags & 2:
            args = [cls, self_arg]
        else:
            args = []
        call = stamp(ast.Call(func=sup, args=args, keywords=[]))
        call.zero_arg_super = not flags & 2  # type: ignore[attr-defined]
        attr = stamp(ast.Attribute(value=call, attr=ins.argval, ctx=ast.Load()))
        self.push(attr)
        if flags & 1:
            self.push(MethodSelf(attr))

    def load_special(self, ins: Instr) -> None:
        obj = self.pop()
        meth = stamp(ast.Attribute(value=obj, attr=str(ins.argval), ctx=ast.Load()))
        self.push(meth)
        self.push(MethodSelf(meth))

    def load_common(self, ins: Instr) -> None:
        node = name(ins.argval, "global")
        node.common = True  # type: ignore[attr-defined]
        self.push(node)

    def push_null(self, ins: Instr) -> None:
        self.push(Null())

    def load_closure(self, ins: Instr) -> None:
        self.push(Cell(ins.argval))

    def load_build_class(self, ins: Instr) -> None:
        self.push(Special("build_class"))

    def load_locals(self, ins: Instr) -> None:
        self.push(stamp(ast.Call(func=name("locals", "global"), args=[], keywords=[])))

    def load_fast_and_clear(self, ins: Instr) -> None:
        self.push(Special("saved", const(ins.argval)))


_STORE_KIND = {"STORE_FAST": "fast", "STORE_DEREF": "deref", "STORE_GLOBAL": "global",
               "STORE_NAME": "name"}
_DELETE_KIND = {"DELETE_FAST": "fast", "DELETE_DEREF": "deref", "DELETE_GLOBAL": "global",
                "DELETE_NAME": "name"}


@_family({
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
        target = ast.Name(id=ins.argval, ctx=ast.Store())
        target.kind = kind  # type: ignore[attr-defined]
        self.store(target, value, (ins.argval,) if kind == "fast" else ())

    def multi_store(self, ins: Instr) -> bool:
        """``a, b = x, y``: values pushed one by one, then stored to names in a row."""
        following = self.following
        names: list[tuple[str, str]] = [(ins.argval, _STORE_KIND[ins.op])]
        for nxt in following:
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
            for ident, kind in names:
                t = ast.Name(id=ident, ctx=ast.Store())
                t.kind = kind  # type: ignore[attr-defined]
                targets.append(t)
            self.skip = k - 1
            self.emit(ast.Assign(targets=targets, value=values[0]),
                      tuple(n for n, kind in names if kind == "fast"))
            return True
        if any(isinstance(v, UnpackItem | Shared | ImportValue | ImportItem | Special
                          | Null | MethodSelf) for v in values):
            return False
        if any(getattr(v, "targets", None) for v in values):
            return False
        del self.state.stack[-k:]
        targets = []
        for ident, kind in reversed(names):
            t = ast.Name(id=ident, ctx=ast.Store())
            t.kind = kind  # type: ignore[attr-defined]
            targets.append(t)
        if all(kind == "fast" for _, kind in names):
            # 3.10 rotates the values into place before the stores: write them in the
            # order they were made (the order of stores to locals shows nowhere)
            pairs = sorted(zip(targets, values, strict=True),
                           key=lambda p: getattr(p[1], "_seq", 0))
            targets, values = [t for t, _ in pairs], [v for _, v in pairs]
        self.skip = k - 1
        writes = tuple(n for n, kind in names if kind == "fast")
        self.emit(ast.Assign(targets=[ast.Tuple(elts=targets, ctx=ast.Store())],
                             value=ast.Tuple(elts=values, ctx=ast.Load())), writes)
        return True

    def store_attr(self, ins: Instr) -> None:
        obj = self.pop()
        value = self.pop()
        self.store(ast.Attribute(value=obj, attr=ins.argval, ctx=ast.Store()), value)

    def store_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        value = self.pop()
        self.store(ast.Subscript(value=obj, slice=_slice_of(key), ctx=ast.Store()), value)

    def store_slice(self, ins: Instr) -> None:
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        value = self.pop()
        sl = ast.Slice(lower=_none_to_missing(start), upper=_none_to_missing(stop))
        self.store(ast.Subscript(value=obj, slice=sl, ctx=ast.Store()), value)

    def delete_var(self, ins: Instr) -> None:
        kind = _DELETE_KIND[ins.op]
        target = ast.Name(id=ins.argval, ctx=ast.Del())
        target.kind = kind  # type: ignore[attr-defined]
        self.emit(ast.Delete(targets=[target]), (ins.argval,) if kind == "fast" else ())

    def delete_attr(self, ins: Instr) -> None:
        obj = self.pop()
        self.emit(ast.Delete(targets=[ast.Attribute(value=obj, attr=ins.argval, ctx=ast.Del())]))

    def delete_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        self.emit(ast.Delete(targets=[ast.Subscript(value=obj, slice=_slice_of(key),
                                                    ctx=ast.Del())]))


@_family({"POP_TOP": "pop_top", "COPY": "copy", "SWAP": "swap"})
class StackOps(Machine):
    """Instructions that only move values around."""

    def pop_top(self, ins: Instr) -> None:
        value = self.pop()
        self.discard(value)

    def discard(self, value: ast.expr) -> None:
        if isinstance(value, Shared):
            if value.name is not None:
                return
            if self.bump(value, "discards", 0) < self.count(value, "refs", 2):
                return  # another reference evaluates it
            targets = getattr(value, "targets", None)
            if targets:
                value.targets = []  # type: ignore[attr-defined]
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    self.emit(ast.Expr(value=ast.NamedExpr(
                        target=targets[0], value=value.value)))
                else:
                    self.emit(ast.Assign(targets=targets, value=value.value))
                return
            value = value.value
        if isinstance(value, ImportValue):
            self.finish_import(value)
            return
        if isinstance(value, ImportItem) and _plain_import_chain(value):
            return  # the intermediate module of ``import a.b.c as d``
        if isinstance(value, UnpackItem):
            self.store(ast.Name(id="_", ctx=ast.Store()), value)
            return
        if is_stable(value) or isinstance(value, Marker) and not isinstance(
                value, Func | ClassBuild | ExcMatch | Iterator | ImportItem):
            if not (isinstance(value, Special) and value.kind in ("enter", "awaited")) \
                    and not self.local_statement(value):
                return
        self.emit(ast.Expr(value=value))

    def local_statement(self, value: ast.expr) -> bool:
        """``x`` alone as a statement (``LOAD_FAST x; POP_TOP``): it stays, as it raises
        UnboundLocalError when ``x`` is unbound."""
        prev = self.previous
        return isinstance(value, ast.Name) and getattr(value, "kind", "") == "fast" \
            and prev is not None and prev.op.startswith("LOAD_FAST") and prev.argval == value.id

    def finish_import(self, value: ImportValue) -> None:
        if value.fromlist is None or not value.aliases:
            if value.fromlist is not None and not value.aliases:
                # ``from m import ()`` cannot be written; keep the import for its effect
                self.emit(ast.Expr(value=ast.Call(
                    func=name("__import__", "global"),
                    args=[const(value.module), name("globals", "global")],
                    keywords=[])))
            return
        self.emit(ast.ImportFrom(module=value.module or None, names=value.aliases,
                                 level=value.level), getattr(value, "writes", ()))

    def copy(self, ins: Instr) -> None:
        depth = ins.arg or 1
        value = self.top(depth)
        if isinstance(value, Shared):
            self.bump(value, "refs", 2)
            self.push(value)
            return
        if is_stable(value) and not isinstance(value, ast.List | ast.Set | ast.Dict) and (
                isinstance(value, Marker) or not (
                depth == 1 and self.following and self.following[0].op in _NAME_STORES)):
            self.push(value)
            return
        # a copy stored to a name right away is ``a = b = v`` or ``(a := v)``
        shared = Shared(value)
        shared._seq = getattr(value, "_seq", None)  # type: ignore[attr-defined]
        stack = self.state.stack
        stack[-depth] = shared
        self.push(shared)

    def swap(self, ins: Instr) -> None:
        depth = ins.arg or 2
        stack = self.state.stack
        if len(stack) < depth:
            self.fail("stack underflow")
        stack[-1], stack[-depth] = stack[-depth], stack[-1]
        start = len(stack) - depth
        self.order_from = start if self.order_from is None else min(self.order_from, start)


_UNARY = {"UNARY_NOT": ast.Not, "UNARY_NEGATIVE": ast.USub, "UNARY_INVERT": ast.Invert,
          "UNARY_POSITIVE": ast.UAdd}


@_family({
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
        self.push(stamp(ast.UnaryOp(op=_UNARY[ins.op](), operand=operand)))

    def to_bool(self, ins: Instr) -> None:
        value = self.pop()
        self.push(stamp(ast.Call(func=name("bool", "global"), args=[value], keywords=[])))

    def binary_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        sym = str(ins.argval)
        inplace = sym.endswith("=")
        node = stamp(ast.BinOp(left=left, op=_BINOPS[sym.rstrip("=")](), right=right))
        node.inplace = inplace  # type: ignore[attr-defined]
        self.push(node)

    def binary_subscr(self, ins: Instr) -> None:
        key = self.pop()
        obj = self.pop()
        self.push(stamp(ast.Subscript(value=obj, slice=_slice_of(key), ctx=ast.Load())))

    def binary_slice(self, ins: Instr) -> None:
        stop = self.pop()
        start = self.pop()
        obj = self.pop()
        sl = ast.Slice(lower=_none_to_missing(start), upper=_none_to_missing(stop))
        self.push(stamp(ast.Subscript(value=obj, slice=sl, ctx=ast.Load())))

    def compare(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        self.push(stamp(ast.Compare(left=left, ops=[_CMPOPS[ins.argval]()],
                                    comparators=[right])))

    def is_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        op = ast.IsNot() if ins.arg else ast.Is()
        self.push(stamp(ast.Compare(left=left, ops=[op], comparators=[right])))

    def contains_op(self, ins: Instr) -> None:
        right = self.pop()
        left = self.pop()
        op = ast.NotIn() if ins.arg else ast.In()
        self.push(stamp(ast.Compare(left=left, ops=[op], comparators=[_as_display(right)])))

    def get_iter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(_as_display(self.pop()))))

    def get_yield_from_iter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(self.pop(), "yield_from")))

    def get_len(self, ins: Instr) -> None:
        self.push(stamp(ast.Call(func=name("len", "global"), args=[self.top()], keywords=[])))


def _slice_of(key: ast.expr) -> ast.expr:
    """``x[a:b]`` is ``BUILD_SLICE`` + subscript; a tuple of slices keeps its form."""
    return key


def _none_to_missing(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return node


@_family({
    "BUILD_TUPLE": "build_tuple", "BUILD_LIST": "build_list", "BUILD_SET": "build_set",
    "BUILD_MAP": "build_map", "BUILD_CONST_KEY_MAP": "build_const_key_map",
    "BUILD_STRING": "build_string", "BUILD_SLICE": "build_slice",
    "LIST_APPEND": "list_append", "SET_ADD": "set_add", "MAP_ADD": "map_add",
    "LIST_EXTEND": "list_extend", "SET_UPDATE": "set_update", "DICT_UPDATE": "dict_update",
    "DICT_MERGE": "dict_update", "LIST_TO_TUPLE": "list_to_tuple",
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
            self.push(ast.Tuple(elts=items, ctx=ast.Load()))
            return
        self.push(stamp(ast.Tuple(elts=items, ctx=ast.Load())))

    def build_list(self, ins: Instr) -> None:
        self.push(stamp(ast.List(elts=self.popn(ins.arg or 0), ctx=ast.Load())))

    def build_set(self, ins: Instr) -> None:
        items = self.popn(ins.arg or 0)
        node = stamp(ast.Set(elts=items))
        self.push(node)

    def build_map(self, ins: Instr) -> None:
        flat = self.popn(2 * (ins.arg or 0))
        self.push(stamp(ast.Dict(keys=flat[0::2], values=flat[1::2])))

    def build_const_key_map(self, ins: Instr) -> None:
        keys = self.pop()
        values = self.popn(ins.arg or 0)
        if not isinstance(keys, ast.Constant) or not isinstance(keys.value, tuple):
            self.fail("BUILD_CONST_KEY_MAP without constant keys")
        self.push(stamp(ast.Dict(keys=[const(k) for k in keys.value], values=values)))

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
        self.push(ast.Slice(lower=_none_to_missing(parts[0]), upper=_none_to_missing(parts[1]),
                            step=step))

    def _container(self, depth: int) -> ast.expr:
        container = self.top(depth)
        self.check_speculation(container)
        if not isinstance(container, ast.List | ast.Set | ast.Dict):
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
            self.emit(ast.Expr(value=_append_call(target, "append", value)))

    def set_add(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Set):
            target.elts.append(value)
        else:
            self.emit(ast.Expr(value=_append_call(target, "add", value)))

    def map_add(self, ins: Instr) -> None:
        value = self.pop()
        key = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Dict):
            target.keys.append(key)
            target.values.append(value)
        else:
            stmt = ast.Assign(targets=[ast.Subscript(value=target, slice=key, ctx=ast.Store())],
                              value=value)
            stmt.map_add = True  # type: ignore[attr-defined]
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
                target.elts.append(ast.Starred(value=value, ctx=ast.Load()))
        else:
            # ``[*value]`` raises what LIST_EXTEND raises for a non-iterable
            if not isinstance(value, ast.List | ast.Tuple | ast.Constant):
                value = ast.List(elts=[ast.Starred(value=value, ctx=ast.Load())],
                                 ctx=ast.Load())
            self.emit(ast.Expr(value=_append_call(target, "extend", value)))

    def set_update(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Set):
            if isinstance(value, ast.Constant) and isinstance(value.value, frozenset):
                target.elts.extend(const(v) for v in _frozenset_items(value.value))
            else:
                target.elts.append(ast.Starred(value=value, ctx=ast.Load()))
        else:
            self.emit(ast.Expr(value=_append_call(target, "update", value)))

    def dict_update(self, ins: Instr) -> None:
        value = self.pop()
        target = self._container(ins.arg or 1)
        if isinstance(target, ast.Dict):
            target.keys.append(None)  # type: ignore[arg-type]
            target.values.append(value)
        else:
            # ``{**value}``: DICT_UPDATE takes mappings only, not pairs like dict.update
            if not isinstance(value, ast.Dict):
                value = ast.Dict(keys=[None], values=[value])  # type: ignore[list-item]
            self.emit(ast.Expr(value=_append_call(target, "update", value)))

    def list_to_tuple(self, ins: Instr) -> None:
        value = self.pop()
        if isinstance(value, ast.List):
            self.push(stamp(ast.Tuple(elts=value.elts, ctx=ast.Load())))
        else:
            call = ast.Call(func=name("tuple", "global"), args=[value], keywords=[])
            call.list_to_tuple = True  # type: ignore[attr-defined]
            self.push(stamp(call))

    def unpack_sequence(self, ins: Instr) -> None:
        self._unpack(ins.arg or 0, None)

    def unpack_ex(self, ins: Instr) -> None:
        before, after = ins.argval
        self._unpack(before + 1 + after, before)

    def _unpack(self, count: int, star: int | None) -> None:
        value = self.pop()
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
        interp_cls = getattr(ast, "Interpolation", None)
        if interp_cls is None:
            self.fail("t-strings need Python 3.14")
        fmt = None
        if spec is not None:
            fmt = spec if isinstance(spec, ast.JoinedStr) else ast.JoinedStr(values=[spec])
        str_text = text.value if isinstance(text, ast.Constant) else ""
        self.push(stamp(interp_cls(value=value, str=str_text, conversion=conversion,
                                   format_spec=fmt)))

    def build_template(self, ins: Instr) -> None:
        interps = self.pop()
        strings = self.pop()
        template_cls = getattr(ast, "TemplateStr", None)
        if template_cls is None:
            self.fail("t-strings need Python 3.14")
        if isinstance(interps, ast.Constant) and interps.value == ():
            interps = ast.Tuple(elts=[], ctx=ast.Load())  # ``t""``: no interpolations
        if not isinstance(strings, ast.Constant) or not isinstance(interps, ast.Tuple):
            self.fail("template without constant strings")
        values: list[ast.expr] = []
        items = list(interps.elts)
        for i, s in enumerate(strings.value):
            if s:
                values.append(const(s))
            if i < len(items):
                values.append(items[i])
        self.push(stamp(template_cls(values=values)))


def _frozenset_items(value: frozenset[Any]) -> list[Any]:
    return list(value)


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
        node.display = True  # type: ignore[attr-defined]
    return node


def _append_call(target: ast.expr, method: str, value: ast.expr) -> ast.Call:
    call = ast.Call(func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=[value],
                    keywords=[])
    call.container_op = method  # type: ignore[attr-defined]
    return call


@_family({
    "CALL": "call", "CALL_KW": "call_kw", "CALL_FUNCTION": "call_function",
    "CALL_FUNCTION_KW": "call_function_kw", "CALL_EX": "call_ex",
    "CALL_FUNCTION_EX": "call_function_ex", "CALL_INTRINSIC_1": "call_intrinsic_1",
    "CALL_INTRINSIC_2": "call_intrinsic_2",
})
class Calls(Machine):
    """Calls: the 3.11+ two-slot convention and 3.10's one-slot one."""

    def call(self, ins: Instr) -> None:
        args = self.popn(ins.arg or 0)
        self._finish_call_two_slots(args, [])

    def call_kw(self, ins: Instr) -> None:
        names = self.pop()
        args = self.popn(ins.arg or 0)
        pos, kws = _split_keywords(args, names)
        self._finish_call_two_slots(pos, kws)

    def call_function(self, ins: Instr) -> None:
        args = self.popn(ins.arg or 0)
        func = self.pop()
        self.push(self.make_call(func, args, []))

    def call_function_kw(self, ins: Instr) -> None:
        names = self.pop()
        args = self.popn(ins.arg or 0)
        func = self.pop()
        pos, kws = _split_keywords(args, names)
        self.push(self.make_call(func, pos, kws))

    def call_ex(self, ins: Instr) -> None:
        flags = ins.arg or 0
        kwargs = self.pop() if flags else None
        if isinstance(kwargs, Null):
            kwargs = None
        args = self.pop()
        a, b = self.popn(2)
        func, self_arg = _callable_of(a, b)
        pos = _star_args(args)
        if self_arg is not None:
            pos.insert(0, self_arg)
        self.push(self.make_call(func, pos, _star_kwargs(kwargs)))

    def call_function_ex(self, ins: Instr) -> None:
        kwargs = self.pop() if ins.arg else None
        args = self.pop()
        func = self.pop()
        self.push(self.make_call(func, _star_args(args), _star_kwargs(kwargs)))

    def _finish_call_two_slots(self, args: list[ast.expr], kws: list[ast.keyword]) -> None:
        a, b = self.popn(2)
        func, self_arg = _callable_of(a, b)
        if self_arg is None and not isinstance(b, MethodSelf) and isinstance(func, ast.Attribute) \
                and isinstance(func.value, ast.Name) \
                and getattr(func.value, "kind", "") == "global":
            # 3.11+ calls ``module.f(...)`` without a method load only when ``module`` was
            # imported at module level: recompiling must know that name is an import
            self.ctx.imported.add(func.value.id)
        if self_arg is not None:
            args = [self_arg, *args]
        self.push(self.make_call(func, args, kws))

    def make_call(self, func: ast.expr, args: list[ast.expr],
                  keywords: list[ast.keyword]) -> ast.expr:
        if isinstance(func, Special) and func.kind == "build_class":
            if len(args) < 2 or not isinstance(args[0], Func) \
                    or not isinstance(args[1], ast.Constant):
                self.fail(f"unrecognised class creation {args}")
            cb = ClassBuild(args[0], args[1].value, args[2:], keywords)  # type: ignore[arg-type]
            return stamp(cb)
        if isinstance(func, Func) and self.ctx.make_comprehension is not None \
                and func.code.co_name in COMPREHENSIONS and len(args) == 1 and not keywords:
            return stamp(self.ctx.make_comprehension(func, args[0]))
        if isinstance(func, Func) and self.ctx.make_generic is not None \
                and func.code.co_name.startswith(GENERIC_PREFIX) and not keywords:
            return stamp(self.ctx.make_generic(func, args))
        return stamp(ast.Call(func=func, args=args, keywords=keywords))

    def call_intrinsic_1(self, ins: Instr) -> None:
        value = self.pop()
        marker = intrinsic(str(ins.argval), [value])
        self.push(stamp(marker if marker is not None else Special(str(ins.argval), value)))

    def call_intrinsic_2(self, ins: Instr) -> None:
        b = self.pop()
        a = self.pop()
        marker = intrinsic(str(ins.argval), [a, b])
        self.push(stamp(marker if marker is not None else
                        Special(str(ins.argval), ast.Tuple(elts=[a, b], ctx=ast.Load()))))


def _class_body(node: ast.expr) -> bool:
    """A class body's function, made for ``__build_class__``."""
    return isinstance(node, Func) and not node.code.co_flags & CodeFlag.NEWLOCALS


def _callable_of(a: ast.expr, b: ast.expr) -> tuple[ast.expr, ast.expr | None]:
    """The callable and an extra first argument of a two-slot call."""
    if isinstance(a, Null):
        return b, None
    if isinstance(b, Null):
        return a, None
    if isinstance(b, MethodSelf):
        return a, None
    return a, b


def _split_keywords(args: list[ast.expr], names: ast.expr) -> tuple[list[ast.expr],
                                                                      list[ast.keyword]]:
    kwnames = names.value if isinstance(names, ast.Constant) else ()
    n = len(kwnames)
    pos = args[:len(args) - n] if n else args
    kws = [ast.keyword(arg=k, value=v) for k, v in zip(kwnames, args[len(args) - n:],
                                                        strict=True)] if n else []
    return list(pos), kws


def _star_args(args: ast.expr) -> list[ast.expr]:
    if isinstance(args, ast.Tuple | ast.List) and getattr(args, "_seq", None) is not None:
        return list(args.elts)
    if isinstance(args, ast.Constant) and isinstance(args.value, tuple):
        return [const(v) for v in args.value]
    if getattr(args, "list_to_tuple", False):
        args = args.args[0]  # type: ignore[attr-defined]  # ``*tuple(xs)`` is ``*xs``
    return [ast.Starred(value=args, ctx=ast.Load())]


def _star_kwargs(kwargs: ast.expr | None) -> list[ast.keyword]:
    if kwargs is None:
        return []
    if isinstance(kwargs, ast.Dict):
        out: list[ast.keyword] = []
        for k, v in zip(kwargs.keys, kwargs.values, strict=True):
            if k is None:
                out.append(ast.keyword(arg=None, value=v))
            elif isinstance(k, ast.Constant) and isinstance(k.value, str) \
                    and k.value.isidentifier():
                out.append(ast.keyword(arg=k.value, value=v))
            else:
                return [ast.keyword(arg=None, value=kwargs)]
        return out
    return [ast.keyword(arg=None, value=kwargs)]


@_family({"COMPREHENSION": "comprehension"})
class Inlined(Machine):
    """3.12+ inlined comprehensions, folded into one pseudo-instruction beforehand."""

    def comprehension(self, ins: Instr) -> None:
        iterable = self.pop()
        if isinstance(iterable, Iterator):
            iterable = iterable.value
        else:
            iterable = ast.Call(func=name("iter", "global"), args=[iterable], keywords=[])
        expr = _with_outer_iterable(ins.argval, iterable)
        saved = ins.arg or 0
        for _ in range(saved):
            self.push(Special("saved"))
        self.push(stamp(expr))


def _with_outer_iterable(node: ast.expr, iterable: ast.expr) -> ast.expr:
    import copy

    new = copy.copy(node)
    gens = list(new.generators)  # type: ignore[attr-defined]
    gens[0] = copy.copy(gens[0])
    gens[0].iter = iterable
    new.generators = gens  # type: ignore[attr-defined]
    return new


@_family({"MAKE_FUNCTION": "make_function", "SET_FUNCTION_ATTRIBUTE": "set_function_attribute"})
class Functions(Machine):
    """Function objects: the code constant, defaults, annotations and closure cells."""

    def make_function(self, ins: Instr) -> None:
        flags = ins.arg or 0
        if flags & 0x100:
            self.pop()  # 3.10 qualified name
        code = self.pop()
        if not isinstance(code, ast.Constant) or not hasattr(code.value, "co_code"):
            self.fail("MAKE_FUNCTION without a code constant")
        annotate = self.pop() if flags & 16 else None
        closure = self.pop() if flags & 8 else None
        annotations = self.pop() if flags & 4 else None
        kwdefaults = self.pop() if flags & 2 else None
        defaults = self.pop() if flags & 1 else None
        func = Func(code.value, defaults, kwdefaults, annotations, closure)
        func.annotate = annotate
        self.push(stamp(func))

    def set_function_attribute(self, ins: Instr) -> None:
        func = self.pop()
        value = self.pop()
        if not isinstance(func, Func):
            self.fail("SET_FUNCTION_ATTRIBUTE on an unknown function")
        attr = {1: "defaults", 2: "kwdefaults", 4: "annotations", 8: "closure",
                16: "annotate"}.get(ins.arg or 0)
        if attr is None:
            self.fail("unknown function attribute")
        setattr(func, attr, value)
        self.push(func)


@_family({"IMPORT_NAME": "import_name", "IMPORT_FROM": "import_from",
          "IMPORT_STAR": "import_star"})
class Imports(Machine):
    """``import`` statements, assembled from IMPORT_NAME, IMPORT_FROM and the stores after."""

    def import_name(self, ins: Instr) -> None:
        fromlist = self.pop()
        level = self.pop()
        if not isinstance(fromlist, ast.Constant) or not isinstance(level, ast.Constant):
            self.push(stamp(ast.Call(func=name("__import__", "global"),
                                     args=[const(ins.argval), name("globals", "global"),
                                           const(None), fromlist, level], keywords=[])))
            return
        self.push(ImportValue(ins.argval, fromlist.value, level.value))

    def import_from(self, ins: Instr) -> None:
        source = self.top()
        self.push(ImportItem(source, ins.argval))

    # ``import a.b as c`` keeps the chain below its item and pops it with SWAP; POP_TOP

    def import_star(self, ins: Instr) -> None:
        module = self.pop()
        if not isinstance(module, ImportValue):
            self.fail("import * of an unknown module")
        self.emit(ast.ImportFrom(module=module.module or None,
                                 names=[ast.alias(name="*")], level=module.level))


@_family({
    "PUSH_EXC_INFO": "push_exc_info", "POP_EXCEPT": "pop_except",
    "CHECK_EXC_MATCH": "check_exc_match", "CHECK_EG_MATCH": "check_eg_match",
    "PREP_RERAISE_STAR": "prep_reraise_star", "WITH_EXCEPT_START": "with_except_start",
    "BEFORE_WITH": "before_with", "BEFORE_ASYNC_WITH": "before_with",
    "LOAD_ASSERTION_ERROR": "load_assertion_error", "STOPITERATION_ERROR": "stopiteration",
    "CLEANUP_THROW": "cleanup_throw", "PRINT_EXPR": "print_expr",
    "SETUP_ANNOTATIONS": "setup_annotations", "EXIT_INIT_CHECK": "exit_init_check",
})
class Exceptions(Machine):
    """Handlers and context managers; their statements are markers the structurer reads."""

    def push_exc_info(self, ins: Instr) -> None:
        exc = self.pop()
        self.push(Special("prev_exc"))
        self.push(exc)
        self.state.stmts.append(ExcMarker("push_exc_info", exc))

    def pop_except(self, ins: Instr) -> None:
        self.popn(ins.arg or 1)
        marker = ExcMarker("pop_except")
        # values computed while the exception was still being handled (a ``return``
        # value pushed after this belongs to code after the ``try`` statement)
        marker.before = {id(x) for x in self.state.stack}  # type: ignore[attr-defined]
        self.emit(marker)

    def check_exc_match(self, ins: Instr) -> None:
        types = self.pop()
        exc = self.top()
        self.push(ExcMatch(exc, types))

    def check_eg_match(self, ins: Instr) -> None:
        types = self.pop()
        exc = self.pop()
        split = Shared(stamp(Special("eg_split", ast.Tuple(elts=[exc, types], ctx=ast.Load()))))
        split.refs = 2  # type: ignore[attr-defined]
        rest = stamp(ast.Subscript(value=split, slice=const(0), ctx=ast.Load()))
        match = stamp(ast.Subscript(value=split, slice=const(1), ctx=ast.Load()))
        match.eg_match = ExcMatch(exc, types, star=True)  # type: ignore[attr-defined]
        self.push(rest)
        self.push(match)

    def prep_reraise_star(self, ins: Instr) -> None:
        b = self.pop()
        a = self.pop()
        self.push(Special("reraise_star", ast.Tuple(elts=[a, b], ctx=ast.Load())))

    def with_except_start(self, ins: Instr) -> None:
        depth = ins.arg or 4
        exc = self.top(ins.argval or 1)
        exit_fn = self.top(depth)
        result = Special("with_exit_result", exc)
        result.exit = exit_fn  # type: ignore[attr-defined]
        result.exit_self = self.top(depth - 1) if depth == 5 else None  # type: ignore
        self.push(result)

    def before_with(self, ins: Instr) -> None:
        mgr = self.pop()
        marker = ExcMarker("with", mgr, ins.op == "BEFORE_ASYNC_WITH")
        self.emit(marker)
        specials = [Special("exit", mgr)]
        if (ins.arg or 1) == 2:
            specials.append(Special("exit_self", mgr))
        specials.append(Special("enter", mgr))
        marker.specials = specials  # type: ignore[attr-defined]
        for sp in specials:
            self.push(sp)

    def load_assertion_error(self, ins: Instr) -> None:
        self.push(name("AssertionError", "global"))

    def stopiteration(self, ins: Instr) -> None:
        self.push(Special("stopiteration_error", self.pop()))

    def cleanup_throw(self, ins: Instr) -> None:
        self.fail("unexpected CLEANUP_THROW")

    def print_expr(self, ins: Instr) -> None:
        self.emit(ast.Expr(value=self.pop()))

    def setup_annotations(self, ins: Instr) -> None:
        self.state.stmts.append(ExcMarker("setup_annotations"))

    def exit_init_check(self, ins: Instr) -> None:
        self.pop()


@_family({
    "YIELD_VALUE": "yield_value", "YIELD_FROM": "yield_from", "GET_AWAITABLE": "get_awaitable",
    "GET_AITER": "get_aiter", "GET_ANEXT": "get_anext", "END_SEND": "end_send",
    "ASYNC_GEN_WRAP": "async_gen_wrap",
})
class Generators(Machine):
    """yield, yield from and await."""

    def yield_value(self, ins: Instr) -> None:
        value = self.pop()
        if isinstance(value, Special) and value.kind == "async_gen_wrap":
            value = value.value  # type: ignore[assignment]
        self.push(stamp(ast.Yield(value=None if _is_none(value) else value)))

    def yield_from(self, ins: Instr) -> None:
        sent = self.pop()
        receiver = self.pop()
        if not _is_none(sent):
            self.fail("yield from with a non-None first value")
        if isinstance(receiver, Iterator) and receiver.kind == "yield_from":
            self.push(stamp(ast.YieldFrom(value=receiver.value)))
        elif isinstance(receiver, Special) and receiver.kind == "awaitable":
            inner = receiver.value
            if getattr(inner, "async_comprehension", False):
                self.push(inner)  # an async comprehension is awaited by its call site
            else:
                self.push(stamp(ast.Await(value=inner)))
        elif isinstance(receiver, Special) and receiver.kind == "anext":
            self.push(stamp(Special("anext_value", receiver.value)))
        else:
            self.push(stamp(ast.YieldFrom(value=receiver)))

    def get_awaitable(self, ins: Instr) -> None:
        self.push(stamp(Special("awaitable", self.pop())))

    def get_aiter(self, ins: Instr) -> None:
        self.push(stamp(Iterator(self.pop(), "aiter")))

    def get_anext(self, ins: Instr) -> None:
        self.push(stamp(Special("anext", self.top())))

    def end_send(self, ins: Instr) -> None:
        value = self.pop()
        self.pop()
        self.push(value)

    def async_gen_wrap(self, ins: Instr) -> None:
        self.push(Special("async_gen_wrap", self.pop()))


def _awaited_enter(node: ast.expr) -> bool:
    if not isinstance(node, ast.Await):
        return False
    value = node.value
    if isinstance(value, Special) and value.kind == "awaitable":
        value = value.value
    return isinstance(value, Special) and value.kind == "enter"


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


@_family({
    "MATCH_CLASS": "match_class", "MATCH_MAPPING": "match_mapping",
    "MATCH_SEQUENCE": "match_sequence", "MATCH_KEYS": "match_keys",
    "COPY_DICT_WITHOUT_KEYS": "copy_dict_without_keys", "MATCH_CASE": "match_case",
})
class Matching(Machine):
    """Structural pattern matching: whole cases read back beforehand (``MATCH_CASE``), and
    the primitives of those that were not."""

    def match_case(self, ins: Instr) -> None:
        case = ins.argval
        subject = self.pop() if ins.arg else None
        self.check_speculation()
        self.flush(case.names)  # values read before the pattern binds its names
        if subject is None:
            subject = self.top()
        self.push(stamp(MatchCase(subject, case.pattern)))

    def match_class(self, ins: Instr) -> None:
        names = self.pop()
        cls = self.pop()
        subject = self.pop()
        self.push(stamp(Special("match_class", ast.Tuple(elts=[subject, cls, names],
                                                         ctx=ast.Load()))))
        self.state.stack[-1].count = ins.arg  # type: ignore[attr-defined]

    def match_mapping(self, ins: Instr) -> None:
        self.push(stamp(Special("match_mapping", self.top())))

    def match_sequence(self, ins: Instr) -> None:
        self.push(stamp(Special("match_sequence", self.top())))

    def match_keys(self, ins: Instr) -> None:
        keys = self.top()
        subject = self.top(2)
        self.push(stamp(Special("match_keys", ast.Tuple(elts=[subject, keys], ctx=ast.Load()))))

    def copy_dict_without_keys(self, ins: Instr) -> None:
        keys = self.pop()
        subject = self.top()
        self.push(stamp(Special("dict_without_keys", ast.Tuple(elts=[subject, keys],
                                                               ctx=ast.Load()))))


_FAMILIES = (Loads, Stores, StackOps, Operators, Displays, Calls, Inlined, Functions, Imports,
             Exceptions, Generators, Matching)


class Executor(*_FAMILIES):  # type: ignore[misc]
    """Runs non-terminator instructions on a :class:`State`, one handler per opcode family."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.state = State()
        self.ins = None
        self.spec_counts = {}
        self.walrus = {}
        self._table = {op: getattr(self, method)
                       for family in _FAMILIES for op, method in family.ops.items()}
