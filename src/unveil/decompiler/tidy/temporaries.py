"""Temporaries in a function body, written the way a person would: a value read once
where it is read, names that say what they hold, one ``del`` for a run of them.

:func:`tidy` does this for :mod:`.simplify` (Dynamo's frames: unveil's ``_tN``/``_sN``
and Dynamo's ``tmp_N`` locals), each rewrite one the equivalence check can follow:

* forwarding: a temporary bound once to a value that is the same wherever it is read
  (a name bound once, a parameter never stored, a constant, a *fixed* global) is read
  as that value; ``a = b = v`` reads ``b`` for ``a``;
* inlining: a temporary read once, by the next statement, before anything that could
  change what it evaluates;
* dropping walrus stores nothing reads, temporaries only bound and deleted, and constants
  stored to a temporary nothing reads before its next binding (a stack value Dynamo's
  code leaves at a join and drops: ``_s2 = None`` in each arm);
* ``x = c`` then ``if t: x = v`` as ``x = v if t else c``; and that, with ``v`` a call
  that never gives None (:class:`Known`), then ``if x is not None: g(x)``, as
  ``if t: g(v)`` (Dynamo's profiler gate around an empty region);
* a walrus its statement evaluates first as a statement of its own (``m = a.b`` before
  ``y = m.c``);
* joining runs of ``del``; ``t = v ... name = t`` as ``name = v``;
* packing: arguments loaded one after another before an effect (a profiler hook) and
  unpacked into one call as a tuple (``graph(*graph_inputs)``);
* a branch's value returned where it is made;
* naming what is left after what it holds (:class:`_Paths`: ``transformer_h_0_modules``).
"""

from __future__ import annotations

import ast
import builtins
import copy
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

from ..ir.facts import LINE, attach, fact
from ..ir.nodes import inner_children, nodes_under, replace_under, walk

# ``fixed(name, None)``: the global ``name`` is bound before the code runs and is never
# rebound while it runs; ``fixed(name, attr)``: so is that attribute of it. Reading them
# later gives the same value (the caller vouches for it, e.g. for Dynamo's own globals).
Fixed = Callable[[str, str | None], bool]

S = TypeVar("S", bound=ast.stmt)


@dataclass(frozen=True)
class Known:
    """A :data:`Fixed` that also knows which fixed functions never return None
    (``never_none(name, attr)``: calling that attribute of the fixed global gives an
    object, e.g. Dynamo's ``record_pregraph_bytecode_enter()`` its context manager), so
    that ``r = f() if c else None ... if r is not None: g(r)`` is ``if c: g(f())``."""

    fixed: Fixed
    never_none: Callable[[str, str], bool]

    def __call__(self, name: str, attr: str | None) -> bool:
        return self.fixed(name, attr)


def never_none(fixed: Fixed | None, call: ast.expr) -> bool:
    """Whether ``call`` calls a fixed function that ``fixed`` knows never returns None."""
    if not isinstance(fixed, Known) or not isinstance(call, ast.Call) or call.args \
            or call.keywords or not isinstance(call.func, ast.Attribute) \
            or not isinstance(call.func.value, ast.Name):
        return False
    name, attr = call.func.value.id, call.func.attr
    return fixed(name, attr) and fixed.never_none(name, attr)


# names that stand for a value only (unveil's temporaries, Dynamo's): written inline
# where they are read once, right after they are bound
TEMPORARY = re.compile(r"^(_[ts]\d+|tmp_\d+)$")


def stem_of(value: ast.expr) -> str | None:
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
        if isinstance(func, ast.Name) and func.id.startswith("__compiled_fn_"):
            name = "graph_out"  # what Dynamo's compiled graph returns (as Dynamo names it)
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
    elif isinstance(value, ast.IfExp) and isinstance(value.orelse, ast.Constant):
        return stem_of(value.body)  # ``f() if t else None``: what ``f`` gives, when it runs
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


def unique(stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem_2``, ``stem_3``... whichever is not taken (and take it)."""
    candidate, k = stem, 1
    while candidate in taken or keyword.iskeyword(candidate) or hasattr(builtins, candidate):
        k += 1
        candidate = f"{stem}_{k}"
    taken.add(candidate)
    return candidate


def in_place_of(new: S, old: ast.stmt) -> S:
    """``new``, in the place of ``old``: its line (and location, where it has one)."""
    line = fact(old, LINE, None)
    if line is not None:
        attach(new, line=line)
    return ast.copy_location(new, old) if hasattr(old, "lineno") else new


def dead(s: ast.stmt, loads: dict[str, int]) -> bool:
    """Whether ``s`` is ``name = constant`` and nothing reads ``name``."""
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) and not loads.get(s.targets[0].id) \
        and isinstance(s.value, ast.Constant)


_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.GeneratorExp,
           ast.ListComp, ast.SetComp, ast.DictComp)


@dataclass
class Counts:
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
    def of(cls, body: list[ast.stmt], known: dict[int, list[ast.AST]] | None = None) -> Counts:
        """``known``: the nodes of statements not changed since they were counted."""
        counts = cls()
        loads, stores, taken = counts.loads, counts.stores, counts.taken
        for s in body:
            nodes = known.get(id(s)) if known else None
            if nodes is None:
                nodes = nodes_under(s)
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


def tidy(body: list[ast.stmt], params: set[str], made: set[str], nested: set[str],
          fixed: Fixed | None = None, counts: Counts | None = None) -> list[ast.stmt] | None:
    """Temporaries read once written inline, unread walrus stores dropped, temporaries only
    bound and deleted dropped, runs of ``del`` joined, a call's arguments loaded before
    an effect bound as one tuple, a branch's value returned where it is made (None: no
    change). In the body and its ``if`` branches, where the order is plain. ``counts``:
    those of ``body``, if known."""
    counted = counts or Counts.of(body)

    def temporary(name: str, bindings: int = 1) -> bool:
        return (bool(TEMPORARY.match(name)) or name in made) and name not in params \
            and name not in counted.declared and counted.stores.get(name) == bindings

    def scratch(name: str) -> bool:  # a temporary whatever its bindings (not a cell)
        return (bool(TEMPORARY.match(name)) or name in made) and name not in params \
            and name not in counted.declared and name not in nested

    forwarded, touched = _forwarded(body, counted.loads, counted.stores, params, nested,
                                    temporary, fixed, counted.nodes, counted.with_walrus)
    changed = forwarded is not body
    pruned = _live_stores(forwarded, scratch)  # (a stack value carried to where it is dropped)
    if pruned is not None:
        forwarded, changed = pruned, True
        touched = set(counted.nodes)  # (statements in branches changed: count all again)
    if changed:  # (forwarding moves reads)
        counted = Counts.of(forwarded, {k: v for k, v in counted.nodes.items()
                                         if k not in touched})
    loads, deleted = counted.loads, counted.deleted

    # a temporary bound once, deleted once and never read: neither is needed
    unused = {name for name, count in deleted.items()
              if count == 1 and not loads.get(name) and temporary(name, 2)}
    walrus_unread = bool(unused) or counted.walrus and any(
        not loads.get(name) and temporary(name) for name in counted.stores)

    merged: set[str] = set()  # temporaries whose two stores are one now (_chosen)

    def block(stmts: list[ast.stmt], top: bool = True) -> list[ast.stmt]:
        nonlocal changed
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.Delete) and any(isinstance(t, ast.Name) and t.id in unused
                                                 for t in s.targets):
                changed = True
                kept = [t for t in s.targets if not (isinstance(t, ast.Name) and t.id in unused)]
                if not kept:
                    continue
                s = in_place_of(ast.Delete(targets=kept), s)
            if walrus_unread and top and id(s) in counted.with_walrus:  # (branches too)
                unread = _unread_walrus(s, loads, lambda n: temporary(n) or n in unused)
                if unread is not None:
                    s, changed = unread, True
            if isinstance(s, ast.If):
                s.body = block(s.body, False) or [ast.Pass()]
                s.orelse = block(s.orelse, False)
                chosen = _chosen(out[-1] if out else None, s, scratch, counted.stores)
                if chosen is not None:
                    s, changed = chosen, True
                    out.pop()
                    merged.add(chosen.targets[0].id)  # type: ignore[attr-defined]  # an Assign
                # (an ``if`` still: ``_chosen`` may have made an assignment of it)
                gated = _gated(out[-1] if out else None, s, scratch, counted, fixed,
                               merged) if isinstance(s, ast.If) else None
                if gated is not None:
                    s, changed = gated, True
                    out.pop()
            if out and isinstance(out[-1], ast.Assign) and len(out[-1].targets) == 1 \
                    and isinstance(out[-1].targets[0], ast.Name):
                name, value = out[-1].targets[0].id, out[-1].value
                if temporary(name) and loads.get(name) == 1:
                    inlined = _inline(s, name, value, fixed)
                    if inlined is not None:
                        out[-1] = in_place_of(inlined, out[-1])
                        changed = True
                        continue
            if out and _deletes_names(s) and _deletes_names(out[-1]):  # one ``del``
                prev, here = cast(ast.Delete, out[-1]), cast(ast.Delete, s)
                out[-1] = in_place_of(ast.Delete(targets=[*prev.targets, *here.targets]),
                                      out[-1])
                changed = True
                continue
            out.append(s)
        return out

    out = block(forwarded)
    collapsed = _collapsed(out, loads, lambda n: temporary(n) and n not in nested,
                           nested | counted.declared)
    if collapsed is not None:
        out, changed = collapsed, True
    packed = _packed(out, loads, lambda n, k: temporary(n, k) and n not in nested,
                     lambda e: isinstance(e, ast.Constant) or isinstance(e, ast.Name)
                     and e.id in params and bound_once(e.id, counted.stores, params, nested),
                     counted.taken | params, made)
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
                    last = cast(ast.Assign, branch[-1])  # (_assigns_last)
                    branch[-1] = in_place_of(ast.Return(value=last.value), branch[-1])
                out.pop()
                changed = True
                break
    if counted.walrus:
        hoisted = _hoisted(out, lambda n: temporary(n, 1 + deleted.get(n, 0)) and n not in nested,
                           lambda n: n in params or bound_once(n, counted.stores, params, nested))
        if hoisted is not None:
            out, changed = hoisted, True
    renamed = None
    if made or any(TEMPORARY.match(name) for name in counted.stores):
        renamed = _renamed(out, params, made, nested)
    return renamed if renamed is not None else out if changed else None


def _live_stores(body: list[ast.stmt], scratch: Callable[[str], bool]) -> list[ast.stmt] | None:
    """``body`` without the stores of a constant to a temporary (``scratch``) that nothing
    reads before it is bound again or the function ends (None: none). Branches of ``if``
    statements are followed; other compound statements count as reading every name they
    name, and binding none."""
    changed = False

    def back(stmts: list[ast.stmt], live: set[str]) -> tuple[list[ast.stmt], set[str]]:
        nonlocal changed
        out: list[ast.stmt] = []
        for s in reversed(stmts):
            if isinstance(s, ast.Return | ast.Raise):
                live = set()  # (what follows in this block never runs)
            if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                    and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Constant) \
                    and scratch(s.targets[0].id):
                if s.targets[0].id not in live:
                    changed = True
                    continue
                live = live - {s.targets[0].id}
            elif isinstance(s, ast.If):
                body, in_body = back(s.body, live)
                orelse, in_orelse = back(s.orelse, live)
                if body != s.body or orelse != s.orelse:
                    s = in_place_of(ast.If(test=s.test, body=body or [ast.Pass()],
                                           orelse=orelse), s)
                live = in_body | in_orelse | _names_read(s.test)
            elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
                stored = {cast(ast.Name, t).id for t in s.targets}  # (all names)
                live = (live - stored) | _names_read(s.value)
            else:  # (``del x`` reads x: it raises where x is unbound)
                live = live | {n.id for n in walk(s) if isinstance(n, ast.Name)}
            out.append(s)
        return out[::-1], live

    out, _ = back(body, set())
    return out if changed else None


def _names_read(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _chosen(before: ast.stmt | None, s: ast.If, scratch: Callable[[str], bool],
            stores: dict[str, int]) -> ast.Assign | None:
    """``x = c`` then ``if t: x = v`` (``c`` a constant, ``x`` a temporary bound only
    there) as ``x = v if t else c``; None where that does not fit."""
    if not (isinstance(before, ast.Assign) and len(before.targets) == 1
            and isinstance(before.targets[0], ast.Name)
            and isinstance(before.value, ast.Constant)) or s.orelse or len(s.body) != 1:
        return None
    name = before.targets[0].id
    then = s.body[0]
    if not (isinstance(then, ast.Assign) and len(then.targets) == 1
            and isinstance(then.targets[0], ast.Name) and then.targets[0].id == name
            and scratch(name) and stores.get(name) == 2):
        return None
    chosen = ast.IfExp(test=s.test, body=then.value, orelse=before.value)
    return in_place_of(ast.Assign(targets=[before.targets[0]], value=chosen), then)


def _gated(before: ast.stmt | None, s: ast.If, scratch: Callable[[str], bool],
           counts: Counts, fixed: Fixed | None, merged: set[str]) -> ast.stmt | None:
    """``x = f() if c else None`` then ``if x is not None: g(x)`` (``f`` a fixed function
    that never returns None, ``x`` a temporary read only there) as ``if c: g(f())``: the
    test says whether ``c`` held (``merged``: temporaries whose stores ``counts`` still
    counts as two). None where that does not fit."""
    if not (isinstance(before, ast.Assign) and len(before.targets) == 1
            and isinstance(before.targets[0], ast.Name)
            and isinstance(before.value, ast.IfExp)
            and isinstance(before.value.orelse, ast.Constant)
            and before.value.orelse.value is None and not s.orelse and len(s.body) == 1):
        return None
    name = before.targets[0].id
    test = s.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot) and isinstance(test.left, ast.Name)
            and test.left.id == name and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    if not (scratch(name) and counts.stores.get(name) == 1 + (name in merged)
            and counts.loads.get(name) == 2
            and never_none(fixed, before.value.body)):
        return None
    inlined = _inline(s.body[0], name, before.value.body, fixed)
    if inlined is None:
        return None
    return in_place_of(ast.If(test=before.value.test, body=[inlined], orelse=[]), before)


def _hoisted(body: list[ast.stmt], temporary: Callable[[str], bool],
             steady: Callable[[str], bool]) -> list[ast.stmt] | None:
    """``body`` with each walrus that its statement evaluates first (after constants and
    locals nothing can change) bound in a statement of its own just before:
    ``y = (m := a.b).c`` as ``m = a.b`` then ``y = m.c`` (None: none). ``temporary``: the
    walrus targets that may move (bound only there); ``steady``: locals whose value no
    evaluation can change."""
    out: list[ast.stmt] = []
    changed = False
    for s in body:
        while True:
            first = _leading_walrus(s, temporary, steady)
            if first is None:
                break
            name = first.target.id
            out.append(in_place_of(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                              value=first.value), s))
            read = ast.Name(id=name, ctx=ast.Load())

            def swap(n: ast.AST, w: ast.AST = first, r: ast.expr = read) -> ast.AST | None:
                return r if n is w else None
            s = replace_under(s, swap)
            changed = True
        out.append(s)
    return out if changed else None


def _leading_walrus(s: ast.stmt, temporary: Callable[[str], bool],
                    steady: Callable[[str], bool]) -> ast.NamedExpr | None:
    """The walrus ``s`` evaluates first, when all it evaluates before that walrus's value
    is constants and steady locals; None otherwise."""
    order = _evaluation(s)
    first = next((n for n in order or () if isinstance(n, ast.NamedExpr)), None)
    if first is None or not temporary(first.target.id):
        return None
    own = {id(n) for n in ast.walk(first.value)}
    for node in order or ():
        if node is first:
            return first
        if id(node) in own or isinstance(node, ast.Constant) or isinstance(node, ast.Name) \
                and (steady(node.id) or isinstance(node.ctx, ast.Store)):  # (a walrus's target)
            continue
        return None
    return None


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
            if i >= 0 and loads.get(cast(ast.Name, value).id) == 1 and name not in fixed_names \
                    and not any(isinstance(n, ast.Name) and n.id == name
                                for between in out[i + 1:j] for n in walk(between)):
                first = out[i]
                assert isinstance(first, ast.Assign)
                out[i] = in_place_of(ast.Assign(targets=[s.targets[0]], value=first.value), first)
                drop.add(j)
                continue
            if temporary(name):
                bound[name] = j
    return [s for k, s in enumerate(out) if k not in drop] if drop else None


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
        todo.extend(reversed(inner_children(n)))
    return out


def _deletes_names(s: ast.stmt) -> bool:
    return isinstance(s, ast.Delete) and all(isinstance(t, ast.Name) for t in s.targets)


def bound_once(name: str, stores: dict[str, int], params: set[str], cells: set[str]) -> bool:
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
                or bound_once(value.id, stores, params, nested)
        return isinstance(value, ast.Tuple) and all(same_everywhere(e) for e in value.elts)

    values: dict[str, ast.expr] = {}
    kept: set[str] = set()  # names others are read as: they stay

    def take(name: str, value: ast.expr, bindings: int) -> None:
        if isinstance(value, ast.Name) and value.id in values:
            value = values[value.id]  # (a name forwarded already: its value)
        if name in values or name in kept or name in nested or not temporary(name, bindings) \
                or not same_everywhere(value):
            return
        if loads.get(name) == 1 or isinstance(value, ast.Constant | ast.Name):
            values[name] = value
            if isinstance(value, ast.Name):
                kept.add(value.id)

    deletes = {n.id for s in body if isinstance(s, ast.Delete)
               for n in s.targets if isinstance(n, ast.Name)}
    for s in body:
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            names = [t.id for t in s.targets]  # type: ignore[attr-defined]  # all Names
            if len(names) > 1:  # ``a = b = value``: a read as b
                for name in names:
                    others = [k for k in names if k != name and k not in values
                              and bound_once(k, stores, params, nested)]
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
                s = in_place_of(copy.copy(s), s)
                s.targets = targets
                found = nodes_under(s)
        if any(isinstance(n, ast.Name) and n.id in values
               or isinstance(n, ast.NamedExpr) and n.target.id in values for n in found):
            out.append(replace_under(s, put, found))
            changed.add(id(s))
        else:
            out.append(s)
    return out, changed


def _packed(body: list[ast.stmt], loads: dict[str, int],
            temporary: Callable[[str, int], bool],
            repeatable: Callable[[ast.expr], bool], taken: set[str],
            made: set[str]) -> list[ast.stmt] | None:
    """``body`` with each run of two or more temporaries bound one after another, each
    read once as the positional arguments of one later call in that order, bound as one
    tuple the call unpacks: ``graph_inputs = (a.x, b['y'])`` ... ``graph(*graph_inputs)``
    (Dynamo loads a graph's inputs, then calls a profiler hook, then the graph). Arguments
    that read the same value anywhere (``repeatable``: parameters never stored) between
    and around them join the tuple. None: no such run."""
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
        for call in nodes_under(s):
            if not isinstance(call, ast.Call):
                continue
            p = 0
            while p < len(call.args):
                q = p
                names: list[str] = []
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
                p = max(q, p + 1)
    if not runs:
        return None
    first: dict[int, ast.stmt] = {}
    dropped: set[int] = set()
    named = {id(run): unique("graph_inputs" if stem_of(run[0].func) == "graph" else "args",
                             taken) for run in runs}
    for run in reversed(runs):  # (a call's later runs first: its indices hold)
        call, p, q, names = run
        name = named[id(run)]
        made.add(name)
        start = where[names[0]]
        elts = [cast(ast.Assign, body[where[a.id]]).value  # (the temporary's assignment)
                if isinstance(a, ast.Name) and a.id in names else a for a in call.args[p:q]]
        first[start] = in_place_of(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                      value=ast.Tuple(elts=elts, ctx=ast.Load())), body[start])
        dropped.update(where[n] for n in names[1:])
        call.args[p:q] = [ast.Starred(value=ast.Name(id=name, ctx=ast.Load()), ctx=ast.Load())]
    return [first.get(k, s) for k, s in enumerate(body) if k not in dropped]


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


def _renamed(body: list[ast.stmt], params: set[str], made: set[str],
             nested: set[str]) -> list[ast.stmt] | None:
    """``body`` with temporaries (unveil's ``_tN``, ``_sN``, Dynamo's ``tmp_N``) bound once
    at the top level, by ``=`` or a walrus, named after what they hold
    (``register_forward_hook``, ``graph_out_0_1``, ``transformer_h_0_modules``); None: none."""
    ordered = []
    for s in body:
        nodes = nodes_under(s)
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
            stem = paths.stem(path) or stem_of(value) or ("result" if old in returned else None)
            if stem is not None:
                names[old] = unique(stem, taken)
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
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Tuple):  # ``x, _t0 = f()``: ``f_out_1``
            stem = stem_of(s.value)
            for k, e in enumerate(s.targets[0].elts):
                if stem is not None and isinstance(e, ast.Name) and TEMPORARY.match(e.id) \
                        and bindings.get(e.id) == 1 and e.id not in nested \
                        and e.id not in names:
                    names[e.id] = unique(f"{stem}_{k}", taken)
    # the names the simplifier made, again: what they hold may read better now
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id in made \
                and s.targets[0].id not in nested:
            stem = stem_of(s.value)
            if stem is not None and not s.targets[0].id.startswith(stem):
                taken.discard(s.targets[0].id)
                names[s.targets[0].id] = unique(stem, taken)
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
        path: list[str] | None
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
    in order); of a conditional expression, its test and nothing after (one arm or the
    other runs then); None where the order is not plain (``and``/``or``, nested scopes)."""
    out: list[ast.expr] = []
    stopped = False  # past a conditional expression's test: nothing more is listed

    def visit(node: ast.expr) -> bool:
        nonlocal stopped
        if stopped:
            return True
        if isinstance(node, ast.IfExp):  # its test runs first; its arms, one or the other
            if not visit(node.test):
                return False
            stopped = True
            return True
        if isinstance(node, ast.BoolOp | ast.Lambda | ast.GeneratorExp
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
        if not stopped:
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
