"""Where an ``if`` ends: the block after the statement, when the arms do not meet
because one of them leaves (``return``, ``raise``, ``break``); and ``if c: pass``, whose
arms are one block, made a statement before the graph is read.

A mixin of :class:`~.structure.Structurer` (it uses the structurer's graph, dominators and
contexts): :meth:`~.structure.Structurer.if_stmt` asks it where the statement ends.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..graph.regions import EXIT, dominates
from ..ir.blocks import Term
from ..ir.facts import attach
from .base import Ctx, Loop

if TYPE_CHECKING:
    from .uses import IfEndsUses
else:
    IfEndsUses = object  # (a declaration for type checkers: no base at run time)


class IfEnds(IfEndsUses):
    """Where :meth:`~.structure.Structurer.if_stmt` ends (a mixin)."""

    def _tests_that_pass(self) -> None:
        """A test whose both ways go to one block (``if c: pass``, the test read for its
        truth alone) is that statement, then the jump: a branch with one successor would
        count as two ways out wherever the graph is read (a ``break`` after it)."""
        for block in self.blocks.values():
            term = block.term
            if term.kind == "branch" and term.targets[0] == term.targets[1] \
                    and term.test is not None:
                stmt = ast.If(test=term.test, body=[ast.Pass()], orelse=[])
                attach(stmt, line=term.line, as_tested=True)
                block.stmts.append(stmt)
                block.term = Term("goto", [term.targets[0]], line=term.line, src=term.src)

    def _arm_reach(self, b: int, start: int, ctx: Ctx, clauses: bool = False) -> set[int]:
        """The blocks of the region ``start`` reaches from the test ``b`` without
        leaving by the region's or the loop's ways out (``clauses``: and through the
        handlers of ``try`` statements inside the arm, whose clauses go on too)."""
        stops = {b, ctx.follow}
        if ctx.loop is not None:
            stops |= {ctx.loop.cont, ctx.loop.follow}
        outer = self.blocks[b].handler_block
        seen: set[int] = set()
        todo = [start]
        while todo:
            n = todo.pop()
            if n in seen or n in stops or n not in ctx.region:
                continue
            seen.add(n)
            todo.extend(self._succs(n))
            h = self.blocks[n].handler_block
            if clauses and h is not None and h != outer:
                todo.append(h)
        return seen

    def _jumped_over(self, b: int, then_t: int, else_t: int, ctx: Ctx) -> int:
        """Where an ``if`` whose ``else`` leaves (``return``, ``raise``, ``break``)
        ends as laid out: the body, right after the test, jumps over the ``else`` to
        the code after the statement (``if c: A`` / ``else: return`` then ``B``);
        ``EXIT`` when it is not so. (A short ending the compiler copies into each way
        instead, a tail of an enclosing ``with``: a jump to one is to a copy.)"""
        if self.blocks[b].term.fall == else_t:
            then_t, else_t = else_t, then_t  # (the test as laid out: ``if x is None``)
        if self.blocks[b].term.fall != then_t or else_t < then_t:
            return EXIT
        body = self._arm_reach(b, then_t, ctx)
        arm = {n for n in body if n < else_t}  # (the body's blocks laid out before the else)
        term = self.blocks[max(arm, default=then_t)].term
        if term.kind != "goto":
            return EXIT  # (before the else's reach: all of the rest of an elif chain)
        other = self._arm_reach(b, else_t, ctx)
        if not other or body & other or min(other) < else_t \
                or term.targets[0] <= max(other):
            return EXIT
        after = term.targets[0]
        if any(s not in arm and s != after and (
                s not in ctx.region or not dominates(self.idom, b, s))
               for n in arm for s in self._succs(n)):
            return EXIT  # (the body also goes where code before the ``if`` goes)
        if after not in body or after in ctx.tails or any(else_t <= n < after for n in body) \
                or ctx.loop is not None and self._leaves_loop(after, ctx.loop) \
                or not dominates(self.idom, b, after):
            return EXIT
        return after

    def _leaves_loop(self, b: int, loop: Loop) -> bool:
        """Is ``b`` a ``break`` or ``continue`` of ``loop`` that only jumps (the end of
        an arm, not code after the ``if``)?"""
        block = self.blocks[b]
        return b in loop.body and not block.stmts and block.term.kind == "goto" \
            and block.term.targets[0] in (loop.follow, loop.cont)

    def common_successor(self, b: int, then_t: int, else_t: int, ctx: Ctx) -> int:
        """Where both branches meet when one of them may also leave (``return``...):
        the first block, in flow order, that both reach inside the region."""
        common = self._arm_reach(b, then_t, ctx, True) & self._arm_reach(b, else_t, ctx, True)
        if not common:
            return EXIT
        order = self._rpo_index()
        best = min(common, key=lambda n: order.get(n, 1 << 30))
        if not dominates(self.idom, b, best):
            return EXIT
        return best
