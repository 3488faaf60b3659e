"""Plain-``ast`` helpers every phase shares: faster stand-ins for ``ast.walk`` and
``ast.iter_child_nodes`` (the same nodes in the same order, without the
generator-per-node and per-field overhead of the ``ast`` module's versions: the
decompiler walks every tree it makes several times), and where the flow of a block of
statements ends."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from .facts import IMPLICIT, fact

_AST = ast.AST

#: The one context object of each kind, as ``ast.parse`` shares them (a context holds
#: nothing: one object serves every node, and each node built saves making one).
LOAD = ast.Load()
STORE = ast.Store()


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([v for v in value if isinstance(v, _AST)])
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``: breadth first, a node's children taken before it is yielded."""
    todo = [node]
    for n in todo:  # (the list grows while it is read)
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, _AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend([v for v in value if isinstance(v, _AST)])
        yield n


#: The nodes that open a scope of their own (a generator expression, and before 3.12 the
#: other comprehensions, too: see their users).
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def stmt_blocks(s: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists ``s`` holds (its body, ``else``, ``finally``, handlers' and
    cases' bodies), the node's own lists."""
    out = [getattr(s, f) for f in ("body", "orelse", "finalbody")
           if isinstance(getattr(s, f, None), list)]
    out += [h.body for h in getattr(s, "handlers", None) or ()]
    out += [c.body for c in getattr(s, "cases", None) or ()]
    return [b for b in out if b and isinstance(b[0], ast.stmt)]


def no_arguments() -> ast.arguments:
    """The parameters of ``def f():`` or ``lambda:``: none."""
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def holder(name: str, body: list[ast.stmt]) -> ast.FunctionDef:
    """``def name(): body``: a scope for recompiling nested code in."""
    return ast.FunctionDef(name=name, args=no_arguments(), body=body, decorator_list=[],
                           returns=None, type_params=[])  # type: ignore[call-arg, unused-ignore]  # 3.12 field


def cells(names: list[str]) -> list[ast.stmt]:
    """``name = None`` for each of ``names``: locals that nested code closes over."""
    return [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None))
            for n in names]


def names_in(stmts: Sequence[ast.AST]) -> set[str]:
    """The ids of all ``Name`` nodes anywhere in ``stmts`` (nested scopes included)."""
    out: set[str] = set()
    todo: list[ast.AST] = list(stmts)
    for n in todo:  # (the list grows while it is read)
        if isinstance(n, ast.Name):
            out.add(n.id)
            continue  # (its only child is its context)
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, _AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend([v for v in value if isinstance(v, _AST)])
    return out


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stored_names(targets: list[ast.AST]) -> set[str]:
    return {n.id for t in targets for n in walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def names_from_outside(node: ast.AST) -> set[str]:
    """The ids of the ``Name`` nodes in ``node`` that no comprehension or lambda inside it
    binds where they stand: the names the scope holding ``node`` provides (a
    comprehension's first iterable is outside it)."""
    out: set[str] = set()
    todo: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
    for n, bound in todo:  # (the list grows while it is read)
        if isinstance(n, ast.Name):
            if n.id not in bound:
                out.add(n.id)
        elif isinstance(n, _COMPREHENSIONS):
            gens = n.generators
            inner = bound | _stored_names([g.target for g in gens])
            todo.append((gens[0].iter, bound))
            todo.extend((g.iter, inner) for g in gens[1:])
            todo.extend((part, inner) for g in gens for part in (g.target, *g.ifs))
            todo.extend((part, inner) for part in children(n) if part not in gens)
        elif isinstance(n, ast.Lambda):
            a = n.args
            params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
            todo.extend((d, bound) for d in (*a.defaults, *a.kw_defaults) if d is not None)
            todo.append((n.body, bound | params))
        else:
            todo.extend((c, bound) for c in children(n))
    return out


SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment"})  # (leaves: no node to read)
N = TypeVar("N", bound=ast.AST)


def inner_children(node: ast.AST) -> list[ast.AST]:
    """The nodes right under ``node`` in field order, not contexts or operators."""
    out: list[ast.AST] = []
    for name in node._fields:
        if name in SKIPPED_FIELDS:
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def nodes_under(node: ast.AST) -> list[ast.AST]:
    """``node`` and the nodes under it (not contexts or operators), in no set order."""
    out = [node]
    for n in out:  # (the list grows while it is read; the children, inlined: it is hot)
        for name in n._fields:
            if name in SKIPPED_FIELDS:
                continue
            value = getattr(n, name, None)
            if isinstance(value, ast.AST):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def replace_under(node: N, put: Callable[[ast.AST], ast.AST | None],
                  nodes: list[ast.AST] | None = None) -> N:
    """``node`` with each node under it for which ``put`` gives a node replaced by that
    (in place; what ``put`` gives is not looked into). ``nodes``: those under it."""
    for n in nodes or nodes_under(node):
        for name in n._fields:
            if name in SKIPPED_FIELDS:
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


def same(a: object, b: object) -> bool:
    """Are ``a`` and ``b`` the same tree, as ``ast.dump(a) == ast.dump(b)`` says (node
    types, fields and constants' reprs; positions and attached facts ignored), without
    printing either."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if isinstance(x, _AST):
            for name in x._fields:
                todo.append((getattr(x, name, None), getattr(y, name, None)))
        elif isinstance(x, list):
            if len(x) != len(y):  # type: ignore[arg-type]  # y is a list too (then zip is strict)
                return False
            todo.extend(zip(x, y, strict=True))  # type: ignore[call-overload]  # y is a list too
        elif type(x) is int:  # (equal ints have equal reprs; a huge one has no repr)
            if x != y:
                return False
        elif repr(x) != repr(y):  # (``ast.dump`` shows a constant by its repr)
            return False
    return True


def catches_all(case: ast.match_case) -> bool:
    """Does the case match every subject (``case _:``, ``case name:``, no guard)?"""
    p = case.pattern
    return case.guard is None and isinstance(p, ast.MatchAs) and p.pattern is None


JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def leaves_function(stmts: list[ast.stmt]) -> bool:
    """Does every way through ``stmts`` leave the function (a ``return`` or ``raise``)?
    (Not through a ``with``, whose exit may swallow the exception.)"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and leaves_function(last.body) and leaves_function(last.orelse)
    if isinstance(last, ast.Try):
        if last.finalbody and leaves_function(last.finalbody):
            return True
        return leaves_function(last.orelse or last.body) \
            and all(leaves_function(h.body) for h in last.handlers)
    return False


def loop_breaks(body: list[ast.stmt]) -> bool:
    """Does a ``break`` in ``body`` leave the loop it is the body of (one in a nested
    loop's body leaves that loop; one in its ``else``, in a ``try`` clause or a ``match``
    case leaves this one)?"""
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break):
            return True
        if isinstance(n, ast.For | ast.AsyncFor | ast.While):
            todo.extend(n.orelse)
            continue
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
                      | ast.expr):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def ends_in_jump(stmts: list[ast.stmt], jumps: tuple[type, ...] = JUMPS) -> bool:
    """Does the code never go on after ``stmts`` (return, raise, break or continue on
    every path; ``jumps``: only these)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, jumps):
        return True
    if isinstance(last, ast.If) and last.orelse:
        return ends_in_jump(last.body, jumps) and ends_in_jump(last.orelse, jumps)
    if isinstance(last, ast.Match):
        return any(catches_all(c) for c in last.cases) \
            and all(ends_in_jump(c.body, jumps) for c in last.cases)
    return False


def ends_in_implicit_return(stmts: list[ast.stmt]) -> bool:
    """Does ``stmts`` end in the compiler's copy of the function's closing ``return
    None`` (on some path through a final ``if``)? The code after that is an ``else``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return fact(last, IMPLICIT, False)
    if isinstance(last, ast.If):
        return ends_in_implicit_return(last.body) or ends_in_implicit_return(last.orelse)
    return False


def drop_implicit_returns(stmts: list[ast.stmt]) -> None:
    """Remove the copies of the closing ``return None`` that end ``stmts`` (the end of a
    function) and the arms of its final ``if``s."""
    while stmts and isinstance(stmts[-1], ast.Return) and fact(stmts[-1], IMPLICIT, False):
        stmts.pop()
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.If):
        drop_implicit_returns(last.body)
        drop_implicit_returns(last.orelse)
        if not last.body:
            last.body.append(ast.Pass())
    elif isinstance(last, ast.Try | getattr(ast, "TryStar", ast.Try)):
        # (each way out of a final ``try`` goes on to the end of the function)
        for handler in last.handlers:
            drop_implicit_returns(handler.body)
            if not handler.body:
                handler.body.append(ast.Pass())
        drop_implicit_returns(last.orelse if last.orelse else last.body)
        if not last.body:
            last.body.append(ast.Pass())

