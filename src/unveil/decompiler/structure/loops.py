"""Loops: the compiler's copy of a ``while`` test undone, and where a loop ends (the exits
of a natural loop read back into ``break``, ``else`` and the code a loop's exits run on
the way out).

A mixin of :class:`~.structure.Structurer` (it uses the structurer's graph, dominators and
contexts): :meth:`_dedup_loop_tests` runs while the graph is prepared;
:meth:`~.structure.Structurer.loop_stmt` finds a loop's exits and asks these methods which
of them are the loop's own code, so that one exit is left.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, cast

from ..graph.regions import dominates
from ..ir.blocks import IRBlock, Term
from ..ir.compare import Key, expr_key
from ..ir.markers import ExcMarker
from .base import (
    Ctx,
    computed_after,
    find_marker,
    handler_values,
    is_name_cleanup,
    passes_under,
)
from .written import implicit_return, kept_back_jump, written_continue

if TYPE_CHECKING:
    from .uses import LoopExitsUses
else:
    LoopExitsUses = object  # (a declaration for type checkers: no base at run time)


class LoopExits(LoopExitsUses):
    """The exit analysis of :meth:`~.structure.Structurer.loop_stmt` (a mixin)."""

    def _add_tails(self, header: int, body: set[int]) -> None:
        """Blocks entered only from a loop that end the function belong to its body
        (not the exit of a loop's own test)."""
        head = self.blocks[header]
        tests = head.term.kind == "for" or (head.term.kind == "branch" and not head.stmts)
        if head.term.kind == "for":
            self._break_copies_of_the_exit(body, head.term.targets[1])
        depth = len(head.entry)
        span = max(self.blocks[b].blocks[-1] if self.blocks[b].blocks else b for b in body)
        outside = frozenset(body) | {header}
        ending: dict[int, bool] = {}
        # (only blocks the body reaches can join it: walked from there, not over all)
        todo = [s for b in body for s in self._esuccs(b) if s not in body]
        while todo:
            bid = todo.pop()
            if bid in body or bid not in self.idom:
                continue
            block = self.blocks[bid]
            preds = self._epreds.get(bid, [])
            if not preds or not all(p in body for p in preds):
                continue
            if tests and header in preds:
                continue
            # a tail after the loop, or entered with the iterator popped, is what a
            # ``break`` jumps to; one inside the loop's code is a ``return`` in the body
            # (and a re-raise of an exception the loop found on the stack ends the
            # handler the loop is in: ``finally: while True: ... break``)
            if len(block.entry) < depth or (block.blocks and block.blocks[-1] > span) \
                    or len(block.entry) == depth and (self._after_the_clause(bid)
                                                      or block.term.kind == "reraise"):
                continue
            if not block.stmts and block.term.kind == "return" \
                    and implicit_return(self.g.cfg, block):
                continue  # (the compiler's copy of the function's end: a ``break``)
            if self._ends(bid, outside, ending):
                body.add(bid)
                todo.extend(s for s in self._esuccs(bid) if s not in body)

    def _ends(self, start: int, outside: frozenset[int], known: dict[int, bool]) -> bool:
        """Does every path from ``start`` end the function without entering ``outside``
        (an ``if`` whose arms all return ends it too)? ``known`` remembers answers; a
        block on a cycle never ends it."""
        stack = [start]
        expanding: set[int] = set()
        while stack:
            bid = stack[-1]
            if bid in known:
                stack.pop()
                continue
            block = self.blocks.get(bid)
            succs = self._succs(bid)
            if block is None or bid in outside:
                known[bid] = False
            elif block.term.kind in ("return", "raise", "reraise") and not succs:
                known[bid] = True
            elif block.term.kind != "branch" or not succs:
                known[bid] = False
            elif bid in expanding:  # (its successors are known, or on the path: False)
                known[bid] = all(known.get(x, False) for x in succs)
            else:
                expanding.add(bid)
                stack.extend(x for x in succs if x not in known and x not in expanding)
                continue
            stack.pop()
        return known[start]

    def _loop_handlers(self, h: int, body: set[int], ctx: Ctx) -> set[int]:
        """The handler blocks of a ``try`` inside the loop that lie within the loop's
        code: a clause that ends in ``break`` or ``return`` never comes back to the
        head, so the natural loop leaves it out, but its exits are the loop's."""
        span = max(self.position(b) for b in body)
        extra: set[int] = set()
        seen: set[int] = set()
        # (the code of the handlers of ``try`` statements in the loop, which leaves
        # through its re-raise: a ``finally`` handler's copy of the clean-up)
        entries = {self.blocks[b].handler_block for b in body} - {None}

        def own(x: int) -> bool:
            return x in body or any(dominates(self.idom, e, x) for e in entries
                                    if e in self.idom and x in self.idom)

        for n in body:
            for hb in self.chain(n):
                if hb in seen or hb not in self.blocks \
                        or not all(own(x) for x in self.protected(hb) & ctx.region) \
                        or self.handler_kind(hb) != "except":
                    continue
                # (from a handler the loop's own flow reaches too, where a clause
                # continues: the clauses after it)
                # (with whether the way there is still in the clause, before its
                # ``POP_EXCEPT``)
                todo = [(hb, True)]
                while todo:
                    x, inside = todo.pop()
                    if x in seen or x == h or x not in self.blocks or x not in ctx.region:
                        continue
                    seen.add(x)
                    on = inside and find_marker(self.blocks[x].stmts, "pop_except") is None
                    if x in body:  # (on through the handler's own code only)
                        if x == hb or dominates(self.idom, hb, x):
                            todo.extend((s, on) for s in self._succs(x))
                        continue
                    # (3.12+ lays handlers out after all other code: there, the code
                    # only the handler reaches; in an except clause, not past the end
                    # of the inner clause: code after the loop, where a break goes.
                    # Before, the code laid out in the loop, and the clause's own code
                    # after a ``continue`` that ends the loop's code, up to its
                    # ``POP_EXCEPT``, and past it only to a ``return``: the clause's
                    # jump on from there is a ``break``, or the way back to the loop)
                    if (not dominates(self.idom, hb, x) or self._appended(x)
                            or ctx.clause is not None and self._after_clause_end(x)
                            if self.layout.cold_handlers else self.position(x) > span and not (
                                inside and dominates(self.idom, hb, x)
                                and (on or self.blocks[x].term.kind != "goto"))):
                        continue
                    if self._ends_enclosing_clause(x, h):
                        continue  # (code after the loop, in the clause the loop is in)
                    extra.add(x)
                    todo.extend((s, on) for s in self._succs(x))
        return extra

    def _absorb_exits(self, h: int, body: set[int], breaks: set[int], ctx: Ctx) -> set[int]:
        """Code only the loop reaches that ends in a ``return``/``raise`` or in another of
        its exits is part of the body (``if x: return`` then ``break``, where the natural
        loop stops at the test because no path from it comes back). Adds that code to
        ``body``; returns the exits left."""
        stops = outer_stops(ctx)
        outer = set(self.chain(h))  # (the handlers of constructs around the loop)
        changed = True
        while changed and len(breaks) > 1:
            changed = False
            for t in sorted(breaks, key=self.position):
                if t in stops or t not in self.idom or not dominates(self.idom, h, t):
                    continue
                others = breaks - {t}
                # (or where one of them only jumps on: 3.12+ threads a ``break`` at the
                # end of an outer loop's body to that loop's head)
                ahead = {self.through(o) for o in others}
                region: set[int] = set()
                todo = [t]
                ok = True
                while todo and ok:
                    n = todo.pop()
                    if n in region or n in others or n in ahead or n in outer:
                        continue
                    if n in body or n not in self.blocks or n not in self.idom \
                            or not dominates(self.idom, h, n) or n in stops:
                        ok = False
                        break
                    region.add(n)
                    todo.extend(self._esuccs(n))
                if ok and region:
                    body |= region
                    breaks = others
                    changed = True
                    break
        return breaks

    def _breaks_on_to_the_exit(self, body: set[int], breaks: set[int],
                               natural_exit: int, ctx: Ctx) -> set[int]:
        """Breaks whose code (only the loop reaches it) goes on to the loop's natural exit,
        or to where that exit jumps on (3.12+ threads a ``break`` at the end of an outer
        loop's body to that loop's head): ``if c: f(); break`` in several places, each
        code the loop's own. Adds that code to ``body``; returns the exit left."""
        ends = {natural_exit, self.through(natural_exit)} - {None}
        stops = outer_stops(ctx)
        own: set[int] = set()
        todo = list(breaks)
        while todo:
            n = todo.pop()
            if n in own or n in ends:
                continue
            if n in body or n in stops or n not in self.blocks \
                    or self.blocks[n].term.kind not in ("goto", "branch"):
                return breaks
            own.add(n)
            todo.extend(self._succs(n))
        if not all(p in body or p in own for n in own for p in self.preds(n)):
            return breaks
        body |= own
        return {natural_exit}

    def _join_of_exits(self, body: set[int], breaks: set[int], ctx: Ctx) -> set[int]:
        """Exits that each run straight-line code of their own (entered only from the
        loop) and then go on to one block: ``stmts; break`` in several places. That
        code is the loop's and the block where they meet is its one exit."""
        stops = outer_stops(ctx)
        joins: set[int] = set()
        own: set[int] = set()
        for t in breaks:
            seen: set[int]
            n, seen = t, set()
            while True:
                preds = self.preds(n)
                if n in stops or n in seen or n in body or n not in self.blocks \
                        or len(preds) != 1 or not (preds[0] in body or preds[0] in seen):
                    break
                term = self.blocks[n].term
                if term.kind == "branch" and (raised := self._raise_arm(n)) is not None:
                    # (an ``assert``, or ``if c: raise``, on the way: straight code too)
                    seen.update((n, raised))
                    n = next(x for x in term.targets if x != raised)
                    continue
                if term.kind != "goto":
                    break
                seen.add(n)
                n = term.targets[0]
            joins.add(n)
            own |= seen
        if len(joins) != 1 or not own or joins & body:
            return breaks
        body |= own
        return joins

    def _raise_arm(self, n: int) -> int | None:
        """The arm of the test ending block ``n`` that only raises (entered from ``n``
        alone), when the other arm is another block."""
        a, b = self.blocks[n].term.targets
        for x, y in ((a, b), (b, a)):
            block = self.blocks.get(x)
            if x != y and block is not None and block.term.kind == "raise" \
                    and self.preds(x) == [n]:
                return x
        return None

    def _break_through_jumps(self, body: set[int], breaks: set[int],
                             natural_exit: int) -> set[int]:
        """A break that only jumps on (into a ``try`` after the loop, which
        :meth:`through` does not pass) to where the loop's ``else`` goes on: the loop's
        exit is that block, and the jumps are the loop's."""
        if len(breaks) != 1 or natural_exit in breaks:
            return breaks
        (f,) = breaks
        hops: list[int] = []
        n = f
        while n not in hops and n not in body and n in self.blocks \
                and not self.blocks[n].stmts and self.blocks[n].term.kind == "goto":
            hops.append(n)
            n = self.blocks[n].term.targets[0]
        if not hops or n == natural_exit:
            return breaks
        seen: set[int] = set()
        m = natural_exit
        while m != n and m not in seen and m in self.blocks \
                and self.blocks[m].term.kind == "goto" and len(self.preds(m)) == 1:
            seen.add(m)
            m = self.blocks[m].term.targets[0]
        if m != n:
            return breaks
        body.update(hops)
        return {n}

    def _break_code_inside(self, h: int, body: set[int], breaks: set[int],
                           natural_exit: int, ctx: Ctx) -> set[int]:
        """A break's own code laid out inside the loop (before its ``else``) that goes on
        where the code after the loop goes on, or returns or raises (``if c: if d:
        return; break`` as the last statement of an enclosing loop) is the loop's: the
        loop then ends there. Adds that code to ``body``; returns the exits left."""
        (f,) = breaks
        targets = {t for t in (ctx.follow, *((ctx.loop.cont, ctx.loop.follow) if ctx.loop
                                             else ())) if t is not None}
        if f in targets or self.position(f) > self.position(natural_exit):
            return breaks
        trial = set(body)
        # (the code may also go on to the loop's natural exit itself when that ends the
        # function: ``if c: if d: raise; break`` then ``return x`` after the loop)
        ends = {natural_exit} if self._leaves_function(natural_exit) else set()
        rest = self._absorb_exits(h, trial, breaks | targets | ends, ctx)
        # (where the absorbed code goes on: the one exit left; or the head of the
        # enclosing loop when the loop ends its body, ``return`` and ``break`` above,
        # and its ``else`` leaves the function)
        reached = {s for n in trial - body for s in self._succs(n)} & rest
        own = trial - body
        if f not in rest and not reached and natural_exit in rest and (len(own) > 1 or all(
                self.blocks[n].term.kind == "raise" for n in own if not self._succs(n))):
            # code of its own that only raises (``if c: msg = ...; raise E(msg)`` as the
            # last statement of a loop that ends the function), or that returns and is
            # more than the one block of a return the compiler could have copied there
            body |= trial
            return {natural_exit}
        if f in rest or not reached or reached != rest and (
                ctx.loop is None or reached != {ctx.loop.cont}
                or not self._leaves_function(natural_exit)):
            # (nor code that only returns: the compiler copies the code after a loop
            # that ends the function into the break's path)
            return breaks
        body |= trial
        return reached

    def _break_code_laid_inside(self, body: set[int], breaks: set[int], ctx: Ctx,
                                natural_exit: int | None = None) -> set[int]:
        """``if c: f(); break`` (one or more) whose code the compiler laid out inside the
        loop (before its natural exit, or an endless loop's last block), going on to one
        block past it: that code is the loop's, and the loop ends there. Adds it to
        ``body``; returns the exit (3.8/3.9: an endless loop ends at its dead jump back)."""
        end = max(max(self.position(b) for b in body), kept_back_jump(self.g.cfg, min(
            self.position(b) for b in body))) if natural_exit is None else self.position(natural_exit)
        stops = outer_stops(ctx)
        own: set[int] = set()
        beyond: set[int] = set()
        todo = list(breaks)
        while todo:
            n = todo.pop()
            if n in own or n in beyond:
                continue
            outer = ctx.loop is not None and n in (ctx.loop.cont, ctx.loop.follow)
            if n in body or n not in self.blocks or n in stops and (n in breaks or not outer) \
                    or n == natural_exit and n in breaks:
                return breaks
            if self._code_end(n) > end or outer or n == natural_exit:
                # (past the loop, or on where an enclosing loop goes, or to the loop's
                # own end: no else)
                beyond.add(n)
                continue
            if not all(p in body or p in own or p in todo or p in breaks
                       or self._hop_from(p, body) for p in self.preds(n)):
                return breaks
            if self.blocks[n].term.kind in ("return", "raise", "reraise"):
                if n in breaks:
                    return breaks
                if self.layout.copied_break_returns and not self.blocks[n].stmts and self._small(n) \
                        and self._written_after(n, body) and not self._returns_in_loop(n):
                    beyond.add(n)  # (3.10: the break's copy of a return after the loop)
                else:
                    own.add(n)  # (``if c: raise`` on the way to the break)
                continue
            own.add(n)
            todo.extend(self._succs(n))
        if len(beyond) != 1 or not own \
                or not all(p in body or p in own or self._hop_from(p, body)
                           for n in own for p in self.preds(n)):
            return breaks
        body |= own
        return beyond

    def _break_copies_of_the_exit(self, body: set[int], natural_exit: int) -> None:
        """Make the compiler's copies of a ``for`` loop's way out (a ``return`` on a line
        after the loop's, like the natural exit's, that drops the iterator before it
        computes its value) jumps to it: breaks (3.10 copies the return into a ``break``;
        3.12+ where the break leaves a ``with`` or ``try`` too)."""
        exit_block = self.blocks.get(natural_exit)
        if exit_block is None or exit_block.term.kind != "return":
            return
        key = self.content_key(exit_block)
        changed = False
        for n in list(body):
            for s in self._succs(n):
                block = self.blocks.get(s)
                if s in body or s == natural_exit or block is None \
                        or block.term.kind != "return" or self.preds(s) != [n] \
                        or self.content_key(block) != key or not self._written_after(s, body) \
                        or not self._drops_first(s):
                    continue
                # (only the natural exit gains a predecessor: the others' stay as read)
                block.term = Term("goto", [natural_exit], line=block.term.line)
                changed = True
        if changed:
            self._index_preds()

    def _small(self, bid: int) -> bool:
        """Is block ``bid`` short enough for 3.10 to copy it into a jump (four
        instructions, besides the iterators a break drops)?"""
        return len([op for op in self._ops(bid) if op != "POP_TOP"]) <= 4

    def _drops_first(self, bid: int) -> bool:
        """Does block ``bid`` open by dropping a value (a loop's iterator) before it
        computes what it returns?"""
        ops = self._ops(bid)
        return bool(ops) and ops[0] == "POP_TOP"

    def _ops(self, bid: int) -> list[str]:
        """The opcodes of block ``bid``'s instructions, but ``NOP``s."""
        cfg = self.g.cfg
        return [i.op for b in self.blocks[bid].blocks if b in cfg.blocks
                for i in cfg.blocks[b].instrs(cfg.bc) if i.op != "NOP"]

    def _hop_from(self, bid: int, body: set[int]) -> bool:
        """Is block ``bid`` only a jump on, entered from ``body`` alone (a try body's
        way out to its ``else``)?"""
        block = self.blocks.get(bid)
        return block is not None and not block.stmts and block.term.kind == "goto" \
            and bool(self.preds(bid)) and all(p in body for p in self.preds(bid))

    def _written_after(self, bid: int, body: set[int]) -> bool:
        """Is block ``bid`` (a return) on a line after every line of the loop ``body``:
        code after the loop in the source, wherever the compiler copied it?"""
        line = self.blocks[bid].term.line
        lines = [x for n in body if n in self.blocks
                 for x in (self.blocks[n].line, self.blocks[n].term.line) if x is not None]
        return self.blocks[bid].term.kind == "return" and line is not None and bool(lines) \
            and line > max(lines)

    def _code_end(self, bid: int) -> int:
        """Where the last code of block ``bid`` is laid out: a jump alone does not
        count (3.10/3.11 read a break's pop of the iterator and the code it jumps to
        past the loop's else as one block)."""
        block = self.blocks[bid]
        cfg = self.g.cfg
        code = [b for b in block.blocks if b in cfg.blocks and any(
            i.op != "JUMP" for i in cfg.blocks[b].instrs(cfg.bc))]
        return max(code) if code else self.position(bid)

    def _leaves_function(self, bid: int) -> bool:
        """Does block ``bid`` end in a ``return`` or ``raise`` (a loop's ``else`` that
        leaves the function)?"""
        block = self.blocks.get(bid)
        return block is not None and block.term.kind in ("return", "raise")

    def _returns_named(self, bid: int) -> list[int] | None:
        """The blocks from ``bid`` on when it names a value last and goes on only to the end
        of the ``try`` body or except clause it is in (past empty blocks; a clause's
        ``POP_EXCEPT`` and the clean-up of its name) to return that name there: a
        ``return`` from a loop in the ``try``, its value computed inside the ``try``
        and returned outside its range."""
        block = self.blocks[bid]
        # (after up to two statements of its own, as a tail has: ``n = f(); return n``)
        if block.term.kind != "goto" or not 1 <= len(block.stmts) <= 3 \
                or not isinstance(block.stmts[-1], ast.Assign) \
                or len(block.stmts[-1].targets) != 1:
            return None
        named = block.stmts[-1].targets[0]
        passed = [bid]
        nxt = block.term.targets[0]
        while True:  # (the blocks passed: each entered only from the one before)
            if len(self.preds(nxt)) != 1 or nxt in passed:
                return None
            passed.append(nxt)
            tail = self.blocks[nxt]
            if tail.stmts or tail.term.kind != "goto":
                break
            nxt = tail.term.targets[0]
        stmts = tail.stmts
        value = tail.term.value
        if tail.term.kind == "return" and value is not None \
                and isinstance(named, ast.Name) and isinstance(value, ast.Name) \
                and value.id == named.id and (not stmts or (
                    isinstance(stmts[0], ExcMarker) and stmts[0].kind == "pop_except"
                    and (len(stmts) == 1 or len(stmts) == 3 and is_name_cleanup(stmts, 1)))):
            return passed
        return None

    def _merge_break_targets(self, breaks: set[int], ctx: Ctx,
                             natural_exit: int | None = None) -> set[int]:
        """Several exits where all but one are the same return: keep the real one (not
        where the enclosing construct goes on: a ``with``'s exit is a ``return`` too; nor
        the loop's natural exit that a ``break`` jumps to as well: the code after it)."""
        stops = outer_stops(ctx)
        real = {b for b in breaks if not self._is_tail(b) or b in stops or b == natural_exit}
        return real if len(real) == 1 else breaks

    def _after_its_else(self, f: int, natural_exit: int | None, ctx: Ctx) -> bool:
        """Is the code a loop's break goes to laid out after the loop's ``else``, one that
        ends the function (``for ...: if c: break`` / ``else: return x`` / code after):
        written after the loop, not in it (not a ``return`` alone: the compiler's copy)."""
        return natural_exit is not None and self._leaves_function(natural_exit) \
            and bool(self.blocks[f].stmts) and ctx.clause is None and not ctx.cleanups \
            and self.position(f) > self.position(natural_exit)

    def _after_clause_end(self, bid: int) -> bool:
        """Is block ``bid`` entered only from the end of an except clause (its
        ``POP_EXCEPT``)?"""
        preds = self.preds(bid)
        return bool(preds) and all(
            find_marker(self.blocks[p].stmts, "pop_except") is not None for p in preds)

    def _ends_enclosing_clause(self, bid: int, h: int) -> bool:
        """Does block ``bid`` end an except clause that holds loop ``h`` (its
        ``POP_EXCEPT`` pops no more values than the loop's head is entered with)?"""
        block = self.blocks[bid]
        return find_marker(block.stmts, "pop_except") is not None \
            and len(block.entry) <= len(self.blocks[h].entry)

    def _after_the_clause(self, bid: int) -> bool:
        """Is block ``bid`` the end of an except clause, then a return of a value
        computed after it: the compiler's copy of the code after the ``try`` (3.10)?
        Entered from a loop in the clause (the loop's iterator the only value above the
        clause's), it is where a ``break`` goes, not a return written in the loop."""
        block = self.blocks[bid]
        idx = find_marker(block.stmts, "pop_except")
        return idx is not None and idx == len(block.stmts) - 1 \
            and block.term.kind == "return" \
            and computed_after(block.term.value, block.stmts[idx])

    def _ends_in_a_try_of_the_loop(self, target: int, body: set[int]) -> bool:
        """Is ``target`` code under a ``try`` that starts in the loop (it cannot come
        after the loop) that returns (or raises) on every path, and that only the loop
        reaches: the loop's own code."""
        if not any(not body <= self.protected(x) for x in self.chain(target)):
            return False
        reached = self._reached(target)
        inside = body | reached
        return not reached & body \
            and any(self.blocks[n].term.kind == "return" for n in reached) and all(
                (self._succs(n) or self.blocks[n].term.kind in ("return", "raise", "reraise"))
                and all(p in inside for p in self.preds(n)) for n in reached)

    def _reached(self, start: int, exceptions: bool = False) -> set[int]:
        """The blocks ``start`` reaches (itself too; ``exceptions``: through handlers
        too)."""
        succs = self._esuccs if exceptions else self._succs
        seen: set[int] = set()
        todo = [start]
        while todo:
            n = todo.pop()
            if n not in seen and n in self.blocks:
                seen.add(n)
                todo.extend(succs(n))
        return seen

    def _appended(self, bid: int) -> bool:
        """Is block ``bid`` code that ``tails`` laid out after the function's last
        instruction (the code after a loop whose every way out the compiler copied)?"""
        block = self.blocks.get(bid)
        cfg = self.g.cfg
        first = cfg.blocks.get(block.blocks[0]) if block is not None and block.blocks else None
        instrs = cfg.bc.instrs
        return first is not None and 0 < first.start < len(instrs) \
            and instrs[first.start].offset < instrs[first.start - 1].offset

    def _after_the_loop(self, tail: int, src: int, body: set[int]) -> bool:
        """Is ``tail``, entered from a handler's code ``src`` in a ``while True`` loop,
        laid out after all of the loop's code, its handlers' included: what a ``break``
        goes to, not a ``return`` in the clause (3.12+, where handlers are laid out
        last: the code after the loop that ``tails.share_loop_exits`` gave back)."""
        return find_marker(self.blocks[src].stmts, "pop_except") is not None \
            and self.position(tail) > max(self.position(b) for b in body)

    def _jumped_back_to(self, h: int, body: set[int]) -> bool:
        """Is the test at ``h`` entered again only by jumps back (not a test at the
        loop's end), not all of them ``continue`` statements (a loop whose end is never
        reached has no copy of its test there)? Where the compiler does not copy a
        ``while`` test (3.14): is the way out laid out right after the test?"""
        if not self.layout.copied_loop_tests:
            # (a test at the top only: the way out laid out first, inside the loop, is
            # an ``if``'s arm)
            return self.blocks[h].term.fall not in body
        back = [p for p in self.preds(h) if p in body]
        return bool(back) and not self._rotated(h, back) \
            and not all(written_continue(self.g.cfg, self.blocks[p]) for p in back)

    def _dedup_loop_tests(self) -> bool:
        """Undo the compiler's copy of a ``while`` test at the bottom of the loop.

        A block that only tests, with the same test, targets and handler as the end of
        another block, is the same code: its predecessors can jump to that test instead.
        The test is split off its block so that it becomes the loop header. Whether the
        graph changed.
        """
        changed = False
        # (by targets and handler first: the test's text is made only where those agree)
        tests: dict[tuple[tuple[int, ...], int | None], dict[Key, int]] = {}
        exits: dict[tuple[object, ...], int] = {}

        def ways(targets: list[int]) -> tuple[int, ...]:
            # (3.10 copies a ``with``'s exit and the return after it into both tests'
            # ways out of the loop: copies alike are one way, where the other way is
            # into the body, not a return too: a ``finally``'s copies of an ``if``)
            out = [self._past_jumps(t) for t in targets]
            returns = [k for k, t in enumerate(out) if t in self.blocks
                       and self.blocks[t].term.kind == "return" and self.blocks[t].blocks]
            if len(returns) == 1:
                k = returns[0]
                cfg = self.g.cfg
                code = tuple((i.op, repr(i.argval), i.line) for n in self.blocks[out[k]].blocks
                             for i in cfg.blocks[n].instrs(cfg.bc))
                out[k] = exits.setdefault(code, out[k])
            return tuple(out)
        for bid in sorted(self.blocks):
            block = self.blocks[bid]
            term = block.term
            if term.kind != "branch" or term.test is None or not (
                    passes_under(block) or handler_values(block)):
                continue
            seen = tests.setdefault((ways(term.targets), block.handler_block), {})
            if not seen:
                seen[None] = bid  # (the first: its text when a second one comes)
                continue
            if None in seen:
                self._remember_test(seen, seen.pop(None))
            text = expr_key(term.test)
            first = seen.get(text)
            if first is None:
                self._remember_test(seen, bid)
                continue
            if first < 0:
                # ``if a: while b:``: the test before the loop folded ``a`` and ``b``
                # into one ``a and b``; ``b`` alone is the loop's test
                first = self._split_and(~first, text)
                changed = True
            if handler_values(block) and not (
                    len(self.blocks[first].exit) == len(block.exit) and all(
                        x is y for x, y in zip(self.blocks[first].exit, block.exit,
                                               strict=True))):
                continue  # (a handler's test, under other values)
            head = self._split_test(first)
            self._copied_tests.add(head)
            changed = True
            if block.stmts or block.entry:
                block.term = Term("goto", [head], line=block.term.line)
                continue
            for other in self.blocks.values():
                other.term.targets[:] = [head if t == bid else t for t in other.term.targets]
            del self.blocks[bid]
        return changed

    def _remember_test(self, seen: dict[Key, int], bid: int) -> None:
        """Remember block ``bid``'s test by its text, and each ``and`` that ends it
        (``b`` of ``a and b``) as a test to split off (stored as ``~bid``)."""
        test = self.blocks[bid].term.test
        seen.setdefault(expr_key(cast(ast.expr, test)), bid)  # (a branch's)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
                and not self.blocks[bid].exit:
            for _, text in _and_tails(test.values):
                seen.setdefault(text, ~bid)

    def _split_and(self, bid: int, text: Key) -> int:
        """Split the ``and`` that ends block ``bid``'s test where the rest reads
        ``text``: the rest becomes a test block of its own; return its id."""
        block = self.blocks[bid]
        term = block.term
        assert isinstance(term.test, ast.BoolOp)
        values = term.test.values
        k = next(k for k, tail in _and_tails(values) if tail == text)
        then, other = term.targets
        rest = IRBlock(-1, [], [], [], [], Term(
            "branch", [then, other], test=_and(values[k:]), line=term.line, src=term.src,
            fall=term.fall), block.handler, block.handler_block, [], term.line)
        new_id = self.add_block(rest)
        block.term = Term("branch", [new_id, other], test=_and(values[:k]), line=term.line,
                          src=term.src, fall=new_id if term.fall == then else term.fall)
        return self._split_test(new_id)

    def _past_jumps(self, bid: int) -> int:
        """Where ``bid`` leads past blocks that only jump (3.12+ ends a loop's copied
        test with a jump back of its own, into a ``try`` that starts the body too)."""
        seen = {bid}
        while True:
            block = self.blocks.get(bid)
            if block is None or block.stmts \
                    or not (passes_under(block) or handler_values(block)) \
                    or len(block.exit) != len(block.entry) or block.term.kind != "goto" \
                    or any(x is not y for x, y in zip(block.exit, block.entry, strict=True)):
                return bid
            nxt = block.term.targets[0]
            nb = self.blocks.get(nxt)
            if nxt in seen or nb is None or block.handler_block is not None \
                    and nb.handler_block is not None \
                    and not self._within(nb.handler_block, block.handler_block) \
                    and not self._within(block.handler_block, nb.handler_block):
                # (a jump may enter a try or leave one, the end of a loop in it: not
                # go from one try to another)
                return bid
            seen.add(nxt)
            bid = nxt

    def _within(self, inner: int | None, outer: int) -> bool:
        """Is code under handler ``inner`` also under ``outer`` (the same handler, or one
        whose own code ``outer`` protects)?"""
        seen: set[int] = set()
        while inner is not None and inner != outer and inner not in seen:
            seen.add(inner)
            block = self.blocks.get(inner)
            inner = block.handler_block if block is not None else None
        return inner == outer

    def _rotated(self, h: int, back: list[int]) -> bool:
        """Is ``h`` the body of a ``while`` loop the compiler laid out as ``if c:`` and
        a test ``c`` again at the end (whose copies were not merged): a test before the
        loop goes to ``h`` and the same test jumps back to it (3.12+: through a jump)?"""
        def text(p: int) -> Key:
            term = self.blocks[p].term
            return expr_key(term.test) \
                if term.kind == "branch" and term.test is not None else None

        before = {text(p) for p in self.preds(h) if p not in back} - {None}
        if not before:
            return False
        tests = list(back)
        for p in back:
            if not self.blocks[p].stmts and self.blocks[p].term.kind == "goto":
                tests.extend(self.preds(p))
        return any(text(p) in before for p in tests)


def outer_stops(ctx: Ctx) -> set[int | None]:
    """Where the enclosing constructs go on: code there is not a loop's own."""
    return {ctx.follow} | ({ctx.loop.cont, ctx.loop.follow} if ctx.loop else set())


_TAILS = 8  # the ``and`` tails of a test tried as a loop's copied test


def _and_tails(values: list[ast.expr]) -> list[tuple[int, Key]]:
    """Where an ``and`` of ``values`` may be cut, with the text of the rest: the last
    few only (a while test of a few terms, not every tail of a long ``and``, which would
    cost the square of its length)."""
    return [(k, expr_key(_and(values[k:])))
            for k in range(max(1, len(values) - _TAILS), len(values))]


def _and(values: list[ast.expr]) -> ast.expr:
    return values[0] if len(values) == 1 else ast.BoolOp(op=ast.And(), values=values)
