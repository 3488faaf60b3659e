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
from dataclasses import dataclass, field, replace

from .exprs import ExcMatch, Iterator, Shared, Slot, Special, negate
from .ir import ExcMarker
from .regions import EXIT, dominates, dominators, natural_loops, postdominators, reverse_postorder
from .render import preview
from .translate import IRBlock, IRGraph, Term


class Unstructurable(Exception):
    """The control flow has no structured form the structurer recognises."""


@dataclass(slots=True)
class Loop:
    header: int
    body: set[int]
    follow: int | None
    cont: int


@dataclass(slots=True)
class Cleanup:
    """Statements copied before every exit of a construct (innermost constructs last)."""

    stmts: list[ast.stmt]
    kind: str  # finally | with | clause


@dataclass(frozen=True, slots=True)
class Ctx:
    follow: int | None = None
    loop: Loop | None = None
    handler: int | None = None
    region: frozenset[int] = frozenset()
    cleanups: tuple[Cleanup, ...] = ()
    loop_cleanups: int = 0  # cleanups that were active when the innermost loop began
    clause: ClauseInfo | None = None
    tails: frozenset[int] = frozenset()  # exit tails of the enclosing constructs


@dataclass(slots=True)
class ClauseInfo:
    name: str | None
    exits: list[tuple[int, int]] = field(default_factory=list)  # (block, first stmt after)


_MAX_VISITS = 4
_STRUCTURAL = {"prev_exc", "lasti", "exit", "exit_self", "prev_tb", "prev_value", "prev_type"}


class Structurer:
    """Turns one IR graph into structured statements (see the module docstring).

    It owns the graph while it works: the blocks (it splits and adds some), the
    dominator tree and natural loops of the effective successors (exception edges
    included), post-dominators per region, and which blocks are the compiler's
    machinery (clean-ups, ``finally`` copies) rather than the program's. :meth:`run`
    returns the statements or raises :class:`Unstructurable`."""

    def __init__(self, graph: IRGraph) -> None:
        self.g = graph
        self.blocks: dict[int, IRBlock] = dict(graph.blocks)
        self.entry = graph.entry
        self._next_id = max(self.blocks) + 1 if self.blocks else 0
        self._split: dict[int, int] = {}
        self._rpo: dict[int, int] | None = None
        self._dedup_loop_tests()
        self._protected: dict[int, frozenset[int]] = {}
        self._effective: dict[int, int | None] = {}
        self._machinery: dict[int, int] = {}
        self._index_preds()
        self._absorb_holes()
        self._index_preds()
        esuccs = self._esuccs
        self.idom = dominators(self.entry, esuccs)
        self.loops = natural_loops(self.entry, esuccs, lambda n: self._epreds[n], self.idom)
        for bid, block in self.blocks.items():
            if block.term.kind == "for" and bid not in self.loops and bid in self.idom:
                body_start = block.term.targets[0]
                self.loops[bid] = {bid} | {n for n in self.idom
                                           if dominates(self.idom, body_start, n)}
        for header, body in self.loops.items():
            self._add_tails(header, body)
        self._postdoms: dict[frozenset[int], dict[int, int]] = {}
        self.visits: dict[int, int] = {}

    # ------------------------------------------------------------ graph preparation

    def _dedup_loop_tests(self) -> None:
        """Undo the compiler's copy of a ``while`` test at the bottom of the loop.

        A block that only tests, with the same test, targets and handler as the end of
        another block, is the same code: its predecessors can jump to that test instead.
        The test is split off its block so that it becomes the loop header.
        """
        tests: dict[tuple[str, tuple[int, ...], int | None], int] = {}
        for bid in sorted(self.blocks):
            block = self.blocks[bid]
            term = block.term
            if term.kind != "branch" or block.exit or term.test is None:
                continue
            key = (preview(ast.Expr(value=term.test)),
                   tuple(self._past_jumps(t) for t in term.targets), block.handler_block)
            first = tests.get(key)
            if first is None:
                tests[key] = bid
                continue
            head = self._split_test(first)
            if block.stmts or block.entry:
                block.term = Term("goto", [head], line=block.term.line)
                continue
            for other in self.blocks.values():
                other.term.targets[:] = [head if t == bid else t for t in other.term.targets]
            del self.blocks[bid]

    def _past_jumps(self, bid: int) -> int:
        """Where ``bid`` leads past blocks that only jump (3.12+ ends a loop's copied
        test with a jump back of its own)."""
        seen = {bid}
        while True:
            block = self.blocks.get(bid)
            if block is None or block.stmts or block.entry or block.exit \
                    or block.term.kind != "goto":
                return bid
            nxt = block.term.targets[0]
            nb = self.blocks.get(nxt)
            if nxt in seen or nb is None or nb.handler_block != block.handler_block:
                return bid
            seen.add(nxt)
            bid = nxt

    def _split_test(self, bid: int) -> int:
        """Give the test that ends block ``bid`` a block of its own; return its id."""
        block = self.blocks[bid]
        if not block.stmts and not block.entry:
            return bid
        if bid in self._split:
            return self._split[bid]
        test_block = IRBlock(-1, [], [], [], [], block.term, block.handler,
                             block.handler_block, [], block.term.line)
        new_id = self.add_block(test_block)
        block.term = Term("goto", [new_id], line=block.term.line)
        self._split[bid] = new_id
        return new_id

    def _add_tails(self, header: int, body: set[int]) -> None:
        """Blocks entered only from a loop that end the function belong to its body
        (not the exit of a loop's own test)."""
        head = self.blocks[header]
        tests = head.term.kind == "for" or (head.term.kind == "branch" and not head.stmts)
        depth = len(head.entry)
        span = max(self.blocks[b].blocks[-1] if self.blocks[b].blocks else b for b in body)
        # blocks every path from which ends the function without coming back: an ``if``
        # in the body whose arms all return is the body's too
        ending: set[int] = set()
        grew = True
        while grew:
            grew = False
            for bid, block in self.blocks.items():
                if bid in ending or bid in body or bid == header:
                    continue
                succs = self._succs(bid)
                if (block.term.kind in ("return", "raise", "reraise") and not succs) or (
                        block.term.kind == "branch" and succs
                        and all(x in ending for x in succs)):
                    ending.add(bid)
                    grew = True
        changed = True
        while changed:
            changed = False
            for bid, block in self.blocks.items():
                if bid in body or bid not in self.idom:
                    continue
                preds = self._epreds.get(bid, [])
                if not preds or not all(p in body for p in preds):
                    continue
                if tests and header in preds:
                    continue
                succs = self._succs(bid)
                # a tail after the loop, or entered with the iterator popped, is what a
                # ``break`` jumps to; one inside the loop's code is a ``return`` in the body
                if len(block.entry) < depth or (block.blocks and block.blocks[-1] > span):
                    continue
                if bid in ending:
                    body.add(bid)
                    changed = True

    # ------------------------------------------------------------ graph helpers

    def _index_preds(self) -> None:
        self._epreds: dict[int, list[int]] = {b: [] for b in self.blocks}
        for bid in self.blocks:
            for s in self._esuccs(bid):
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
        if _is_eg_collect(block):
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
            if _is_name_cleanup(stmts, i):
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

    def chain(self, bid: int) -> list[int]:
        out: list[int] = []
        h = self.effective_handler(bid)
        while h is not None and h not in out:
            out.append(h)
            h = self.effective_handler(h)
        return out

    def protected(self, handler: int) -> frozenset[int]:
        got = self._protected.get(handler)
        if got is None:
            got = frozenset(b for b in self.blocks if handler in self.chain(b))
            self._protected[handler] = got
        return got

    def _absorb_holes(self) -> None:
        """Blocks 3.12+ leaves out of a protected range inside it (see :meth:`_holes`)
        are given to its handler: they cannot raise, and the body is one region again."""
        handlers = sorted({b.handler_block for b in self.blocks.values()
                           if b.handler_block is not None and b.handler_block in self.blocks})
        for h in handlers:
            holes = self._holes(set(self.protected(h)), h)
            for bid in holes:
                self.blocks[bid].handler_block = h
            if holes:
                self._effective.clear()
                self._protected.clear()

    def _holes(self, region: set[int], handler: int) -> set[int]:
        """3.12+ leaves instructions that cannot raise out of the protected ranges: a
        test's jump, a loop's jump back, its exit's iterator pop. Blocks without
        statements, entered only from the region (or each other), that go back into it
        or end a ``for`` loop begun in it, are part of the body."""
        if not region:
            return set()
        chain = self.chain(next(iter(region)))
        outer = chain[chain.index(handler) + 1:]  # the handlers around the statement
        depths = {self.blocks[b].handler.depth for b in region  # type: ignore[union-attr]
                  if self.blocks[b].handler_block == handler and self.blocks[b].handler}
        if len(depths) != 1:
            return set()
        (depth,) = depths

        def keeps_stack(block: IRBlock) -> bool:
            # the values the handler would find stay as they are
            return len(block.entry) >= depth and len(block.exit) >= depth and all(
                x is y for x, y in zip(block.entry[:depth], block.exit[:depth], strict=True))

        holes = {bid for bid, block in self.blocks.items()
                 if bid not in region and bid != handler and not block.stmts
                 and self.chain(bid) == outer and keeps_stack(block)}
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
                        loop_exit or succs and all(x in inside for x in succs)):
                    holes.discard(bid)
                    changed = True
        return holes

    # ------------------------------------------------------------ driving

    def run(self) -> list[ast.stmt]:
        region = frozenset(self.idom)
        return self.seq(self.entry, Ctx(region=region))

    def visit(self, bid: int) -> IRBlock:
        n = self.visits.get(bid, 0) + 1
        self.visits[bid] = n
        if n > _MAX_VISITS:
            raise Unstructurable(f"block {bid} emitted too often")
        return self.blocks[bid]

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
                if b == loop.cont:
                    self.exit_stmt(out, ast.Continue(), ctx)
                    break
                if b == loop.follow:
                    self.exit_stmt(out, ast.Break(), ctx)
                    break
            if b not in ctx.region:
                raise Unstructurable(f"block {b} outside its region")
            eh = self.effective_handler(b)
            loop_first = b in self.loops and eh is not None \
                and (eh in self.loops[b] or not self.loops[b] <= self.protected(eh)) \
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
                stmts = _strip_prefix(stmts, strip)
            if ctx.clause is not None:
                idx = _find_marker(stmts, "pop_except")
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
                self.exit_stmt(out, ast.Return(value=_none_to_missing(term.value)), ctx)
                b = None
            elif term.kind == "raise":
                self.exit_stmt(out, ast.Raise(exc=term.value, cause=term.cause), ctx,
                               cleanup=False)
                b = None
            elif term.kind == "reraise":
                out.append(ast.Raise(exc=None, cause=None))
                out[-1].reraise_of = term.value  # type: ignore[attr-defined]
                b = None
            else:
                raise Unstructurable(f"terminator {term.kind} outside its construct")
        return out

    # ------------------------------------------------------------ edges and exits

    def through(self, dst: int) -> int:
        """Follow blocks that only jump on (each ``break`` of a loop has its own jump)."""
        seen = {dst}
        while True:
            block = self.blocks.get(dst)
            if block is None or block.stmts or block.term.kind != "goto":
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
        return block is not None and not block.stmts and block.term.kind == "goto" \
            and block.term.targets[0] in ctx.tails

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
        if loop is not None and dst not in ctx.region:
            beyond = self.through(dst)
            if beyond in (loop.cont, loop.follow):
                if not self.slot_assignments(src, dst):
                    dst = beyond
        loop = ctx.loop
        if loop is not None:
            if dst == loop.cont:
                self.exit_stmt(out, ast.Continue(), ctx)
                return None
            if dst == loop.follow and dst != ctx.follow:
                self.exit_stmt(out, ast.Break(), ctx)
                return None
        if dst == ctx.follow:
            return None
        if dst not in ctx.region:
            raise Unstructurable(f"jump from {src} to {dst} leaves its region")
        return dst

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
                if isinstance(value, Special) and value.kind in _STRUCTURAL:
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
            return [_assign_slots(pairs)]
        return [ast.Assign(targets=[_slot_store(s)], value=v) for s, v in pairs]

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
            _strip_cleanups(out, active, stmt)
        out.append(stmt)

    # ------------------------------------------------------------ if

    def ipdom(self, bid: int, ctx: Ctx) -> int:
        region = ctx.region
        table = self._postdoms.get(region)
        if table is None:
            loop = ctx.loop
            header = loop.header if loop is not None and loop.header in region else None

            def succs(n: int) -> list[int]:
                out = []
                for s in self._succs(n):
                    out.append(-2 if s == header else s)
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
        if merge == EXIT or merge not in ctx.region:
            merge_follow: int | None = ctx.follow
            next_block = None
        else:
            merge_follow = merge
            next_block = merge
        if block.term.fall == else_t and then_t != else_t:
            # the compiler lays the ``if`` body out right after the test
            test = negate(test)
            then_t, else_t = else_t, then_t
        sub = replace(ctx, follow=merge_follow)
        then_body = self.branch(b, then_t, sub)
        else_body = self.branch(b, else_t, sub)
        if not then_body and else_body:
            test = negate(test)
            then_body, else_body = else_body, []
        if not then_body:
            then_body = [ast.Pass()]
        node = ast.If(test=test, body=then_body, orelse=else_body)
        node.line = block.term.line  # type: ignore[attr-defined]
        out.append(node)
        if next_block is not None and next_block == ctx.follow:
            return None
        return next_block

    def common_successor(self, b: int, then_t: int, else_t: int, ctx: Ctx) -> int:
        """Where both branches meet when one of them may also leave (``return``...):
        the first block, in flow order, that both reach inside the region."""
        stops = {b, ctx.follow}
        if ctx.loop is not None:
            stops |= {ctx.loop.cont, ctx.loop.follow}

        def reach(start: int) -> set[int]:
            seen: set[int] = set()
            todo = [start]
            while todo:
                n = todo.pop()
                if n in seen or n in stops or n not in ctx.region:
                    continue
                seen.add(n)
                todo.extend(self._succs(n))
            return seen

        common = reach(then_t) & reach(else_t)
        if not common:
            return EXIT
        order = self._rpo_index()
        best = min(common, key=lambda n: order.get(n, 1 << 30))
        if not dominates(self.idom, b, best):
            return EXIT
        return best

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
        elif term.kind == "branch" and not block.stmts and not _has_unassigned(block):
            t, e = term.targets
            if t in body and e not in body:
                body_start, natural_exit, kind = t, e, "while"
            elif e in body and t not in body:
                body_start, natural_exit, kind = e, t, "while_not"
        breaks: set[int] = set()
        ends: set[int] = set()  # raise/return tails left from the body: written in place
        for n in body:
            for s in self._succs(n):
                if s in body:
                    continue
                if n == h and s == natural_exit:
                    continue
                target = self.through(s)
                if target != natural_exit and self.chain(n) == self.chain(target) and (
                        self.blocks[target].term.kind in ("raise", "reraise")
                        or self._is_tail(target) and len(self.preds(target)) == 1):
                    # (from inside a try in the loop it is a ``break``: the try ends first)
                    ends.update(self._hops(s, target))  # with the jumps that lead there
                    continue
                if self._into_tail(target, ctx):
                    # a return that finishes an enclosing try/with
                    ends.add(target)
                    if target not in ctx.tails:
                        ends.add(self.blocks[target].term.targets[0])
                    continue
                breaks.add(target)
        if natural_exit is not None and len(breaks) == 1 \
                and self.through(natural_exit) in breaks:
            natural_exit = self.through(natural_exit)
        if len(breaks) > 1:
            breaks = self._merge_break_targets(breaks)
        if len(breaks) > 1:
            breaks = self._absorb_exits(h, body, breaks, ctx)
        if len(breaks) > 1:
            raise Unstructurable("loop with several exits")
        follow: int | None
        else_start: int | None = None
        if not breaks:
            follow = natural_exit
        else:
            (f,) = breaks
            if natural_exit is None or f == natural_exit:
                follow = f
            else:
                follow = f
                else_start = natural_exit
        if follow is not None and follow == ctx.follow and else_start is None \
                and kind == "while_true":
            pass
        loop = Loop(h, body, follow, h)
        region = frozenset(body | ends | (ctx.tails & ctx.region))
        sub = replace(ctx, loop=loop, follow=h if kind != "while_true" else None,
                      region=region, loop_cleanups=len(ctx.cleanups), clause=ctx.clause)
        node: ast.stmt
        if kind == "for":
            iterable, is_async = self.for_iterable(h, body, out)
            self.visit(h)
            first = self.blocks.get(body_start)
            target: ast.expr = ast.Name(id="_", ctx=ast.Store())
            skip = 0
            if first is not None and first.stmts and _is_next_store(first.stmts[0]):
                target = first.stmts[0].targets[0]  # type: ignore[attr-defined]
                skip = 1
            stmts = self.seq_from_edge(h, body_start, sub, skip)
            cls = ast.AsyncFor if is_async else ast.For
            node = cls(target=target, iter=iterable, body=stmts or [ast.Pass()],
                       orelse=[])
        elif kind in ("while", "while_not"):
            self.visit(h)
            test = term.test
            assert test is not None
            if kind == "while_not":
                test = negate(test)
            stmts = self.seq_from_edge(h, body_start, sub, 0)
            node = ast.While(test=test, body=stmts or [ast.Pass()], orelse=[])
        else:
            stmts = self.seq(h, sub, at_header=True)
            node = ast.While(test=ast.Constant(True), body=stmts or [ast.Pass()],
                             orelse=[])
        if else_start is not None:
            node.orelse = self.seq(else_start, replace(ctx, follow=follow)) or []
            if not node.orelse:
                node.orelse = []
        out.append(node)
        if follow is not None and follow == ctx.follow:
            return None
        if follow is not None and ctx.loop is not None and follow in (ctx.loop.cont,
                                                                      ctx.loop.follow):
            return follow
        return follow

    def _loop_handlers(self, h: int, body: set[int], ctx: Ctx) -> set[int]:
        """The handler blocks of a ``try`` inside the loop that lie within the loop's
        code: a clause that ends in ``break`` or ``return`` never comes back to the
        head, so the natural loop leaves it out, but its exits are the loop's."""
        span = max(self.position(b) for b in body)
        extra: set[int] = set()
        for n in body:
            for hb in self.chain(n):
                if hb in body or hb in extra or hb not in self.blocks \
                        or not (self.protected(hb) & ctx.region) <= body \
                        or self.handler_kind(hb) != "except":
                    continue
                todo = [hb]
                while todo:
                    x = todo.pop()
                    if x in body or x in extra or x == h or x not in self.blocks \
                            or x not in ctx.region or self.position(x) > span:
                        continue
                    extra.add(x)
                    todo.extend(self._succs(x))
        return extra

    def _absorb_exits(self, h: int, body: set[int], breaks: set[int], ctx: Ctx) -> set[int]:
        """Code only the loop reaches that ends in a ``return``/``raise`` or in another of
        its exits is part of the body (``if x: return`` then ``break``, where the natural
        loop stops at the test because no path from it comes back). Adds that code to
        ``body``; returns the exits left."""
        stops = {ctx.follow} | ({ctx.loop.cont, ctx.loop.follow} if ctx.loop else set())
        changed = True
        while changed and len(breaks) > 1:
            changed = False
            for t in sorted(breaks, key=self.position):
                if t in stops or t not in self.idom or not dominates(self.idom, h, t):
                    continue
                others = breaks - {t}
                region: set[int] = set()
                todo = [t]
                ok = True
                while todo and ok:
                    n = todo.pop()
                    if n in region or n in others:
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

    def _merge_break_targets(self, breaks: set[int]) -> set[int]:
        """Several exits where all but one are the same return: keep the real one."""
        real = {b for b in breaks if not self._is_tail(b)}
        return real if len(real) == 1 else breaks

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

    # ------------------------------------------------------------ try / with

    def try_stmt(self, b: int, handler: int | None, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        chain = self.chain(b)
        if ctx.handler is not None and ctx.handler not in chain:
            raise Unstructurable("leaving a try body without passing its end")
        outer_index = chain.index(ctx.handler) if ctx.handler in chain else len(chain)
        if outer_index == 0:
            raise Unstructurable("handler mismatch")
        h = chain[outer_index - 1]
        kind = self.handler_kind(h)
        if kind == "async_for":
            return self.async_for_stmt(b, h, ctx, out)
        if kind == "with":
            return self.with_stmt(b, h, ctx, out)
        if kind == "except":
            return self.except_stmt(b, h, ctx, out)
        if kind == "except_star":
            return self.except_star_stmt(b, h, ctx, out)
        if kind == "finally":
            return self.finally_stmt(b, h, ctx, out)
        raise Unstructurable(f"unrecognised exception handler ({kind})")

    def async_for_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        """``async for``: a loop whose header awaits ``__anext__`` under a handler that
        ends the loop on ``StopAsyncIteration``."""
        if b not in self.loops:
            raise Unstructurable("async for without a loop")
        body = self.loops[b]
        header = self.blocks[b]
        if header.stmts or header.term.kind != "goto":
            raise Unstructurable("async for header with statements")
        body_start = header.term.targets[0]
        natural_exit = self.through(self.blocks[h].term.targets[0])
        breaks: set[int] = set()
        for n in body:
            for s in self._succs(n):
                if s not in body:
                    breaks.add(self.through(s))
        if len(breaks) > 1:
            raise Unstructurable("async for with several exits")
        follow = natural_exit
        else_start: int | None = None
        if breaks:
            (f,) = breaks
            if f != natural_exit:
                follow, else_start = f, natural_exit
        iterable, _ = self.for_iterable(b, body, out)
        self.visit(b)
        self.visit(h)
        loop = Loop(b, body, follow, b)
        sub = replace(ctx, loop=loop, follow=b, region=frozenset(body),
                      loop_cleanups=len(ctx.cleanups))
        first = self.blocks.get(body_start)
        target: ast.expr = ast.Name(id="_", ctx=ast.Store())
        skip = 0
        if first is not None and first.stmts and isinstance(first.stmts[0], ast.Assign) \
                and isinstance(first.stmts[0].value, Special) \
                and first.stmts[0].value.kind == "anext_value":
            target = first.stmts[0].targets[0]
            skip = 1
        stmts = self.seq_from_edge(b, body_start, sub, skip)
        node = ast.AsyncFor(target=target, iter=iterable, body=stmts or [ast.Pass()],
                            orelse=[])
        if else_start is not None:
            node.orelse = self.seq(else_start, replace(ctx, follow=follow))
        out.append(node)
        if follow is not None and follow == ctx.follow:
            return None
        return follow

    def handler_kind(self, h: int) -> str:
        block = self.blocks[h]
        stmts = [s for s in block.stmts if not _is_marker(s, "push_exc_info")]
        term = block.term
        if term.kind == "end_async_for" and not stmts:
            return "async_for"
        if term.kind == "branch" and _eg_test(term.test) is not None:
            return "except_star"
        if term.kind == "branch" and not stmts:
            test = term.test
            if isinstance(test, ExcMatch) and not test.star:
                return "except"
            if _mentions_special(test, "with_exit_result"):
                return "with"
            if isinstance(test, ExcMatch) and test.star:
                return "except_star"
        if any(_is_exc(x) for x in block.exit):
            return "finally"  # the exception stays on the stack (under a with's values)
        if term.kind == "reraise" and _is_exc(term.value):
            return "finally"
        return "except"

    def body_exit(self, region: frozenset[int], ctx: Ctx,
                  cleanup: list[ast.stmt] | None = None,
                  continuation: tuple[str, ...] | None = None
                  ) -> tuple[int | None, frozenset[int]]:
        """The block a construct's body continues to normally, and its exit tails: blocks
        outside the protected range that only finish a ``return``/``break``/``continue``
        (after the construct's clean-up copy)."""
        exits: set[int] = set()
        tails: set[int] = set()
        loop = ctx.loop
        for n in region:
            if n not in self.blocks:
                continue  # merged into a copy
            for s in self._succs(n):
                if s in region:
                    continue
                if loop is not None and s in (loop.cont, loop.follow):
                    continue
                if self.exit_tail(s, cleanup or [], ctx, continuation):
                    tails.add(s)
                else:
                    exits.add(s)
        if not exits:
            return None, frozenset(tails)
        if len(exits) > 1:
            merged = self.merge_copies(exits)
            if merged is not None:
                return merged, frozenset(tails)
            # the normal exit comes last in the layout; earlier ones finish a return
            normal = max(exits, key=self.position)
            others = exits - {normal}
            if all(self.exit_tail(e, cleanup or [], ctx, ("", "")) for e in others):
                return normal, frozenset(tails | others)
            raise Unstructurable("try body with several exits")
        return exits.pop(), frozenset(tails)

    def merge_copies(self, ids: set[int]) -> int | None:
        """Blocks that are copies of one another (the compiler duplicates short exits)
        become one: every jump to a copy goes to the first."""
        def key(bid: int) -> tuple[object, ...]:
            block = self.blocks[bid]
            if any(not isinstance(e, Slot | Special) for e in block.entry):
                return ("unique", bid)
            return (tuple(preview(s) for s in block.stmts), _term_key(block),
                    len(block.entry), block.handler_block,
                    tuple(type(e).__name__ for e in block.entry))

        keys = {key(b) for b in ids}
        if len(keys) != 1 or any(self.blocks[b].term.kind not in ("return", "raise")
                                 for b in ids):
            return None
        keep = min(ids)
        for other in ids - {keep}:
            for block in self.blocks.values():
                block.term.targets[:] = [keep if t == other else t for t in block.term.targets]
            del self.blocks[other]
            for body in self.loops.values():
                body.discard(other)
        self._index_preds()
        self.idom = dominators(self.entry, self._esuccs)
        self._postdoms.clear()
        self._rpo = None
        self._effective.clear()
        self._protected.clear()
        return keep

    def exit_tail(self, bid: int, cleanup: list[ast.stmt], ctx: Ctx,
                  continuation: tuple[str, ...] | None = None) -> bool:
        """Does block ``bid`` only finish a ``return``/``break``/``continue`` of the body
        (rather than continue after the construct)?

        A return whose value the body computed (it arrives on the stack) is one; a return
        that computes its own value is code after the construct, unless ``continuation``
        (what the construct does after its body, e.g. when a ``with`` suppresses an
        exception) says otherwise."""
        block = self.blocks.get(bid)
        if block is None:
            return False
        rest = _strip_prefix(block.stmts, cleanup)
        if cleanup and rest is block.stmts:
            return False
        if rest:
            return False
        term = block.term
        if term.kind == "goto" and term.targets[0] in ctx.tails:
            # on to an enclosing construct's exit tail (a ``return`` in a ``with`` in a
            # ``try``: the with's clean-up copy, then the try's return), which may run
            # the enclosing constructs' clean-ups first
            nxt = self.blocks.get(term.targets[0])
            if nxt is not None and nxt.term.kind == "return" \
                    and not self._strip_enclosing(nxt.stmts, ctx):
                block, term = nxt, nxt.term
        if term.kind == "goto" and ctx.loop is not None:
            return self.through(term.targets[0]) in (ctx.loop.cont, ctx.loop.follow)
        if term.kind != "return":
            return False
        if continuation is not None:
            return _term_key(block) != continuation
        value = term.value
        return value is not None and any(value is e for e in block.entry)

    def _strip_enclosing(self, stmts: list[ast.stmt], ctx: Ctx) -> list[ast.stmt]:
        """``stmts`` without the clean-up copies of the enclosing constructs, innermost
        first (what a ``return`` through them runs)."""
        for outer in reversed(ctx.cleanups):
            if not stmts or outer.kind == "clause":
                break
            stripped = _strip_prefix(stmts, outer.stmts)
            if stripped is stmts:
                break
            stmts = stripped
        return stmts

    def suppress_continuation(self, h: int) -> tuple[str, ...] | None:
        """What a ``with`` does after its ``__exit__`` suppressed an exception."""
        block = self.blocks.get(h)
        if block is None or block.term.kind != "branch":
            return None
        target = self.blocks.get(block.term.targets[0])
        seen = 0
        while target is not None and seen < 4:
            seen += 1
            stmts = [s for s in target.stmts if not _is_marker(s, "pop_except")]
            if stmts:
                return None
            if target.term.kind == "goto":
                nxt = self.through(target.term.targets[0])
                follow = self.blocks.get(nxt)
                if follow is not None and not follow.stmts or follow is not None and all(
                        _is_marker(x, "pop_except") for x in follow.stmts):
                    target = follow
                    continue
                return ("goto", str(nxt))
            return _term_key(target)
        return None

    def after_suppression(self, h: int, region: frozenset[int], ctx: Ctx) -> int | None:
        """Where a ``with`` whose body always leaves goes on after ``__exit__`` suppressed
        an exception: the code after the statement (None if there is none to write)."""
        block = self.blocks.get(h)
        if block is None or block.term.kind != "branch":
            return None
        bid = block.term.targets[0]
        for _ in range(4):
            target = self.blocks.get(bid)
            if target is None or bid in region:
                return None
            k = 0
            while k < len(target.stmts) and _is_marker(target.stmts[k], "pop_except"):
                k += 1
            if k == len(target.stmts) and target.term.kind == "goto":
                bid = self.through(target.term.targets[0])
                continue
            if bid == ctx.follow or ctx.loop is not None and bid in (ctx.loop.cont,
                                                                    ctx.loop.follow):
                return None
            if bid not in ctx.region and not k:
                return None
            rest = IRBlock(-1, list(target.blocks), list(target.entry), target.stmts[k:],
                           list(target.exit), target.term, target.handler,
                           target.handler_block, list(target.preds), target.line)
            return self.replace_block(bid, rest)
        return None

    def with_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        if not out or not _is_marker(out[-1], "with"):
            raise Unstructurable("with body without its set-up")
        marker = out.pop()
        assert isinstance(marker, ExcMarker)
        mgr = marker.value
        is_async = marker.flag
        region = self.protected(h) & ctx.region
        exit_call = _exit_call_for(mgr, is_async)
        follow, tails = self.body_exit(region, ctx, [exit_call], self.suppress_continuation(h))
        block = self.blocks[b]
        target: ast.expr | None = None
        skip = 0
        if block.stmts:
            first = block.stmts[0]
            value = _enter_value(first)
            if value is not None:
                skip = 1
                if isinstance(first, ast.Assign):
                    target = first.targets[0]
        cleanup = Cleanup([exit_call], "with")
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=follow,
                      cleanups=(*ctx.cleanups, cleanup), tails=ctx.tails | tails)
        body = self.seq(b, sub, skip_stmts=skip, at_header=_starts_loop(b, ctx))
        item = ast.withitem(context_expr=mgr, optional_vars=target)
        cls = ast.AsyncWith if is_async else ast.With
        out.append(cls(items=[item], body=body or [ast.Pass()]))
        if follow is None:
            # the body always leaves (return/raise/break): what follows the statement
            # runs only when ``__exit__`` suppresses an exception
            return self.after_suppression(h, region, ctx)
        return self.continue_after(follow, [exit_call], ctx, out)

    def continue_after(self, follow: int, strip: list[ast.stmt], ctx: Ctx,
                       out: list[ast.stmt]) -> int | None:
        """Continue at ``follow`` whose first statements are a construct's exit copy."""
        block = self.blocks[follow]
        stripped = _strip_prefix(block.stmts, strip)
        if stripped is block.stmts and strip:
            if not any(isinstance(s, _COMPOUND) for s in strip):
                raise Unstructurable("construct exit without its clean-up copy")
            # a clean-up with blocks of its own (a ``with`` in ``finally``): structure
            # what follows and take the copy off its front
            rest_stmts = _hoist_common_tail(self.seq(follow, ctx))
            if len(rest_stmts) < len(strip) or not all(
                    _matches(s, p) for s, p in zip(rest_stmts, strip, strict=False)):
                raise Unstructurable("construct exit without its clean-up copy")
            out.extend(rest_stmts[len(strip):])
            return None
        rest = IRBlock(-1, list(block.blocks), list(block.entry), list(stripped),
                       list(block.exit), block.term, block.handler, block.handler_block,
                       list(block.preds), block.line)
        if not rest.stmts and follow == ctx.follow:
            return None
        return self.replace_block(follow, rest)

    def replace_block(self, old: int, new: IRBlock) -> int:
        """Give the rest of a block its own id so a sequence can start there."""
        new.id = old
        self.blocks[old] = new
        return old

    def handler_region(self, h: int, ctx: Ctx) -> frozenset[int]:
        """The enclosing region and the handler's own blocks (reached from ``h`` until the
        flow comes back into the region)."""
        extra: set[int] = set()
        todo = [h]
        stops = set(ctx.region)
        if ctx.loop is not None:
            stops |= {ctx.loop.cont}
            if ctx.loop.follow is not None:
                stops.add(ctx.loop.follow)
        while todo:
            n = todo.pop()
            if n in extra or n in stops or n not in self.blocks:
                continue
            extra.add(n)
            todo.extend(self._succs(n))
        return ctx.region | frozenset(extra)

    def except_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        hregion = self.handler_region(h, ctx)
        region = self.protected(h) & ctx.region
        body_exit, tails = self.body_exit(region, ctx)
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=body_exit,
                      tails=ctx.tails | tails)
        body = self.seq(b, sub, at_header=_starts_loop(b, ctx))
        handlers: list[ast.ExceptHandler] = []
        exits: list[tuple[int, int]] = []
        cur: int | None = h
        first = True
        while cur is not None:
            hb = self.visit(cur)
            stmts = [s for s in hb.stmts if not (first and _is_marker(s, "push_exc_info"))]
            first = False
            term = hb.term
            if term.kind == "branch" and not stmts and isinstance(term.test, ExcMatch):
                types = term.test.types
                match_t, next_t = term.targets
                clause_block = self.blocks[match_t]
                cname: str | None = None
                skip = 0
                if clause_block.stmts and _stores_exc(clause_block.stmts[0]):
                    tgt = clause_block.stmts[0].targets[0]  # type: ignore[attr-defined]
                    if isinstance(tgt, ast.Name):
                        cname = tgt.id
                        skip = 1
                info = ClauseInfo(cname)
                cleanup = Cleanup(_clause_cleanup(cname), "clause")
                csub = replace(ctx, clause=info, follow=None, region=hregion,
                               cleanups=(*ctx.cleanups, cleanup))
                cbody = self.seq_clause(match_t, csub, skip)
                handlers.append(ast.ExceptHandler(type=types, name=cname,
                                                  body=cbody or [ast.Pass()]))
                exits.extend(info.exits)
                cur = next_t
                continue
            if term.kind == "reraise" and not stmts and _is_exc(term.value):
                break
            # a bare ``except:`` clause: the rest of this handler
            info = ClauseInfo(None)
            cleanup = Cleanup(_clause_cleanup(None), "clause")
            csub = replace(ctx, clause=info, follow=None, region=hregion,
                           cleanups=(*ctx.cleanups, cleanup))
            self.visits[cur] -= 1
            cbody = self.seq_clause(cur, csub, 1 if hb.stmts and _is_marker(
                hb.stmts[0], "push_exc_info") else 0)
            handlers.append(ast.ExceptHandler(type=None, name=None, body=cbody or [ast.Pass()]))
            exits.extend(info.exits)
            break
        if not handlers:
            raise Unstructurable("try without handlers")
        merge = self.clause_merge(exits)
        return self.finish_try(body, handlers, body_exit, merge, h, ctx, out)

    def finish_try(self, body: list[ast.stmt], handlers: list[ast.ExceptHandler],
                   body_exit: int | None, merge: int | None, h: int, ctx: Ctx,
                   out: list[ast.stmt], star: bool = False) -> int | None:
        """The ``else`` clause (the body's normal exit, when it does not lead straight to
        where the clauses continue) and the statement itself; returns where it goes on."""
        if merge is not None and body_exit is not None and merge != body_exit \
                and self.through(merge) == self.through(body_exit):
            merge = body_exit = self.through(merge)  # empty jumps to one place
        if merge is not None and body_exit is not None and merge != body_exit \
                and self.blocks[merge].term.kind in ("return", "raise", "reraise") \
                and self.content_key(self.blocks[merge]) == \
                self.content_key(self.blocks[body_exit]):
            merge = body_exit  # the clauses end in a copy of the code after the statement
        orelse: list[ast.stmt] = []
        after = merge
        if body_exit is not None:
            if merge is None:
                after = body_exit
                layout_else = self.else_by_layout(body_exit, h, ctx)
                if layout_else is not None:
                    orelse = self.seq(body_exit, replace(ctx, follow=layout_else[0]))
                    after = layout_else[0]
            elif body_exit != merge:
                orelse = self.seq(body_exit, replace(ctx, follow=merge))
        make = ast.TryStar if star else ast.Try  # type: ignore[attr-defined]
        node = make(body=body or [ast.Pass()], handlers=handlers, orelse=orelse,
                    finalbody=[])
        out.append(node)
        if after is not None and after == ctx.follow:
            return None
        return after

    def except_star_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        """``try: ... except* T as name: ...``. The handler keeps the exception, a list
        of what the clauses raise and the unmatched rest on the stack; each clause splits
        the rest (``CHECK_EG_MATCH``), runs its body if something matched (what the body
        raises is collected) and goes on to the next; the end raises what is left."""
        hregion = self.handler_region(h, ctx)
        region = self.protected(h) & ctx.region
        body_exit, tails = self.body_exit(region, ctx)
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region),
                      follow=body_exit, tails=ctx.tails | tails)
        body = self.seq(b, sub, at_header=_starts_loop(b, ctx))
        depth = len(self.blocks[h].entry) + 3  # ..., prev exc, exc, raised list, rest
        cleanup = self.blocks[h].handler_block  # around all of the handler's code
        if cleanup is None:
            raise Unstructurable("except* handler without its clean-up")
        for bid in self.blocks:
            if cleanup in self._raw_chain(bid):
                self._machinery[bid] = depth
        handlers: list[ast.ExceptHandler] = []
        lists = frozenset(s.targets[0].id for s in self.blocks[h].stmts  # type: ignore
                          if isinstance(s, ast.Assign) and isinstance(s.value, ast.List)
                          and isinstance(s.targets[0], ast.Name))
        # 3.13+ copies "add the rest to the list" into each way the last clause ends: put
        # it back into the block that raises what is left
        ends = [bid for bid in self._machinery if len(self.blocks[bid].entry) in (depth - 1, depth)
                and self.blocks[bid].term.kind == "branch"
                and _mentions_special(self.blocks[bid].term.test, "reraise_star")]
        if len(ends) != 1:
            raise Unstructurable("except* statement without its end")
        for p in self.preds(ends[0]):
            pb = self.blocks[p]
            if pb.stmts and _is_list_append(pb.stmts[-1], lists) and p in self._machinery:
                pb.stmts = pb.stmts[:-1]
        cur = h
        while True:
            hb = self.visit(cur)
            eg = _eg_test(hb.term.test) if hb.term.kind == "branch" else None
            if eg is None:
                break
            if any(not _is_eg_machinery(s) for s in hb.stmts):
                raise Unstructurable("code between except* clauses")
            no_match, match_t = hb.term.targets
            join = self.through(no_match)
            first = self.blocks[match_t].stmts[:1]
            name: str | None = None
            if first and isinstance(first[0], ast.Assign) and len(first[0].targets) == 1 \
                    and isinstance(first[0].targets[0], ast.Name) \
                    and _eg_match_of(first[0].value) is not None:
                name = first[0].targets[0].id
            csub = replace(ctx, follow=join, region=hregion, clause=None)
            cbody = self.seq(match_t, csub, skip_stmts=1 if name else 0)
            stripped = _strip_clause_end(cbody, name, lists)
            if stripped is None:
                raise Unstructurable("except* clause without its name's clean-up")
            cbody = stripped
            handlers.append(ast.ExceptHandler(type=eg.types, name=name,
                                              body=cbody or [ast.Pass()]))
            cur = join
        if not handlers:
            raise Unstructurable("except* without clauses")
        # the end: raise what is left (PREP_RERAISE_STAR), or leave the handler
        last = self.blocks[cur]
        if last.term.kind != "branch" or not _mentions_special(last.term.test, "reraise_star"):
            raise Unstructurable("except* statement without its end")
        n = last.term.targets[1]
        for _ in range(4):
            block = self.visit(n)
            idx = _find_marker(block.stmts, "pop_except")
            if idx is not None:
                if any(not _is_marker(x, "pop_except") for x in block.stmts[:idx]):
                    raise Unstructurable("code before the end of an except* statement")
                merge = self.clause_merge([(n, idx + 1)])
                break
            if block.stmts or block.term.kind != "goto":
                raise Unstructurable("code before the end of an except* statement")
            n = block.term.targets[0]
        else:
            raise Unstructurable("except* statement without its end")
        return self.finish_try(body, handlers, body_exit, merge, h, ctx, out, star=True)

    def position(self, bid: int) -> int:
        block = self.blocks[bid]
        return block.blocks[0] if block.blocks else bid

    def else_by_layout(self, body_exit: int, h: int, ctx: Ctx) -> tuple[int | None] | None:
        """When no except clause falls through, only the layout tells an ``else`` clause
        from code after the statement: 3.10/3.11 put ``else`` between body and handler.
        Returns ``(follow,)`` for an else clause ending at ``follow`` (None: it exits)."""
        hpos = self.position(h)
        if self.position(body_exit) > hpos:
            return None
        seen: set[int] = set()
        todo = [body_exit]
        after: set[int] = set()
        code_before = False
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            if n not in ctx.region or n == ctx.follow or self.position(n) > hpos:
                after.add(n)
                continue
            seen.add(n)
            block = self.blocks[n]
            code_before |= bool(block.stmts) or block.term.kind != "goto"
            todo.extend(self._succs(n))
        if not code_before:
            return None
        if len(after) == 1:
            return (after.pop(),)
        if after:
            return None
        # nothing after the handler: an else clause only if ordinary code is laid out
        # after handlers at all (3.12+ moves handlers to the end of the function)
        if any(self.position(n) > hpos and not self.chain(n) for n in ctx.region
               if n in self.blocks and n not in self.protected(h)):
            return (None,)
        return None

    def seq_clause(self, start: int, ctx: Ctx, skip: int) -> list[ast.stmt]:
        return self.seq(start, ctx, skip_stmts=skip)

    def clause_exit(self, block: IRBlock, stmts: list[ast.stmt], idx: int, ctx: Ctx,
                    out: list[ast.stmt]) -> None:
        """An except clause reached its ``POP_EXCEPT``: an exit or the clause's end."""
        info = ctx.clause
        assert info is not None
        rest = stmts[idx + 1:]
        if info.name is not None and _is_name_cleanup(rest, 0, info.name):
            rest = rest[2:]
        term = block.term
        outer = replace(ctx, clause=None, cleanups=ctx.cleanups[:-1])
        if not rest and (term.kind == "return" and _computed_after(term.value, stmts[idx])
                         or term.kind == "raise" and (term.value is None or _computed_after(
                             term.value, stmts[idx]))):
            # the compiler copied a ``return`` or ``raise`` after the statement into the
            # clause; a raise there must stay outside it (inside, the exception would get
            # the handled one as ``__context__``, and a bare ``raise`` would re-raise it)
            info.exits.append((block.id, len(block.stmts)))
            return
        if not rest:
            if term.kind == "return":
                out.append(ast.Return(value=_none_to_missing(term.value)))
                _strip_all(out, outer)
                return
            if term.kind == "raise":
                out.append(ast.Raise(exc=term.value, cause=term.cause))
                return
            if term.kind == "goto" and ctx.loop is not None \
                    and term.targets[0] in (ctx.loop.cont, ctx.loop.follow):
                out.extend(self.slot_assignments(block.id, term.targets[0]))
                stmt: ast.stmt = ast.Continue() if term.targets[0] == ctx.loop.cont \
                    else ast.Break()
                self.exit_stmt(out, stmt, outer)
                return
        consumed = len(block.stmts) - len(rest)
        info.exits.append((block.id, consumed))

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
        return (tuple(preview(s) for s in block.stmts), _term_key(block))

    def finally_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        hb = self.blocks[h]
        fctx = replace(ctx, follow=None, clause=None, region=self.handler_region(h, ctx))
        skip = 1 if hb.stmts and _is_marker(hb.stmts[0], "push_exc_info") else 0
        stripped = _strip_reraise(self.seq(h, fctx, skip_stmts=skip))
        if stripped is None:
            raise Unstructurable("finally handler does not re-raise")
        final = stripped
        region = self.protected(h) & ctx.region
        body_exit, tails = self.body_exit(region, ctx, final)
        cleanup = Cleanup(final, "finally")
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=body_exit,
                      cleanups=(*ctx.cleanups, cleanup), tails=ctx.tails | tails)
        body = self.seq(b, sub, at_header=_starts_loop(b, ctx))
        node = ast.Try(body=body or [ast.Pass()], handlers=[], orelse=[],
                       finalbody=final or [ast.Pass()])
        out.append(node)
        if body_exit is None:
            return None
        return self.continue_after(body_exit, final, ctx, out)


# ---------------------------------------------------------------- statement helpers


def _term_key(block: IRBlock) -> tuple[str, ...]:
    """What a block ends with, comparable across copies the compiler made."""
    term = block.term
    if term.kind == "goto":
        return ("goto", str(term.targets[0]))
    if isinstance(term.value, Special):  # (each copy has its own, of one kind)
        return (term.kind, f"<{term.value.kind}>")
    value = "" if term.value is None else preview(ast.Expr(value=term.value))
    return (term.kind, value)


def _none_to_missing(node: ast.expr | None) -> ast.expr | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return node


def _slot_store(slot: Slot) -> ast.Name:
    node = ast.Name(id=f"_s{slot.index}", ctx=ast.Store())
    node.slot = slot.index  # type: ignore[attr-defined]
    return node


def _assign_slots(pairs: list[tuple[Slot, ast.expr]]) -> ast.stmt:
    return ast.Assign(targets=[ast.Tuple(elts=[_slot_store(s) for s, _ in pairs],
                                         ctx=ast.Store())],
                      value=ast.Tuple(elts=[v for _, v in pairs], ctx=ast.Load()))


def _computed_after(value: ast.expr | None, marker: ast.stmt) -> bool:
    """Was ``value`` computed after the ``POP_EXCEPT`` ``marker`` (not a constant)?"""
    before = getattr(marker, "before", None)
    return value is not None and before is not None and not isinstance(value, ast.Constant) \
        and id(value) not in before


def _is_marker(stmt: ast.stmt, kind: str) -> bool:
    return isinstance(stmt, ExcMarker) and stmt.kind == kind


def _find_marker(stmts: list[ast.stmt], kind: str) -> int | None:
    for i, s in enumerate(stmts):
        if _is_marker(s, kind):
            return i
    return None


def _is_exc(node: ast.expr | None) -> bool:
    return isinstance(node, Special) and node.kind in ("exc", "exc_type")


def _starts_loop(b: int, ctx: Ctx) -> bool:
    """A construct whose body begins at the head of the loop it is in (``while True:
    try: ...``): its first block is not the loop's ``continue``."""
    return ctx.loop is not None and ctx.loop.header == b


def _hoist_common_tail(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: A; T`` / ``else: T`` as ``if c: A`` then ``T`` (nested ifs too): the
    compiler copies a short ending (``return x``) into both arms of an ``if`` that ends
    a copied clean-up."""
    if not stmts or not isinstance(stmts[-1], ast.If) or not stmts[-1].orelse:
        return stmts
    node = stmts[-1]
    body = _hoist_common_tail(node.body)
    orelse = _hoist_common_tail(node.orelse)
    n = 0
    while n < min(len(body), len(orelse)) and \
            ast.dump(body[-1 - n]) == ast.dump(orelse[-1 - n]):
        n += 1
    if n == 0:
        return stmts
    return [*stmts[:-1], ast.If(test=node.test, body=body[:len(body) - n] or [ast.Pass()],
                                orelse=orelse[:len(orelse) - n]), *body[len(body) - n:]]


def _strip_reraise(stmts: list[ast.stmt]) -> list[ast.stmt] | None:
    """A ``finally`` handler's statements without the re-raise that ends every path
    (the compiler copies it into both arms of an ``if`` that ends the clause); None
    when some path does not end in one."""
    if not stmts:
        return None
    last = stmts[-1]
    if _is_reraise(last):
        head = stmts[:-1]
        if head and isinstance(head[-1], ast.If):
            # ``if c: ...; raise`` then ``raise``: both are the one re-raise at the end
            body = _strip_reraise(head[-1].body)
            orelse = _strip_reraise(head[-1].orelse) if head[-1].orelse else []
            head = [*head[:-1], ast.If(test=head[-1].test,
                                       body=(head[-1].body if body is None else body)
                                       or [ast.Pass()],
                                       orelse=head[-1].orelse if orelse is None else orelse)]
        return head
    if isinstance(last, ast.If) and last.orelse:
        body = _strip_reraise(last.body)
        orelse = _strip_reraise(last.orelse)
        if body is None or orelse is None:
            return None
        return [*stmts[:-1], ast.If(test=last.test, body=body or [ast.Pass()], orelse=orelse)]
    return None


def _is_reraise(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Raise) and stmt.exc is None and \
        _is_exc(getattr(stmt, "reraise_of", None))


def _is_next_store(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.value, Special) and stmt.value.kind == "next"


def _eg_match_of(node: ast.expr | None) -> ExcMatch | None:
    """The ``except*`` type test whose match part ``node`` is (``CHECK_EG_MATCH``)."""
    while isinstance(node, Shared):
        node = node.value
    return getattr(node, "eg_match", None)


def _eg_test(test: ast.expr | None) -> ExcMatch | None:
    """``<match part> is None``: the test that skips an ``except*`` clause."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return _eg_match_of(test.left)
    return None


def _is_eg_split(node: ast.expr) -> bool:
    while isinstance(node, Shared):
        node = node.value
    if isinstance(node, ast.Subscript):
        node = node.value
        while isinstance(node, Shared):
            node = node.value
    return isinstance(node, Special) and node.kind == "eg_split"


def _is_eg_machinery(stmt: ast.stmt) -> bool:
    """What an ``except*`` handler does besides its clauses: save the exception, start
    the list of raised exceptions, split the rest."""
    if _is_marker(stmt, "push_exc_info"):
        return True
    if not isinstance(stmt, ast.Assign):
        return False
    value = stmt.value
    while isinstance(value, Shared):
        value = value.value
    return isinstance(value, ast.List) and not value.elts or _is_eg_split(value)


def _is_eg_collect(block: IRBlock) -> bool:
    """The handler around an ``except*`` clause body: forget the clause's name, add the
    exception to the list of raised ones and go on to the next clause."""
    stmts = block.stmts
    i = 2 if _is_name_cleanup(stmts, 0) else 0
    if block.term.kind != "goto" or len(stmts) not in (i + 1, i + 2) \
            or not all(_is_list_append(s) for s in stmts[i:]):
        return False
    return _is_exc(stmts[i].value.args[0])  # type: ignore[attr-defined]


def _strip_clause_end(stmts: list[ast.stmt], name: str | None,
                      lists: frozenset[str]) -> list[ast.stmt] | None:
    """An ``except*`` clause body without what the compiler adds where it ends (the
    clean-up of its name, adding the rest to the list), on every path that gets there;
    None when a path ends without it."""
    out = list(stmts)
    if out and _is_list_append(out[-1], lists):
        out.pop()
    if name is None:
        return out
    if _is_name_cleanup(out, len(out) - 2, name):
        return out[:-2]
    if out and isinstance(out[-1], ast.Raise):
        return out
    if out and isinstance(out[-1], ast.If):
        last = out[-1]
        body = _strip_clause_end(last.body, name, lists)
        orelse = _strip_clause_end(last.orelse, name, lists)
        if body is None or orelse is None:
            return None
        out[-1] = ast.If(test=last.test, body=body or [ast.Pass()], orelse=orelse)
        return out
    return None


def _is_list_append(stmt: ast.stmt, lists: frozenset[str] = frozenset()) -> bool:
    """``LIST_APPEND`` to a list on the stack (or to one of the named ``lists``): an
    ``except*`` statement's own list of raised exceptions."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append"
            and len(stmt.value.args) == 1):
        return False
    target = stmt.value.func.value
    while isinstance(target, Shared):
        target = target.value
    return isinstance(target, Slot) or isinstance(target, ast.Name) and target.id in lists


def _stores_exc(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_exc(stmt.value)


def _has_unassigned(block: IRBlock) -> bool:
    return False


def _is_name_cleanup(stmts: list[ast.stmt], i: int, name: str | None = None) -> bool:
    """``name = None; del name`` (the clean-up after ``except ... as name``)."""
    if i + 1 >= len(stmts):
        return False
    a, d = stmts[i], stmts[i + 1]
    if not (isinstance(a, ast.Assign) and len(a.targets) == 1
            and isinstance(a.targets[0], ast.Name)
            and isinstance(a.value, ast.Constant) and a.value.value is None):
        return False
    if not (isinstance(d, ast.Delete) and len(d.targets) == 1
            and isinstance(d.targets[0], ast.Name) and d.targets[0].id == a.targets[0].id):
        return False
    return name is None or a.targets[0].id == name


def _clause_cleanup(name: str | None) -> list[ast.stmt]:
    stmts: list[ast.stmt] = [ExcMarker("pop_except")]
    if name is not None:
        stmts.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                                value=ast.Constant(None)))
        stmts.append(ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del())]))
    return stmts


def _enter_value(stmt: ast.stmt) -> ast.expr | None:
    """The ``__enter__`` result consumed by the first statement of a with body."""
    value = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
    elif isinstance(stmt, ast.Expr):
        value = stmt.value
    if value is None:
        return None
    if isinstance(value, ast.Await):
        value = value.value
        if isinstance(value, Special) and value.kind == "awaitable":
            value = value.value
    if isinstance(value, Special) and value.kind == "enter":
        return value
    return None


def _exit_call_for(mgr: ast.expr | None, is_async: bool) -> ast.stmt:
    marker = ast.Expr(value=ast.Constant(None))
    marker.with_exit = mgr  # type: ignore[attr-defined]
    marker.is_async = is_async  # type: ignore[attr-defined]
    return marker


def _mentions_special(node: ast.AST | None, kind: str) -> bool:
    if node is None:
        return False
    todo: list[ast.AST] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Special) and n.kind == kind:
            return True
        if isinstance(n, Shared):
            todo.append(n.value)
            continue
        for child in ast.iter_child_nodes(n):
            todo.append(child)
        if isinstance(n, Special) and n.value is not None:
            todo.append(n.value)
    return False


# ---------------------------------------------------------------- matching copies


def _stmt_key(stmt: ast.stmt) -> str:
    return preview(stmt)


def _matches(stmt: ast.stmt, pattern: ast.stmt) -> bool:
    exit_mgr = getattr(pattern, "with_exit", None)
    if getattr(pattern, "is_async", None) is not None:
        return _is_exit_call(stmt, exit_mgr, bool(getattr(pattern, "is_async", False)))
    if isinstance(pattern, ExcMarker):
        return isinstance(stmt, ExcMarker) and stmt.kind == pattern.kind
    return _stmt_key(stmt) == _stmt_key(pattern)


def _is_exit_call(stmt: ast.stmt, mgr: ast.expr | None, is_async: bool) -> bool:
    if not isinstance(stmt, ast.Expr):
        return False
    value = stmt.value
    if is_async:
        if not isinstance(value, ast.Await):
            return False
        value = value.value
        if isinstance(value, Special) and value.kind == "awaitable":
            value = value.value
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return isinstance(func, Special) and func.kind == "exit" and func.value is mgr


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.Match)


def _strip_prefix(stmts: list[ast.stmt], pattern: list[ast.stmt]) -> list[ast.stmt]:
    if not pattern:
        return stmts
    if len(stmts) < len(pattern):
        return stmts
    for s, p in zip(stmts, pattern, strict=False):
        if not _matches(s, p):
            return stmts
    return stmts[len(pattern):]


def _strip_suffix_before_exit(out: list[ast.stmt], pattern: list[ast.stmt],
                              exit_stmt: ast.stmt) -> None:
    """Remove the copy of ``pattern`` that ends ``out`` (temporaries for the value may sit
    in between, assigned before the copy)."""
    n = len(pattern)
    if n == 0:
        return
    if len(out) >= n and all(_matches(s, p) for s, p in zip(out[-n:], pattern, strict=True)):
        if isinstance(exit_stmt, ast.Return) and _computed_later(exit_stmt.value, out[-n:]):
            # not a ``return`` inside the construct: the construct was left first (a
            # ``break`` out of a loop) and the compiler copied the code after it here
            raise Unstructurable("return value computed after the clean-up")
        del out[-n:]
        return
    raise Unstructurable("exit without the clean-up copy of its construct")


def _computed_later(value: ast.expr | None, stmts: list[ast.stmt]) -> bool:
    seq = getattr(value, "_seq", None)
    if seq is None:
        return False
    done = [getattr(n, "_seq", None) for s in stmts for n in ast.walk(s)]
    return any(d is not None and d < seq for d in done) and \
        max(d for d in done if d is not None) < seq


def _strip_all(out: list[ast.stmt], ctx: Ctx) -> None:
    ret = out.pop()
    _strip_cleanups(out, ctx.cleanups, ret)
    out.append(ret)


def _strip_cleanups(out: list[ast.stmt], active: tuple[Cleanup, ...],
                    exit_stmt: ast.stmt) -> None:
    """Remove the clean-up copies of ``active`` constructs that end ``out`` before an
    exit: innermost last, or (when the exit's code runs each construct's clean-up in
    its own block, innermost first) outermost last."""
    trial = list(out)
    try:
        for c in reversed(active):
            _strip_suffix_before_exit(trial, c.stmts, exit_stmt)
    except Unstructurable:
        if len(active) < 2:
            raise
        trial = list(out)
        for c in active:
            _strip_suffix_before_exit(trial, c.stmts, exit_stmt)
    out[:] = trial
