"""Module and class bodies cannot ``return``: what the structured body's returns become
there, and whether any is left that cannot be taken out."""

from __future__ import annotations

import ast
import copy
from typing import cast

from ..ir.nodes import catches_all, ends_in_jump, loop_breaks
from .idioms import SIMPLE

RETURNS = (ast.Return, ast.Raise)  # (what leaves the function: ``ends_in_jump``)


def stuck_returns(body: list[ast.stmt]) -> bool:
    """Whether ``body`` (a module's or class body's) may have a ``return`` that
    :func:`without_scope_returns` cannot take out (False: it has none; True: ask
    :func:`returns_left`): one inside a construct other than an ``if`` or ``match`` (or the last ``while``
    loop without ``else``, where it is a ``break``)."""
    for k, stmt in enumerate(body):
        if type(stmt) in _NO_RETURN:
            continue
        if isinstance(stmt, ast.If):
            if stuck_returns(stmt.body) or stuck_returns(stmt.orelse):
                return True
        elif isinstance(stmt, ast.Match):
            if any(stuck_returns(c.body) for c in stmt.cases):
                return True
        elif isinstance(stmt, ast.While) and k == len(body) - 1 and not stmt.orelse:
            continue
        elif not isinstance(stmt, ast.Return) and returns_inside([stmt]):
            return True
    return False


def returns_inside(body: list[ast.stmt]) -> bool:
    """Whether ``body`` has a ``return`` of its own."""
    return any(_has_return(s) for s in body)


def returns_left(body: list[ast.stmt]) -> bool:
    """Whether :func:`without_scope_returns` leaves a ``return`` in ``body``, which is not
    changed (it changes only statements with a return: those are copied)."""
    return returns_inside(without_scope_returns(
        [copy.deepcopy(s) if _has_return(s) else s for s in body]))


def without_scope_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module and class bodies cannot ``return``: drop the returns that end the body,
    give the rest of the body to the branch of an ``if`` that does not return, and
    turn returns inside a final state-machine loop into ``break`` (the loop is the
    body's last statement, so leaving it ends the body)."""
    body = _without_returns(body)
    if body and isinstance(body[-1], ast.While):
        _returns_to_break(body[-1].body)
    return body


def _without_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    for i, s in enumerate(stmts):
        if type(s) in _NO_RETURN:
            continue
        if isinstance(s, ast.Return):
            return _without_returns(stmts[:i])  # (what is now last may end in returns)
        if isinstance(s, ast.If) and _has_return(s):
            rest = stmts[i + 1:]
            body = s.body if ends_in_jump(s.body, RETURNS) else s.body + rest
            orelse = s.orelse if ends_in_jump(s.orelse, RETURNS) else s.orelse + rest
            node = ast.If(test=s.test, body=_without_returns(body) or [ast.Pass()],
                          orelse=_without_returns(orelse))
            return stmts[:i] + [ast.copy_location(node, s)]
        if isinstance(s, ast.Match) and _has_return(s):
            rest = stmts[i + 1:]
            cases = [ast.match_case(pattern=c.pattern, guard=c.guard, body=_without_returns(
                c.body if ends_in_jump(c.body, RETURNS) else c.body + rest) or [ast.Pass()])
                for c in s.cases]
            rest = _without_returns(rest)
            if rest and not any(catches_all(c) for c in s.cases):
                # no case matched: on with the rest
                cases.append(ast.match_case(pattern=ast.MatchAs(), guard=None, body=rest))
            return stmts[:i] + [ast.copy_location(ast.Match(subject=s.subject, cases=cases), s)]
        if isinstance(s, ast.Try) and i < len(stmts) - 1 and s.handlers and not s.finalbody \
                and _has_return(s) and all(ends_in_jump(h.body, RETURNS) for h in s.handlers):
            # the clauses end the body: what follows runs only after the body, as ``else``
            s.orelse = s.orelse + stmts[i + 1:]
            return _without_returns(stmts[:i + 1])
        if isinstance(s, ast.For | ast.AsyncFor | ast.While) and s.orelse \
                and ends_in_jump(s.orelse, RETURNS) and not loop_breaks(s.body):
            # the ``else`` always runs and ends the body: what follows cannot run
            s.orelse = _without_returns(s.orelse)
            return stmts[:i + 1]
        if isinstance(s, ast.For | ast.AsyncFor | ast.While) and s.orelse \
                and ends_in_jump(s.orelse, RETURNS) and _plain_breaks(s.body):
            # the ``else`` ends the body, so what follows runs only after a ``break``: it
            # goes before each ``break``, and leaving the loop ends the body
            rest = _without_returns(stmts[i + 1:])
            s.body = _before_breaks(s.body, rest)
            s.orelse = _without_returns(s.orelse)
            return stmts[:i + 1]
        if i == len(stmts) - 1 and isinstance(s, ast.For | ast.AsyncFor | ast.While) \
                and not s.orelse and _has_return(s):
            # the last statement is a loop: leaving it ends the body as a return would
            _returns_to_break(s.body)
            return stmts
        if i == len(stmts) - 1 and _has_return(s):
            # the last statement: a return at the end of one of its blocks ends the body
            # as falling off the end does
            if isinstance(s, ast.With | ast.AsyncWith):
                s.body = _without_returns(s.body) or [ast.Pass()]
            elif isinstance(s, ast.Try | getattr(ast, "TryStar", ast.Try)):
                if not s.orelse:
                    s.body = _without_returns(s.body) or [ast.Pass()]
                s.orelse = _without_returns(s.orelse)
                for h in s.handlers:
                    h.body = _without_returns(h.body) or [ast.Pass()]
    return stmts


def _has_return(node: ast.stmt) -> bool:
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            return True
        # (a simple statement holds none; nor do values and nested scopes)
        if type(n) in SIMPLE or isinstance(n, _NOT_WALKED):
            continue
        for field in n._fields:
            value = getattr(n, field, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return False


_NOT_WALKED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.expr)
#: Statements with no ``return`` of their own: simple ones but ``return``, definitions
#: (the walks above pass them by, as every test they make fails for them)
_NO_RETURN = (SIMPLE - {ast.Return}) | {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}


def _plain_breaks(stmts: list[ast.stmt]) -> bool:
    """Does the loop with body ``stmts`` ``break``, and only where nothing runs on the
    way out (not inside a ``try`` or ``with``)?"""
    found = False
    todo: list[ast.AST] = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break):
            found = True
        elif isinstance(n, ast.If):
            todo.extend(n.body + n.orelse)
        elif isinstance(n, ast.Match):
            todo.extend(x for c in n.cases for x in c.body)
        elif _break_ends_try_body(n):
            found = True
        elif isinstance(n, ast.Try | ast.With | ast.AsyncWith) or type(n).__name__ == "TryStar":
            if loop_breaks([cast(ast.stmt, n)]):
                return False
    return found


def _break_ends_try_body(node: ast.AST) -> bool:
    """``try: ...; break`` with handlers only (no ``else``, no ``finally``), breaking
    nowhere else: leaving by the ``break`` is the ``else`` clause's way out."""
    if not (isinstance(node, ast.Try) or type(node).__name__ == "TryStar"):
        return False
    t = cast(ast.Try, node)  # (a TryStar has the same fields)
    body = t.body
    return bool(body) and isinstance(body[-1], ast.Break) and not t.orelse \
        and not t.finalbody and not loop_breaks(body[:-1]) \
        and not any(loop_breaks(h.body) for h in t.handlers)


def _before_breaks(stmts: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` with a copy of ``rest`` before each of its loop's ``break``s."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Break):
            out += copy.deepcopy(rest) + ([] if ends_in_jump(rest, (ast.Raise,)) else [s])
        elif isinstance(s, ast.If):
            s.body = _before_breaks(s.body, rest)
            s.orelse = _before_breaks(s.orelse, rest)
            out.append(s)
        elif isinstance(s, ast.Match):
            for c in s.cases:
                c.body = _before_breaks(c.body, rest)
            out.append(s)
        elif _break_ends_try_body(s):
            # (what follows the loop runs after the ``try`` body, unprotected: its ``else``)
            s.body = s.body[:-1] or [ast.Pass()]  # type: ignore[attr-defined]  # a Try or TryStar
            s.orelse = _before_breaks([ast.Break()], rest)  # type: ignore[attr-defined]  # a Try or TryStar
            out.append(s)
        else:
            out.append(s)
    return out


def _returns_to_break(stmts: list[ast.stmt]) -> None:
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            stmts[i] = ast.copy_location(ast.Break(), s)
        elif isinstance(s, (ast.If, ast.With, ast.AsyncWith)):
            for block in (s.body, getattr(s, "orelse", [])):
                _returns_to_break(block)
        elif isinstance(s, ast.Match):
            for c in s.cases:
                _returns_to_break(c.body)
        elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            t = cast(ast.Try, s)  # (or a TryStar: the same fields)
            for block in (t.body, t.orelse, t.finalbody, *(h.body for h in t.handlers)):
                _returns_to_break(block)
