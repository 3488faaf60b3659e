"""Where an except clause goes when it reaches its ``POP_EXCEPT``: a ``return``,
``raise``, ``break`` or ``continue`` written in the clause, or the clause's end, where
the clauses of one ``try`` must meet (a mixin of :class:`~.structure.Structurer`)."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from ..ir.blocks import IRBlock
from ..ir.compare import stmt_key
from ..ir.exprs import Slot, Special
from ..ir.facts import OFFSET, attach, fact
from .base import (
    Ctx,
    Loop,
    Unstructurable,
    computed_after,
    entry_index,
    is_name_cleanup,
    none_to_missing,
    strip_all,
    strip_prefix,
    term_key,
)
from .written import exit_position, implicit_return, written_continue

if TYPE_CHECKING:
    from .uses import ClauseExitsUses
else:
    ClauseExitsUses = object  # (a declaration for type checkers: no base at run time)


class ClauseExits(ClauseExitsUses):
    """The exits of an except clause (a mixin: it uses the structurer's graph, contexts,
    ``seq`` and the clean-up helpers of :class:`~.structure_clauses.Clauses`)."""

    def seq_clause(self, start: int, ctx: Ctx, skip: int) -> list[ast.stmt]:
        return self.seq(start, ctx, skip_stmts=skip)

    def clause_exit(self, block: IRBlock, stmts: list[ast.stmt], idx: int, ctx: Ctx,
                    out: list[ast.stmt]) -> None:
        """An except clause reached its ``POP_EXCEPT``: an exit or the clause's end."""
        info = ctx.clause
        assert info is not None
        rest = stmts[idx + 1:]
        if info.name is not None and is_name_cleanup(rest, 0, info.name):
            rest = rest[2:]
        term = block.term
        outer = replace(ctx, clause=None, cleanups=ctx.cleanups[:-1])
        loop = ctx.loop
        if not rest and term.kind in ("return", "raise") and loop is not None \
                and loop.follow is not None and loop.follow in self.blocks \
                and not self.blocks[loop.follow].stmts \
                and term_key(self.blocks[loop.follow]) == term_key(block) \
                and exit_position(self.g.cfg, self.blocks[loop.follow]) \
                == exit_position(self.g.cfg, block):
            # the compiler copied the code after the loop (a return or raise) into the
            # clause, where it comes from: the clause breaks out of the loop
            self.exit_stmt(out, ast.Break(), outer)
            return
        in_place = self.returns_in_place and isinstance(term.value, ast.Constant)
        if not rest and (term.kind == "return" and not in_place
                         and computed_after(term.value, stmts[idx])
                         or term.kind == "raise" and (term.value is None or computed_after(
                             term.value, stmts[idx]))):
            # the compiler copied a ``return`` or ``raise`` after the statement into the
            # clause; a raise there must stay outside it (inside, the exception would get
            # the handled one as ``__context__``, and a bare ``raise`` would re-raise it)
            info.exits.append((block.id, len(block.stmts)))
            return
        if rest and term.kind == "return" \
                and self._returned_in_clause(term.value, stmts[idx], block) \
                and not self._strip_enclosing(rest, outer, clauses=True):
            # (3.10) returned through the enclosing clauses' ends in the same block
            out.extend(rest)
            out.append(ast.Return(value=none_to_missing(term.value)))
            strip_all(out, outer)
            return
        if not rest:
            if term.kind == "return":
                ret = ast.Return(value=none_to_missing(term.value))
                if ret.value is None and implicit_return(self.g.cfg, block):
                    attach(ret, implicit=True)
                out.append(ret)
                strip_all(out, outer)
                return
            if term.kind == "raise":
                out.append(ast.Raise(exc=term.value, cause=term.cause))
                return
            if term.kind == "goto" and term.targets[0] in ctx.tails \
                    and self.blocks[term.targets[0]].term.kind == "return":
                # on to an enclosing construct's exit tail: a return through its clean-up
                out.extend(self.seq(term.targets[0], outer))
                return
            if term.kind == "goto" and ctx.loop is not None \
                    and term.targets[0] in (ctx.loop.cont, ctx.loop.follow):
                out.extend(self.slot_assignments(block.id, term.targets[0]))
                stmt: ast.stmt = ast.Continue() if term.targets[0] == ctx.loop.cont \
                    else ast.Break()
                if isinstance(stmt, ast.Continue) and term.back \
                        and written_continue(self.g.cfg, block):
                    attach(stmt, written=True)
                    if self.blocks[ctx.loop.header].term.kind != "branch":
                        # (kept at the end of the clause; a ``while c:`` loop's test is
                        # where the try statement's end goes too)
                        attach(stmt, explicit=True)
                self.exit_stmt(out, stmt, outer)
                return
        if not rest and term.kind == "goto" and term.targets[0] != info.after:
            leave = self._loop_exit_copy(term.targets[0], outer)
            if leave is not None:
                # on to a copy of the clean-ups of the constructs in the loop, then out
                # of it or to its next turn: ``continue`` in a clause in a ``with``
                out.extend(self.blocks[term.targets[0]].stmts)
                self.exit_stmt(out, leave, outer)
                return
        if term.kind == "goto":
            returned = self._returned_through_clauses(block, stmts[idx], outer, rest)
            if returned is not None:
                out.extend(returned[1])  # (the enclosing clauses' ends)
                out.append(ast.Return(value=none_to_missing(returned[0])))
                strip_all(out, outer)
                return
        consumed = len(block.stmts) - len(rest)
        info.exits.append((block.id, consumed))

    def _returned_in_clause(self, value: ast.expr | None, marker: ast.stmt,
                            returns: IRBlock) -> bool:
        """Is a return of ``value`` (by block ``returns``) after an except clause's
        ``POP_EXCEPT`` ``marker`` the clause's own: a value it computed, or a constant
        (on the second reading; on the first, a constant may be a copy of the code after
        the statement, unless the ``POP_EXCEPT`` has the return's source position: the
        return unwinds the clause itself)?"""
        if value is None or isinstance(value, Slot | Special):
            return False
        if isinstance(value, ast.Constant):
            return self.returns_in_place or self._unwound_by(marker, returns)
        return not computed_after(value, marker)

    def _unwound_by(self, marker: ast.stmt, returns: IRBlock) -> bool:
        """Does the ``POP_EXCEPT`` of ``marker`` have the source position (3.11+) of
        the ``return`` that ends block ``returns``, and the code before it another one:
        the return's own clean-up?"""
        offset = fact(marker, OFFSET, None)
        where = exit_position(self.g.cfg, returns)
        if offset is None or where is None or len(where) < 2:
            return False
        bc = self.g.cfg.bc
        k = bc.index_at(offset) or 0
        # (not a position carried on from the code before: the implicit return at the
        # end of a function has the one of the statement before it)
        return bc.position_at(offset) == where \
            and (k == 0 or bc.position(bc.instrs[k - 1]) != where)

    def _returned_through_clauses(self, block: IRBlock, marker: ast.stmt, outer: Ctx,
                                  rest: list[ast.stmt]
                                  ) -> tuple[ast.expr, list[ast.stmt]] | None:
        """What an except clause returns when, after its ``POP_EXCEPT`` (and ``rest``),
        it jumps to blocks that only end the enclosing constructs (their clauses' ends, a
        ``with``'s exit) and return a value the clause computed or a constant (``return
        x`` in a clause in a clause), and the statements on the way; None if it does
        not."""
        chain: list[IRBlock] = []
        nxt = self.blocks.get(block.term.targets[0])
        while nxt is not None and len(chain) <= len(outer.cleanups):
            chain.append(nxt)
            if nxt.term.kind != "goto":
                break
            nxt = self.blocks.get(nxt.term.targets[0])
        if not chain or chain[-1].term.kind != "return":
            return None
        passed = [*rest, *(s for b in chain for s in b.stmts)]
        value = chain[-1].term.value
        if not isinstance(value, ast.Constant):
            # where the returned value stands on each block's entry, from the last back
            at = entry_index(chain[-1], value)
            for b in reversed(chain[:-1]):
                if at is None or at >= len(b.exit):
                    return None
                at = entry_index(b, b.exit[at])
            if at is None or at >= len(block.exit) or not passed:
                return None
            value = block.exit[at]
        if not self._returned_in_clause(value, marker, chain[-1]) \
                or self._strip_enclosing(passed, outer, clauses=True):
            return None
        return value, passed

    def _loop_exit_copy(self, bid: int, ctx: Ctx) -> ast.stmt | None:
        """``continue``/``break`` where block ``bid`` is a copy of the clean-ups of the
        constructs between here and the enclosing loop, then a jump to the loop's next
        turn or out of it; None otherwise."""
        loop = ctx.loop
        block = self.blocks.get(bid)
        if loop is None or block is None or not block.stmts or block.term.kind != "goto" \
                or len(self.preds(bid)) != 1:
            return None
        dest = self.through(block.term.targets[0])
        if dest not in (loop.cont, loop.follow):
            return None
        stmts = block.stmts
        for cleanup in reversed(ctx.cleanups[ctx.loop_cleanups:]):
            if cleanup.kind == "clause":
                return None
            stripped = strip_prefix(stmts, cleanup.stmts)
            if stripped is stmts:
                return None
            stmts = stripped
        if stmts:
            return None
        return ast.Continue() if dest == loop.cont else ast.Break()

    def _break_laid_after(self, tails: frozenset[int], h: int, ctx: Ctx) -> bool:
        """Does a way out of a ``try`` body (its ``tails``) go on to a ``break`` of its
        own (a block that only jumps out of the loop) laid out after the clauses of
        handler ``h`` (3.10's ``else: break``)?"""
        loop = ctx.loop
        if loop is None or loop.follow is None \
                or self.blocks[loop.header].term.kind != "for" and not loop.endless:
            return False  # (a ``for`` loop's: its break drops the iterator first; a
            # ``while`` test's way out is not a break)
        last = max(self.position(n) for n in self._clause_blocks(h, loop))
        for t in tails:
            block = self.blocks.get(t)
            if block is None or block.stmts or block.term.kind != "goto":
                continue
            if self.layout.dead_code and self.position(t) > last \
                    and block.term.targets[0] == loop.follow:
                return True  # (3.8/3.9: the break itself, the body's jump to it taken in)
            nxt = self.blocks.get(block.term.targets[0])
            if nxt is not None and not nxt.stmts and nxt.term.kind == "goto" \
                    and self.preds(nxt.id) == [t] \
                    and nxt.term.targets[0] == loop.follow and self.position(nxt.id) > last:
                return True
        return False

    def _clause_blocks(self, h: int, loop: Loop) -> set[int]:
        """The blocks of handler ``h``'s clauses, up to where they leave ``loop``."""
        stops = {loop.cont, loop.follow}
        clauses: set[int] = set()
        todo = [h]
        while todo:
            n = todo.pop()
            block = self.blocks.get(n)
            if n in clauses or n in stops or block is None or n != h and not block.stmts \
                    and block.term.kind == "goto" and block.term.targets[0] in stops:
                continue  # (also the jumps on to them: a clause's ``continue``)
            clauses.add(n)
            todo.extend(self._succs(n))
        return clauses

    def _continue_laid_after(self, tails: frozenset[int], h: int, ctx: Ctx) -> int | None:
        """The way out of a ``try`` body (one of its ``tails``) that is a ``continue``
        of its own laid out after the clauses of handler ``h``: the statement after the
        ``try`` (3.10 and 3.11 jump there over the clauses; a ``continue`` in the body
        jumps back in place). Returns that way out."""
        loop = ctx.loop
        if loop is None:
            return None
        clauses = self._clause_blocks(h, loop)
        last = max(self.position(n) for n in clauses)
        found = None
        for t in tails:
            block = self.blocks.get(t)
            if block is None or block.stmts or block.term.kind != "goto":
                continue
            start = t
            if self.position(t) < last:
                start = block.term.targets[0]
                nxt = self.blocks.get(start)
                if nxt is None or nxt.stmts or nxt.term.kind != "goto" \
                        or self.preds(start) != [t]:
                    continue
            if start not in clauses and self.position(start) > last \
                    and self.through(start) == loop.cont:
                if found is not None:
                    return None
                found = t
        return found

    def clause_merge(self, exits: list[tuple[int, int]]) -> int | None:
        targets: set[int] = set()
        copies: dict[tuple[object, ...], int] = {}
        for bid, consumed in exits:
            block = self.blocks[bid]
            if consumed == len(block.stmts) and block.term.kind == "goto":
                targets.add(block.term.targets[0])
            else:
                rest = IRBlock(-1, list(block.blocks), list(block.entry),
                               block.stmts[consumed:], list(block.exit), block.term,
                               block.handler, block.handler_block, [], block.line)
                key = self.content_key(rest)  # clauses ending in copies of one tail
                if key not in copies:
                    # the rest keeps the block's id (and so its place in regions)
                    copies[key] = self.replace_block(bid, rest)
                targets.add(copies[key])
        if not targets:
            return None
        if len(targets) > 1:
            raise Unstructurable("except clauses continue in different places")
        return targets.pop()

    def content_key(self, block: IRBlock) -> tuple[object, ...]:
        """What a short exit block does, comparable across the compiler's copies."""
        return (tuple(stmt_key(s) for s in block.stmts), term_key(block))
