"""Simplify a function body that builds and shuffles lists only it can see.

Dynamo's frames keep the values a resume function needs in lists built inside the frame,
sliced, indexed, extended and emptied (``_t0[0][0:0] = [v]``, ``del _t1[-1]``,
``f(*_t1[-1])``) before one call. Decompiled faithfully, that reads like a stack machine.
:func:`simplify` runs the body on lists it models (objects with identity, held by names and
by other lists), and writes each list where it finally goes, as the display of its items:
``__resume_at_68_2([], [], value)``.

It is conservative: a value that was evaluated where a list was built (a call, a global,
a name stored again later) is bound to a name there, so nothing is evaluated later or
twice; a list that is used in a way not modelled (passed on and then used again, inside a
loop, a ``try`` or a nested function) leaves the body as it was. The caller checks the
result against the original (the equivalence check) before using it.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import cast

from ..ir.nodes import walk
from .temporaries import Counts, Fixed, bound_once, dead, in_place_of, stem_of, tidy, unique


class GiveUp(Exception):
    """The body does something with a modelled list that is not modelled."""


@dataclass(eq=False)
class Obj:
    """A list the body built: its items (expressions safe to evaluate later, or lists)."""

    items: list[ast.expr | Obj]
    written: bool = False  # written out as a display (then it must not be used again)


Value = ast.expr | Obj


@dataclass
class _State:
    """Names that stand for a list (or for an expression safe to repeat)."""

    env: dict[str, Value] = field(default_factory=dict)

    def copy(self) -> _State:
        seen: dict[int, Obj] = {}

        def dup(v: Value) -> Value:
            if isinstance(v, Obj):
                if id(v) not in seen:
                    seen[id(v)] = Obj([], v.written)
                    seen[id(v)].items = [dup(i) for i in v.items]
                return seen[id(v)]
            return v

        return _State({k: dup(v) for k, v in self.env.items()})


# statements with bodies other than ``if`` (whose branches are run): a modelled list in
# one of them leaves the body as it was
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.Try, getattr(ast, "TryStar", ast.Try),
             ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
             ast.Match)


def simplify(body: list[ast.stmt], params: set[str],
             fixed: Fixed | None = None) -> list[ast.stmt] | None:
    """``body`` with the lists it builds and shuffles written where they go, temporaries
    read once written where they are read, and walrus stores nothing reads dropped; or
    None when none of that applies. ``params``: the function's parameter names;
    ``fixed``: globals (and attributes of them) that hold one value while it runs."""
    out: list[ast.stmt] | None = None
    made: set[str] = set()
    counts = Counts.of(body)
    nested = counts.nested()  # (the passes below make no nested scope)
    if counts.lists:
        simplifier = _Simplifier(body, params, nested, counts)
        try:
            out = simplifier.run()
        except GiveUp:
            out = None
        made = simplifier.made
    if out is not None:  # (the lists' items it named: some are read nowhere now)
        counts = Counts.of(out, counts.nodes)
        out = [s for s in out if not dead(s, counts.loads)]
    tidied = tidy(out or body, params, made, nested, fixed, counts)
    return tidied if tidied is not None else out


class _Simplifier:
    """Runs a body on the lists it models (:class:`Obj`, by name in a :class:`_State`)
    and writes each list as a display where it goes; raises :class:`GiveUp` where a list
    is used in a way not modelled. Owns the stores per name (what is safe to read later)
    and the names it makes for values it must evaluate where a list is built."""

    def __init__(self, body: list[ast.stmt], params: set[str], nested: set[str],
                 counts: Counts) -> None:
        self.body = body
        self.params = params
        # every store to a name (a name stored once is safe to read later)
        self.stores = dict(counts.stores)
        self.taken = counts.taken | params
        self.changed = False
        self.made: set[str] = set()  # the names it binds values to
        self.cells = nested

    def run(self) -> list[ast.stmt] | None:
        out = self.block(self.body, _State(), set())
        if not self.changed:
            return None
        return out

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[ast.stmt], state: _State, after: set[str]) -> list[ast.stmt]:
        """``after``: the names read after the block."""
        if not stmts:
            return []
        later = [after] * len(stmts)
        if any(isinstance(s, ast.If) for s in stmts):  # (only an ``if`` asks)
            later = [after]
            for s in reversed(stmts[1:]):
                later.append(later[-1] | {n.id for n in walk(s) if isinstance(n, ast.Name)})
            later.reverse()
        out: list[ast.stmt] = []
        for s, read_after in zip(stmts, later, strict=True):
            if isinstance(s, ast.If):
                out.extend(self.if_(s, state, read_after))
            else:
                out.extend(self.stmt(s, state))
        return out

    def stmt(self, s: ast.stmt, state: _State) -> list[ast.stmt]:
        tracked = set(state.env)
        if isinstance(s, _COMPOUND):
            if tracked & {n.id for n in walk(s) if isinstance(n, ast.Name)}:
                raise GiveUp("a modelled list in a compound statement")
            self.forget_stored(s, state)
            return [s]
        pre: list[ast.stmt] = []
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            built = self.built(s.value, state, pre, s)
            if isinstance(target, ast.Name):
                if built is not None:
                    state.env[target.id] = built
                    self.changed = True
                    return pre
                value = self.expr(s.value, state, pre, s)
                state.env.pop(target.id, None)
                return [*pre, in_place_of(ast.Assign(targets=[target], value=value), s)]
            obj = self.target_list(target, state)
            if obj is not None:  # ``l[a:b] = ...`` or ``l[k] = ...`` on a modelled list
                assert isinstance(target, ast.Subscript)
                if not isinstance(target.slice, ast.Slice):
                    items: list[Value] | None = [self.item(s.value, state, pre, s)]
                elif isinstance(built, Obj):
                    items = list(built.items)
                else:
                    items = self.items_of(s.value, state, pre, s)
                if items is None:
                    raise GiveUp("a store of something not modelled into a list")
                self.store_items(obj, target, items)
                self.changed = True
                return pre
        if isinstance(s, ast.Delete) and len(s.targets) == 1:
            obj = self.target_list(s.targets[0], state)
            if obj is not None:
                self.delete_items(obj, s.targets[0])  # type: ignore[arg-type]  # a Name (target_list)
                self.changed = True
                return []
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Attribute) \
                and isinstance(s.value.func.value, ast.Name) \
                and isinstance(state.env.get(s.value.func.value.id), Obj) \
                and s.value.func.attr in ("extend", "append") \
                and len(s.value.args) == 1 and not s.value.keywords:
            obj = cast(Obj, state.env[s.value.func.value.id])
            assert isinstance(obj, Obj)
            if obj.written:
                raise GiveUp("a list changed after it was written out")
            if s.value.func.attr == "append":
                item = self.item(s.value.args[0], state, pre, s)
                obj.items.append(item)
            else:
                items = self.items_of(s.value.args[0], state, pre, s)
                if items is None:
                    raise GiveUp("extend with something not modelled")
                obj.items.extend(items)
            self.changed = True
            return pre
        # any other statement: its expressions read the modelled lists where they go
        new = copy.copy(s)
        same = True
        for name, value in ast.iter_fields(s):
            if isinstance(value, ast.expr) and not (isinstance(s, ast.Assign | ast.AugAssign
                                                               | ast.AnnAssign | ast.Delete)
                                                      and name in ("targets", "target")):
                setattr(new, name, self.expr(value, state, pre, s))
                same = same and getattr(new, name) is value
        if same and not pre:
            new = s  # (unchanged: the same statement, whose counted nodes still hold)
        if isinstance(s, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = s.targets if isinstance(s, ast.Assign | ast.Delete) else [s.target]
            for t in targets:
                if {n.id for n in walk(t) if isinstance(n, ast.Name)} & set(state.env):
                    raise GiveUp("a store into a modelled list that is not modelled")
        self.forget_stored(s, state)
        return [*pre, new]

    def if_(self, s: ast.If, state: _State, after: set[str]) -> list[ast.stmt]:
        """``after``: the names read after the ``if``."""
        pre: list[ast.stmt] = []
        test = self.expr(s.test, state, pre, s)
        other = state.copy()
        body = self.block(s.body, state, after)
        orelse = self.block(s.orelse, other, after)
        if _ends(s.body) and not _ends(s.orelse):
            state.env = other.env  # only the ``else`` goes on
        elif not _ends(s.body) and not _ends(s.orelse):
            # both go on: a list they leave differently must not be used after the ``if``
            for name in set(state.env) | set(other.env):
                if _shown_value(state.env.get(name)) != _shown_value(other.env.get(name)):
                    if name in after:
                        raise GiveUp("branches that leave a list differently")
                    state.env.pop(name, None)
        node = ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)
        return [*pre, in_place_of(node, s)]

    def forget_stored(self, s: ast.stmt, state: _State) -> None:
        for n in walk(s):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                state.env.pop(n.id, None)

    # ------------------------------------------------------------ lists

    def built(self, node: ast.expr, state: _State, pre: list[ast.stmt],
              at: ast.stmt, pin: bool = True) -> Value | None:
        """The modelled list ``node`` makes or names (a display, a name of one, an item
        of one that is a list). ``pin``: items of a display may be bound to names before
        the statement (it evaluates the display first); else such a display is not one."""
        if isinstance(node, ast.List) and isinstance(node.ctx, ast.Load) \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            if not pin and not all(self.repeatable(e) or isinstance(e, ast.List)
                                   for e in node.elts):
                return None
            return Obj([self.item(e, state, pre, at) for e in node.elts])
        if isinstance(node, ast.Name) and isinstance(state.env.get(node.id), Obj):
            return state.env[node.id]
        if isinstance(node, ast.NamedExpr):
            made = self.built(node.value, state, pre, at, pin)
            if isinstance(made, Obj):  # ``(l := ...)`` of a list: the name holds it too
                state.env[node.target.id] = made
                return made
            return None
        if isinstance(node, ast.Subscript):
            container = self.built(node.value, state, pre, at, pin)
            if isinstance(container, Obj) and isinstance(node.slice, ast.Slice):
                where = _slice(node.slice, len(container.items))
                return None if where is None else Obj(container.items[where[0]:where[1]])
            if isinstance(container, Obj):
                index = _index(node.slice)
                if index is None or not -len(container.items) <= index < len(container.items):
                    return None
                return container.items[index]  # (a list, or an expression to repeat)
        return None

    def item(self, node: ast.expr, state: _State, pre: list[ast.stmt], at: ast.stmt) -> Value:
        """An item of a list being built: a modelled list, or an expression that gives the
        same value wherever the list's items are written later (else bound to a name)."""
        built = self.built(node, state, pre, at)
        if built is not None:
            return built
        value = self.expr(node, state, pre, at)
        if self.repeatable(value):
            return value
        name = self.fresh(value)
        self.stores[name] = 1
        pre.append(in_place_of(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value),
                       at))
        return ast.Name(id=name, ctx=ast.Load())

    def items_of(self, node: ast.expr, state: _State, pre: list[ast.stmt],
                 at: ast.stmt, pin: bool = True) -> list[Value] | None:
        built = self.built(node, state, pre, at, pin)
        if isinstance(built, Obj):
            return list(built.items)
        if pin and isinstance(node, ast.Tuple) \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            return [self.item(e, state, pre, at) for e in node.elts]
        return None

    def target_list(self, target: ast.expr, state: _State) -> Obj | None:
        """The modelled list a subscript store or ``del`` changes."""
        if not isinstance(target, ast.Subscript):
            return None
        pre: list[ast.stmt] = []
        obj = self.built(target.value, state, pre, ast.Pass())
        if pre:
            raise GiveUp("a store target that evaluates something")
        return obj if isinstance(obj, Obj) else None

    def store_items(self, obj: Obj, target: ast.Subscript, items: list[Value]) -> None:
        if obj.written:
            raise GiveUp("a list changed after it was written out")
        where = _slice(target.slice, len(obj.items))
        if where is None:
            index = _index(target.slice)
            if index is None or not -len(obj.items) <= index < len(obj.items) or len(items) != 1:
                raise GiveUp("a store at an index not modelled")
            obj.items[index] = items[0]
            return
        obj.items[where[0]:where[1]] = items

    def delete_items(self, obj: Obj, target: ast.Subscript) -> None:
        if obj.written:
            raise GiveUp("a list changed after it was written out")
        where = _slice(target.slice, len(obj.items))
        if where is not None:
            del obj.items[where[0]:where[1]]
            return
        index = _index(target.slice)
        if index is None or not -len(obj.items) <= index < len(obj.items):
            raise GiveUp("a deletion at an index not modelled")
        del obj.items[index]

    # ------------------------------------------------------------ expressions

    def expr(self, node: ast.expr, state: _State, pre: list[ast.stmt], at: ast.stmt) -> ast.expr:
        """``node`` with the modelled lists read where they go."""
        if not state.env or not any(isinstance(n, ast.Name) and n.id in state.env
                                    for n in walk(node)):
            return node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            value = state.env.get(node.id)
            if value is None:
                return node
            return self.write(value)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            container = self.built(node.value, state, pre, at, pin=False)
            if isinstance(container, Obj):
                index = _index(node.slice)
                if index is not None and -len(container.items) <= index < len(container.items):
                    item = container.items[index]
                    return self.write(item)
        if isinstance(node, ast.Call):
            args: list[ast.expr] = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    items = self.items_of(a.value, state, pre, at, pin=False)
                    if items is not None and not isinstance(a.value, ast.Tuple):
                        args.extend(self.write(i) for i in items)
                        continue
                    args.append(ast.Starred(value=self.expr(a.value, state, pre, at),
                                            ctx=ast.Load()))
                    continue
                args.append(self.expr(a, state, pre, at))
            return ast.Call(func=self.expr(node.func, state, pre, at), args=args,
                            keywords=[ast.keyword(arg=k.arg,
                                                  value=self.expr(k.value, state, pre, at))
                                      for k in node.keywords])
        if isinstance(node, ast.Lambda | ast.GeneratorExp | ast.ListComp | ast.SetComp
                      | ast.DictComp | ast.NamedExpr):
            if {n.id for n in walk(node) if isinstance(n, ast.Name)} & set(state.env):
                raise GiveUp("a modelled list inside a nested scope or a walrus")
            return node
        new = copy.copy(node)
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(new, name, self.expr(value, state, pre, at))
            elif isinstance(value, list):
                setattr(new, name, [self.expr(v, state, pre, at) if isinstance(v, ast.expr)
                                    else v for v in value])
        return new

    def write(self, value: Value) -> ast.expr:
        """A list as its display (once: the object goes there), or the expression."""
        if not isinstance(value, Obj):
            return value
        if value.written:
            raise GiveUp("a list used again after it was written out")
        value.written = True
        return ast.List(elts=[self.write(i) for i in value.items], ctx=ast.Load())

    def repeatable(self, node: ast.expr) -> bool:
        """Whether evaluating ``node`` later (in the same frame) gives the same value and
        does nothing: constants, and names the body stores at most once (parameters: never)."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return bound_once(node.id, self.stores, self.params, self.cells)
        if isinstance(node, ast.Tuple):
            return all(self.repeatable(e) for e in node.elts)
        return False

    def fresh(self, value: ast.expr) -> str:
        name = unique(stem_of(value) or "value", self.taken)
        self.made.add(name)
        return name


# ---------------------------------------------------------------- helpers


def _ends(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return | ast.Raise)


def _shown_value(value: Value | None) -> str:
    if value is None:
        return ""
    return ast.dump(value) if isinstance(value, ast.AST) else repr((value.written, _dump(value)))


def _dump(obj: Obj) -> object:
    return [_dump(i) if isinstance(i, Obj) else ast.dump(i) for i in obj.items]


def _index(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _slice(node: ast.expr, size: int) -> tuple[int, int] | None:
    """``(start, stop)`` of a constant slice without step, over ``size`` items."""
    if not isinstance(node, ast.Slice) or node.step is not None:
        return None
    bounds: list[int | None] = []
    for bound in (node.lower, node.upper):
        if bound is None or isinstance(bound, ast.Constant) and bound.value is None:
            bounds.append(None)
            continue
        value = _index(bound)
        if value is None:
            return None
        bounds.append(value)
    start, stop, _ = slice(*bounds).indices(size)
    return start, max(start, stop)
