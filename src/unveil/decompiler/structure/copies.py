"""How the compiler's copies of a construct's clean-up read where a ``return``,
``break`` or ``continue`` leaves the body of a ``try``/``finally`` or ``with``.

The compiler writes the ``finally`` body (or the ``__exit__`` call) again on each way
out of the body; these helpers recognise such a copy and take it off what follows, so
that the construct's exit is written once, as the source had it.
"""

from __future__ import annotations

import ast
import copy
from typing import cast

from ..ir.blocks import IRBlock
from ..ir.exprs import Slot
from ..ir.facts import KIND, ORIGIN, SLOT, fact
from ..ir.nodes import same
from .base import COMPOUND, breaks_for, canonical, leaves, matches


def starts_with(stmts: list[ast.stmt], prefix: list[ast.stmt]) -> bool:
    """Whether ``stmts`` begins with a copy of ``prefix`` (loops compared as
    :func:`_canonical` writes them)."""
    return len(stmts) >= len(prefix) and all(
        matches(s, p) or isinstance(p, COMPOUND) and matches(canonical(s), canonical(p))
        for s, p in zip(stmts, prefix, strict=False))


def returning_arms(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: X else: Y`` then ``return v`` as ``if c: X; return v else: Y`` then ``return
    v`` (the same for ``continue`` and ``break``): an arm that goes on to the way out after
    it (the compiler shares the way out the other copy of a ``finally`` writes in the
    arm)."""
    if len(stmts) >= 2 and isinstance(stmts[-1], ast.Return | ast.Continue | ast.Break) \
            and isinstance(stmts[-2], ast.If) and stmts[-2].orelse \
            and not leaves(stmts[-2].body):
        last, way_out = stmts[-2], stmts[-1]
        again = ast.Return(value=way_out.value) if isinstance(way_out, ast.Return) \
            else type(way_out)()
        body = [s for s in last.body if not isinstance(s, ast.Pass)]
        return [*stmts[:-2], ast.If(test=last.test, body=[*body, again],
                                    orelse=last.orelse), way_out]
    return stmts


def returning_clauses(stmts: list[ast.stmt], block: IRBlock) -> list[ast.stmt]:
    """``try: X; return v`` / ``except E: Y; return v`` (/ ``finally: F``) as ``try: X`` /
    ``except E: Y`` (/ ``finally: F``) then ``return v``, where ``v`` is the value
    ``block`` was entered with: a ``try`` in a ``finally`` copy that a ``return`` of the
    body passes through (the value waits on the stack under the clauses, which each return
    it). The same in the arms of a last ``if``
    (:func:`_hoist_common_tail` then takes the returns out of it)."""
    if not stmts:
        return stmts
    node = stmts[-1]
    if isinstance(node, ast.If):
        return [*stmts[:-1], ast.If(test=node.test, body=returning_clauses(node.body, block),
                                    orelse=returning_clauses(node.orelse, block))]
    if not isinstance(node, ast.Try) or node.orelse or not (node.handlers or node.finalbody):
        return stmts
    last = node.body[-1]
    if not isinstance(last, ast.Return) or last.value is None:
        return stmts
    depth = next((k for k, e in enumerate(block.entry) if e is last.value), None)
    if depth is None:
        return stmts
    for handler in node.handlers:
        way_out = handler.body[-1]
        if not (isinstance(way_out, ast.Return) and isinstance(way_out.value, Slot)
                and way_out.value.index == depth):
            return stmts
    handlers = [ast.ExceptHandler(type=h.type, name=h.name, body=h.body[:-1] or [ast.Pass()])
                for h in node.handlers]
    return [*stmts[:-1], ast.Try(body=node.body[:-1] or [ast.Pass()], handlers=handlers,
                                 orelse=[], finalbody=node.finalbody), last]


def value_spills(block: IRBlock) -> int:
    """How many statements at the start of ``block`` name a value it was entered with
    (``_t = value`` before a clean-up copy that could change what ``value`` reads)."""
    k = 0
    for stmt in block.stmts:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and any(stmt.value is e for e in block.entry)):
            break
        k += 1
    return k


def returned_from_body(after: list[ast.stmt], block: IRBlock,
                        spills: list[ast.stmt]) -> ast.expr | None:
    """The value of ``return value`` (all of ``after``) when the body computed it: it came
    to the construct's exit on the stack, or named by one of ``spills``."""
    if len(after) != 1 or not isinstance(after[0], ast.Return) or after[0].value is None:
        return None
    value = after[0].value
    if len(spills) == 1:
        origin = fact(value, ORIGIN, None)
        return origin if origin is not None \
            and origin is cast(ast.Assign, spills[0]).value else None  # (spills: assignments)
    if not spills and any(value is e for e in block.entry):
        return value
    return None


def breaks_to_after(stmts: list[ast.stmt], n: int) -> list[ast.stmt]:
    """When the copy (the first ``n`` statements) ends in a loop and a ``return`` follows
    it, that loop's copies of the return are its ``break``: the compiler gave the
    ``break`` a copy of the short code after the loop."""
    if n == 0 or len(stmts) <= n or not isinstance(stmts[n], ast.Return):
        return stmts
    loop = stmts[n - 1]
    if not isinstance(loop, ast.While | ast.For) or loop.orelse:
        return stmts
    after = stmts[n]
    changed = copy.copy(loop)
    changed.body = breaks_for(loop.body, lambda s: isinstance(s, ast.Return) and same(s, after))
    return [*stmts[:n - 1], changed, *stmts[n:]]


def fold_test_temps(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``_t = x`` then ``if _t:`` as ``if x:`` where ``_t`` is a temporary of the reader's
    (its load says so) read nowhere else: one copy of a clean-up can name an ``if``'s test
    where the other does not (the handler's copy, with the exception under it on the
    stack)."""
    reads: dict[str, int] = {}
    for node in ast.walk(ast.Module(body=stmts, type_ignores=[])):
        if isinstance(node, ast.Name):
            reads[node.id] = reads.get(node.id, 0) + 1

    def named_test(stmt: ast.stmt, nxt: ast.stmt | None) -> bool:
        return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) and isinstance(nxt, ast.If) \
            and isinstance(nxt.test, ast.Name) and nxt.test.id == stmt.targets[0].id \
            and fact(nxt.test, KIND, None) == "temp" and reads[nxt.test.id] == 2

    def fold(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        k = 0
        while k < len(body):
            stmt = body[k]
            nxt = body[k + 1] if k + 1 < len(body) else None
            if named_test(stmt, nxt):
                assert isinstance(stmt, ast.Assign) and isinstance(nxt, ast.If)
                out.append(ast.If(test=stmt.value, body=fold(nxt.body), orelse=fold(nxt.orelse)))
                k += 2
                continue
            if isinstance(stmt, ast.If):
                stmt = ast.If(test=stmt.test, body=fold(stmt.body), orelse=fold(stmt.orelse))
            elif isinstance(stmt, ast.While | ast.For | ast.AsyncFor):
                stmt = copy.copy(stmt)
                stmt.body = fold(stmt.body)
            out.append(stmt)
            k += 1
        return out

    return fold(stmts)


def returned_through_slot(stmts: list[ast.stmt], block: IRBlock) -> list[ast.stmt]:
    """A copy's statements with ``_sK = v`` among them, then ``return _sK``, where ``v``
    arrives on ``block``'s stack (the value a ``return`` leaves under a copied loop, named
    where the loop's test is entered from two places): without the assignment, then
    ``return v`` (``v`` a name or slot: reading it later reads the same)."""
    ret = stmts[-1] if stmts else None
    if not isinstance(ret, ast.Return) or not isinstance(ret.value, Slot):
        return stmts
    k = ret.value.index
    i = next((j for j, s in enumerate(stmts[:-1]) if isinstance(s, ast.Assign)
              and len(s.targets) == 1 and fact(s.targets[0], SLOT, None) == k), None)
    if i is None:
        return stmts
    head = stmts[i]
    assert isinstance(head, ast.Assign)
    rest = [*stmts[:i], *stmts[i + 1:-1]]
    if not isinstance(head.value, Slot | ast.Name | ast.Constant) \
            or not any(head.value is e for e in block.entry) \
            or any(isinstance(n, Slot) and n.index == k
                   or isinstance(n, ast.Name) and fact(n, SLOT, None) == k
                   for s in rest for n in ast.walk(s)):
        return stmts
    return [*rest, ast.Return(value=head.value)]
