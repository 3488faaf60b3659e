"""The executor's machine: the symbolic :class:`State` (a stack of expression trees and
the statements emitted so far), the :class:`Context` of the code object, and
:class:`Machine`, which pushes, pops and emits while keeping the evaluation order (see
:mod:`.executor`). The opcode families build on it (:mod:`.opcodes_values`,
:mod:`.opcodes_flow`)."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn, TypeGuard, TypeVar, cast

from ...bytecode import Instr
from ...codeobj import CodeFlag
from ...errors import DecompilationError
from ..ir.exprs import (
    MUTABLE_DISPLAYS,
    Cell,
    Func,
    Names,
    Shared,
    Special,
    UnpackItem,
    is_stable,
    name,
)
from ..ir.facts import EMBEDDED, EVALUATED, KIND, SEQ, STALE, TARGETS, TEMPS, WRITES, attach, fact
from ..ir.markers import ExcMarker, ImportItem, ImportValue
from ..ir.nodes import LOAD, SKIPPED_FIELDS, STORE, children, replace_under, walk

BINOPS: dict[str, type[ast.operator]] = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
    "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr,
    "^": ast.BitXor, "@": ast.MatMult,
}
CMPOPS: dict[str, type[ast.cmpop]] = {
    "<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE,
}
_seq = itertools.count(1)


def stamp(node: ast.expr) -> ast.expr:
    """Give ``node`` an evaluation sequence number (the order values were computed)."""
    node.__dict__["_seq"] = next(_seq)  # (``attach(node, _seq=...)``: the hottest path)
    return node


def next_seq() -> int:
    """A new evaluation sequence number, as ``stamp`` takes one (none is stamped later
    than what was stamped before it)."""
    return next(_seq)


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
            elts.append(ast.Starred(t, STORE) if i == self.star else t)
        return ast.Tuple(elts, STORE)


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

NAME_STORES = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"}
_UNPACK_CONSUMERS = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR",
                     "STORE_SUBSCR", "STORE_SLICE", "POP_TOP", "UNPACK_SEQUENCE", "UNPACK_EX",
                     "SWAP", "COPY"}


# (tuples, made once: ``isinstance`` with ``A | B`` builds the union on every call)
_IMPORTS = (ImportValue, ImportItem)
_PENDING = (UnpackItem, ImportValue, ImportItem)  # (values that wait for their stores)
_SUSPENDING = (ast.Await, ast.Yield, ast.YieldFrom)


class Speculation(Exception):
    """Raised while exploring a branch speculatively when it would have an effect."""


class Machine:
    """Stack primitives, statement emission and evaluation-order bookkeeping."""

    ops: ClassVar[dict[str, str]]  # an opcode family's table (set by :func:`family`)
    _instrs: list[Instr] = []  # the instructions run() runs, and where it is in them
    _at: int = 0
    skip: int = 0
    order_from: int | None = None  # a SWAP's order check still to do
    shares: bool = False  # a ``Shared`` value was made (or came in with the entry stack):
    #                       statements are walked for the ones they evaluate
    ctx: Context
    state: State
    ins: Instr | None
    _table: ClassVar[dict[str, Callable[[Machine, Instr], None]]]  # op -> handler, per class
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
                                 or fact(container, SEQ, 0) <= self.spec_floor):
            raise Speculation

    # ------------------------------------------------------------ driving

    def run(self, state: State, instrs: list[Instr]) -> None:
        """Execute ``instrs`` (no terminators among them) on ``state``."""
        self.state = state
        self._instrs = instrs  # (no handler runs instructions of its own)
        table = self._table
        self.skip = 0
        self.order_from = None
        for i, ins in enumerate(instrs):
            if self.skip:
                self.skip -= 1
                continue
            self.ins = ins
            self._at = i
            handler = table.get(ins.op)
            if handler is None:
                self.fail("no translation for instruction")
            if self.order_from is not None and ins.op not in _SHUFFLES:
                self.settle_order()
            handler(self, ins)
        if self.order_from is not None:
            self.settle_order()

    @property
    def previous(self) -> Instr | None:  # the instruction before the current one, in its block
        return self._instrs[self._at - 1] if self._at else None

    @property
    def following(self) -> list[Instr]:
        """The (up to 63) instructions after the current one in its block."""
        return self._instrs[self._at + 1:self._at + 64]

    def settle_order(self) -> None:
        """Check the evaluation order after the stack shuffles just done (a second
        ``SWAP`` often undoes the first, as around a generic function's defaults)."""
        start, self.order_from = self.order_from, None
        if start is not None:
            self.check_order(min(start, len(self.state.stack)))

    def fail(self, message: str) -> NoReturn:
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
        stack = self.state.stack
        if not stack:
            self.fail("stack underflow")
        value = stack.pop()
        if isinstance(value, UnpackItem) and self.ins is not None \
                and self.ins.op not in _UNPACK_CONSUMERS:
            value = self.force_unpack(value)
        return value

    def force_unpack(self, item: UnpackItem) -> ast.expr:
        """An unpacked item used as a value, not stored: unpack into temporaries now."""
        unpack: Unpack = item.unpack
        temps = fact(unpack, TEMPS, None)
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
                    unpack.targets[i] = ast.Name(tmp, STORE)
                    temps.append(name(tmp, "temp"))
                else:
                    temps.append(None)
            attach(unpack, temps=temps)  # type: ignore[type-var]  # an Unpack: no ast node
            self.append(ast.Assign([unpack.target()], unpack.value))
            stack = self.state.stack
            for k, entry in enumerate(stack):
                if isinstance(entry, UnpackItem) and entry.unpack is unpack:
                    stack[k] = cast(ast.Name, temps[entry.index])  # (not stored yet)
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

    def append(self, stmt: ast.stmt, later: frozenset[int] = frozenset()) -> None:
        """Add ``stmt``, noting the shared values it evaluates (see :meth:`materialize`),
        and the source line of the instruction that made it (``line``). ``later``: the
        shared values pushed after what ``stmt`` evaluates (their walruses come after it)."""
        if self.walrus and any(self.walrus.values()):
            self.settle_walrus(stmt, later)
        if self.ins is not None and not hasattr(stmt, "line"):
            stmt.__dict__["line"] = self.ins.line  # (``attach(stmt, line=...)``: hot)
        todo: list[Any] = [stmt] if self.shares else []
        while todo:
            n = todo.pop()
            if isinstance(n, Shared):
                if n.name is None:
                    attach(n, embedded=True)
                    if self.walrus:  # the shared values it holds are evaluated here too
                        for inner in walk(n.value):
                            if isinstance(inner, Shared):
                                attach(inner, evaluated=True)
                continue
            todo.extend(children(n))
        self.state.stmts.append(stmt)

    def flush(self, writes: tuple[str, ...] = ()) -> None:
        """Assign to temporaries the stack values a statement must not overtake."""
        stack = self.state.stack
        if not any(isinstance(node, UnpackItem) or _class_arguments(node)
                   or self.needs_temp(node, writes) for node in stack):
            return  # (most statements: nothing to name, whatever the order; the tests below)
        for i in _evaluation_order(stack):
            node = stack[i]
            if isinstance(node, UnpackItem):
                # the unpacking (and its stores so far) happened before the statement
                stack[i] = self.force_unpack(node)
            elif _class_arguments(node):
                self._materialize_bases(node, writes)
            elif self.needs_temp(node, writes):
                stack[i] = self.materialize(node)
    def needs_temp(self, node: ast.expr, writes: tuple[str, ...]) -> bool:
        if isinstance(node, _PENDING):
            return False
        if isinstance(node, Shared):
            if node.name is not None:
                return False
            # (a display referred to twice must be one object: it needs its name)
            return not is_stable(node.value) or bool(fact(node, TARGETS, None)) \
                or isinstance(node.value, MUTABLE_DISPLAYS)
        if isinstance(node, ast.Name):
            if fact(node, KIND, "fast") in ("fast",):
                return node.id in writes
            return fact(node, KIND, "") != "temp"
        return not is_stable(node)

    def materialize(self, node: ast.expr) -> ast.expr:
        """Emit ``_tN = node`` and return what now stands for the value."""
        self.check_speculation()
        if isinstance(node, Shared):
            targets = list(fact(node, TARGETS, None) or [])
            if node.name is None and fact(node, EMBEDDED, False) \
                    and all(isinstance(t, ast.Name) for t in targets):
                # an earlier statement evaluates it: bind the name there, with a walrus
                # (and store it to the names waiting for it right after that statement)
                node.name = self.ctx.names.fresh()
                attach(node, bind_first=True)
                if targets:
                    attach(node, targets=[])
                    self.append(ast.Assign(targets,
                                           ast.Name(node.name, LOAD)))
            elif node.name is None:
                targets = list(fact(node, TARGETS, None) or [])
                self._keep_stale(node)
                tmp = self.ctx.names.fresh()
                attach(node, targets=[])
                self.append(
                    ast.Assign([*targets, ast.Name(tmp, STORE)], node.value))
                node.name = tmp
            return node
        tmp = self.ctx.names.fresh()
        pending = self.walrus and any(self.walrus.values())  # (else no walrus to settle)
        self.append(ast.Assign([ast.Name(tmp, STORE)], node),
                    self._pushed_after(node) if pending else frozenset())
        named = name(tmp, "temp")
        attach(named, origin=node)  # (the display it holds)
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
            if loads and (isinstance(node, _SUSPENDING) or isinstance(
                    node, ast.Name) and fact(node, KIND, "") != "temp" or isinstance(
                    node, Special) and node.kind == "anext_value"):  # (awaits, and can raise)
                stack[i] = self.materialize(node)
            elif isinstance(node, UnpackItem):
                stack[i] = self.force_unpack(node)
            elif _class_arguments(node):
                self._materialize_bases(node, ())
            elif self.needs_temp(node, ()) or isinstance(node, MUTABLE_DISPLAYS):
                stack[i] = self.materialize(node)

    def _materialize_bases(self, node: ast.Tuple, writes: tuple[str, ...]) -> None:
        """A class's arguments for ``__build_class__`` (the body cannot be named): name
        the bases instead."""
        for k, e in enumerate(node.elts):
            if self.needs_temp(e, writes) or isinstance(e, MUTABLE_DISPLAYS):
                node.elts[k] = self.materialize(e)

    # ------------------------------------------------------------ stores

    def store(self, target: ast.expr, value: ast.expr, writes: tuple[str, ...] = ()) -> None:
        """``target = value``, recognising unpacking, chained assignment and walrus."""
        if isinstance(target, ast.Name) and isinstance(value, _IMPORTS):
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
        if isinstance(target, ast.Name) and target.id == "__classdict__" \
                and fact(target, KIND, "") == "deref":
            return  # 3.12+: the class namespace's cell, for scopes in the body: implicit
        if isinstance(target, ast.Name) and target.id in ("__annotate__", "__annotate_func__") \
                and fact(target, KIND, "") == "name" \
                and isinstance(value, Func) and value.code.co_name == "__annotate__":
            self.emit(ExcMarker("annotate", value))  # 3.14: read back by the scope
            return
        if isinstance(value, Shared) and value.name is None:
            refs = sum(1 for e in self.state.stack if e is value)
            if refs:
                # (a value made while exploring a branch may be named there: ``a or
                # (b := c)``; the walrus table is put back when the exploration ends)
                self.check_speculation(value)
                targets = fact(value, TARGETS, None) or []
                attach(value, targets=[*targets, target])
                if not isinstance(target, ast.Name):
                    if self.stack_top_is(value, refs) and chained_stores(self.following, refs):
                        return  # ``a.x = b = v``: the last store writes all targets
                    # walrus cannot store an attribute or item: assign now
                    self.materialize_shared_targets(value)
                else:
                    self.walrus.setdefault(target.id, []).append((self.state, value))
                    stale = [n for n in self._reads_below(target.id, value)]
                    if stale:
                        attach(value, stale=[*fact(value, STALE, ()), *stale])
                return
            targets = fact(value, TARGETS, None) or []
            attach(value, targets=[])
            self.emit(ast.Assign([*targets, target], value), writes)
            return
        self.emit(ast.Assign([target], value), writes)

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
                    attach(source, writes=(*fact(source, WRITES, ()), *writes))
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

    def _reads_below(self, ident: str, value: Shared) -> list[ast.Name]:
        """The loads of ``ident`` the stack holds unevaluated, outside ``value``: they read
        the value ``ident`` had before a store of ``value`` to it."""
        found: list[ast.Name] = []
        todo: list[ast.AST] = [e for e in self.state.stack if e is not value]
        while todo:
            n = todo.pop()
            if n is value:
                continue
            if isinstance(n, ast.Name):
                if n.id == ident and isinstance(n.ctx, ast.Load):
                    found.append(n)
                continue
            todo.extend(children(n))
        return found

    def _keep_stale(self, shared: Shared) -> None:
        """Before ``shared``'s stores are written as a statement: the loads of the stored
        names that came before the store (``a <= (a := b)``) get the old values first."""
        stale = fact(shared, STALE, None)
        if not stale:
            return
        attach(shared, stale=[])
        # (a load a statement already evaluates was read before the store: it stays)
        emitted = {id(n) for st in self.state.stmts for n in walk(st) if isinstance(n, ast.Name)}
        ids = {id(n) for n in stale} - emitted
        if not ids:
            return
        # (the old values are read before the store: not settled by it)
        waiting = self.walrus
        self.walrus = {k: [p for p in v if p[1] is not shared] for k, v in waiting.items()}
        try:
            self._replace_stale(ids)
        finally:
            self.walrus = waiting

    def _replace_stale(self, ids: set[int]) -> None:
        """Each load in ``ids`` on the stack (and under it) by a temporary holding it."""
        found: dict[int, ast.expr] = {}

        def put(x: ast.AST) -> ast.expr | None:
            if id(x) not in ids:
                return None
            if id(x) not in found:
                found[id(x)] = self.materialize(cast(ast.expr, x))  # (one of the loads)
            return found[id(x)]

        stack = self.state.stack
        for i, e in enumerate(stack):
            stack[i] = put(e) or replace_under(e, put)

    def stack_top_is(self, value: ast.expr, count: int) -> bool:
        """The top ``count`` stack entries are all ``value``."""
        stack = self.state.stack
        return len(stack) >= count and all(e is value for e in stack[-count:])

    def materialize_shared_targets(self, shared: Shared) -> None:
        self.flush_below(shared)
        self.materialize(shared)

    def _pushed_after(self, node: ast.expr) -> frozenset[int]:
        """The shared values in the stack entries above ``node`` (pushed after it)."""
        stack = self.state.stack
        for i, entry in enumerate(stack):
            if entry is node:
                return frozenset(id(n) for e in stack[i + 1:] for n in walk(e)
                                 if isinstance(n, Shared))
        return frozenset()

    def settle_walrus(self, stmt: ast.stmt, later: frozenset[int] = frozenset()) -> None:
        """Before ``stmt`` is added: a name it reads whose store still waits as a walrus in
        a value not evaluated yet (a later statement evaluates it) is stored first: the
        read comes after the store in the bytecode (but not a walrus in ``later``, pushed
        after the value ``stmt`` names)."""
        reads = {n.id for n in walk(stmt) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load) and n.id in self.walrus}
        if not reads:
            return
        inside = {id(n) for n in walk(stmt) if isinstance(n, Shared)}
        for ident in reads:
            # (embedded: a statement made already evaluates it, walrus included)
            pending = self.walrus[ident] = [
                (state, shared) for state, shared in self.walrus[ident]
                if shared.name is None and not fact(shared, EMBEDDED, False)
                and not fact(shared, EVALUATED, False) and any(
                    isinstance(t, ast.Name) and t.id == ident
                    for t in fact(shared, TARGETS, None) or ())]
            # (a block's own: another block's may be evaluated by its branch test)
            for entry in [p for p in pending if p[0] is self.state
                          and id(p[1]) not in inside and id(p[1]) not in later]:
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
        if fact(unpack, TEMPS, None) is not None:
            self.emit(ast.Assign([target], self.force_unpack(item)), writes)
            return
        self.check_speculation()  # the pending unpacking is shared with other paths
        unpack.targets[item.index] = target
        while all(t is not None for t in unpack.targets):
            if unpack.parent is None:
                if isinstance(unpack.value, Shared) and unpack.value.name is None:
                    # (one of the targets of ``a, b = c = v``)
                    self.store(unpack.target(), unpack.value, writes)
                    return
                self.emit(ast.Assign([unpack.target()], unpack.value), writes)
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


_TARGET_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_CONST"}


def chained_stores(following: list[Instr], count: int, copies: bool = True) -> bool:
    """``following`` starts with what stores the ``count`` values on the top of the stack
    (copies of one value, or ``copies=False``: values swapped into place), one by one, to
    targets as ``t1 = t2 = ... = v`` and ``t1, t2 = v1, v2`` write them: each target's
    object and key loaded plainly, then its store (``COPY 1`` between them makes one more
    copy)."""
    depth = 0
    for ins in following:
        op = ins.op
        if op in _TARGET_LOADS:
            depth += 1
        elif op == "LOAD_ATTR" and depth:
            pass
        elif op in ("BINARY_SUBSCR", "BINARY_OP") and depth >= 2:
            depth -= 1  # (a key computed: ``a[n - i - 1]``)
        elif op in ("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT") and depth:
            pass
        elif op == "BUILD_SLICE" and depth >= cast(int, ins.arg):
            depth -= cast(int, ins.arg) - 1
        elif op == "COPY" and ins.arg == 1 and not depth and copies:
            count += 1
        elif op == "UNPACK_SEQUENCE" and not depth:
            count += (ins.arg or 0) - 1  # (a target list: each of its items stored)
        elif op == "UNPACK_EX" and not depth:
            count += sum(ins.argval)
        elif op in NAME_STORES and not depth or op == "STORE_ATTR" and depth == 1 \
                or op == "STORE_SUBSCR" and depth == 2 or op == "STORE_SLICE" and depth == 3:
            depth = 0
            count -= 1
            if not count:
                return True
        else:
            return False
    return False


def plain_import_chain(item: ImportItem) -> bool:
    source: ast.expr = item
    while isinstance(source, ImportItem):
        source = source.source
    return isinstance(source, ImportValue) and source.fromlist is None


def _collect_seqs(node: ast.expr, seen: set[int]) -> list[int]:
    out: list[int] = []
    todo: list[Any] = [node]  # (expressions and the other nodes under them)
    while todo:
        n = todo.pop()
        if isinstance(n, Shared):
            if n.name is not None or id(n) in seen:
                continue
            seen.add(id(n))
        seq = fact(n, SEQ, None)
        if seq is not None and not is_stable(n):
            out.append(seq)
        for field in n._fields:
            child = getattr(n, field, None)
            if isinstance(child, ast.AST):
                todo.append(child)
            elif isinstance(child, list):
                todo.extend(c for c in child if isinstance(c, ast.AST))
    return out


def _evaluation_order(stack: list[ast.expr]) -> list[int]:
    """Stack positions in the order their values were computed (the stack order, but
    for values a shuffle moved)."""
    if len(stack) < 2:
        return list(range(len(stack)))
    firsts = [_first_seq(node) for node in stack]
    # (a stable sort: positions whose values start together keep the stack order)
    return sorted(range(len(stack)), key=firsts.__getitem__)


def _first_seq(node: ast.expr) -> int:
    """The least of ``_collect_seqs(node, set())``, 0 where it finds none, without the
    list: a node is asked whether it is stable only where its number is less."""
    first: int | None = None
    seen: set[int] = set()
    todo: list[Any] = [node]  # (expressions and the other nodes under them)
    for n in todo:  # (the list grows while it is read)
        if isinstance(n, Shared):
            if n.name is not None or id(n) in seen:
                continue
            seen.add(id(n))
        seq = fact(n, SEQ, None)
        if seq is not None and (first is None or seq < first) and not is_stable(n):
            first = seq
        for field in n._fields:
            if field in SKIPPED_FIELDS:
                continue  # (contexts and operators: never stamped)
            child = getattr(n, field, None)
            if isinstance(child, ast.AST):
                todo.append(child)
            elif isinstance(child, list):
                todo.extend(c for c in child if isinstance(c, ast.AST))
    return 0 if first is None else first


def _awaited_enter(node: ast.expr) -> bool:
    if not isinstance(node, ast.Await):
        return False
    value: ast.expr | None = node.value
    if isinstance(value, Special) and value.kind == "awaitable":
        value = value.value
    return isinstance(value, Special) and value.kind == "enter"


def _class_arguments(node: ast.expr) -> TypeGuard[ast.Tuple]:
    """The arguments of ``__build_class__`` (a class body's function among them), as a
    tuple for ``CALL_FUNCTION_EX``."""
    return isinstance(node, ast.Tuple) and any(_class_body(e) for e in node.elts)


def _class_body(node: ast.expr) -> bool:
    """A class body's function, made for ``__build_class__``."""
    return isinstance(node, Func) and not node.code.co_flags & CodeFlag.NEWLOCALS



# ---------------------------------------------------------------- opcode families


_F = TypeVar("_F", bound=type[Machine])


def family(ops: dict[str, str]) -> Callable[[_F], _F]:
    def deco(cls: _F) -> _F:
        cls.ops = ops
        return cls
    return deco
