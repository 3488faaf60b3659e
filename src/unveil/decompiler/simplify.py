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
import builtins
import copy
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .nodes import walk


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


# ``fixed(name, None)``: the global ``name`` is bound before the code runs and is never
# rebound while it runs; ``fixed(name, attr)``: so is that attribute of it. Reading them
# later gives the same value (the caller vouches for it, e.g. for Dynamo's own globals).
Fixed = Callable[[str, str | None], bool]


# names that stand for a value only (unveil's temporaries, Dynamo's): written inline
# where they are read once, right after they are bound
TEMPORARY = re.compile(r"^(_[ts]\d+|tmp_\d+)$")


def simplify(body: list[ast.stmt], params: set[str],
             fixed: Fixed | None = None) -> list[ast.stmt] | None:
    """``body`` with the lists it builds and shuffles written where they go, temporaries
    read once written where they are read, and walrus stores nothing reads dropped; or
    None when none of that applies. ``params``: the function's parameter names;
    ``fixed``: globals (and attributes of them) that hold one value while it runs."""
    out: list[ast.stmt] | None = None
    made: set[str] = set()
    counts = _Counts.of(body)
    nested = counts.nested()  # (the passes below make no nested scope)
    if counts.lists:
        simplifier = _Simplifier(body, params, nested, counts)
        try:
            out = simplifier.run()
        except GiveUp:
            out = None
        made = simplifier.made
    if out is not None:  # (the lists' items it named: some are read nowhere now)
        counts = _Counts.of(out, counts.nodes)
        out = [s for s in out if not _dead(s, counts.loads)]
    tidied = _tidy(out or body, params, made, nested, fixed, counts)
    return tidied if tidied is not None else out


class _Simplifier:
    def __init__(self, body: list[ast.stmt], params: set[str], nested: set[str],
                 counts: _Counts) -> None:
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
                return [*pre, _at(ast.Assign(targets=[target], value=value), s)]
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
                self.store_items(obj, target, items)  # type: ignore[arg-type]
                self.changed = True
                return pre
        if isinstance(s, ast.Delete) and len(s.targets) == 1:
            obj = self.target_list(s.targets[0], state)
            if obj is not None:
                self.delete_items(obj, s.targets[0])  # type: ignore[arg-type]
                self.changed = True
                return []
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Attribute) \
                and isinstance(s.value.func.value, ast.Name) \
                and isinstance(state.env.get(s.value.func.value.id), Obj) \
                and s.value.func.attr in ("extend", "append") \
                and len(s.value.args) == 1 and not s.value.keywords:
            obj = state.env[s.value.func.value.id]
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
        return [*pre, _at(node, s)]

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
        pre.append(_at(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value),
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
            return _bound_once(node.id, self.stores, self.params, self.cells)
        if isinstance(node, ast.Tuple):
            return all(self.repeatable(e) for e in node.elts)
        return False

    def fresh(self, value: ast.expr) -> str:
        name = _unique(_stem(value) or "value", self.taken)
        self.made.add(name)
        return name


def _stem(value: ast.expr) -> str | None:
    """A name that says what ``value`` holds: ``f(...)``: ``f_out``; ``x.attr``:
    ``attr``; ``x[k]``: ``x_k``; None where nothing says it."""
    name = ""
    if isinstance(value, ast.Call):
        func = value.func
        while isinstance(func, ast.NamedExpr):
            func = func.value
        base = ""
        if isinstance(func, ast.Attribute):
            base = func.attr
        elif isinstance(func, ast.Name) and not TEMPORARY.match(func.id):
            base = func.id
        elif isinstance(func, ast.Subscript) and isinstance(func.slice, ast.Constant) \
                and isinstance(func.slice.value, str):  # Dynamo's builtins dict
            base = func.slice.value
        name = f"{base.strip('_')}_out" if base.strip("_") else ""
        owner = func.value if isinstance(func, ast.Attribute) else None
        if isinstance(owner, ast.NamedExpr):
            owner = owner.target
        if base == "__new__" and isinstance(owner, ast.Name):  # ``C.__new__(C)``: a new C
            name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_",
                          owner.id).lower().strip("_")
        if base == "_create_nested_fn" and len(value.args) > 2 \
                and isinstance(value.args[2], ast.Constant) \
                and isinstance(value.args[2].value, str):  # Dynamo making a function
            name = value.args[2].value
    elif isinstance(value, ast.Attribute):
        name = value.attr.strip("_")
    elif isinstance(value, ast.Name) and value.id.startswith("__compiled_fn_"):
        name = "graph"  # Dynamo's compiled graph (its number changes from run to run)
    elif isinstance(value, ast.Name) and not value.id.startswith("__"):
        name = value.id  # (its value now: a cell's, a global's)
    elif isinstance(value, ast.Tuple) and value.elts and all(
            isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute)
            and e.value.attr == "__closure__" for e in value.elts):
        name = "cells"  # ``((lambda: x).__closure__[0], ...)``: the cells of x, ...
    elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
            and isinstance(value.slice, ast.Constant) and type(value.slice.value) is int \
            and value.slice.value >= 0 and not TEMPORARY.match(value.value.id):
        name = f"{value.value.id.strip('_')}_{value.slice.value}"
    name = re.sub(r"_dot_", "_", name)
    if not name.isidentifier() or name[:1].isdigit() or len(name) > 40 or TEMPORARY.match(name):
        return None
    return name


def _unique(stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem_2``, ``stem_3``... whichever is not taken (and take it)."""
    candidate, k = stem, 1
    while candidate in taken or keyword.iskeyword(candidate) or hasattr(builtins, candidate):
        k += 1
        candidate = f"{stem}_{k}"
    taken.add(candidate)
    return candidate


# ---------------------------------------------------------------- helpers


def _at(new: ast.stmt, old: ast.stmt) -> ast.stmt:
    """``new``, in the place of ``old``: its line (and location, where it has one)."""
    line = getattr(old, "line", None)
    if line is not None:
        new.line = line  # type: ignore[attr-defined]
    return ast.copy_location(new, old) if hasattr(old, "lineno") else new


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


def _dead(s: ast.stmt, loads: dict[str, int]) -> bool:
    """Whether ``s`` is ``name = constant`` and nothing reads ``name``."""
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) and not loads.get(s.targets[0].id) \
        and isinstance(s.value, ast.Constant)


# ---------------------------------------------------------------- temporaries


_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.GeneratorExp,
           ast.ListComp, ast.SetComp, ast.DictComp)


@dataclass
class _Counts:
    """What one walk of a body finds: how often each name is read, stored (``del``
    included) and deleted, every name taken, the nested scopes, lists and walruses."""

    loads: dict[str, int] = field(default_factory=dict)
    stores: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)  # ``global``/``nonlocal``
    taken: set[str] = field(default_factory=set)  # names, arguments, definitions
    scopes: list[ast.AST] = field(default_factory=list)
    lists: bool = False
    walrus: bool = False
    nodes: dict[int, list[ast.AST]] = field(default_factory=dict)  # per statement, by id
    with_walrus: set[int] = field(default_factory=set)  # the statements with one, by id

    @classmethod
    def of(cls, body: list[ast.stmt], known: dict[int, list[ast.AST]] | None = None) -> _Counts:
        """``known``: the nodes of statements not changed since they were counted."""
        counts = cls()
        loads, stores, taken = counts.loads, counts.stores, counts.taken
        for s in body:
            nodes = known.get(id(s)) if known else None
            if nodes is None:
                nodes = _nodes(s)
            counts.nodes[id(s)] = nodes
            walrus = counts.walrus
            counts.walrus = False
            for n in nodes:
                if isinstance(n, ast.Name):
                    taken.add(n.id)
                    if isinstance(n.ctx, ast.Load):
                        loads[n.id] = loads.get(n.id, 0) + 1
                    else:
                        stores[n.id] = stores.get(n.id, 0) + 1
                        if isinstance(n.ctx, ast.Del):
                            counts.deleted[n.id] = counts.deleted.get(n.id, 0) + 1
                elif isinstance(n, ast.List):
                    counts.lists = True
                elif isinstance(n, ast.NamedExpr):
                    counts.walrus = True
                elif isinstance(n, ast.arg):
                    taken.add(n.arg)
                elif isinstance(n, _SCOPES):
                    counts.scopes.append(n)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        taken.add(n.name)
                elif isinstance(n, ast.Global | ast.Nonlocal):
                    counts.declared.update(n.names)
            if counts.walrus:
                counts.with_walrus.add(id(s))
            counts.walrus = counts.walrus or walrus
        return counts

    def nested(self) -> set[str]:
        """Names read or bound inside the nested scopes (cells, or free in them: a call
        may change them)."""
        return {n.id for scope in self.scopes for n in walk(scope) if isinstance(n, ast.Name)}


def _tidy(body: list[ast.stmt], params: set[str], made: set[str], nested: set[str],
          fixed: Fixed | None = None, counts: _Counts | None = None) -> list[ast.stmt] | None:
    """Temporaries read once written inline, unread walrus stores dropped, temporaries only
    bound and deleted dropped, runs of ``del`` joined, a call's arguments loaded before
    an effect bound as one tuple, a branch's value returned where it is made (None: no
    change). In the body and its ``if`` branches, where the order is plain. ``counts``:
    those of ``body``, if known."""
    counts = counts or _Counts.of(body)

    def temporary(name: str, bindings: int = 1) -> bool:
        return (bool(TEMPORARY.match(name)) or name in made) and name not in params \
            and name not in counts.declared and counts.stores.get(name) == bindings

    forwarded, touched = _forwarded(body, counts.loads, counts.stores, params, nested,
                                    temporary, fixed, counts.nodes, counts.with_walrus)
    changed = forwarded is not body
    if changed:  # (forwarding moves reads)
        counts = _Counts.of(forwarded, {k: v for k, v in counts.nodes.items()
                                        if k not in touched})
    loads, deleted = counts.loads, counts.deleted

    # a temporary bound once, deleted once and never read: neither is needed
    unused = {name for name, count in deleted.items()
              if count == 1 and not loads.get(name) and temporary(name, 2)}
    walrus_unread = bool(unused) or counts.walrus and any(
        not loads.get(name) and temporary(name) for name in counts.stores)

    dirty: set[int] = set()  # statements changed in place: their counted nodes are stale

    def block(stmts: list[ast.stmt], top: bool = True) -> list[ast.stmt]:
        nonlocal changed
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.Delete) and all(isinstance(t, ast.Name) and t.id in unused
                                                 for t in s.targets):
                changed = True
                continue
            if walrus_unread and top and id(s) in counts.with_walrus:  # (branches too)
                unread = _unread_walrus(s, loads, lambda n: temporary(n) or n in unused)
                if unread is not None:
                    s, changed = unread, True
                    dirty.add(id(s))
            if isinstance(s, ast.If):
                s.body = block(s.body, False)
                s.orelse = block(s.orelse, False)
            if out and isinstance(out[-1], ast.Assign) and len(out[-1].targets) == 1 \
                    and isinstance(out[-1].targets[0], ast.Name):
                name, value = out[-1].targets[0].id, out[-1].value
                if temporary(name) and loads.get(name) == 1:
                    inlined = _inline(s, name, value, fixed)
                    if inlined is not None:
                        dirty.add(id(inlined))
                        out[-1] = _at(inlined, out[-1])
                        changed = True
                        continue
            if out and _deletes_names(s) and _deletes_names(out[-1]):  # one ``del``
                out[-1] = _at(ast.Delete(targets=[*out[-1].targets, *s.targets]),  # type: ignore
                              out[-1])
                changed = True
                continue
            out.append(s)
        return out

    out = block(forwarded)
    collapsed = _collapsed(out, loads, lambda n: temporary(n) and n not in nested,
                           nested | counts.declared)
    if collapsed is not None:
        out, changed = collapsed, True
    dirty.update(id(s) for s in out if isinstance(s, ast.If))  # (inside, and returns below)
    known = {k: v for k, v in counts.nodes.items() if k not in dirty}
    packed = _packed(out, loads, known, dirty, lambda n, k: temporary(n, k) and n not in nested,
                     lambda e: isinstance(e, ast.Constant) or isinstance(e, ast.Name)
                     and e.id in params and _bound_once(e.id, counts.stores, params, nested),
                     counts.taken | params, made)
    if packed is not None:
        out, changed = packed, True
    # ``if c: ...; v = a / else: ...; v = b`` then ``return v``: each branch returns its own
    for k in range(len(out) - 1):
        s, after = out[k], out[k + 1]
        if isinstance(s, ast.If) and isinstance(after, ast.Return) \
                and isinstance(after.value, ast.Name) and k + 2 == len(out):
            name = after.value.id
            if temporary(name, 2) and loads.get(name) == 1 \
                    and _assigns_last(s.body, name) and _assigns_last(s.orelse, name):
                for branch in (s.body, s.orelse):
                    branch[-1] = _at(ast.Return(value=branch[-1].value), branch[-1])
                out.pop()
                changed = True
                break
    renamed = None
    if made or any(TEMPORARY.match(name) for name in counts.stores):
        renamed = _renamed(out, params, made, nested,
                           {k: v for k, v in known.items() if k not in dirty})
    return renamed if renamed is not None else out if changed else None


def _collapsed(body: list[ast.stmt], loads: dict[str, int],
               temporary: Callable[[str], bool], fixed_names: set[str]) -> list[ast.stmt] | None:
    """``body`` with ``t = value ... name = t`` as ``name = value`` where ``t`` is a
    temporary read only there and nothing between reads or binds ``name`` (None: none).
    ``fixed_names``: names that keep their bindings (cells, declared global)."""
    bound: dict[str, int] = {}
    out = list(body)
    drop: set[int] = set()
    for j, s in enumerate(out):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            name, value = s.targets[0].id, s.value
            i = bound.get(value.id, -1) if isinstance(value, ast.Name) else -1
            if i >= 0 and loads.get(value.id) == 1 and name not in fixed_names \
                    and not any(isinstance(n, ast.Name) and n.id == name
                                for between in out[i + 1:j] for n in walk(between)):
                first = out[i]
                assert isinstance(first, ast.Assign)
                out[i] = _at(ast.Assign(targets=[s.targets[0]], value=first.value), first)
                drop.add(j)
                continue
            if temporary(name):
                bound[name] = j
    return [s for k, s in enumerate(out) if k not in drop] if drop else None


_SKIPPED = frozenset({"ctx", "op", "ops", "type_comment"})  # (leaves nothing here reads)


def _nodes(node: ast.AST) -> list[ast.AST]:
    """``node`` and the nodes under it (not contexts or operators), in no set order."""
    out = [node]
    for n in out:  # (the list grows while it is read)
        for name in n._fields:
            if name in _SKIPPED:
                continue
            value = getattr(n, name, None)
            if isinstance(value, ast.AST):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _post_order(node: ast.AST) -> list[ast.AST]:
    """The nodes under ``node``, each after its children, children in field order."""
    out: list[ast.AST] = []
    todo: list[ast.AST | None] = [node]
    parents: list[ast.AST] = []
    while todo:
        n = todo.pop()
        if n is None:  # (its children are done)
            out.append(parents.pop())
            continue
        parents.append(n)
        todo.append(None)
        children: list[ast.AST] = []
        for name in n._fields:
            if name in _SKIPPED:
                continue
            value = getattr(n, name, None)
            if isinstance(value, ast.AST):
                children.append(value)
            elif isinstance(value, list):
                children.extend(v for v in value if isinstance(v, ast.AST))
        todo.extend(reversed(children))
    return out


def _deletes_names(s: ast.stmt) -> bool:
    return isinstance(s, ast.Delete) and all(isinstance(t, ast.Name) for t in s.targets)


def _bound_once(name: str, stores: dict[str, int], params: set[str], cells: set[str]) -> bool:
    """Whether every read of ``name`` after its binding sees the same value: a parameter
    the body never stores, or a local it stores (or deletes) once; not a cell, which a
    call may change."""
    if name in cells:
        return False
    return stores.get(name, 0) == (0 if name in params else 1)


def _forwarded(body: list[ast.stmt], loads: dict[str, int], stores: dict[str, int],
               params: set[str], nested: set[str], temporary: Callable[[str, int], bool],
               fixed: Fixed | None, nodes: dict[int, list[ast.AST]],
               walrus: set[int]) -> tuple[list[ast.stmt], set[int]]:
    """``body`` with each temporary bound once at its top level (by ``=`` or a walrus) to a
    value that is the same wherever it is read, read as that value where it is read: a
    name bound once and never deleted, a parameter never stored, a constant (every read),
    a fixed global or attribute (its one read). ``a = b = value`` with ``a`` such a
    temporary and ``b`` bound once reads ``b`` for ``a``. ``nodes``: each statement's
    nodes, by id; ``walrus``: the ids of those with a walrus. Also: the ids of the
    statements it changed."""
    def same_everywhere(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant) or _fixed_read(value, fixed):
            return True
        if isinstance(value, ast.Name):
            return value.id.startswith("_unveil_const_") \
                or _bound_once(value.id, stores, params, nested)
        return isinstance(value, ast.Tuple) and all(same_everywhere(e) for e in value.elts)

    values: dict[str, ast.expr] = {}
    kept: set[str] = set()  # names others are read as: they stay

    def take(name: str, value: ast.expr, bindings: int) -> None:
        if isinstance(value, ast.Name) and value.id in values:
            value = values[value.id]  # (a name forwarded already: its value)
        if name in values or name in kept or name in nested or not temporary(name, bindings) \
                or not same_everywhere(value):
            return
        if loads.get(name) == 1 or isinstance(value, ast.Constant) or (
                isinstance(value, ast.Name) and not _fixed_read(value, fixed)):
            values[name] = value
            if isinstance(value, ast.Name):
                kept.add(value.id)

    deletes = {n.id for s in body if isinstance(s, ast.Delete)
               for n in s.targets if isinstance(n, ast.Name)}
    for s in body:
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            names = [t.id for t in s.targets]  # type: ignore[attr-defined]
            if len(names) > 1:  # ``a = b = value``: a read as b
                for name in names:
                    others = [k for k in names if k != name and k not in values
                              and _bound_once(k, stores, params, nested)]
                    if others and name not in kept:
                        take(name, ast.Name(id=others[0], ctx=ast.Load()), 1)
                        if name in values:
                            kept.add(others[0])
            for name in names:
                take(name, s.value, 1 + (name in deletes))
        for n in nodes[id(s)] if id(s) in walrus else ():
            if isinstance(n, ast.NamedExpr):
                take(n.target.id, n.value, 1 + (n.target.id in deletes))
    if not values:
        return body, set()

    def put(node: ast.AST) -> ast.AST | None:
        """What stands for ``node``: a forwarded read's value, a walrus's value."""
        if isinstance(node, ast.Name):
            if node.id in values and isinstance(node.ctx, ast.Load):
                return copy.copy(values[node.id])
        elif isinstance(node, ast.NamedExpr) and node.target.id in values:
            return put(node.value) or node.value
        return None

    out: list[ast.stmt] = []
    changed: set[int] = set()
    for s in body:
        found = nodes[id(s)]
        if isinstance(s, ast.Assign | ast.Delete):
            targets = [t for t in s.targets
                       if not (isinstance(t, ast.Name) and t.id in values)]
            if not targets:
                continue
            if len(targets) != len(s.targets):
                s = _at(copy.copy(s), s)
                s.targets = targets
                found = _nodes(s)
        if any(isinstance(n, ast.Name) and n.id in values
               or isinstance(n, ast.NamedExpr) and n.target.id in values for n in found):
            out.append(_replaced(s, put, found))
            changed.add(id(s))
        else:
            out.append(s)
    return out, changed


def _packed(body: list[ast.stmt], loads: dict[str, int], known: dict[int, list[ast.AST]],
            dirty: set[int], temporary: Callable[[str, int], bool],
            repeatable: Callable[[ast.expr], bool], taken: set[str],
            made: set[str]) -> list[ast.stmt] | None:
    """``body`` with each run of two or more temporaries bound one after another, each
    read once as the positional arguments of one later call in that order, bound as one
    tuple the call unpacks: ``graph_inputs = (a.x, b['y'])`` ... ``graph(*graph_inputs)``
    (Dynamo loads a graph's inputs, then calls a profiler hook, then the graph). Arguments
    that read the same value anywhere (``repeatable``: parameters never stored) between
    and around them join the tuple. ``known``: the nodes of statements, by id; the ids of
    those it changes go to ``dirty``. None: no such run."""
    where: dict[str, int] = {}
    for k, s in enumerate(body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and loads.get(s.targets[0].id) == 1 \
                and temporary(s.targets[0].id, 1):
            where[s.targets[0].id] = k
    if len(where) < 2:
        return None
    runs: list[tuple[ast.Call, int, int, list[str]]] = []  # (call, from, to, temporaries)
    for t, s in enumerate(body):
        for call in known.get(id(s)) or _nodes(s):
            if not isinstance(call, ast.Call):
                continue
            p = 0
            while p < len(call.args):
                q, names = p, []
                while q < len(call.args):
                    arg = call.args[q]
                    if isinstance(arg, ast.Name) and where.get(arg.id, t) < t \
                            and (not names or where[arg.id] == where[names[-1]] + 1):
                        names.append(arg.id)
                    elif not repeatable(arg):
                        break
                    q += 1
                if len(names) >= 2:
                    runs.append((call, p, q, names))
                    dirty.add(id(s))
                p = max(q, p + 1)
    if not runs:
        return None
    first: dict[int, ast.stmt] = {}
    dropped: set[int] = set()
    named = {id(run): _unique(f"{_stem(run[0].func)}_inputs" if isinstance(run[0].func, ast.Name)
                              and _stem(run[0].func) == "graph" else "args", taken)
             for run in runs}
    for run in reversed(runs):  # (a call's later runs first: its indices hold)
        call, p, q, names = run
        name = named[id(run)]
        made.add(name)
        start = where[names[0]]
        elts = [body[where[a.id]].value if isinstance(a, ast.Name) and a.id in names  # type: ignore
                else a for a in call.args[p:q]]
        first[start] = _at(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                      value=ast.Tuple(elts=elts, ctx=ast.Load())), body[start])
        dropped.update(where[n] for n in names[1:])
        call.args[p:q] = [ast.Starred(value=ast.Name(id=name, ctx=ast.Load()), ctx=ast.Load())]
    return [first.get(k, s) for k, s in enumerate(body) if k not in dropped]


def _replaced(node: ast.stmt, put: Callable[[ast.AST], ast.AST | None],
              nodes: list[ast.AST] | None = None) -> ast.stmt:
    """``node`` with each node under it for which ``put`` gives a node replaced by that
    (in place; what ``put`` gives is not looked into). ``nodes``: those under it."""
    for n in nodes or _nodes(node):
        for name in n._fields:
            if name in _SKIPPED:
                continue
            value = getattr(n, name, None)
            if isinstance(value, ast.AST):
                new = put(value)
                if new is not None:
                    setattr(n, name, new)
            elif isinstance(value, list):
                for k, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        new = put(v)
                        if new is not None:
                            value[k] = new
    return node


def _fixed_read(node: ast.expr, fixed: Fixed | None) -> bool:
    """Whether ``node`` reads a fixed global, or a fixed attribute of one."""
    if fixed is None:
        return False
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load) and fixed(node.id, None)
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and fixed(node.value.id, None) and fixed(node.value.id, node.attr)


def _assigns_last(stmts: list[ast.stmt], name: str) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Assign) and len(stmts[-1].targets) == 1 \
        and isinstance(stmts[-1].targets[0], ast.Name) and stmts[-1].targets[0].id == name


def _renamed(body: list[ast.stmt], params: set[str], made: set[str], nested: set[str],
             known: dict[int, list[ast.AST]] | None = None) -> list[ast.stmt] | None:
    """``body`` with temporaries (unveil's ``_tN``, ``_sN``, Dynamo's ``tmp_N``) bound once
    at the top level, by ``=`` or a walrus, named after what they hold
    (``register_forward_hook``, ``graph_out_0_1``, ``transformer_h_0_modules``). ``known``:
    the nodes of statements, by id. None: none."""
    ordered = []
    for s in body:
        nodes = (known or {}).get(id(s)) or _nodes(s)
        if any(isinstance(n, ast.NamedExpr) for n in nodes):
            nodes = _post_order(s)  # (inner walruses first: they are evaluated first)
        ordered.append(nodes)
    taken = set(params)
    bindings: dict[str, int] = {}
    returned: set[str] = set()  # (``return name``: a name for what is returned)
    for nodes in ordered:
        for n in nodes:
            if isinstance(n, ast.Return) and isinstance(n.value, ast.Name):
                returned.add(n.value.id)
            elif isinstance(n, ast.Name):
                taken.add(n.id)
                if isinstance(n.ctx, ast.Store):
                    bindings[n.id] = bindings.get(n.id, 0) + 1
            elif isinstance(n, ast.arg):
                taken.add(n.arg)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                taken.add(n.name)
    names: dict[str, str] = {}
    paths = _Paths(params)

    def name(old: str, value: ast.expr, path: list[str] | None) -> None:
        if TEMPORARY.match(old) and bindings.get(old) == 1 and old not in nested \
                and old not in names:
            stem = paths.stem(path) or _stem(value) or ("result" if old in returned else None)
            if stem is not None:
                names[old] = _unique(stem, taken)
                if path is not None:
                    paths.known[names[old]] = path

    for s, nodes in zip(body, ordered, strict=True):
        for n in nodes:
            if isinstance(n, ast.Name) and n.id in names:
                n.id = names[n.id]  # (the names given so far: a stem reads the new ones)
            elif isinstance(n, ast.NamedExpr):
                name(n.target.id, n.value, paths.of(n))
                n.target.id = names.get(n.target.id, n.target.id)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            old = s.targets[0].id
            path = paths.of(s.value)
            if path is not None:
                paths.known[old] = path
            name(old, s.value, path)
    # the names the simplifier made, again: what they hold may read better now
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id in made \
                and s.targets[0].id not in nested:
            stem = _stem(s.value)
            if stem is not None and not s.targets[0].id.startswith(stem):
                taken.discard(s.targets[0].id)
                names[s.targets[0].id] = _unique(stem, taken)
    if not names:
        return None
    for nodes in ordered:  # (reads before the binding, and the names made again)
        for n in nodes:
            if isinstance(n, ast.Name) and n.id in names:
                n.id = names[n.id]
    return body


class _Paths:
    """Where a value comes from, as attribute and key names: ``self._modules['h']
    ._modules['0']._parameters['weight']`` is ``h 0 weight`` (names bound to such values,
    walrus ones included, stand for their path)."""

    PLUMBING = frozenset({"_modules", "_parameters", "_buffers", "__dict__"})

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.known: dict[str, list[str]] = {}

    def of(self, node: ast.expr) -> list[str] | None:
        if isinstance(node, ast.Name):
            path = self.known.get(node.id, [node.id])
            if TEMPORARY.match(path[0]) and not TEMPORARY.match(node.id):
                return [node.id]  # (a name that says more than the temporary it holds)
            return path
        if isinstance(node, ast.NamedExpr):
            path = self.of(node.value)
            if path is not None:
                self.known[node.target.id] = path
            return path
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str | int):
            path = self.of(node.value)
            return None if path is None else [*self.inner(path), str(node.slice.value)]
        if isinstance(node, ast.Attribute):
            path = self.of(node.value)
            return None if path is None else [*self.inner(path), node.attr]
        return None

    def inner(self, path: list[str]) -> list[str]:
        """``path`` without a last step of plumbing (``_modules``): a step further in
        names the module or parameter, and the plumbing says nothing more."""
        return path[:-1] if len(path) > 1 and path[-1] in self.PLUMBING else path

    def stem(self, path: list[str] | None) -> str | None:
        """A name from the path: without the parameter it starts from, its last parts (a
        module Dynamo imported: its last name)."""
        if path and len(path) == 1 and path[0].startswith("__import_"):
            name = path[0][len("__import_"):].rsplit("_dot_", 1)[-1].strip("_")
            return name if name.isidentifier() and not TEMPORARY.match(name) else None
        if not path or len(path) < 2:
            return None
        if path[0].startswith("__builtins_dict"):  # Dynamo's builtins (numbered per run)
            path = ["builtin", *path[1:]]
        elif path[0].startswith("__"):  # Dynamo's other globals (numbered per run)
            path = path[1:]
        parts = path[1:] if path[0] in self.params else path
        parts = [re.sub(r"\W", "_", p).strip("_") for p in parts]
        parts = [p for p in parts if p]
        while len(parts) > 1 and len("_".join(parts)) > 40:
            parts = parts[1:]
        name = "_".join(parts)
        if not name.isidentifier() or name[:1].isdigit() or len(name) > 40 \
                or TEMPORARY.match(name):
            return None
        return name


def _unread_walrus(s: ast.stmt, loads: dict[str, int],
                   temporary: Callable[[str], bool]) -> ast.stmt | None:
    """``s`` without the walrus stores to temporaries nothing reads (None: none)."""
    found = [n for n in walk(s) if isinstance(n, ast.NamedExpr)
             and temporary(n.target.id) and not loads.get(n.target.id)]
    if not found:
        return None
    targets = {id(n) for n in found}

    class Drop(ast.NodeTransformer):
        def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
            self.generic_visit(node)
            return node.value if id(node) in targets else node

    return Drop().visit(s)  # (in place: the body is the caller's to change)


def _inline(s: ast.stmt, name: str, value: ast.expr,
            fixed: Fixed | None = None) -> ast.stmt | None:
    """``s`` with its one read of ``name`` replaced by ``value``, when what ``s`` evaluates
    before that read is not affected by evaluating ``value`` later (and does not affect
    it): None otherwise."""
    order = _evaluation(s)
    if order is None:
        return None
    before: list[ast.expr] = []
    for node in order:
        if isinstance(node, ast.Name) and node.id == name:
            break
        before.append(node)
    else:
        return None
    pure_value = _pure(value)
    for node in before:
        if _fixed_read(node, fixed):
            continue  # (the same value before and after ``value`` is evaluated)
        if not _pure(node) or isinstance(node, ast.Name) and not pure_value \
                and not _local_read(node):
            return None
    replaced = False

    class Put(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            nonlocal replaced
            if node.id == name and isinstance(node.ctx, ast.Load):
                replaced = True
                return value
            return node

    new = Put().visit(s)
    return new if replaced else None


def _evaluation(s: ast.stmt) -> list[ast.expr] | None:
    """The expressions ``s`` evaluates, each before those that use its value (operands
    in order); None where the order is not plain (conditional parts, nested scopes)."""
    out: list[ast.expr] = []

    def visit(node: ast.expr) -> bool:
        if isinstance(node, ast.BoolOp | ast.IfExp | ast.Lambda | ast.GeneratorExp
                      | ast.ListComp | ast.SetComp | ast.DictComp | ast.Await | ast.Yield
                      | ast.YieldFrom | ast.Dict | ast.JoinedStr):
            return False
        for _, value in ast.iter_fields(node):
            parts = value if isinstance(value, list) else [value]
            for part in parts:
                if isinstance(part, ast.keyword):
                    part = part.value
                if isinstance(part, ast.expr) and not visit(part):
                    return False
        out.append(node)
        return True

    if isinstance(s, ast.Return | ast.Expr) and s.value is not None:
        return out if visit(s.value) else None
    if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
        return out if visit(s.value) else None
    if isinstance(s, ast.If):
        return out if visit(s.test) else None
    return None


def _pure(node: ast.expr) -> bool:
    """Evaluating ``node`` (not its operands) runs no code and changes nothing (a set
    hashes its items, ``*x`` iterates)."""
    return isinstance(node, ast.Name | ast.Constant | ast.List | ast.Tuple | ast.Slice)


def _local_read(node: ast.Name) -> bool:
    """A read of a name a call cannot change: unveil's and Dynamo's temporaries (a
    function's own locals may be cells a call changes; globals may be rebound)."""
    return bool(TEMPORARY.match(node.id))
