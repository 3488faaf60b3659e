"""The structurer's exception handling: ``try``/``except``/``except*``/``finally`` and
``with``/``async with``/``async for``, recognised from handler regions (see
:mod:`.structure`)."""

from __future__ import annotations

import ast
import copy
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from ..graph.regions import dominators
from ..ir.blocks import IRBlock, Term
from ..ir.compare import Key, Keyer
from ..ir.exprs import ExcMatch, Slot, Special
from ..ir.facts import ORIGIN, fact
from ..ir.markers import ExcMarker
from .base import (
    COMPOUND,
    ClauseInfo,
    Cleanup,
    Ctx,
    Loop,
    Unstructurable,
    clause_cleanup,
    clauses_continue,
    eg_match_of,
    eg_test,
    enter_value,
    entry_index,
    exit_call_for,
    find_marker,
    flatten_leaving,
    fold_nested_ifs,
    hoist_common_tail,
    is_eg_machinery,
    is_exc,
    is_list_append,
    is_marker,
    matches,
    mentions_special,
    starts_loop,
    stores_exc,
    strip_clause_end,
    strip_prefix,
    strip_reraise,
    term_key,
)
from .copies import (
    breaks_to_after,
    fold_test_temps,
    returned_from_body,
    returned_through_slot,
    returning_arms,
    returning_clauses,
    starts_with,
    value_spills,
)
from .written import LayoutElse, implicit_return, try_end_else

if TYPE_CHECKING:
    from .uses import ClausesUses
else:
    ClausesUses = object  # (a declaration for type checkers: no base at run time)

_LEAVES = (ast.Return, ast.Raise, ast.Break, ast.Continue)


class Clauses(ClausesUses):
    """The ``try``, ``with`` and ``async for`` statements of :class:`~.structure.Structurer`
    (a mixin: it uses the structurer's graph, contexts and ``seq``/``edge``)."""

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
            node.orelse = self.seq(else_start, ctx.following(follow))
        out.append(node)
        if follow is not None and follow == ctx.follow:
            return None
        return follow

    def handler_kind(self, h: int) -> str:
        block = self.blocks[h]
        stmts = [s for s in block.stmts if not is_marker(s, "push_exc_info")]
        term = block.term
        if term.kind == "end_async_for" and not stmts:
            return "async_for"
        if term.kind == "branch" and eg_test(term.test) is not None:
            return "except_star"
        if term.kind == "branch" and not stmts:
            test = term.test
            if isinstance(test, ExcMatch) and not test.star:
                return "except"
            if mentions_special(test, "with_exit_result"):
                return "with"
            if isinstance(test, ExcMatch) and test.star:
                return "except_star"
        own = self._pushed_by_exception(h)
        if any(is_exc(x) and any(x is y for y in own) for x in block.exit):
            # the exception stays on the stack (under a with's values); not one of an
            # enclosing handler's (a bare ``except:`` inside a ``finally`` handler)
            return "finally"
        if term.kind == "reraise" and is_exc(term.value) \
                and (not own or any(term.value is y for y in own)):
            return "finally"
        return "except"

    def _pushed_by_exception(self, h: int) -> list[ast.expr]:
        """The values the exception that enters handler ``h`` pushes (its entry stack
        above the depth the exception table gives)."""
        if h not in self._handler_depths:  # (one pass over the blocks, again for new ones)
            self._handler_depths.update({b.handler_block: b.handler.depth
                                         for b in self.blocks.values()
                                         if b.handler_block is not None
                                         and b.handler is not None})
        return self.blocks[h].entry[self._handler_depths.get(h, 0):]

    def body_exit(self, region: frozenset[int], ctx: Ctx,
                  cleanup: list[ast.stmt] | None = None,
                  continuation: tuple[Key, ...] | None = None,
                  lines: tuple[int | None, int | None] = (None, None)
                  ) -> tuple[int | None, frozenset[int]]:
        """The block a construct's body continues to normally, and its exit tails: blocks
        outside the protected range that only finish a ``return``/``break``/``continue``
        (after the construct's clean-up copy). ``lines``: a ``try``'s first line and its
        first except clause's (a constant ``return`` on a line between is the body's)."""
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
                if s in ctx.tails and not cleanup and self.blocks[s].term.kind == "return":
                    tails.add(s)  # (an enclosing construct's: a return through its clean-up)
                    continue
                if self.exit_tail(s, cleanup or [], ctx, continuation)  \
                        or self._constant_return_in(s, lines) or cleanup and any(
                        isinstance(x, COMPOUND) for x in cleanup) and self.collapse_copy(
                        s, cleanup, ctx, returned=True) and self.exit_tail(s, cleanup, ctx,
                                                                             continuation):
                    # (a copy with blocks of its own, a loop's, then the return of what
                    # the body computed: made one block)
                    tails.add(s)
                    block = self.blocks[s]
                    if block.term.kind == "goto" \
                            and value_spills(block) == len(block.stmts) \
                            and self.blocks[block.term.targets[0]].term.kind == "return":
                        tails.add(block.term.targets[0])  # (the return it jumps to)
                else:
                    exits.add(s)
        if not exits:
            return None, frozenset(tails)
        if len(exits) > 1:
            merged = self.merge_copies(exits)
            if merged is not None:
                return merged, frozenset(tails)
            # the normal exit comes last in the layout; earlier ones finish a return (3.12+:
            # a return's copy in an inner except clause is laid out with the clause, cold;
            # the code after a ``with`` whose body leaves is laid out after its handler)
            warm = exits
            if self.layout.cold_handlers:
                inner = [self.position(e) for n in region if n in self.blocks
                         and (e := self.blocks[n].handler_block) is not None and e in region
                         and self.handler_kind(e) == "except"]
                if inner:
                    cold = min(inner)
                    warm = {e for e in exits if self.position(e) < cold} or exits
            normal = max(warm, key=self.position)
            others = exits - {normal}
            if cleanup and any(isinstance(s, COMPOUND) for s in cleanup):
                for e in others:  # (each copy of a clean-up with blocks of its own)
                    if not self.exit_tail(e, cleanup, ctx, ("", "")):
                        self.collapse_copy(e, cleanup, ctx)
            if all(self.exit_tail(e, cleanup or [], ctx, ("", "")) for e in others):
                return normal, frozenset(tails | others)
            raise Unstructurable("try body with several exits")
        return exits.pop(), frozenset(tails)

    def _constant_return_in(self, bid: int, lines: tuple[int | None, int | None]) -> bool:
        """Is block ``bid`` only a ``return`` of a constant on a line in ``lines`` (from
        the first, before the second)? The compiler loads a constant after leaving the
        ``try``: it is the body's own ``return`` when its line is in the body."""
        block = self.blocks.get(bid)
        first, end = lines
        return first is not None and end is not None and block is not None \
            and not block.stmts and block.term.kind == "return" \
            and isinstance(block.term.value, ast.Constant) \
            and block.term.line is not None and first <= block.term.line < end \
            and not implicit_return(self.g.cfg, block)

    def collapse_copy(self, start: int, cleanup: list[ast.stmt], ctx: Ctx,
                      returned: bool = False) -> bool:
        """Make the blocks from ``start`` one block when they are a copy of ``cleanup``
        (a clean-up with blocks of its own: ``finally: if c: f()``) followed by one
        ``return`` on every path, so that the copy reads as the exit of a ``return`` in
        the body; whether it did. A ``try`` in the copy takes its handlers' blocks with
        it. ``returned``: only where the value returned arrives on the stack."""
        own: set[int] = set()
        todo = [start]
        while todo:
            bid = todo.pop()
            if bid in own:
                continue
            block = self.blocks.get(bid)
            if block is None or len(own) >= 16 \
                    or block.term.kind not in ("branch", "goto", "return", "raise", "for"):
                return False
            own.add(bid)
            todo.extend(block.term.targets)
        if any(self.blocks[b].term.kind == "goto" and self.blocks[b].term.targets[0] not in own
               or b != start and not set(self.blocks[b].preds) <= own for b in own):
            return False
        if returned and not (
                any(self.blocks[b].term.kind == "for" for b in own)
                and all(isinstance(self.blocks[b].term.value, Slot) for b in own
                        if self.blocks[b].term.kind == "return")):
            return False  # (the probe below may rewrite blocks: only a copied loop's)
        outer = self.blocks[max((b for b in own if self.blocks[b].term.kind == "return"),
                                key=self.position, default=start)]
        handlers = self._copy_handlers(own, outer.handler_block)
        if handlers is None:
            return False
        probe = replace(ctx, follow=None, region=frozenset(own | handlers), loop=None,
                        clause=None)
        first = self.blocks[start]
        try:
            stmts = fold_nested_ifs(hoist_common_tail(returning_clauses(
                returned_through_slot(self.seq(start, probe), first), first)))
        except Unstructurable:
            return False
        finally:
            for b in own | handlers:  # (a probe: the blocks are written again where used)
                self.visits[b] = max(0, self.visits.get(b, 1) - 1)
        if len(stmts) != len(cleanup) + 1 or not isinstance(stmts[-1], ast.Return) \
                or not all(matches(x, p) for x, p in zip(stmts, cleanup, strict=False)):
            return False
        value = stmts[-1].value
        if returned and not any(value is e for e in first.entry):
            return False
        self.blocks[start] = IRBlock(start, [b for x in sorted(own | handlers)
                                             for b in self.blocks[x].blocks],
                                     list(first.entry), stmts[:-1], [],
                                     Term("return", [], value=value, line=first.line),
                                     outer.handler, outer.handler_block, list(first.preds),
                                     first.line)
        self._drop_blocks((own | handlers) - {start})
        return True

    def _copy_handlers(self, own: set[int], outer: int | None) -> set[int] | None:
        """The blocks of the handlers of ``try`` statements inside the copy ``own``
        (reached from its blocks' handlers other than ``outer``, the copy's own); None
        when something outside the copy reaches them too."""
        found: set[int] = set()
        todo = [b.handler_block for x in own if (b := self.blocks[x]).handler_block != outer]
        while todo:
            bid = todo.pop()
            if bid is None or bid == outer or bid in found or bid in own:
                continue
            if bid not in self.blocks or len(found) >= 32:
                return None
            found.add(bid)
            todo.extend(self._esuccs(bid))
        if any(not set(self._epreds.get(b, ())) <= own | found for b in found):
            return None
        return found

    def _drop_blocks(self, ids: set[int]) -> None:
        """Remove blocks nothing reaches any more, and recompute what depends on the graph."""
        for b in ids:
            del self.blocks[b]
            for body in self.loops.values():
                body.discard(b)
        self._index_preds()
        self.idom = dominators(self.entry, self._esuccs)
        self._postdoms.clear()
        self._rpo: dict[int, int] | None = None  # (typed: else mypy types it None)
        self.forget_regions()

    def merge_copies(self, ids: set[int]) -> int | None:
        """Blocks that are copies of one another (the compiler duplicates short exits)
        become one: every jump to a copy goes to the first."""
        def key(bid: int) -> tuple[object, ...]:
            block = self.blocks[bid]
            if any(not isinstance(e, Slot | Special) for e in block.entry):
                return ("unique", bid)
            value = block.term.value  # (which of the entry values a re-raise raises)
            where = next((k for k, e in enumerate(block.entry) if e is value), None)
            keyer = Keyer(block.entry)
            texts = tuple(keyer.stmt(s) for s in block.stmts)
            if isinstance(value, ast.Constant) and keyer.uses_entry:
                # (a ``with``'s exit, then ``return None``: a written ``return`` in the
                # body and the end of the function read alike on 3.10)
                return ("unique", bid)
            return (texts, term_key(block), where, len(block.entry), block.handler_block,
                    tuple(type(e).__name__ for e in block.entry))

        def leaves(bid: int) -> bool:  # (or only jumps on: the clauses' way out, the body's)
            block = self.blocks[bid]
            return block.term.kind in ("return", "raise", "reraise") \
                or block.term.kind == "goto" and not block.stmts

        keys = {key(b) for b in ids}
        if len(keys) != 1 or not all(leaves(b) for b in ids):
            return None
        keep = min(ids)
        for other in ids - {keep}:
            for block in self.blocks.values():
                block.term.targets[:] = [keep if t == other else t for t in block.term.targets]
        self._drop_blocks(ids - {keep})
        return keep

    def exit_tail(self, bid: int, cleanup: list[ast.stmt], ctx: Ctx,
                  continuation: tuple[Key, ...] | None = None) -> bool:
        """Does block ``bid`` only finish a ``return``/``break``/``continue`` of the body
        (rather than continue after the construct)?

        A return whose value the body computed (it arrives on the stack) is one; a return
        that computes its own value is code after the construct, unless ``continuation``
        (what the construct does after its body, e.g. when a ``with`` suppresses an
        exception) says otherwise."""
        block = self.blocks.get(bid)
        if block is None:
            return False
        spills = value_spills(block)
        stmts = block.stmts[spills:]
        rest = strip_prefix(stmts, cleanup)
        if cleanup and rest is stmts:
            return False
        term = block.term
        if rest and term.kind == "return" and not spills and (
                any(term.value is e for e in block.entry)
                or self.returns_in_place and isinstance(term.value, ast.Constant)):
            # a return through the clean-ups of enclosing constructs (an except
            # clause's too)
            return not self._strip_enclosing(rest, ctx, clauses=True)
        if rest:
            return False
        if spills and term.kind == "goto" and not stmts:
            # the value named, then on to the clean-ups and the return of that name (a
            # conditional expression returned through an enclosing clause's end)
            nxt = self.blocks.get(term.targets[0])
            if nxt is None or nxt.term.kind != "return" or len(nxt.entry) != len(block.exit):
                return False
            k = entry_index(nxt, nxt.term.value)
            return k is not None \
                and fact(block.exit[k], ORIGIN, None) is cast(
                    ast.Assign, block.stmts[0]).value \
                and not self._strip_enclosing(nxt.stmts, ctx, clauses=True)
        if spills:  # the value, named before the clean-up copy could change it
            return term.kind == "return" \
                and fact(term.value, ORIGIN, None) is cast(ast.Assign, block.stmts[0]).value
        if term.kind == "goto" and term.targets[0] in ctx.tails:
            # on to an enclosing construct's exit tail (a ``return`` in a ``with`` in a
            # ``try``: the with's clean-up copy, then the try's return), which may run
            # the enclosing constructs' clean-ups first
            # (through each enclosing construct's tail: ``with`` in ``with`` in ``try``)
            nxt = self.blocks.get(term.targets[0])
            passed: list[ast.stmt] = []
            for _ in range(len(ctx.cleanups)):
                if nxt is None or nxt.term.kind != "goto" \
                        or nxt.term.targets[0] not in ctx.tails:
                    break
                passed.extend(nxt.stmts)
                nxt = self.blocks.get(nxt.term.targets[0])
            if nxt is not None and nxt.term.kind == "return" \
                    and not self._strip_enclosing([*passed, *nxt.stmts], ctx):
                k = entry_index(nxt, nxt.term.value)
                if not passed and k is not None and len(nxt.entry) == len(block.exit) \
                        and not any(block.exit[k] is e for e in block.entry):
                    # the value returned is computed after the copy (a body's own
                    # ``return`` computes it before): code after the construct
                    return False
                block, term = nxt, nxt.term
        if term.kind == "goto" and not stmts:
            nxt = self.blocks.get(term.targets[0])
            if nxt is not None and nxt.term.kind == "return" \
                    and any(nxt.term.value is e for e in nxt.entry) \
                    and not self._strip_enclosing(nxt.stmts, ctx, clauses=True):
                return True  # a jump to a return of the body's value (through clean-ups)
        if term.kind == "goto" and ctx.loop is not None:
            dest = self.through(term.targets[0])
            # (not when a ``with`` that suppresses an exception goes there too: then the
            # ``break``/``continue`` comes after the statement)
            return dest in (ctx.loop.cont, ctx.loop.follow) \
                and continuation != ("goto", str(dest))
        if term.kind != "return":
            return False
        if continuation is not None:
            return term_key(block) != continuation
        value = term.value
        if self.returns_in_place and isinstance(value, ast.Constant):
            return True
        return value is not None and any(value is e for e in block.entry)

    def _strip_enclosing(self, stmts: list[ast.stmt], ctx: Ctx,
                         clauses: bool = False) -> list[ast.stmt]:
        """``stmts`` without the clean-up copies of the enclosing constructs, innermost
        first (what a ``return`` through them runs); ``clauses``: through enclosing
        except clauses too."""
        for outer in reversed(ctx.cleanups):
            if not stmts or outer.kind == "clause" and not clauses:
                break
            stripped = strip_prefix(stmts, outer.stmts)
            if stripped is stmts:
                break
            stmts = stripped
        return stmts

    def suppress_continuation(self, h: int, ctx: Ctx) -> tuple[Key, ...] | None:
        """What a ``with`` does after its ``__exit__`` suppressed an exception."""
        stops = (ctx.loop.cont, ctx.loop.follow) if ctx.loop is not None else ()
        block = self.blocks.get(h)
        if block is None or block.term.kind != "branch":
            return None
        target = self.blocks.get(block.term.targets[0])
        seen = 0
        while target is not None and seen < 4:
            seen += 1
            stmts = [s for s in target.stmts if not is_marker(s, "pop_except")]
            if stmts:
                return None
            if target.term.kind == "goto":
                nxt = self.through(target.term.targets[0])
                if nxt in stops:
                    return ("goto", str(nxt))  # (a ``break``/``continue`` of its own)
                follow = self.blocks.get(nxt)
                if follow is not None and not follow.stmts or follow is not None and all(
                        is_marker(x, "pop_except") for x in follow.stmts):
                    target = follow
                    continue
                return ("goto", str(nxt))
            return term_key(target)
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
            while k < len(target.stmts) and is_marker(target.stmts[k], "pop_except"):
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
        if not out or not is_marker(out[-1], "with"):
            raise Unstructurable("with body without its set-up")
        marker = out.pop()
        assert isinstance(marker, ExcMarker)
        mgr = marker.value
        is_async = marker.flag
        region = self.protected(h) & ctx.region
        exit_call = exit_call_for(mgr, is_async)
        follow, tails = self.body_exit(region, ctx, [exit_call], self.suppress_continuation(h, ctx))
        block = self.blocks[b]
        target: ast.expr | None = None
        skip = 0
        if block.stmts:
            first = block.stmts[0]
            value = enter_value(first)
            if value is not None:
                skip = 1
                if isinstance(first, ast.Assign):
                    target = first.targets[0]
        cleanup = Cleanup([exit_call], "with")
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=follow,
                      cleanups=(*ctx.cleanups, cleanup), tails=ctx.tails | tails)
        body = self.seq(b, sub, skip_stmts=skip, at_header=starts_loop(b, ctx))
        item = ast.withitem(context_expr=cast(ast.expr, mgr), optional_vars=target)
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
        stripped = strip_prefix(block.stmts, strip)
        if stripped is block.stmts and strip:
            if not any(isinstance(s, COMPOUND) for s in strip):
                raise Unstructurable("construct exit without its clean-up copy")
            # a clean-up with blocks of its own (a ``with`` in ``finally``): structure
            # what follows and take the copy off its front
            spills = value_spills(block)
            raw = self.seq(follow, ctx)
            # (the compiler copies a constant ``return`` of the body into each path of
            # the copy; one after the statement is written once, after it)
            copied = len(raw) > spills and isinstance(raw[-1], ast.If) and raw[-1].orelse \
                and isinstance(raw[-1].body[-1], ast.Return)
            returning = returning_clauses(raw, block)
            # (an ending written twice stays apart, unless only the copy's own if ends
            # in both: a return in the finally and the function's implicit one)
            rest_stmts = flatten_leaving(fold_nested_ifs(hoist_common_tail(returning,
                                                                              True)))
            if not starts_with(rest_stmts[spills:], strip):
                rest_stmts = flatten_leaving(fold_nested_ifs(hoist_common_tail(
                    returning)))
            head, rest_stmts = rest_stmts[:spills], rest_stmts[spills:]
            if not starts_with(rest_stmts, strip):
                # an arm of the copy that returns, sharing the return after it; a
                # ``break`` out of the copy's last loop to the return after it
                rest_stmts = breaks_to_after(flatten_leaving(returning_arms(rest_stmts)),
                                              len(strip))
                if not starts_with(rest_stmts, strip):
                    raise Unstructurable("construct exit without its clean-up copy")
            after = rest_stmts[len(strip):]
            node = out[-1]
            if isinstance(node, ast.Try) and node.finalbody:
                # values named before the copy were computed at the end of the body,
                # and a ``return`` of one is the body's own ``return``
                value = returned_from_body(after, block, head)
                if value is None and copied and not head and len(after) == 1 \
                        and isinstance(after[0], ast.Return) \
                        and isinstance(after[0].value, ast.Constant):
                    value = after[0].value
                body = [s for s in node.body if not isinstance(s, ast.Pass)]
                if value is not None:
                    node.body = [*body, ast.Return(value=value)]
                    return None
                if head:
                    node.body = [*body, *head]
            elif head:
                raise Unstructurable("construct exit without its clean-up copy")
            out.extend(after)
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
        stops: set[int] = set()  # (and the region's blocks, not copied: one per try)
        if ctx.loop is not None:
            stops |= {ctx.loop.cont}
            if ctx.loop.follow is not None:
                stops.add(ctx.loop.follow)
        while todo:
            n = todo.pop()
            if n in extra or n in ctx.region or n in stops or n not in self.blocks:
                continue
            extra.add(n)
            todo.extend(self._succs(n))
        return ctx.region | frozenset(extra)

    def except_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        hregion = self.handler_region(h, ctx)
        region = self.protected(h) & ctx.region
        body_exit, tails = self.body_exit(region, ctx, lines=(self.blocks[b].line,
                                                              self.blocks[h].term.line))
        if body_exit is None:
            after_try = self._continue_laid_after(tails, h, ctx)
            if after_try is not None:
                body_exit, tails = after_try, tails - {after_try}
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=body_exit,
                      tails=ctx.tails | tails)
        body = self.seq(b, sub, at_header=starts_loop(b, ctx))
        handlers: list[ast.ExceptHandler] = []
        exits: list[tuple[int, int]] = []
        cur: int | None = h
        first = True
        while cur is not None:
            hb = self.visit(cur)
            stmts = [s for s in hb.stmts if not (first and is_marker(s, "push_exc_info"))]
            first = False
            term = hb.term
            if term.kind == "branch" and not stmts and isinstance(term.test, ExcMatch):
                types = term.test.types
                match_t, next_t = term.targets
                clause_block = self.blocks[match_t]
                cname: str | None = None
                skip = 0
                if clause_block.stmts and stores_exc(clause_block.stmts[0]):
                    tgt = clause_block.stmts[0].targets[0]
                    if isinstance(tgt, ast.Name):
                        cname = tgt.id
                        skip = 1
                info = ClauseInfo(cname, ctx.follow)
                cleanup = Cleanup(clause_cleanup(cname), "clause")
                csub = replace(ctx, clause=info, follow=None, region=hregion,
                               cleanups=(*ctx.cleanups, cleanup))
                cbody = self.seq_clause(match_t, csub, skip)
                handlers.append(ast.ExceptHandler(type=types, name=cname,
                                                  body=cbody or [ast.Pass()]))
                exits.extend(info.exits)
                cur = next_t
                continue
            if term.kind == "reraise" and not stmts and is_exc(term.value):
                break
            # a bare ``except:`` clause: the rest of this handler
            info = ClauseInfo(None, ctx.follow)
            cleanup = Cleanup(clause_cleanup(None), "clause")
            csub = replace(ctx, clause=info, follow=None, region=hregion,
                           cleanups=(*ctx.cleanups, cleanup))
            self.visits[cur] -= 1
            cbody = self.seq_clause(cur, csub, 1 if hb.stmts and is_marker(
                hb.stmts[0], "push_exc_info") else 0)
            handlers.append(ast.ExceptHandler(type=None, name=None, body=cbody or [ast.Pass()]))
            exits.extend(info.exits)
            break
        if not handlers:
            raise Unstructurable("try without handlers")
        merge = self.clause_merge(exits)
        if body_exit is None and body and isinstance(body[-1], ast.Break) and self.layout.dead_code \
                and merge is not None and any(t in self.blocks and self.blocks[t].term.targets == [merge] for t in tails):
            body_exit, body = merge, body[:-1]  # (3.8/3.9: the break after the try, which
            # the clauses go on to too, and the body jumps to: see ``unthread``)
        if body_exit is None and body and isinstance(body[-1], ast.Break) \
                and self._break_laid_after(tails, h, ctx):
            # (3.10: a ``break`` laid out after the clauses, which the body jumps over
            # them to, is the ``else`` clause's; one in the body comes before them)
            after = self.finish_try(body[:-1], handlers, body_exit, merge, h, ctx, out)
            out[-1].orelse = [body[-1]]  # type: ignore[attr-defined]  # finish_try's Try
            return after
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
                and body_exit == ctx.follow and self._only_jumps_to(merge, body_exit):
            # (the clauses' jump to where an enclosing try goes on is that try's last
            # code; the body jumps there straight)
            merge = body_exit
        if merge is not None and body_exit is not None and merge != body_exit \
                and self.blocks[merge].term.kind in ("return", "raise", "reraise") \
                and self.content_key(self.blocks[merge]) == \
                self.content_key(self.blocks[body_exit]):
            merge = body_exit  # the clauses end in a copy of the code after the statement
        orelse: list[ast.stmt] = []
        trailing: list[ast.stmt] | None = None  # (written after it, where it ends a clause)
        after = merge
        if body_exit is not None:
            if merge is None:
                after = body_exit
                layout_else: LayoutElse = self.else_by_layout(body_exit, h, ctx)
                if layout_else is None and self.layout.dead_code:
                    layout_else = try_end_else(self.g.cfg, self.blocks, h, body_exit,
                                               self.through(body_exit))
                if layout_else is None and (self._ends_loop_body(ctx) or self.layout.dead_code
                                            and ctx.loop is not None) and clauses_continue(handlers):
                    # (each clause ends where the loop goes on, by the compiler's jump
                    # to the end of the statement: the body's way on is its else clause)
                    layout_else = (ctx.follow,)
                if layout_else:  # (``()``: 3.8/3.9's layout says it has none)
                    orelse = self.seq(body_exit, ctx.following(layout_else[0]))
                    after = layout_else[0]
            elif body_exit != merge:
                info = ctx.clause
                left = len(info.exits) if info is not None else 0
                orelse = self.seq(body_exit, ctx.following(merge))
                if info is not None and len(info.exits) > left:
                    # the else part leaves the enclosing except clause: what the clauses
                    # go on to must leave it too (the code after the statement), or leave
                    # otherwise (``return``), and then it ends each clause
                    left = len(info.exits)
                    trailing = self.seq(merge, ctx)
                    if len(info.exits) == left:
                        if not trailing or not isinstance(trailing[-1], _LEAVES):
                            raise Unstructurable(
                                "except clauses and else go on in different places")
                        self.end_clauses(handlers, trailing)
                        trailing, orelse = orelse, []
        make = ast.TryStar if star else ast.Try  # type: ignore[attr-defined, unused-ignore]  # 3.10
        node = make(body=body or [ast.Pass()], handlers=handlers, orelse=orelse,
                    finalbody=[])
        out.append(node)
        if trailing is not None:
            out.extend(trailing)
            return None
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
        body = self.seq(b, sub, at_header=starts_loop(b, ctx))
        depth = len(self.blocks[h].entry) + 3  # ..., prev exc, exc, raised list, rest
        cleanup = self.blocks[h].handler_block  # around all of the handler's code
        if cleanup is None:
            raise Unstructurable("except* handler without its clean-up")
        for bid in self.blocks:
            if cleanup in self._raw_chain(bid):
                self._machinery[bid] = depth
        handlers: list[ast.ExceptHandler] = []
        lists = frozenset(s.targets[0].id for s in self.blocks[h].stmts
                          if isinstance(s, ast.Assign) and isinstance(s.value, ast.List)
                          and isinstance(s.targets[0], ast.Name))
        # 3.13+ copies "add the rest to the list" into each way the last clause ends: put
        # it back into the block that raises what is left
        ends = [bid for bid in self._machinery if len(self.blocks[bid].entry) in (depth - 1, depth)
                and self.blocks[bid].term.kind == "branch"
                and mentions_special(self.blocks[bid].term.test, "reraise_star")]
        if len(ends) != 1:
            raise Unstructurable("except* statement without its end")
        for p in self.preds(ends[0]):
            pb = self.blocks[p]
            if pb.stmts and is_list_append(pb.stmts[-1], lists) and p in self._machinery:
                pb.stmts = pb.stmts[:-1]
        cur = h
        while True:
            hb = self.visit(cur)
            eg = eg_test(hb.term.test) if hb.term.kind == "branch" else None
            if eg is None:
                break
            if any(not is_eg_machinery(s) for s in hb.stmts):
                raise Unstructurable("code between except* clauses")
            no_match, match_t = hb.term.targets
            join = self.through(no_match)
            first = self.blocks[match_t].stmts[:1]
            name: str | None = None
            if first and isinstance(first[0], ast.Assign) and len(first[0].targets) == 1 \
                    and isinstance(first[0].targets[0], ast.Name) \
                    and eg_match_of(first[0].value) is not None:
                name = first[0].targets[0].id
            csub = replace(ctx, follow=join, region=hregion, clause=None)
            cbody = self.seq(match_t, csub, skip_stmts=1 if name else 0)
            stripped = strip_clause_end(cbody, name, lists)
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
        if last.term.kind != "branch" or not mentions_special(last.term.test, "reraise_star"):
            raise Unstructurable("except* statement without its end")
        n = last.term.targets[0]  # (``rest is None``: nothing left to raise)
        for _ in range(4):
            block = self.visit(n)
            idx = find_marker(block.stmts, "pop_except")
            if idx is not None:
                if any(not is_marker(x, "pop_except") for x in block.stmts[:idx]):
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
        """Where block ``bid`` is laid out (a test split off a block: where that ends)."""
        block = self.blocks[bid]
        if block.blocks:
            return block.blocks[0]
        origin = self._split_of.get(bid)
        origin_block = self.blocks.get(origin) if origin is not None else None
        return origin_block.blocks[-1] if origin_block is not None and origin_block.blocks \
            else bid

    def end_clauses(self, handlers: list[ast.ExceptHandler], tail: list[ast.stmt]) -> None:
        """End each clause that falls through with ``tail``, which leaves."""
        first = True
        for handler in handlers:
            if handler.body and isinstance(handler.body[-1], _LEAVES):
                continue
            body = [s for s in handler.body if not isinstance(s, ast.Pass)]
            handler.body = [*body, *(tail if first else copy.deepcopy(tail))]
            first = False

    def else_by_layout(self, body_exit: int, h: int, ctx: Ctx) -> tuple[int | None] | None:
        """When no except clause falls through, only the layout tells an ``else`` clause
        from code after the statement: 3.10/3.11 put ``else`` between body and handler.
        Returns ``(follow,)`` for an else clause ending at ``follow`` (None: it exits)."""
        hpos = self.position(h)
        if self.position(body_exit) > hpos:
            return None
        if self.layout.else_after_body and self._jumps_past(body_exit, hpos):
            return None  # (over the handler: to the code after the statement)
        seen: set[int] = set()
        todo = [body_exit]
        after: set[int] = set()
        code_before = False
        loop = ctx.loop
        leave = (loop.cont, loop.follow) if loop is not None else ()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            if n in leave or n not in ctx.region and self.through(n) in leave:
                continue  # (``continue``/``break``: not the code after the statement)
            if n not in ctx.region or n == ctx.follow or self.position(n) > hpos:
                after.add(n)
                continue
            seen.add(n)
            block = self.blocks[n]
            if ctx.clause is not None and find_marker(block.stmts, "pop_except") is not None:
                return None  # (the code ends the enclosing except clause: after the try)
            code_before |= bool(block.stmts) or block.term.kind != "goto"
            todo.extend(self._succs(n))
        if not code_before:
            return None
        # 3.12+ moves handlers to the end in the order their code was compiled: one of
        # the code here laid out before this statement's handler was compiled before it,
        # as an else clause is; otherwise the code is the same either way, and code
        # after the statement is what people write
        enclosing = set(self.chain(body_exit))
        compiled_before = any(x not in enclosing and self.position(x) < hpos
                              for n in seen for x in self.chain(n))
        if len(after) == 1:
            end = after.pop()
            if not self.layout.else_after_body and end in self.blocks \
                    and self.effective_handler(end) != self.effective_handler(body_exit):
                return None  # (3.10: the code goes on into a with or try: after the try)
            return (end,) if not self.layout.cold_handlers or compiled_before else None
        if after:
            return None
        # nothing after the handler: an else clause only if ordinary code is laid out
        # after handlers at all (3.12+ moves handlers to the end of the function)
        if self.layout.cold_handlers:
            return (None,) if compiled_before else None
        if any(self.position(n) > hpos and not self.chain(n) for n in ctx.region
               if n in self.blocks and n not in self.protected(h)):
            return (None,)
        return None

    def _ends_loop_body(self, ctx: Ctx) -> bool:
        """Does the loop go on to its next turn where this statement ends?"""
        loop = ctx.loop
        return loop is not None and ctx.follow is not None \
            and (ctx.follow == loop.cont or self.through(ctx.follow) == loop.cont)

    def _only_jumps_to(self, bid: int, dst: int) -> bool:
        block = self.blocks.get(bid)
        return block is not None and not block.stmts and block.term.kind == "goto" \
            and block.term.targets[0] == dst and not self.slot_assignments(bid, dst)

    def _jumps_past(self, bid: int, pos: int) -> bool:
        """Does block ``bid`` open with a jump of its own to code laid out after ``pos``
        (the jump and the code it goes to made one block)?"""
        block = self.blocks[bid]
        cfg = self.g.cfg
        first = cfg.blocks.get(block.blocks[0]) if block.blocks else None
        return len(block.blocks) > 1 and first is not None and first.end - first.start == 1 \
            and cfg.bc.instrs[first.start].op == "JUMP" and block.blocks[1] > pos

    def finally_stmt(self, b: int, h: int, ctx: Ctx, out: list[ast.stmt]) -> int | None:
        hb = self.blocks[h]
        fctx = replace(ctx, follow=None, clause=None, region=self.handler_region(h, ctx))
        skip = 1 if hb.stmts and is_marker(hb.stmts[0], "push_exc_info") else 0
        stripped = strip_reraise(self.seq(h, fctx, skip_stmts=skip))
        if stripped is None:
            raise Unstructurable("finally handler does not re-raise")
        # (the compiler copies the short end of a clean-up into both arms of its last
        # ``if``, on the way to the re-raise: written once, after the ``if``)
        final = fold_test_temps(flatten_leaving(fold_nested_ifs(hoist_common_tail(stripped))))
        region = self.protected(h) & ctx.region
        body_exit, tails = self.body_exit(region, ctx, final)
        cleanup = Cleanup(final, "finally")
        sub = replace(ctx, handler=h, region=region | tails | (ctx.tails & ctx.region), follow=body_exit,
                      cleanups=(*ctx.cleanups, cleanup), tails=ctx.tails | tails)
        body = self.seq(b, sub, at_header=starts_loop(b, ctx))
        node = ast.Try(body=body or [ast.Pass()], handlers=[], orelse=[],
                       finalbody=final or [ast.Pass()])
        out.append(node)
        if body_exit is None:
            return None
        return self.continue_after(body_exit, final, ctx, out)
