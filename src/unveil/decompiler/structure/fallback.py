"""The structurer's safety net: any control-flow graph as a state machine.

When control flow has no structured form the structurer recognises (bytecode no
compiler produced, or a construct it does not know), the blocks become the arms of
one loop that dispatches on a state variable::

    _state = 0
    while True:
        if _state == 0:
            ...
            _state = 4
            continue
        ...

Stack values that cross blocks live in ``_s<k>`` variables, values the interpreter
pushes for itself (an exception, a context manager's ``__exit__``, a loop's next item)
in variables of their own. A block protected by an exception handler runs inside
``try``/``except BaseException`` that records the exception and moves to the handler.
This is exactly the bytecode's behaviour. Code in a handler (between ``PUSH_EXC_INFO``
and ``POP_EXCEPT``) runs inside an ``except`` clause that the exception being handled is
raised into again (its traceback and context put back), so it sees that exception as
handled: ``sys.exc_info()``, a bare ``raise`` in a function it calls, and the context of
what it raises.
"""

from __future__ import annotations

import ast
from typing import Any, cast

from ...errors import DecompilationError
from ..ir.blocks import IRBlock, IRGraph
from ..ir.exprs import Names, Slot, Special
from ..ir.facts import SPECIALS, attach, fact
from ..ir.markers import ExcMarker, is_marker

STATE = "_state"


class Lowering:
    """Lower an IR graph to statements (custom nodes kept; render afterwards)."""

    def __init__(self, graph: IRGraph, names: Names) -> None:
        self.g = graph
        self.names = names
        self.state = names.fresh("_state")
        self.handled = names.fresh("_handled")
        self.special_names: dict[int, str] = {}
        self.depths = handled_depths(graph)
        self.active = names.fresh("_x")

    def special(self, node: Special) -> str:
        name = self.special_names.get(id(node))
        if name is None:
            name = self.names.fresh("_v")
            self.special_names[id(node)] = name
        return name

    def run(self) -> list[ast.stmt]:
        blocks = self.g.ordered()
        arms: list[tuple[int, list[ast.stmt]]] = []
        for block in blocks:
            arms.append((block.id, self.block(block)))
        chain: list[ast.stmt] = []
        for bid, body in reversed(arms):
            test = ast.Compare(left=self.var(self.state), ops=[ast.Eq()],
                               comparators=[ast.Constant(bid)])
            chain = [ast.If(test=test, body=body, orelse=chain)]
        fail = ast.Raise(exc=ast.Call(func=ast.Name(id="RuntimeError", ctx=ast.Load()),
                                      args=[ast.Constant("unveil: bad state")], keywords=[]),
                         cause=None)
        if chain:
            last = chain[0]
            while isinstance(last, ast.If) and last.orelse:
                last = last.orelse[0]
            cast(ast.If, last).orelse = [fail]  # (the chain's ifs, all)
        return [
            ast.Assign(targets=[self.store(self.state)], value=ast.Constant(self.g.entry)),
            ast.Assign(targets=[self.store(self.handled)], value=ast.List(elts=[],
                                                                         ctx=ast.Load())),
            ast.While(test=ast.Constant(True), body=chain or [ast.Pass()], orelse=[]),
        ]

    # ------------------------------------------------------------ helpers

    @staticmethod
    def var(name: str) -> ast.Name:
        return ast.Name(id=name, ctx=ast.Load())

    @staticmethod
    def store(name: str) -> ast.Name:
        return ast.Name(id=name, ctx=ast.Store())

    def goto(self, src: IRBlock, dst: int) -> list[ast.stmt]:
        out = self.slots(src.exit, dst, src)
        out.append(ast.Assign(targets=[self.store(self.state)], value=ast.Constant(dst)))
        out.append(ast.Continue())
        return out

    def slots(self, stack: list[ast.expr], dst: int, src: IRBlock | None) -> list[ast.stmt]:
        target = self.g.blocks.get(dst)
        if target is None:
            raise DecompilationError("jump to a missing block")
        if src is not None and src.term.kind == "for" and dst == src.term.targets[1]:
            stack = stack[:-1]
        pairs: list[tuple[ast.expr, ast.expr]] = []
        for k, entry in enumerate(target.entry):
            if k >= len(stack):
                break
            value = stack[k]
            if value is entry:
                continue
            if isinstance(entry, Slot):
                if isinstance(value, Slot) and value.index == entry.index:
                    continue
                pairs.append((self.slot_store(entry.index), value))
            elif isinstance(entry, Special):
                pairs.append((self.store(self.special(entry)), value))
        if not pairs:
            return []
        if len(pairs) == 1:
            return [ast.Assign(targets=[pairs[0][0]], value=pairs[0][1])]
        return [ast.Assign(targets=[ast.Tuple(elts=[p[0] for p in pairs], ctx=ast.Store())],
                           value=ast.Tuple(elts=[p[1] for p in pairs], ctx=ast.Load()))]

    @staticmethod
    def slot_store(k: int) -> ast.Name:
        node = ast.Name(id=f"_s{k}", ctx=ast.Store())
        attach(node, slot=k)
        return node

    # ------------------------------------------------------------ blocks

    def block(self, block: IRBlock) -> list[ast.stmt]:
        body: list[ast.stmt] = []
        depth = self.depths.get(block.id)  # (None: not known the same on every path)
        part: list[ast.stmt] = []
        for s in block.stmts:
            if is_marker(s, "push_exc_info") or is_marker(s, "pop_except"):
                body.extend(self.handled_part(part, depth))
                part = []
                body.extend(self.stmt(s))
                if depth is not None:
                    depth += 1 if is_marker(s, "push_exc_info") else -1
                continue
            part.extend(self.stmt(s))
        part.extend(self.terminator(block))
        body.extend(self.handled_part(part, depth))
        if block.handler_block is None:
            return body
        return [self.protect(body, block)]

    def handled_part(self, stmts: list[ast.stmt], depth: int | None) -> list[ast.stmt]:
        """``stmts`` as code inside a handler: in an ``except`` clause that the exception
        being handled is raised into again, with its traceback and context restored."""
        if not stmts or depth is None or depth < 1:
            return stmts
        x = self.var(self.active)
        keep = ast.Tuple(elts=[ast.Attribute(value=x, attr="__traceback__", ctx=ast.Load()),
                               ast.Attribute(value=x, attr="__context__", ctx=ast.Load())],
                         ctx=ast.Load())
        put_back = ast.Tuple(elts=[ast.Attribute(value=x, attr="__traceback__",
                                                 ctx=ast.Store()),
                                   ast.Attribute(value=x, attr="__context__", ctx=ast.Store())],
                             ctx=ast.Store())
        kept = self.names.fresh("_kept")
        return [
            ast.Assign(targets=[self.store(self.active)], value=ast.Subscript(
                value=self.var(self.handled), slice=ast.Constant(-1), ctx=ast.Load())),
            ast.Assign(targets=[self.store(kept)], value=keep),
            ast.Try(body=[ast.Raise(exc=self.var(self.active), cause=None)], handlers=[
                ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name=None,
                                  body=[ast.Assign(targets=[put_back], value=self.var(kept)),
                                        *stmts])], orelse=[], finalbody=[]),
        ]

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ExcMarker):
            if s.kind == "with":
                return self.with_setup(s)
            if s.kind == "push_exc_info":
                assert s.value is not None
                return [ast.Expr(value=ast.Call(func=ast.Attribute(
                    value=self.var(self.handled), attr="append", ctx=ast.Load()),
                    args=[s.value], keywords=[]))]
            if s.kind == "pop_except":
                return [ast.Expr(value=ast.Call(func=ast.Attribute(
                    value=self.var(self.handled), attr="pop", ctx=ast.Load()), args=[],
                    keywords=[]))]
            if s.kind == "setup_annotations":
                return []
            if s.kind == "annotate" and s.value is not None:
                # 3.14: the scope's annotations function, assigned as the compiler did
                return [ast.Assign(targets=[ast.Name(id="__annotate__", ctx=ast.Store())],
                                   value=s.value)]
            raise DecompilationError(f"cannot lower {s.kind}")
        return [s]

    def with_setup(self, marker: ExcMarker) -> list[ast.stmt]:
        """The ``with`` set-up as the interpreter does it, in plain Python: ``__enter__``
        and ``__exit__`` looked up on the manager's type (in its order, with its error),
        then the values the bytecode pushes: ``__exit__`` (bound, or unbound and the
        manager on 3.14) and what ``__enter__`` returns."""
        specials: list[Special] = fact(marker, SPECIALS, [])
        mgr = self.names.fresh("_mgr")
        exit_name, enter_name = self.names.fresh("_exit"), self.names.fresh("_enter")
        klass = self.names.fresh("_cls")
        out: list[ast.stmt] = [ast.Assign(targets=[self.store(mgr)],
                                          value=cast(ast.expr, marker.value))]  # (the manager)
        out += special_lookup(mgr, klass, {"enter": enter_name, "exit": exit_name},
                              bool(marker.flag), self.g.cfg.bc.layout.version)
        unbound = any(x.kind == "exit_self" for x in specials)
        for sp in specials:
            if sp.kind == "exit":
                exit_fn: ast.expr = self.var(exit_name) if unbound else bound(exit_name, mgr)
                out.append(ast.Assign(targets=[self.store(self.special(sp))], value=exit_fn))
            elif sp.kind == "exit_self":
                out.append(ast.Assign(targets=[self.store(self.special(sp))],
                                      value=self.var(mgr)))
            elif sp.kind == "enter":
                enter = ast.Call(func=bound(enter_name, mgr), args=[], keywords=[])
                out.append(ast.Assign(targets=[self.store(self.special(sp))], value=enter))
        return out

    def terminator(self, block: IRBlock) -> list[ast.stmt]:
        term = block.term
        kind = term.kind
        if kind == "goto":
            return self.goto(block, term.targets[0])
        if kind == "branch":
            assert term.test is not None
            then_t, else_t = term.targets
            return [ast.If(test=term.test, body=self.goto(block, then_t),
                           orelse=self.goto(block, else_t))]
        if kind == "for":
            assert term.test is not None
            body_t, exit_t = term.targets
            item = self.names.fresh("_item")
            body_block = self.g.blocks[body_t]
            on_exit = self.goto(block, exit_t)
            fetch = ast.Try(
                body=[ast.Assign(targets=[self.store(item)], value=ast.Call(
                    func=ast.Name(id="next", ctx=ast.Load()), args=[term.test], keywords=[]))],
                handlers=[ast.ExceptHandler(type=ast.Name(id="StopIteration", ctx=ast.Load()),
                                            name=None, body=on_exit)],
                orelse=[], finalbody=[])
            nxt = body_block.entry[-1] if body_block.entry else None
            out: list[ast.stmt] = [fetch]
            if isinstance(nxt, Special):
                out.append(ast.Assign(targets=[self.store(self.special(nxt))],
                                      value=self.var(item)))
            elif isinstance(nxt, Slot):  # the body is also reached from elsewhere
                out.append(ast.Assign(targets=[self.slot_store(nxt.index)],
                                      value=self.var(item)))
            out.extend(self.goto(block, body_t))
            return out
        if kind == "return":
            return [ast.Return(value=term.value)]
        if kind == "raise":
            if term.value is None and block.id in self.depths:
                return [ast.Raise(exc=None, cause=None)]  # (inside the handled part)
            if term.value is None:
                return [ast.Raise(exc=ast.Subscript(value=self.var(self.handled),
                                                    slice=ast.Constant(-1), ctx=ast.Load()),
                                  cause=None)]
            return [ast.Raise(exc=term.value, cause=term.cause)]
        if kind == "reraise":
            return [ast.Raise(exc=term.value, cause=None)]
        if kind == "end_async_for":
            assert term.value is not None
            stop = ast.Call(func=ast.Name(id="isinstance", ctx=ast.Load()),
                            args=[term.value, ast.Name(id="StopAsyncIteration", ctx=ast.Load())],
                            keywords=[])
            return [ast.If(test=stop, body=self.goto(block, term.targets[0]),
                           orelse=[ast.Raise(exc=term.value, cause=None)])]
        raise DecompilationError(f"cannot lower terminator {kind}")

    def protect(self, body: list[ast.stmt], block: IRBlock) -> ast.stmt:
        handler = self.g.blocks.get(block.handler_block)  # type: ignore[arg-type]  # None: no block
        if handler is None:
            raise DecompilationError("handler block missing")
        caught = self.names.fresh("_e")
        on_raise: list[ast.stmt] = []
        depth = len(handler.entry) - (6 if block.handler is not None and block.handler.legacy
                                      else 1 + bool(block.handler and block.handler.lasti))
        stack = list(block.entry[:depth])
        on_raise.extend(self.slots(stack, handler.id, None))
        exc_values: dict[str, ast.expr] = {
            "exc": self.var(caught),
            "exc_type": ast.Call(func=ast.Name(id="type", ctx=ast.Load()),
                                 args=[self.var(caught)], keywords=[]),
            "exc_tb": ast.Attribute(value=self.var(caught), attr="__traceback__",
                                    ctx=ast.Load()),
        }
        for entry in handler.entry[depth:]:
            if isinstance(entry, Special):
                value = exc_values.get(entry.kind, ast.Constant(None))
                on_raise.append(ast.Assign(targets=[self.store(self.special(entry))],
                                           value=value))
        if block.handler is not None and block.handler.legacy:
            # 3.10 handlers have no PUSH_EXC_INFO: entering one makes it the handled one
            on_raise.append(ast.Expr(value=ast.Call(func=ast.Attribute(
                value=self.var(self.handled), attr="append", ctx=ast.Load()),
                args=[self.var(caught)], keywords=[])))
        on_raise.append(ast.Assign(targets=[self.store(self.state)],
                                   value=ast.Constant(handler.id)))
        on_raise.append(ast.Continue())
        return ast.Try(body=body, handlers=[ast.ExceptHandler(
            type=ast.Name(id="BaseException", ctx=ast.Load()), name=caught, body=on_raise)],
            orelse=[], finalbody=[])


def handled_depths(graph: IRGraph) -> dict[int, int]:
    """{block: how many exceptions are being handled when it starts}, for the blocks where
    every path agrees (``PUSH_EXC_INFO`` adds one, ``POP_EXCEPT`` takes one; a 3.10
    handler is entered with one more)."""
    depths: dict[int, int] = {graph.entry: 0}
    unknown: set[int] = set()
    todo = [graph.entry]

    def reach(bid: int | None, d: int | None) -> None:  # (None: not known)
        if bid is None or bid not in graph.blocks or bid in unknown:
            return
        if d is None or depths.get(bid, d) != d:
            unknown.add(bid)  # (and whatever is reached from it)
            todo.append(bid)
        elif bid not in depths:
            depths[bid] = d
            todo.append(bid)

    while todo:
        bid = todo.pop()
        block = graph.blocks[bid]
        d: int | None = None
        if bid not in unknown:
            d = depths[bid] + sum(is_marker(s, "push_exc_info") - is_marker(s, "pop_except")
                                  for s in block.stmts)
        for t in block.term.targets:
            reach(t, d)
        if block.handler_block is not None:
            # (one handler protects the whole block, and a push or pop starts or ends
            # such a range: what raises in it raises at the depth it ends with)
            legacy = block.handler is not None and block.handler.legacy
            reach(block.handler_block, None if d is None else d + legacy)
    return {b: d for b, d in depths.items() if b not in unknown and d >= 0}


def lower(graph: IRGraph, names: Names) -> tuple[list[ast.stmt], dict[int, str], Any]:
    low = Lowering(graph, names)
    body = low.run()
    return body, low.special_names, low


def special_lookup(mgr: str, klass: str, targets: dict[str, str],
                   is_async: bool, version: tuple[int, int]) -> list[ast.stmt]:
    """``targets[part] = the manager's __enter__/__exit__`` (``part`` is ``enter`` or
    ``exit``; ``__aenter__``/``__aexit__`` for ``async with``), found on its type as the
    interpreter looks special methods up, and failing with the interpreter's error."""
    prefix = "a" if is_async else ""
    kind = "asynchronous context manager" if is_async else "context manager"
    parts = ("exit", "enter") if version >= (3, 14) else ("enter", "exit")
    lines: list[str] = []
    for part in parts:
        name = f"__{prefix}{part}__"
        if version < (3, 11):
            error = f"AttributeError({name!r})"
        else:
            detail = f" (missed {name} method)" if part == "exit" or version >= (3, 14) else ""
            type_name = f"{{type({mgr}).__name__}}"
            if version >= (3, 14):
                type_name = (f"{{type({mgr}).__name__ if type({mgr}).__module__ == 'builtins' "
                             f"else type({mgr}).__module__ + '.' + type({mgr}).__qualname__}}")
            error = (f"TypeError(f\"'{type_name}' object does not support the {kind} "
                     f"protocol{detail}\")")
        lines += [f"for {klass} in type({mgr}).__mro__:",
                  f"    if {name!r} in vars({klass}):",
                  f"        {targets[part]} = vars({klass})[{name!r}]",
                  "        break",
                  "else:",
                  f"    raise {error}"]
    return ast.parse("\n".join(lines)).body


def bound(func: str, obj: str) -> ast.expr:
    """``func`` bound to ``obj`` as a special-method look-up binds it (a function found on
    the type becomes a method; other objects without ``__get__`` stay as they are)."""
    text = (f"type({func}).__get__({func}, {obj}, type({obj})) "
            f"if hasattr(type({func}), '__get__') else {func}")
    return ast.parse(text, mode="eval").body
