"""From IR blocks to structured statements: if/elif/else, loops, try, with.

The structurer walks the IR graph from its entry. Each construct is recognised
from graph facts, not from code layout:

* loops are natural loops (a back edge to a dominating header); a ``FOR_ITER``
  header makes a ``for``, a header that only tests makes a ``while``, anything else
  ``while True``; jumps to the header are ``continue``, jumps to the loop's follow
  ``break``, and a second exit becomes the ``else`` clause;
* an ``if`` ends at the immediate post-dominator of its test inside the enclosing
  region (loop body, try body or function);
* a block protected by a new exception handler opens a ``try`` (or a ``with``, when
  the handler calls ``__exit__``); statements the compiler copies onto every exit of
  a construct (a ``finally`` body, the ``__exit__`` call, the clean-up of an
  ``except ... as name``) are matched and removed where they appear.

Anything that fits none of these raises :class:`Unstructurable`; the caller then
falls back to a state machine, which is always correct.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from ..graph.regions import (
    EXIT,
    dominates,
    dominators,
    natural_loops,
    postdominators,
    reverse_postorder,
)
from ..ir.blocks import IRBlock, IRGraph, Term
from ..ir.exprs import Iterator, Shared, Slot, Special, negate, operator_flips
from ..ir.facts import attach
from ..ir.markers import ExcMarker
from .base import (
    MAX_VISITS,
    STRUCTURAL,
    Ctx,
    Loop,
    Unstructurable,
    assign_slots,
    exit_called,
    find_marker,
    has_unassigned,
    is_eg_collect,
    is_name_cleanup,
    is_next_store,
    none_to_missing,
    slot_store,
    strip_cleanups,
    strip_prefix,
)
from .clause_exits import ClauseExits
from .clauses import Clauses
from .ifs import IfEnds
from .loops import LoopExits, outer_stops
from .written import (
    back_kept,
    continue_before_cleanup,
    dead_jump_flat,
    else_pass,
    exit_position,
    implicit_return,
    layout_merge,
    written_continue,
    written_else,
    written_jump,
    written_pass,
    written_return,
)

if TYPE_CHECKING:
    from .uses import Provided
else:
    Provided = object  # (a declaration for type checkers: no base at run time)


class Structurer(LoopExits, IfEnds, Clauses, ClauseExits, Provided):
    """Turns one IR graph into structured statements (see the module docstring).

    It owns the graph while it works: the blocks (it splits and adds some), the
    dominator tree and natural loops of the effective successors (exception edges
    included), post-dominators per region, and which blocks are the compiler's
    machinery (clean-ups, ``finally`` copies) rather than the program's. :meth:`run`
    returns the statements or raises :class:`Unstructurable`."""

    def __init__(self, graph: IRGraph, *, returns_in_place: bool = False) -> None:
        self.g = graph
        self.layout = graph.cfg.bc.layout
        # a return of a constant that leaves a try body (the compiler copies them) is a
        # ``return`` written there, not the code after the statement (the second reading,
        # tried where the first does not structure)
        self.returns_in_place = returns_in_place
        self._handler_depths = {}
        self.blocks: dict[int, IRBlock] = dict(graph.blocks)
        self.entry = graph.entry
        self._next_id = max(self.blocks) + 1 if self.blocks else 0
        self._split: dict[int, int] = {}
        self._split_of: dict[int, int] = {}  # (the other way)
        self._copied_tests: set[int] = set()  # tests the compiler copied to a loop's end
        self._rpo: dict[int, int] | None = None
        self._protected: dict[int, frozenset[int]] = {}
        self._empty_by_chain: dict[tuple[int, ...], set[int]] = {}
        self._regions_key: tuple[int, int] = (-1, -1)
        self._effective: dict[int, int | None] = {}
        self._machinery: dict[int, int] = {}
        self._tests_that_pass()
        ways = self._ways()
        self._index_ways(ways)
        # (first: a loop's jump back may be a hole of its range)
        changed = self._absorb_holes()
        if self._dedup_loop_tests() or changed:
            ways = self._ways()
            changed = True
        if self._drop_unreached(ways) or changed:  # (else the edges are those indexed)
            self._index_ways(ways)
        self.forget_regions()
        ways.setdefault(self.entry, [])  # (where there are no blocks: hand-made bytecode)
        esuccs = ways.__getitem__
        self.idom = dominators(self.entry, esuccs)
        self.loops = natural_loops(self.entry, esuccs, self._epreds.__getitem__, self.idom)
        for bid, block in self.blocks.items():
            if block.term.kind == "for" and bid not in self.loops and bid in self.idom:
                body_start = block.term.targets[0]
                self.loops[bid] = {bid} | {n for n in self.idom
                                           if dominates(self.idom, body_start, n)}
        # (the blocks each loop's body gained that way: returns in the loop)
        self._loop_tails: dict[int, set[int]] = {}
        for header, body in self.loops.items():
            before = set(body)
            self._add_tails(header, body)
            self._loop_tails[header] = body - before
        self._postdoms: dict[frozenset[int], dict[int, int]] = {}
        self.visits: dict[int, int] = {}

    # ------------------------------------------------------------ graph preparation

    def _drop_unreached(self, ways: dict[int, list[int]]) -> bool:
        """Forget the blocks nothing reaches any more (the jumps back of a loop test's
        copy, once the copy goes to the test itself), from :meth:`_ways` ``ways`` too (a
        block kept has the same: all its successors are reached); whether any."""
        seen: set[int] = set()
        todo = [self.entry]
        while todo:
            if (n := todo.pop()) not in seen and n in ways:
                seen.add(n)
                todo.extend(ways[n])
        if len(seen) == len(self.blocks):
            return False  # (``seen`` holds only blocks: all of them)
        for bid in [b for b in self.blocks if b not in seen]:
            del self.blocks[bid]
            del ways[bid]
        return True

    def _split_test(self, bid: int) -> int:
        """Give the test that ends block ``bid`` a block of its own; return its id."""
        block = self.blocks[bid]
        if not block.stmts and len(block.exit) == len(block.entry) and all(
                x is y for x, y in zip(block.exit, block.entry, strict=True)):
            return bid  # (a test alone, the values under it passing through: a with's exit)
        if bid in self._split:
            return self._split[bid]
        test_block = IRBlock(-1, [], [], [], [], block.term, block.handler,
                             block.handler_block, [], block.term.line)
        new_id = self.add_block(test_block)
        block.term = Term("goto", [new_id], line=block.term.line)
        self._split[bid] = new_id
        self._split_of[new_id] = bid
        return new_id

    # ------------------------------------------------------------ graph helpers

    def _index_preds(self) -> None:
        self._index_ways(self._ways())

    def _ways(self) -> dict[int, list[int]]:  # (each block's :meth:`_esuccs`)
        return {b: self._esuccs(b) for b in self.blocks}

    def _index_ways(self, ways: dict[int, list[int]]) -> None:
        """Index each block's predecessors from ``ways``, every block's :meth:`_ways`."""
        self._epreds: dict[int, list[int]] = {b: [] for b in ways}
        for bid, out in ways.items():
            for s in out:
                if s in self._epreds:
                    self._epreds[s].append(bid)

    def _succs(self, bid: int) -> list[int]:
        block = self.blocks.get(bid)  # (None: merged away by merge_copies)
        return [] if block is None else [t for t in block.term.targets if t in self.blocks]

    def _esuccs(self, bid: int) -> list[int]:
        block = self.blocks.get(bid)
        if block is None:
            return []
        out = [t for t in block.term.targets if t in self.blocks]
        if block.handler_block is not None and block.handler_block in self.blocks:
            out.append(block.handler_block)
        return out

    def preds(self, bid: int) -> list[int]:
        return [p for p in self._epreds.get(bid, []) if bid in self._succs(p)]

    def add_block(self, block: IRBlock) -> int:
        bid = self._next_id
        self._next_id += 1
        block.id = bid
        self.blocks[bid] = block
        return bid

    # ------------------------------------------------------------ handlers

    def is_transparent(self, bid: int) -> bool:
        """A handler that only restores the exception state and re-raises."""
        block = self.blocks.get(bid)
        if block is None:
            return False
        if is_eg_collect(block):
            # an ``except*`` clause body's handler: what it raises is collected and
            # raised at the end of the statement, as the clause itself says
            return True
        if block.term.kind != "reraise":
            return False
        stmts = block.stmts
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, ExcMarker) and s.kind == "pop_except":
                i += 1
                continue
            if is_name_cleanup(stmts, i):
                i += 2
                continue
            return False
        return True

    def effective_handler(self, bid: int) -> int | None:
        if bid in self._effective:
            return self._effective[bid]
        h = self.blocks[bid].handler_block
        seen = set()
        while h is not None and h in self.blocks and self.is_transparent(h) and h not in seen:
            seen.add(h)
            h = self.blocks[h].handler_block
        if h is not None and h not in self.blocks:
            h = None
        self._effective[bid] = h
        return h

    def _raw_chain(self, bid: int) -> list[int]:
        """The handlers around ``bid``, innermost first, transparent ones included."""
        out: list[int] = []
        h = self.blocks[bid].handler_block
        while h is not None and h in self.blocks and h not in out:
            out.append(h)
            h = self.blocks[h].handler_block
        return out

    def _next_try(self, bid: int, ctx: Ctx) -> int | None:
        """The handler of the outermost ``try`` around ``bid`` not open in ``ctx``."""
        chain = self.chain(bid)
        k = chain.index(ctx.handler) if ctx.handler in chain else len(chain)
        return chain[k - 1] if k else None

    def chain(self, bid: int) -> list[int]:
        out: list[int] = []
        h = self.effective_handler(bid)
        while h is not None and h not in out:
            out.append(h)
            h = self.effective_handler(h)
        return out

    def protected(self, handler: int) -> frozenset[int]:
        """The blocks ``handler`` protects (it is in their chain). Every handler's set is
        made in one pass over the blocks, again when blocks were added or removed or
        handlers changed (one pass per handler made this quadratic in the code's size)."""
        self._fresh_regions()
        if not self._protected:
            regions: dict[int, set[int]] = {}
            empty: dict[tuple[int, ...], set[int]] = {}
            for b, block in self.blocks.items():
                chain = self.chain(b)
                for h in chain:
                    regions.setdefault(h, set()).add(b)
                if not block.stmts:
                    empty.setdefault(tuple(chain), set()).add(b)
            self._protected = {h: frozenset(r) for h, r in regions.items()}
            self._empty_by_chain = empty
        return self._protected.get(handler, frozenset())

    def _fresh_regions(self) -> None:
        key = (self._next_id, len(self.blocks))
        if key != self._regions_key:
            self._regions_key = key
            self._protected.clear()

    def forget_regions(self) -> None:
        """Handlers changed: chains and protected regions are made again when asked."""
        self._effective.clear()
        self._protected.clear()

    def _absorb_holes(self) -> bool:
        """Blocks 3.12+ leaves out of a protected range inside it (:meth:`_holes`) go to
        its handler (they cannot raise: the body is one region again); whether any."""
        handlers = sorted({b.handler_block for b in self.blocks.values()
                           if b.handler_block is not None and b.handler_block in self.blocks})
        # (outer ranges first: a hole of an inner range is in the outer one too)
        handlers.sort(key=lambda h: -len(self.protected(h)))
        changed = False
        for h in handlers:
            holes = self._holes(set(self.protected(h)), h)
            for bid in holes:
                self.blocks[bid].handler_block = h
            if holes:
                self.forget_regions()
                changed = True
        return changed

    def _holes(self, region: set[int], handler: int) -> set[int]:
        """3.12+ leaves instructions that cannot raise out of the protected ranges: a
        test's jump, a loop's jump back, its exit's iterator pop. Blocks without
        statements, entered only from the region (or each other), that go back into it
        or end a ``for`` loop begun in it, are part of the body."""
        if not region:
            return set()
        chain = self.chain(next(iter(region)))
        outer = chain[chain.index(handler) + 1:]  # the handlers around the statement
        depths = {self.blocks[b].handler.depth for b in region  # type: ignore[union-attr]  # (if)
                  if self.blocks[b].handler_block == handler and self.blocks[b].handler}
        if len(depths) != 1 or min(depths) < 0:  # (< 0: hand-made bytecode)
            return set()
        (depth,) = depths

        def keeps_stack(block: IRBlock) -> bool:
            # the values the handler would find stay as they are
            return len(block.entry) >= depth and len(block.exit) >= depth and all(
                x is y for x, y in zip(block.entry[:depth], block.exit[:depth], strict=True))

        self.protected(handler)  # (indexes the blocks without statements by chain)
        empty = self._empty_by_chain.get(tuple(outer), set())  # (not copied: linear)
        # (a hole is entered from the region, or from holes that are: walk from there)
        holes: set[int] = set()
        todo = [x for b in region for x in self._succs(b)]
        while todo:
            bid = todo.pop()
            if bid in empty and bid not in holes and bid not in region and bid != handler \
                    and keeps_stack(self.blocks[bid]):
                holes.add(bid)
                todo.extend(self._succs(bid))
        changed = True
        while changed:
            changed = False
            inside = region | holes
            for bid in list(holes):
                preds = self.preds(bid)
                succs = self._succs(bid)
                loop_exit = len(preds) == 1 and preds[0] in inside \
                    and self.blocks[preds[0]].term.kind == "for" \
                    and self.blocks[preds[0]].term.targets[-1] == bid \
                    and self.blocks[bid].term.kind == "goto"  # (not the return after it)
                if not preds or not all(p in inside for p in preds) or not (
                        loop_exit or succs and all(x in inside for x in succs)) \
                        or self._jump_back_after_statement(bid, region):
                    holes.discard(bid)
                    changed = True
        # an arm's jump to the join after the statement (``if`` in a ``try`` body), left
        # out of the range, when another block of the region goes to that join itself

        def passes(block: IRBlock) -> bool:  # the stack goes through as it came
            return len(block.entry) == len(block.exit) and all(
                x is y for x, y in zip(block.entry, block.exit, strict=True))

        inside = region | holes
        joins = {x for b in inside for x in self._succs(b) if x not in inside}
        for bid in joins & empty:
            block = self.blocks[bid]
            if bid != handler and block.term.kind == "goto" and passes(block) \
                    and block.term.targets[0] in joins \
                    and all(p in inside for p in self.preds(bid)) \
                    and any(bid not in self._succs(b) and block.term.targets[0] in
                            self._succs(b) for b in inside):
                holes.add(bid)
        return holes

    def _jump_back_after_statement(self, bid: int, region: set[int]) -> bool:
        """Is ``bid`` a bare jump back into ``region`` that the end of its code falls
        into (no test)? A loop's jump back under a ``try`` is protected unless the loop
        tests at its end (3.12+): one left out comes after the statement, ``while True:
        try: ...``."""
        block = self.blocks[bid]
        head = block.term.targets[0]
        if block.term.kind != "goto" or head > bid or head not in region:
            return False
        # (a test whose other way stays in the loop is an inner loop's, or an ``if``'s:
        # the loop's own test at its end leaves it the other way)
        return all(self.blocks[p].term.kind == "goto" or self.blocks[p].term.kind == "branch"
                   and all(head <= t < bid for t in self.blocks[p].term.targets if t != bid)
                   for p in self.preds(bid))

    # ------------------------------------------------------------ driving

    def run(self) -> list[ast.stmt]:
        region = frozenset(self.idom)
        return self.seq(self.entry, Ctx(region=region))

    def visit(self, bid: int) -> IRBlock:
        n = self.visits.get(bid, 0) + 1
        self.visits[bid] = n
        if n > MAX_VISITS:
            raise Unstructurable(f"block {bid} emitted too often")
        block = self.blocks.get(bid)
        if block is None:  # (hand-made bytecode: a handler's chain leads nowhere)
            raise Unstructurable(f"no block {bid}")
        return block

    def seq(self, start: int | None, ctx: Ctx, *, at_header: bool = False,
            strip: list[ast.stmt] | None = None, skip_stmts: int = 0) -> list[ast.stmt]:
        """Statements from ``start`` until ``ctx.follow`` (or an exit)."""
        out: list[ast.stmt] = []
        b = start
        first = True
        while b is not None:
            if b == ctx.follow and not (first and at_header):
                break
            if b == EXIT or b not in self.blocks:
                raise Unstructurable("jump outside the function")
            loop = ctx.loop
            if loop is not None and not (first and at_header):
                # (past blocks outside the region that only jump on: ``else: break``)
                to = b if b in ctx.region else self.through(b)
                if to == loop.cont:
                    self.exit_stmt(out, ast.Continue(), ctx)
                    break
                if to == loop.follow and to != ctx.follow:
                    self.exit_stmt(out, ast.Break(), ctx)
                    break
            if b not in ctx.region:
                raise Unstructurable(f"block {b} outside its region")
            eh = self.effective_handler(b)
            # (the try to open first: the outermost not open yet)
            opens = self._next_try(b, ctx) if b in self.loops else eh
            # (the loop's own blocks: a return in it leaves the try through a copy of
            # its ``finally``, which is not protected)
            loop_first = b in self.loops and eh is not None and opens is not None \
                and (opens in self.loops[b] or not self.loops[b] - self._loop_tails[b]
                     <= self.protected(opens)) \
                and self.handler_kind(eh) != "async_for" \
                and not (first and at_header) and (loop is None or loop.header != b)
            if eh != ctx.handler and b not in ctx.tails and not loop_first:
                # a try around a loop starts before the loop (one whose handler is in the
                # loop, or that does not hold the whole loop, is inside it: ``while True:
                # try: ...``)
                b = self.try_stmt(b, eh, ctx, out)
                first = False
                continue
            if b in self.loops and not (first and at_header) \
                    and (loop is None or loop.header != b):
                b = self.loop_stmt(b, ctx, out)
                first = False
                continue
            block = self.visit(b)
            stmts = block.stmts[skip_stmts:] if first else block.stmts
            if first and strip is not None:
                stmts = strip_prefix(stmts, strip)
            if ctx.clause is not None:
                idx = find_marker(stmts, "pop_except")
                if idx is not None:
                    out.extend(stmts[:idx])
                    self.clause_exit(block, stmts, idx, ctx, out)
                    break
            out.extend(stmts)
            first = False
            term = block.term
            if term.kind == "goto":
                b = self.edge(b, term.targets[0], ctx, out)
            elif term.kind == "branch":
                b = self.if_stmt(b, ctx, out)
            elif term.kind == "return":
                ret = attach(ast.Return(value=none_to_missing(term.value)),
                             position=exit_position(self.g.cfg, block))
                if ret.value is None and (written_return(self.g.cfg, block)
                                          or b in ctx.tails and block.stmts):
                    # (a return through a clean-up's copy is the source's own)
                    attach(ret, explicit=True)
                elif ret.value is None and implicit_return(self.g.cfg, block):
                    attach(ret, implicit=True)
                self.exit_stmt(out, ret, ctx)
                b = None
            elif term.kind == "raise":
                self.exit_stmt(out, attach(ast.Raise(exc=term.value, cause=term.cause),
                                           position=exit_position(self.g.cfg, block)),
                               ctx, cleanup=False)
                b = None
            elif term.kind == "reraise":
                out.append(ast.Raise(exc=None, cause=None))
                attach(out[-1], reraise_of=term.value)
                b = None
            else:
                raise Unstructurable(f"terminator {term.kind} outside its construct")
        return out

    # ------------------------------------------------------------ edges and exits

    def through(self, dst: int, stop: int | None = None) -> int:
        """Follow blocks that only jump on (each ``break`` of a loop has its own jump),
        not past ``stop``."""
        seen = {dst}
        while True:
            block = self.blocks.get(dst)
            if block is None or block.stmts or block.term.kind != "goto" or dst == stop:
                return dst
            nxt = block.term.targets[0]
            if nxt in seen or nxt not in self.blocks or self.slot_assignments(dst, nxt):
                return dst
            h = self.effective_handler(dst)
            if h != self.effective_handler(nxt) and not (
                    h is not None and self.handler_kind(h) == "with"):
                return dst  # (an empty jump out of a with body only leaves the with)
            seen.add(nxt)
            dst = nxt

    def _into_tail(self, bid: int, ctx: Ctx) -> bool:
        """Is ``bid`` (or the block an empty jump there leads to) an exit tail of an
        enclosing construct (a ``return`` inside ``try``/``with`` finishing there)?"""
        if bid in ctx.tails:
            return True
        block = self.blocks.get(bid)
        # (or only the exits of ``with`` statements in the loop first: a return from one;
        # or the value returned, computed before the ``finally``'s copy that returns it:
        # ``return f()``, the value handed on on the stack)
        if block is None or block.term.kind != "goto" or block.term.targets[0] not in ctx.tails:
            return False
        tail = self.blocks[block.term.targets[0]]
        return all(exit_called(s, False) is not None for s in block.stmts) \
            or len(self.preds(bid)) == 1 and tail.term.kind == "return" \
            and len(tail.entry) > len(block.entry)

    def _hops(self, dst: int, end: int) -> list[int]:
        """The blocks :meth:`through` passes from ``dst`` to ``end``, ``end`` included."""
        out = [dst]
        while dst != end:
            dst = self.blocks[dst].term.targets[0]
            out.append(dst)
        return out

    def edge(self, src: int, dst: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        """Assign the target's entry slots, then say where the sequence continues."""
        out.extend(self.slot_assignments(src, dst))
        loop = ctx.loop
        if loop is not None and dst not in ctx.region and dst != ctx.follow:
            beyond = self.through(dst, stop=loop.follow)
            if beyond in (loop.cont, loop.follow):
                if not self.slot_assignments(src, dst):
                    dst = beyond
            elif loop.follow is not None and dst != loop.follow \
                    and beyond == self.through(loop.follow) \
                    and not self.slot_assignments(src, dst):
                dst = loop.follow  # (a break (straight) to where the loop's exit jumps on)
        loop = ctx.loop
        if loop is not None:
            if dst == loop.cont:
                term = self.blocks[src].term
                stmt = ast.Continue()
                if term.kind == "goto" and term.back and term.targets[0] == dst \
                        and self.blocks[loop.header].term.kind != "branch" \
                        and not self._shared_jump(src) and self._own_continue(src):
                    attach(stmt, explicit=True)  # (kept at the end of an except clause)
                if term.kind == "goto" and written_continue(self.g.cfg, self.blocks[src]):
                    attach(stmt, written=True, back_kept=back_kept(self.g.cfg, self.blocks[src]))
                self.exit_stmt(out, stmt, ctx)
                return None
            if dst == loop.follow and dst != ctx.follow:
                self.exit_stmt(out, ast.Break(), ctx)
                return None
        if dst == ctx.follow:
            return None
        if dst not in ctx.region:
            follow = self.blocks.get(ctx.follow) if ctx.follow is not None else None
            if follow is not None and not follow.stmts and follow.term.kind == "goto" \
                    and follow.term.targets[0] == dst and not self.slot_assignments(src, dst):
                return None  # (where the follow, an empty jump, goes: 3.13 copies it)
            raise Unstructurable(f"jump from {src} to {dst} leaves its region")
        return dst

    def _own_continue(self, src: int) -> bool:
        """Is the jump back that ends ``src`` a ``continue`` statement's, where positions
        tell (3.11+): its own, or one before the copy of a ``finally`` clause?"""
        cfg = self.g.cfg
        block = self.blocks[src]
        jump = cfg.blocks[block.blocks[-1]].last(cfg.bc) if block.blocks else None
        where = cfg.bc.position(jump) if jump is not None else None
        return where is None or where[0] is None or written_continue(cfg, block) \
            or continue_before_cleanup(cfg, block)

    def _shared_jump(self, src: int) -> bool:
        """Is ``src`` a jump alone that several ways reach (the end of a loop's body,
        not a construct's own jump back)?"""
        block = self.blocks[src]
        if block.stmts or len(block.blocks) != 1:
            return False
        first = self.g.cfg.blocks.get(block.blocks[0])
        return first is not None and len(first.preds) > 1

    def slot_assignments(self, src: int, dst: int) -> list[ast.stmt]:
        target = self.blocks.get(dst)
        source = self.blocks[src]
        if target is None:
            return []
        stack = source.exit
        if source.term.kind == "for" and dst == source.term.targets[1]:
            stack = stack[:-1]
        entry = target.entry
        pairs = []
        below = self._machinery.get(dst, 0)  # an except* statement's own stack values
        for k, slot in enumerate(entry):
            if isinstance(slot, Slot) and below <= k < len(stack):
                value = stack[k]
                if isinstance(value, Slot) and value.index == slot.index:
                    continue
                if isinstance(value, Special) and value.kind in STRUCTURAL:
                    continue  # consumed by the construct itself (handler, with, loop)
                if self.is_for_iterator_edge(src, dst, k):
                    continue
                pairs.append((slot, value))
        if not pairs:
            return []
        reads = {id(s) for _, v in pairs for s in ast.walk(v) if isinstance(s, Slot)}
        written = {p[0].index for p in pairs}
        conflict = any(isinstance(s, Slot) and s.index in written
                       for _, v in pairs for s in ast.walk(v))
        del reads
        if conflict and len(pairs) > 1:
            return [assign_slots(pairs)]
        return [ast.Assign(targets=[slot_store(s)], value=v) for s, v in pairs]

    def is_for_iterator_edge(self, src: int, dst: int, k: int) -> bool:
        """The iterator a ``for``/``async for`` header receives from before the loop (the
        loop statement itself evaluates it)."""
        block = self.blocks[dst]
        if k != len(block.entry) - 1 or dst not in self.loops or src in self.loops[dst]:
            return False
        if block.term.kind == "for":
            return True
        h = self.effective_handler(dst)
        return h is not None and self.blocks[h].term.kind == "end_async_for"

    def exit_stmt(self, out: list[ast.stmt], stmt: ast.stmt, ctx: Ctx,
                  cleanup: bool = True) -> None:
        """Append a return/break/continue, removing the clean-up copies before it."""
        if cleanup:
            if isinstance(stmt, ast.Return):
                active = ctx.cleanups
            else:
                active = ctx.cleanups[ctx.loop_cleanups:]
            strip_cleanups(out, active, stmt)
        out.append(stmt)

    # ------------------------------------------------------------ if

    def ipdom(self, bid: int, ctx: Ctx) -> int:
        region = ctx.region
        table = self._postdoms.get(region)
        if table is None:
            loop = ctx.loop
            header = loop.header if loop is not None and loop.header in region else None
            dead = self.g.cfg.dead_jumps

            def succs(n: int) -> list[int]:
                out = self._succs(n)
                if header in out:
                    out = [-2 if s == header else s for s in out]
                to = dead.get(self.blocks[n].blocks[-1]) if dead else None  # (3.8/3.9:
                if to is not None and to in self.blocks:  # where a raise's statement goes on)
                    out = [-2 if to == header else to]
                return out

            table = postdominators({b for b in region if b in self.blocks}, succs)
            self._postdoms[region] = table
        return table.get(bid, EXIT)

    def if_stmt(self, b: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        block = self.blocks[b]
        then_t, else_t = block.term.targets
        test = block.term.test
        assert test is not None
        merge = self.ipdom(b, ctx)
        if merge == EXIT or merge not in ctx.region:
            merge = self.common_successor(b, then_t, else_t, ctx)
        if ctx.clause is not None and merge != EXIT and merge in ctx.region \
                and not self._inside_clause(then_t, merge, ctx) \
                and not self._inside_clause(else_t, merge, ctx):
            merge = EXIT  # (the arms meet after leaving the except clause: each leaves it)
        if merge == EXIT or merge not in ctx.region:
            merge = self._jumped_over(b, then_t, else_t, ctx)
        if merge == EXIT or merge not in ctx.region:  # (3.8/3.9: as their dead code says)
            merge = layout_merge(self.g.cfg, self.blocks, b, ctx, self._arm_reach, self.idom)
        if merge == EXIT or merge not in ctx.region:
            merge_follow: int | None = ctx.follow
            next_block = None
        else:
            merge_follow = merge
            next_block = merge
        as_tested = True
        if block.term.fall == else_t and then_t != else_t:
            # the compiler lays the ``if`` body out right after the test
            test = negate(test, self.layout.folded_not_tests)
            then_t, else_t = else_t, then_t
            as_tested = False
        sub = ctx.following(merge_follow)
        then_body = self.branch(b, then_t, sub)
        else_body = self.branch(b, else_t, sub)
        passed = as_tested and (written_pass(self.g.cfg, self.blocks.get(then_t), block)
                                or written_jump(self.g.cfg, self.blocks.get(then_t), block, 4))
        if not then_body and else_body and not passed:
            test = negate(test, self.layout.folded_not_tests)
            then_body, else_body = else_body, []
            as_tested = False
        elif not as_tested and then_body and not else_body \
                and operator_flips(cast(ast.expr, block.term.test), self.layout.folded_not_tests) \
                and not isinstance(then_body[-1], ast.Raise):  # (nor ``assert a in b``)
            test = cast(ast.expr, block.term.test)  # (``if a in b: pass`` / ``else:``, as written)
            then_body, else_body = [], then_body
            as_tested = passed = True
        then_body = then_body or [ast.Pass()]
        if not else_body and self.layout.dead_code and else_pass(self.g.cfg, self.blocks, b, merge):
            else_body = [ast.Pass()]  # (3.8/3.9: ``else: pass``, the jump over it kept)
        node = ast.If(test=test, body=then_body, orelse=else_body)
        attach(node, line=block.term.line)
        cfg = self.g.cfg
        if else_body and self.layout.dead_code:
            arms = [self._arm_reach(b, t, ctx) | ({t} - {merge, ctx.follow}) & self.blocks.keys()
                    for t in self.blocks[b].term.targets]  # (a break leaving: not in its arm)
            if written_else(cfg, self.blocks, b, merge, arms):
                attach(node, written_else=True)
            elif dead_jump_flat(cfg, self.blocks, b):
                attach(node, written_flat=True)
        elif self.layout.dead_code and dead_jump_flat(cfg, self.blocks, b):
            attach(node, written_flat=True)  # (what follows is not its ``else``)
        if as_tested and len(then_body) == 1 and isinstance(then_body[0], ast.Continue) \
                and (written_jump(self.g.cfg, self.blocks.get(then_t), block, 8)
                     or operator_flips(test, self.layout.folded_not_tests)) or passed:
            # (``if a is None: continue``: the compiler folds ``not (a is None)``)
            attach(node, as_tested=True)
        out.append(node)
        if next_block is not None and next_block == ctx.follow:
            return None
        return next_block

    def _inside_clause(self, start: int, target: int, ctx: Ctx) -> bool:
        """Does ``start`` reach ``target`` inside the except clause it is in (not through
        the clause's end, its ``POP_EXCEPT``)?"""
        seen: set[int] = set()
        todo = [start]
        while todo:
            n = todo.pop()
            if n == target:
                return True
            if n in seen or n not in ctx.region or n not in self.blocks:
                continue
            seen.add(n)
            if find_marker(self.blocks[n].stmts, "pop_except") is None:
                todo.extend(self._succs(n))
        return False

    def _rpo_index(self) -> dict[int, int]:
        if self._rpo is None:
            self._rpo = {n: i for i, n in enumerate(reverse_postorder(self.entry, self._esuccs))}
        return self._rpo

    def branch(self, src: int, dst: int, ctx: Ctx) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        nxt = self.edge(src, dst, ctx, out)
        if nxt is not None:
            out.extend(self.seq(nxt, ctx))
        return out

    # ------------------------------------------------------------ loops

    def loop_stmt(self, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        body = self.loops[h] | self._loop_handlers(h, self.loops[h], ctx)
        block = self.blocks[h]
        term = block.term
        natural_exit: int | None = None
        body_start = h
        kind = "while_true"
        if term.kind == "for":
            body_start, natural_exit = term.targets
            kind = "for"
        elif term.kind == "branch" and not block.stmts and not has_unassigned(block):
            t, e = term.targets
            # (the compiler writes a ``while`` test twice, the copy at the loop's end:
            # a test only at the top is an ``if`` of ``while True:``)
            if h not in self._copied_tests and self._jumped_back_to(h, body):
                pass
            elif t in body and e not in body:
                body_start, natural_exit, kind = t, e, "while"
            elif e in body and t not in body:
                body_start, natural_exit, kind = e, t, "while_not"
        natural = set(body)
        breaks: set[int] = set()
        ends: set[int] = set()  # raise/return tails left from the body: written in place
        for n in body:
            for s in self._succs(n):
                if s in body:
                    continue
                if n == h and s == natural_exit:
                    continue
                # (not past where the enclosing statement ends: the ``break`` after an
                # ``if`` that holds this loop, 3.10 and 3.11, is that ``if``'s join)
                target = self.through(s, stop=ctx.follow)
                named: list[int] | None = None  # (a return from a try's range)
                if target != natural_exit and (self.chain(n) == self.chain(target)
                                               or self._returns_in_loop(target)) and (
                        self.blocks[target].term.kind in ("raise", "reraise")
                        or (self._is_tail(target)
                            or (named := self._returns_named(target)) is not None)
                        and len(self.preds(target)) == 1
                        and not self._after_its_else(target, natural_exit, ctx)
                        and not (s != target and written_jump(
                            self.g.cfg, self.blocks[s], self.blocks[n], 5))  # (``break``)
                        and not self._after_the_loop(target, n, body)):
                    # (from inside a try in the loop it is a ``break``: the try ends first)
                    ends.update(self._hops(s, target))  # with the jumps that lead there
                    ends.update(named or ())
                    continue
                if target != natural_exit and self._ends_in_a_try_of_the_loop(target, body):
                    ends.update(self._hops(s, target))
                    ends.update(self._reached(target))
                    continue
                if self._into_tail(target, ctx):
                    # a return that finishes an enclosing try/with (with the jumps that
                    # lead there)
                    ends.update(self._hops(s, target))
                    if target not in ctx.tails:
                        ends.add(self.blocks[target].term.targets[0])
                    continue
                breaks.add(target)
        if natural_exit is not None and len(breaks) == 1 and natural_exit != ctx.follow \
                and self.through(natural_exit) in breaks:
            natural_exit = self.through(natural_exit)
        elif natural_exit is not None and len(breaks) > 1 and natural_exit != ctx.follow \
                and (beyond := self.through(natural_exit)) in breaks and beyond != natural_exit:
            # (breaks that jump on through the loop's end, and code before one that goes
            # there: 3.10's ``while`` ending a ``for`` body)
            breaks = breaks - {beyond} | {natural_exit}
        if breaks and natural_exit is None:
            breaks = self._break_code_laid_inside(body, breaks, ctx)
        if len(breaks) > 1:
            breaks = self._join_of_exits(body, breaks, ctx)
        elif breaks and natural_exit is not None and natural_exit not in breaks:
            # a break whose own code goes on to where the loop ends anyway (``if c:
            # f(); break``; a finally's copy on the way out): that code is the loop's,
            # and there is no ``else``
            trial, own, other = set(body), set(body), set(body)
            joined = self._join_of_exits(trial, breaks | {natural_exit}, ctx)
            beyond = self.through(natural_exit)
            hops = set(self._hops(natural_exit, beyond))
            if joined == {natural_exit} or joined == {beyond} != {natural_exit} and max(
                    max(self.blocks[n].blocks or [n]) for n in trial - body - hops) \
                    < max(self.position(n) for n in body):
                # (3.12+: the natural exit's own jump on to the join, the head of an
                # enclosing loop, which no conditional jump can go back to; the break's
                # code laid out in the loop, not after it: ``else: continue``)
                body |= trial - hops
                breaks = {natural_exit}
            elif (join := self._join_of_exits(own, set(breaks), ctx)) != breaks \
                    and max(max(self.blocks[n].blocks or [n]) for n in own - body) \
                    < self.position(natural_exit) \
                    and (self._join_of_exits(other, {natural_exit}, ctx) == join
                         or {self.through(j) for j in join} <= outer_stops(ctx)):
                # ``if c: f(); break`` laid out in the loop, and an ``else`` whose code
                # goes on to the same block (the compiler's jump there from the break,
                # given back by tails), or where the enclosing construct goes on
                body |= own
                breaks = join
            elif (laid := self._break_code_laid_inside(trial := set(body), breaks, ctx,
                                                       natural_exit)) != breaks:
                # (break code laid out in the loop, before its else: ``if c: if d: f();
                # break``, ``if c: x = a[i]; break``)
                body |= trial
                breaks = laid
            else:
                breaks = self._break_code_inside(h, body, breaks, natural_exit, ctx)
            breaks = self._break_through_jumps(body, breaks, natural_exit)
        if len(breaks) > 1 and natural_exit is not None and natural_exit not in breaks:
            breaks = self._breaks_on_to_the_exit(body, breaks, natural_exit, ctx)
        if len(breaks) > 1:
            breaks = self._merge_break_targets(breaks, ctx, natural_exit)
        if len(breaks) > 1:
            breaks = self._absorb_exits(h, body, breaks, ctx)
        if len(breaks) > 1:
            raise Unstructurable("loop with several exits")
        for n in list(body):
            for s in self._succs(n):
                if s not in body and (t := self.through(s)) != s and t in body - natural:
                    body.update(self._hops(s, t))  # (the empty jumps to break code taken in)
        follow: int | None
        else_start: int | None = None
        if not breaks:
            follow = natural_exit
        else:
            (f,) = breaks
            follow = f
            if natural_exit is not None and f != natural_exit:
                else_start = natural_exit
                if natural_exit not in ctx.region and self._absorb_exits(
                        h, body, {f, natural_exit}, ctx) == {natural_exit}:
                    # no ``else`` can leave the enclosing construct: the loop's one exit
                    # is the natural one, and the code the break went to (only the loop
                    # reaches it, and it returns) is the loop's
                    follow, else_start = natural_exit, None
        loop = Loop(h, body, follow, h, endless=kind == "while_true")
        region = frozenset(body | ends | (ctx.tails & ctx.region))
        sub = replace(ctx, loop=loop, follow=h if kind != "while_true" else None,
                      region=region, loop_cleanups=len(ctx.cleanups), clause=ctx.clause)
        node: ast.stmt
        if kind == "for":
            iterable, is_async = self.for_iterable(h, body, out)
            self.visit(h)
            first = self.blocks.get(body_start)
            for_target: ast.expr = ast.Name(id="_", ctx=ast.Store())
            skip = 0
            if first is not None and first.stmts and is_next_store(first.stmts[0]):
                for_target = first.stmts[0].targets[0]
                skip = 1
            stmts = self.seq_from_edge(h, body_start, sub, skip)
            cls = ast.AsyncFor if is_async else ast.For
            node = cls(target=for_target, iter=iterable, body=stmts or [ast.Pass()],
                       orelse=[])
        elif kind in ("while", "while_not"):
            self.visit(h)
            test = term.test
            assert test is not None
            if kind == "while_not":
                test = negate(test, self.layout.folded_not_tests)
            stmts = self.seq_from_edge(h, body_start, sub, 0)
            node = ast.While(test=test, body=stmts or [ast.Pass()], orelse=[])
        else:
            stmts = self.seq(h, sub, at_header=True)
            node = ast.While(test=ast.Constant(True), body=stmts or [ast.Pass()],
                             orelse=[])
        if else_start is not None:
            # (through the edge: an ``else`` that only breaks out of an enclosing loop
            # jumps there from outside the enclosing loop's body)
            node.orelse = self.branch(h, else_start, ctx.following(follow))
        out.append(node)
        if follow is not None and follow == ctx.follow:
            return None
        if follow is not None and ctx.loop is not None and follow in (ctx.loop.cont,
                                                                      ctx.loop.follow):
            return follow
        return follow

    def _returns_in_loop(self, bid: int) -> bool:
        """Does block ``bid`` return a value it computes before it drops the loops'
        iterators under it (3.10, 3.11: a ``return`` written in the loop; a ``break``'s
        copy of the return after the loop drops them first)?"""
        block = self.blocks[bid]
        if block.term.kind != "return" or not block.blocks:
            return False
        cfg = self.g.cfg
        last = cfg.blocks[block.blocks[-1]]
        ops = [i.op for i in last.instrs(cfg.bc)]
        k = len(ops) - 1
        if k < 3 or ops[k] != "RETURN_VALUE":
            return False
        while k >= 2 and ops[k - 2:k] == ["SWAP", "POP_TOP"]:
            k -= 2
        return k < len(ops) - 1 and k > 0 and ops[k - 1] not in ("SWAP", "POP_TOP")

    def _is_tail(self, bid: int) -> bool:
        block = self.blocks[bid]
        return block.term.kind in ("return", "raise") and len(block.stmts) <= 2

    def seq_from_edge(self, src: int, dst: int, ctx: Ctx, skip: int) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        out.extend(self.slot_assignments(src, dst))
        if dst == ctx.follow:
            return out
        out.extend(self.seq(dst, ctx, skip_stmts=skip))
        return out

    def for_iterable(self, h: int, body: set[int], out: list[ast.stmt]) -> tuple[ast.expr, bool]:
        entries = [p for p in self.preds(h) if p not in body]
        if len(entries) != 1:
            raise Unstructurable("loop entered from several places")
        pre = self.blocks[entries[0]]
        if not pre.exit:
            raise Unstructurable("for loop without an iterator")
        it = pre.exit[-1]
        if isinstance(it, Iterator):
            return it.value, it.kind == "aiter"
        if isinstance(it, Shared) and isinstance(it.value, Iterator):
            return it.value.value, False
        return ast.Call(func=ast.Name(id="iter", ctx=ast.Load()), args=[it], keywords=[]), False


