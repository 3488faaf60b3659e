"""From basic blocks to IR blocks: statements, an exit stack and a terminator each.

A chain of blocks with single entries becomes one IR block. At a conditional jump the
translator explores both branches speculatively; when they are pure expressions that
meet again (``a if c else b``, ``a and b``, ``a < b < c``) or conditions sharing a
target (``if a and not b:``), the branches fold into one expression and translation
goes on, so that values kept on the stack across the jumps stay expressions.

What is left are branches with statements in them; their stack values cross block
boundaries as variables named after the stack slot (``_s0``...), assigned on the edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypeAlias, TypeGuard, cast

from ...bytecode import Handler, has_opcode
from ...errors import DecompilationError
from ..graph.cfg import CFG, Block
from ..graph.layout import BlockLayout
from ..graph.regions import reverse_postorder
from ..ir.blocks import IRBlock, IRGraph, Term
from ..ir.exprs import (
    Cell,
    ExcMatch,
    MethodSelf,
    Null,
    Shared,
    Slot,
    Special,
    const,
    handler_values_only,
    is_stable,
    negate,
)
from ..ir.facts import KIND, SEQ, attach, fact
from ..ir.nodes import nodes_under
from .executor import Executor
from .machine import Context, Speculation, State, next_seq, stamp
from .merging import boolop, conditional, merge_values, same_stack


@dataclass(slots=True)
class _Outcome:
    kind: str  # goto | branch | exit (a ``return <constant>`` and nothing else)
    state: State
    targets: list[int]
    test: ast.expr | None
    absorbed: list[int]
    src: int = -1
    fall: int = -1
    line: int | None = None  # an exit's: the line of its ``return``


# speculative runs allowed per block (folding a branch explores both sides, a chained
# test's clean-up once more): enough for every chain, and bounded by the code's size
# rather than by a constant, so that long code comes out in the same style as short code
_SPECULATION_PER_BLOCK = 4
_MIN_SPECULATION = 400
# folds inside folds whose true side starts on another line from an empty stack
_MAX_APART = 3


class _Members:
    """Blocks ``base`` less ``less`` and ``more``, for ``in`` only: a set of the blocks
    around a fold without copying ``base`` (a superblock's blocks, as many as the
    function's statements; copied for every branch folded, quadratic). ``base`` does not
    change while this is in use; ``add``/``update`` add to ``more``."""

    __slots__ = ("base", "more", "less", "depth")
    base: set[int] | _Members
    more: set[int]
    less: set[int]
    depth: int

    def __init__(self, base: set[int] | _Members, more: Iterable[int] = (),
                 less: Iterable[int] = ()) -> None:
        self.depth = base.depth + 1 if isinstance(base, _Members) else 1
        if self.depth > 16:  # (a deep chain of views: one set again)
            base, self.depth = cast(_Members, base).flat(), 1
        self.base = base
        self.more = set(more)
        self.less = set(less)

    def __contains__(self, x: object) -> bool:
        return x in self.more or (x not in self.less and x in self.base)

    def __or__(self, other: Iterable[int]) -> _Members:
        return _Members(self, other)

    def __sub__(self, other: Iterable[int]) -> _Members:
        return _Members(self, (), other)

    def add(self, x: int) -> None:
        self.more.add(x)

    def update(self, xs: Iterable[int]) -> None:
        self.more.update(xs)

    def flat(self) -> set[int]:
        base = self.base.flat() if isinstance(self.base, _Members) else self.base
        return {x for x in base if x not in self.less} | self.more


_Blocks: TypeAlias = "set[int] | _Members"  # blocks, for ``in``

# values a block's entry keeps where every way in brings the same one (a handler's: the
# values its protected blocks entered with; a join's: what each predecessor passes)
# (tuples, made once: ``isinstance`` with ``A | B`` builds the union on every call)
_HANDLER_KEPT = (Special, Cell)
_LOOP_KEPT = (Special, Cell, Null, MethodSelf)

class Translator:
    """Runs the executor over a CFG's blocks in reverse postorder and builds the IR graph.

    It owns the stack each block starts with (values left on the stack across a jump
    are carried as slots, ``_s<k>``), the mapping from CFG blocks to IR blocks, and each
    IR block's terminator (jump, branch, loop, return, raise, exception edges).
    ``lowering``: for the state machine, values never cross a handler's region."""

    def __init__(self, cfg: CFG, ctx: Context, entry_stack: list[ast.expr] | None = None,
                 lowering: bool = False) -> None:
        self.cfg = cfg
        # for the state machine: a value leaves its handler's region only as a variable
        # (each state is its own ``try``; the value must be computed inside it)
        self.lowering = lowering
        self.bc = cfg.bc
        self.blocks_layout = BlockLayout(cfg)
        # (3.8/3.9: where the ``if`` arm a ``break``/``continue`` ends goes on, as its dead
        # jump after it says: a block of its own, for the structurer to end the ``if`` at)
        # (and where the ``try`` statement an except clause's ``raise`` ends ends, or the
        # ``if`` statement an arm's ``raise`` ends, past its ``else`` arm)
        self.arm_ends = set(cfg.dead_jumps.values())
        # (the code's version folds ``not a in b`` in a test: see ir.exprs.negate)
        self.folded = cfg.bc.layout.folded_not_tests
        self.ctx = ctx
        self.ex = Executor(ctx)
        self.entry_stack = entry_stack or []
        self.ex.shares = bool(self.entry_stack)  # (values from outside may be shared)
        # (whether a test may hold an ``except*`` clause's split, which ``_fold`` looks for:
        # made by ``CHECK_EG_MATCH`` only, or among values from outside)
        self.eg_splits = bool(self.entry_stack) or has_opcode(ctx.code, ("CHECK_EG_MATCH",))
        self.owner: dict[int, int] = {}  # cfg block -> IR block head
        self.ir: dict[int, IRBlock] = {}
        self.budget = self._speculation_budget()
        self.apart = 0  # folds running whose true side starts on another line (_MAX_APART)
        # loop headers: values assumed to come back unchanged along the back edges
        self.optimistic = True
        self.assumed: list[tuple[int, int, ast.expr]] = []

    # ------------------------------------------------------------ driver

    def run(self) -> IRGraph:
        graph = self._run()
        if self.assumed and not self._assumptions_hold():
            # a loop changed a value below the ones it works on (hand-made bytecode):
            # translate again with variables at loop headers
            self.optimistic = False
            self.owner, self.ir, self.assumed = {}, {}, []
            self.budget = self._speculation_budget()
            graph = self._run()
        return graph

    def _speculation_budget(self) -> int:
        return max(_MIN_SPECULATION, _SPECULATION_PER_BLOCK * len(self.cfg.blocks))

    def _assumptions_hold(self) -> bool:
        for bid, k, value in self.assumed:
            for st in self.incoming.get(bid, []):
                if k >= len(st) or st[k] is not value:
                    return False
        return True

    def _run(self) -> IRGraph:
        cfg = self.cfg
        blocks = cfg.blocks
        def succs(bid: int) -> list[int]:  # (its handler too)
            block = blocks[bid]
            out = [s for s in block.succs if s in blocks]
            handler = block.handler_block
            if handler is not None and handler in blocks:
                out.append(handler)
            return out

        order = reverse_postorder(cfg.entry, succs)
        pending_entry: dict[int, list[ast.expr]] = {cfg.entry: list(self.entry_stack)}
        self.incoming: dict[int, list[list[ast.expr]]] = {}
        for bid in order:
            if bid in self.owner:
                continue
            block = cfg.blocks[bid]
            if bid not in pending_entry and not block.handles and block.preds \
                    and all(p in self.owner for p in block.preds):
                continue  # every way in was folded into a copy of it: unreachable now
            entry = self._entry_stack(block, pending_entry)
            ir = self._translate(block, entry)
            self.ir[ir.id] = ir
            for t in ir.term.targets:
                tb = cfg.blocks.get(t)
                if tb is None:
                    continue
                stack = self._successor_stack(ir, t)
                self.incoming.setdefault(t, []).append(stack)
                if t not in pending_entry:
                    pending_entry[t] = stack
        for ir in self.ir.values():
            if ir.handler is not None:
                ir.handler_block = self.owner.get(ir.handler.target, ir.handler.target)
            for t in ir.term.targets:
                if t in self.ir:
                    self.ir[t].preds.append(ir.id)
        return IRGraph(self.ir, cfg.entry, cfg, shares=self.ex.shares)

    def _successor_stack(self, ir: IRBlock, target: int) -> list[ast.expr]:
        term = ir.term
        if term.kind == "for":
            if target == term.targets[0]:
                return [*ir.exit, Special("next")]
            return ir.exit[:-1]
        return list(ir.exit)

    def _entry_stack(self, block: Block, pending: dict[int, list[ast.expr]]) -> list[ast.expr]:
        if block.handles:
            h = self.cfg.blocks[block.handles[0]].handler
            assert h is not None
            stack: list[ast.expr] = [Slot(i) for i in range(h.depth)]
            protected = [self.ir.get(self.owner.get(p, -1)) for p in block.handles]
            if protected and all(p is not None for p in protected):
                entries = [p.entry for p in protected if p is not None]
                for k in range(h.depth):
                    first = entries[0][k] if k < len(entries[0]) else None
                    if isinstance(first, _HANDLER_KEPT) and all(
                            k < len(e) and e[k] is first for e in entries):
                        stack[k] = first
            if h.legacy:
                stack += [Special(k) for k in ("prev_tb", "prev_value", "prev_type",
                                               "exc_tb", "exc", "exc_type")]
            else:
                if h.lasti:
                    stack.append(Special("lasti"))
                stack.append(Special("exc"))
            return stack
        known = pending.get(block.id)
        if known is None:
            raise DecompilationError("cannot tell the stack depth at a jump target",
                                     code_name=self.ctx.qualname,
                                     offset=self.bc.instrs[block.start].offset)
        if block.id == self.cfg.entry and not block.preds:
            return known
        if len(block.preds) == 1 and block.id != self.cfg.entry:
            return known
        entry: list[ast.expr] = [Slot(i) for i in range(len(known))]
        incoming = self.incoming.get(block.id, [])
        complete = block.id != self.cfg.entry and (
            len(incoming) == len(block.preds)
            or all(p in self.owner for p in block.preds))  # edges folded into one block
        if complete and len(incoming) == 1:
            return known  # every edge comes from one superblock (a folded condition)
        if not complete and incoming and self.optimistic:
            # a loop header: an interpreter value under the loop's own (a with's
            # __exit__, a handler's exception) comes back unchanged; checked at the end
            for k in range(len(entry)):
                first = incoming[0][k] if k < len(incoming[0]) else None
                if isinstance(first, _LOOP_KEPT) and all(
                        k < len(st) and st[k] is first for st in incoming):
                    entry[k] = first
                    self.assumed.append((block.id, k, first))
        if complete:
            # a value every predecessor passes unchanged (a with's __exit__, a handler's
            # saved exception, a call's NULL) stays itself rather than becoming a variable
            for k in range(len(entry)):
                first = incoming[0][k] if k < len(incoming[0]) else None
                if (isinstance(first, _LOOP_KEPT) or first is not None
                        and is_stable(first) and not isinstance(first, Slot)) and all(
                        k < len(st) and st[k] is first for st in incoming):
                    entry[k] = first  # (a function or class name pushed before a branch)
                elif _is_temp(first) and all(k < len(st) and _is_temp(st[k])
                                             and cast(ast.Name, st[k]).id == first.id
                                             for st in incoming):
                    entry[k] = first  # the same temporary on every path
        return entry

    # ------------------------------------------------------------ superblocks

    def _translate(self, block: Block, entry: list[ast.expr]) -> IRBlock:
        state = State(list(entry))
        absorbed = [block.id]
        absorbed_set = {block.id}
        b = block
        while True:
            term = self._run_block(b, state)
            while term.kind == "branch":
                # (the set itself, not a view: nothing adds to ``inside`` or ``region``)
                folded = self._collapse(term, state, b.handler, absorbed_set, absorbed_set)
                if folded is None:
                    break
                term, absorbed_more = folded
                absorbed.extend(absorbed_more)
                absorbed_set.update(absorbed_more)
            if term.kind == "goto":
                nxt = self.cfg.blocks.get(term.targets[0])
                # (values left on the stack keep the blocks together, unless they are
                # those the block was entered with, a loop's iterator, or only those of
                # the except clause that holds the code: 3.10's ``break`` from a loop in
                # the clause to the clause's code after it)
                if nxt is not None and self._mergeable(nxt, b.handler, absorbed_set) \
                        and (not self._jumps_away(b, nxt) or bool(state.stack) and (
                            len(state.stack) != len(entry)
                            or any(x is not y for x, y in zip(state.stack, entry, strict=True)))
                            and not handler_values_only(state.stack)):
                    absorbed.append(nxt.id)
                    absorbed_set.add(nxt.id)
                    b = nxt
                    continue
            break
        self._finish(term, state, b.handler)
        ir = IRBlock(block.id, absorbed, list(entry), state.stmts, list(state.stack), term,
                     block.handler, line=self.bc.instrs[block.start].line)
        for a in absorbed:
            self.owner[a] = block.id
        return ir

    def _jumps_away(self, b: Block, nxt: Block) -> bool:
        """An explicit jump to code laid out elsewhere: kept as a block boundary, since
        the layout tells the structurer where ``else`` clauses end."""
        return nxt.start != b.end and self.bc.instrs[b.end - 1].op == "JUMP"

    def _mergeable(self, nxt: Block, handler: Handler | None,
                   absorbed: set[int] | _Members) -> bool:
        if nxt.id == self.cfg.entry or nxt.handles or nxt.id in absorbed \
                or nxt.id in self.arm_ends:
            return False
        # (``is`` first: blocks of one region hold the same handler object)
        if nxt.handler is not handler and nxt.handler != handler \
                or self.bc.instrs[nxt.start].op == "FOR_ITER":
            return False  # (a loop's test is a block of its own, also where none jumps back)
        return len(nxt.preds) == 1 or all(p in absorbed for p in nxt.preds)

    def _finish(self, term: Term, state: State, handler: Handler | None) -> None:
        """Assign to temporaries what is still pending before the block is left."""
        ex = self.ex
        ex.state = state
        if term.kind in ("return", "raise", "reraise", "branch", "for"):
            ex.materialize_all()
            if term.kind == "for" and state.stack:
                term.test = state.stack[-1]  # (the iterator, as named if it was)
        elif term.kind == "goto":
            # values for a join are assigned on the edge, in stack order; a single-entry
            # block in another handler region must not evaluate them inside its region
            target = self.cfg.blocks.get(term.targets[0])
            if target is not None and (len(target.preds) == 1 or self.lowering) \
                    and target.handler is not handler and target.handler != handler:
                ex.materialize_all(loads=self.lowering)

    def _run_block(self, b: Block, state: State) -> Term:
        """Execute block ``b`` on ``state``; return its terminator."""
        term = self._run_block_body(b, state)
        term.src = b.id
        return term

    def _run_block_body(self, b: Block, state: State) -> Term:
        instrs = self.bc.instrs
        last = instrs[b.end - 1]
        body_end = b.end - 1 if last.op in _TERMINATORS else b.end
        self.ex.run(state, instrs[b.start:body_end])
        self.ex.ins = last
        line = last.line
        op = last.op
        ex = self.ex
        if op == "JUMP":
            return Term("goto", [last.target], line=line, back=last.target <= b.start)
        if op.startswith("POP_JUMP_IF_"):
            value = ex.pop()
            fall, jump = b.end, last.target
            if op == "POP_JUMP_IF_FALSE":
                return Term("branch", [fall, jump], test=value, line=line, fall=fall)
            if op == "POP_JUMP_IF_TRUE":
                return Term("branch", [jump, fall], test=value, line=line, fall=fall)
            # (one test for both jumps, ``x is None``, so that a loop's test and its copy
            # at the loop's end read the same when one jumps on each sense: 3.11)
            test = stamp(ast.Compare(value, [ast.Is()], [const(None)]))
            attach(test, flipped=True)  # (the jump holds the sense: no operator to keep)
            targets = [jump, fall] if op == "POP_JUMP_IF_NONE" else [fall, jump]
            return Term("branch", targets, test=test, line=line, fall=fall)
        if op == "JUMP_IF_NOT_EXC_MATCH":
            types = ex.pop()
            exc = ex.pop()
            return Term("branch", [b.end, last.target], test=ExcMatch(exc, types), line=line,
                        fall=b.end)
        if op == "FOR_ITER":
            return Term("for", [b.end, last.target], test=ex.top(), line=line)
        if op == "RETURN_VALUE":
            return Term("return", value=ex.pop(), line=line)
        if op == "RAISE_VARARGS":
            n = last.arg or 0
            cause = ex.pop() if n == 2 else None
            raised = ex.pop() if n >= 1 else None
            return Term("raise", value=raised, cause=cause, line=line)
        if op == "RERAISE":
            items = ex.popn(last.argval or 1)
            # 3.10 re-raises a (traceback, value, type) triple: keep the value
            value = items[-2] if len(items) == 3 else items[-1]
            return Term("reraise", value=value, line=line)
        if op == "END_ASYNC_FOR":
            items = ex.popn(last.arg or 1)
            value = items[-2] if len(items) == 3 else items[-1]
            if len(items) == 3:
                ex.popn(3)  # 3.10: the exception state saved by the handler
            ex.pop()  # the async iterator
            return Term("end_async_for", [b.end], value=value, line=line)
        if op == "SEND":
            ex.fail("unsupported SEND loop")
        return Term("goto", [b.end], line=line)

    # ------------------------------------------------------------ folding branches

    def _explore(self, target: int, state: State, handler: Handler | None,
                 region: _Blocks, inside: _Blocks, src: int | None = None,
                 pending: frozenset[int] = frozenset()) -> _Outcome | None:
        """Run speculatively from ``target``; ``None`` when it has effects or is not simple.

        ``region`` are blocks not to enter again; ``inside`` are blocks whose edges into a
        join count as already folded (the superblock being built)."""
        block = self.cfg.blocks.get(target)
        if block is None:
            return None
        # (a block entered from elsewhere too is explored when every other entry is
        # an edge already folded into this expression: a chained test's clean-up)
        if block.id == self.cfg.entry or block.handles \
                or block.handler is not handler and block.handler != handler \
                or (len(block.preds) != 1 and (src is None or not all(
                    p == src or p in inside for p in block.preds))) \
                or block.id in region or block.id in self.owner:
            shared_exit = self._pure_exit(block, state, handler)
            if shared_exit is not None:
                return shared_exit
            return _Outcome("goto", state.fork(), [target], None, [])
        if self.budget <= 0:
            return None
        self.budget -= 1
        ex = self.ex
        saved = (ex.speculative, ex.spec_floor, ex.state, ex.ins, ex.spec_counts, ex.walrus)
        ex.spec_counts = dict(ex.spec_counts)
        ex.walrus = {k: list(v) for k, v in ex.walrus.items()}
        ex.speculative = True
        ex.spec_floor = next_seq()
        st = state.fork()
        absorbed = [block.id]
        local_region = _Members(region, (block.id,))
        local_inside = _Members(inside, (block.id,))
        try:
            b = block
            while True:
                term = self._run_block(b, st)
                while term.kind == "branch":
                    folded = self._collapse(term, st, handler, local_inside, local_region,
                                            pending)
                    if folded is None:
                        break
                    term, more = folded
                    absorbed.extend(more)
                    local_region.update(more)
                    local_inside.update(more)
                if term.kind == "goto":
                    nxt = self.cfg.blocks.get(term.targets[0])
                    if nxt is not None and nxt.id not in self.owner \
                            and nxt.id not in local_region \
                            and self._mergeable(nxt, handler, local_inside):
                        absorbed.append(nxt.id)
                        local_region.add(nxt.id)
                        local_inside.add(nxt.id)
                        b = nxt
                        continue
                    return _Outcome("goto", st, list(term.targets), None, absorbed)
                if term.kind == "branch":
                    return _Outcome("branch", st, list(term.targets), term.test, absorbed,
                                    term.src, term.fall)
                if term.kind == "return" and not st.stmts and term.value is not None:
                    return _Outcome("exit", st, [], term.value, absorbed, line=term.line)
                return None
        except (Speculation, DecompilationError):
            return None
        finally:
            ex.speculative, ex.spec_floor, ex.state, ex.ins, ex.spec_counts, ex.walrus = saved

    def _collapse(self, term: Term, state: State, handler: Handler | None,
                  inside: _Blocks, region: _Blocks,
                  pending: frozenset[int] = frozenset()) -> tuple[Term, list[int]] | None:
        """Fold the branch ``term`` into an expression or a compound condition.

        ``pending``: branches being folded around this one, whose edges into a join
        count as folded here (``a and (b or c)``: the inner ``or`` meets ``a``'s edge)."""
        then_t, else_t = term.targets
        if then_t == else_t:
            return None
        # (a side that starts from an empty stack on another line may be the next
        # statement: each ``if`` would explore the next one's test, twice once its own
        # test folded, and exploring the rest of the function that way is exponential)
        apart = not state.stack and self.blocks_layout.line_of(then_t) not in (None, term.line)
        if apart and self.apart >= _MAX_APART:
            return None
        self.apart += apart
        try:
            return self._fold(term, state, handler, inside, region, pending)
        finally:
            self.apart -= apart

    def _fold(self, term: Term, state: State, handler: Handler | None,
              inside: _Blocks, region: _Blocks,
              pending: frozenset[int]) -> tuple[Term, list[int]] | None:
        then_t, else_t = term.targets
        test = term.test
        assert test is not None
        # (an ``eg_split`` is made shared, which sets ``shares``, as values from outside do:
        # without, the test holds none)
        if self.eg_splits and self.ex.shares and any(isinstance(n, Special) and n.kind == "eg_split"
                                  for n in nodes_under(test)):
            return None  # an ``except*`` clause's test stays one, however empty its body
        # the edges of this very branch are not folded yet
        joined = inside
        inside = _Members(inside, (), (term.src,))
        outer = pending | {term.src} if term.src is not None else pending
        then_o = self._explore(then_t, state, handler, region, inside, term.src, outer)
        if then_o is None or then_o.state.stmts:
            return None
        else_o = self._explore(else_t, state, handler, _Members(region, then_o.absorbed), inside,
                               term.src, outer)
        if else_o is None or else_o.state.stmts:
            return None
        # one side reaches a shared exit directly, the other after some code: a value
        # that meets at that block (not two exits)
        # (a shared exit is only an exit when the other side ends in one too)
        if then_o.kind == "exit" and then_o.targets and else_o.kind != "exit":
            then_o = _Outcome("goto", state.fork(), list(then_o.targets), None, [])
        if else_o.kind == "exit" and else_o.targets and then_o.kind != "exit":
            else_o = _Outcome("goto", state.fork(), list(else_o.targets), None, [])
        kept = bool(state.stack) and state.stack[-1] is test
        if kept:
            # (a kept test is an ``and``/``or``: where one side returns, the other side's
            # way to a block that only returns returns too; 3.10 copies the ``return``
            # into the last link of ``return a or b < c < d`` over two lines)
            then_o = self._returning(then_o, else_o, handler)
            else_o = self._returning(else_o, then_o, handler)
        # a value: both sides meet at one block with one more value (or the kept test)
        if then_o.kind == "goto" and else_o.kind == "goto" \
                and then_o.targets[0] == else_o.targets[0]:
            join = then_o.targets[0]
            merged = merge_values(test, then_o.state.stack, else_o.state.stack,
                                  term.fall == else_t, self.folded)
            if merged is not None and self._join_closed(join, _Members(joined, pending), then_o,
                                                        else_o, pending, region):
                state.stack[:] = merged
                return Term("goto", [join], line=term.line), then_o.absorbed + else_o.absorbed
            return None
        if not kept:
            folded = self._threaded_kept(term, test, state, then_o, else_o, handler, region)
            if folded is not None:
                return folded
        # both sides return a value: the compiler copied ``return`` into the arms of
        # ``return a or b`` / ``return x if c else y``
        if then_o.kind == "exit" and else_o.kind == "exit" and then_o.test is not None \
                and else_o.test is not None \
                and (kept or self._one_expression(term, then_o, else_o)):
            merged = merge_values(test, [then_o.test], [else_o.test], term.fall == else_t,
                                  self.folded)
            if merged is not None:
                # values left under the returned one are dropped with the frame; those
                # the merged value computes need no name of their own
                state.stack[:] = [v for v in state.stack if not _mentions(merged[0], v) and not (
                    isinstance(v, Shared) and _mentions(merged[0], v.value))]
                return (Term("return", [], value=merged[0], line=term.line),
                        then_o.absorbed + else_o.absorbed)
        # a side that only returns a constant goes where the other side's test sends it
        # to a copy of that return (3.12+ copies small exits: ``a < b < c``'s clean-up)
        copies: list[int] = []
        if else_o.kind == "exit" and then_o.kind == "branch":
            twin = self._exit_twin(then_o.targets, else_o)
            if twin is not None:
                copies = else_o.absorbed
                else_o = _Outcome("goto", else_o.state, [twin], None, [])
        if then_o.kind == "exit" and else_o.kind == "branch":
            twin = self._exit_twin(else_o.targets, then_o)
            if twin is not None:
                copies = then_o.absorbed
                then_o = _Outcome("goto", then_o.state, [twin], None, [])
        folded = self._fold_condition(term, test, state, then_o, else_o, kept)
        if folded is not None:
            return folded[0], folded[1] + copies
        return None

    def _fold_condition(self, term: Term, test: ast.expr, state: State, then_o: _Outcome,
                        else_o: _Outcome, kept: bool) -> tuple[Term, list[int]] | None:
        """Both sides test again: one compound condition (``and``/``or``/``if-else``)."""
        # ``a < b < c``: the middle value is kept for the second test and dropped on
        # the way out
        chained = self._chained(test, state, then_o, else_o, kept, term)
        if chained is not None:
            return chained
        # a condition: one side tests again and shares a target with the other side
        if then_o.kind == "branch" and else_o.kind == "goto" and not then_o.absorbed == []:
            t2, e2 = then_o.targets
            other, hops = self._only_jumps(else_o, term, then_o)
            if other is not None and same_stack(then_o.state.stack, state.stack, test,
                                                 then_o.test):
                # ``(b if a else 0)``: the constant the compiler knows is a jump of its own
                known = not kept and (len(else_o.absorbed) == 1
                                      and self.blocks_layout.constant_jump(
                                          else_o.absorbed[0], term.src, bool(state.stack))
                                      or not else_o.absorbed
                                      and self.blocks_layout.constant_dropped(t2, other, term.src))
                if self.blocks_layout.leads_to(other, e2, hops):
                    new = conditional(test, cast(ast.expr, then_o.test),  # (a branch's)
                                      stamp(ast.Constant(False)), False, self.folded) \
                        if known else boolop(ast.And, test, cast(ast.expr, then_o.test))
                    return self._compound(new, t2, e2, state, then_o, kept, term, hops)
                if self.blocks_layout.leads_to(other, t2, hops) and not kept:
                    new = conditional(test, cast(ast.expr, then_o.test),
                                      stamp(ast.Constant(True)), False, self.folded) \
                        if known else boolop(ast.Or, negate(test, self.folded),
                                             cast(ast.expr, then_o.test))
                    return self._compound(new, t2, e2, state, then_o, kept, term, hops)
        if else_o.kind == "branch" and then_o.kind == "goto" and else_o.absorbed:
            t2, e2 = else_o.targets
            other, hops = self._only_jumps(then_o, term, else_o)
            if other is not None and same_stack(else_o.state.stack, state.stack, test,
                                                 else_o.test):
                if self.blocks_layout.leads_to(other, t2, hops):
                    new = boolop(ast.Or, test, cast(ast.expr, else_o.test))
                    return self._compound(new, t2, e2, state, else_o, kept, term, hops)
                if self.blocks_layout.leads_to(other, e2, hops) and not kept:
                    new = boolop(ast.And, negate(test, self.folded), cast(ast.expr, else_o.test))
                    return self._compound(new, t2, e2, state, else_o, kept, term, hops)
        if then_o.kind == "branch" and else_o.kind == "branch" and not kept \
                and then_o.absorbed and else_o.absorbed \
                and same_stack(then_o.state.stack, state.stack, None, None) \
                and same_stack(else_o.state.stack, state.stack, None, None):
            assert then_o.test is not None and else_o.test is not None
            # (a target may be a block that only jumps on: ``q if (r if s else t) else u``)
            owned = set(then_o.absorbed) | set(else_o.absorbed)
            hops = []
            ends: list[list[int]] = []
            for side in (then_o, else_o):
                ends.append([])
                for t in side.targets:
                    end, more = self.blocks_layout.through_jumps(t, owned, self.owner)
                    ends[-1].append(end if more else t)
                    hops += more
            then_t2, else_t2 = ends
            then_v, else_v = then_o.test, else_o.test
            if then_t2 == else_t2[::-1]:
                else_v = negate(else_v, self.folded)
            elif then_t2 != else_t2:
                return None
            new = conditional(test, then_v, else_v, term.fall == term.targets[1], self.folded)
            # (its source is the then side's test: where both sides' branches start,
            # for a value folded around it that meets the conditional's targets)
            return (Term("branch", then_t2, test=new, line=term.line, src=then_o.src,
                         fall=then_o.fall),
                    then_o.absorbed + else_o.absorbed + hops)
        return None

    def _threaded_kept(self, term: Term, test: ast.expr, state: State, then_o: _Outcome,
                       else_o: _Outcome, handler: Handler | None,
                       region: _Blocks) -> tuple[Term, list[int]] | None:
        """``a and b or c`` (3.10, 3.11: ``(a or b) and c``): a test whose short-circuit
        target is also where the next (kept) test goes after popping its value."""
        for side, other, negated in ((then_o, else_o, False), (else_o, then_o, True)):
            if side.kind != "branch" or not side.absorbed or other.kind != "goto" \
                    or other.absorbed:
                continue
            t2 = side.test
            stack2 = side.state.stack
            if t2 is None or not stack2 or stack2[-1] is not t2 \
                    or len(stack2) != len(state.stack) + 1 \
                    or not same_stack(stack2[:-1], state.stack, None, None):
                continue
            x = other.targets[0]
            # the kept value is popped on its way to ``x`` when false (``and``), or
            # when true (``or``: the compiler threads the first test's jump past it)
            for popped in (1, 0):
                pop_target = side.targets[popped]
                probe = self._explore(pop_target, State(list(stack2)), handler,
                                      _Members(region, side.absorbed), set())
                if probe is not None and probe.kind == "goto" and probe.targets == [x] \
                        and not probe.state.stmts and probe.absorbed == [pop_target] \
                        and same_stack(probe.state.stack, state.stack, None, None):
                    break
            else:
                continue
            t_target, e_target = side.targets
            op = ast.And if popped else ast.Or
            first = negate(test, self.folded) if negated == (op is ast.And) else test
            combined = boolop(op, first, t2)
            shared = Shared(combined)
            self.ex.shares = True
            attach(shared, _seq=fact(combined, SEQ, None))
            state.stack.append(shared)
            return (Term("branch", [t_target, e_target], test=shared, line=term.line,
                         src=side.src, fall=side.fall), list(side.absorbed))
        return None

    def _compound(self, new: ast.expr, t2: int, e2: int, state: State, side: _Outcome,
                  kept: bool, term: Term, hops: list[int] | None = None
                  ) -> tuple[Term, list[int]]:
        if kept:
            shared = Shared(new)
            self.ex.shares = True
            attach(shared, _seq=fact(new, SEQ, None))
            state.stack[-1] = shared
            new = shared
        return (Term("branch", [t2, e2], test=new, line=term.line, src=side.src,
                     fall=side.fall),
                [*side.absorbed, *(hops or [])])

    def _only_jumps(self, side: _Outcome, term: Term, tested: _Outcome
                    ) -> tuple[int | None, list[int]]:
        """Where a side that runs no code goes, and the blocks it passes that only jump:
        a compiler's jump at the position of the test that falls into it (3.12+ jumps
        back only unconditionally: a test at the end of a loop jumps over a jump to the
        loop's head; a test whose value the compiler knows jumps over one: ``(0 if u
        else v)``), or, between two tests on one line, a jump to a return (to a copy of
        an exit shared again); None when it runs code."""
        instrs = self.bc.instrs
        one_line = term.line is not None and bool(tested.absorbed) \
            and self.blocks_layout.line_of(tested.absorbed[0]) == term.line
        for bid in side.absorbed:
            block = self.cfg.blocks[bid]
            if block.handles or block.end - block.start != 1 or block.start == 0 \
                    or instrs[block.start].op != "JUMP":
                return None, []
            if one_line and self.blocks_layout.is_return(instrs[block.start].target):
                continue  # (the compiler's copy of a ``return``, shared again by tails)
            valued = bool(side.state.stack)
            if not self.blocks_layout.compiler_jump(bid, valued) \
                    and not self.blocks_layout.constant_jump(bid, term.src, valued):
                return None, []
        return side.targets[0], list(side.absorbed)

    def _chained(self, test: ast.expr, state: State, then_o: _Outcome, else_o: _Outcome,
                 kept: bool, term: Term) -> tuple[Term, list[int]] | None:
        """``a < (s := b)`` true: test ``s < c``; false: drop ``s``. One ``and`` test."""
        if kept or not state.stack or then_o.kind != "branch" or else_o.kind != "goto":
            return None
        middle = state.stack[-1]
        below = state.stack[:-1]
        else_stack, else_to = else_o.state.stack, else_o.targets[0]
        dropped: list[int] = []
        if not else_o.absorbed and else_stack and else_stack[-1] is middle:
            # the clean-up that drops the middle value is shared with an inner link of
            # a longer chain (``a < b == c is d``): the outermost link folds it in
            after = self.blocks_layout.drop_one(else_to, then_o.targets[1])
            if after is not None:
                block = self.cfg.blocks[else_to]
                if all(p == term.src or p in then_o.absorbed for p in block.preds):
                    dropped = [else_to]
                else_stack, else_to = else_stack[:-1], after
        if not (isinstance(middle, Shared) or is_stable(middle)) \
                or not _mentions(test, middle) \
                or not _mentions(then_o.test, middle) \
                or not same_stack(then_o.state.stack, below, None, None) \
                or not same_stack(else_stack, below, None, None):
            return None
        t2, e2 = then_o.targets
        other, hops = self.blocks_layout.through_jumps(else_to, set(else_o.absorbed), self.owner)
        owned = {term.src, *then_o.absorbed}
        for kind, to in ((ast.And, e2), (ast.Or, t2)):
            end, passed = self.blocks_layout.through_jumps(to, owned, self.owner)
            if end != other and not (self.blocks_layout.exit_copy(end, other) and all(
                    p in owned or p in passed for p in self.cfg.blocks[end].preds)):
                continue
            if end != other:
                # the last link's way out is a copy of the clean-up's target (``assert
                # a and b < c < d``: the compiler copies the raise): the one target
                hops = [*hops, *passed, end]
                t2, e2 = (t2, other) if kind is ast.And else (other, e2)
                if then_o.fall in (to, end):
                    then_o = replace(then_o, fall=other)
            new = boolop(kind, test if kind is ast.And else negate(test, self.folded),
                         cast(ast.expr, then_o.test))
            break
        else:
            return None
        del state.stack[-1]
        folded, absorbed = self._compound(new, t2, e2, state, then_o, False, term)
        return folded, absorbed + else_o.absorbed + dropped + hops

    def _pure_exit(self, block: Block, state: State, handler: Handler | None) -> _Outcome | None:
        """A block several paths share that only drops stack values and returns one (the
        clean-up at the end of ``return a < b < c``): what it returns on this path."""
        if block.handles or block.handler is not handler and block.handler != handler \
                or block.id == self.cfg.entry \
                or block.end <= block.start or self.bc.instrs[block.end - 1].op != "RETURN_VALUE":
            return None  # (most blocks: not a return, not looked into further)
        instrs = self.bc.instrs[block.start:block.end]
        if not instrs or instrs[-1].op != "RETURN_VALUE" or any(
                i.op not in ("SWAP", "POP_TOP", "COPY", "NOP", "RETURN_VALUE") for i in instrs):
            return None
        st = state.fork()
        stack = st.stack
        for i in instrs[:-1]:
            if i.op == "SWAP":
                if len(stack) < (i.arg or 2):
                    return None
                stack[-1], stack[-(i.arg or 2)] = stack[-(i.arg or 2)], stack[-1]
            elif i.op == "COPY":
                if len(stack) < (i.arg or 1):
                    return None
                stack.append(stack[-(i.arg or 1)])
            elif i.op == "POP_TOP":
                if not stack:
                    return None
                stack.pop()
        if not stack:
            return None
        value = stack.pop()
        # (targets: the shared block, which other paths still reach)
        return _Outcome("exit", st, [block.id], value, [])

    def _returning(self, side: _Outcome, other: _Outcome,
                   handler: Handler | None) -> _Outcome:
        """``side`` as an exit where ``other`` returns and ``side`` goes to a block that
        only drops values and returns one."""
        if side.kind != "goto" or other.kind != "exit" or other.targets:
            return side
        block = self.cfg.blocks.get(side.targets[0])
        returned = None if block is None else self._pure_exit(block, side.state, handler)
        if returned is None:
            return side
        return replace(returned, absorbed=list(side.absorbed))

    def _one_expression(self, term: Term, *sides: _Outcome) -> bool:
        """Were both returns written as one expression (a lambda's body, or all on the
        line of the test), rather than as ``if c: return a`` and ``return b``?"""
        if self.ctx.code.co_name == "<lambda>":
            return True
        lines = {term.line}
        for side in sides:
            for bid in side.absorbed:
                block = self.cfg.blocks[bid]
                lines.update(i.line for i in self.bc.instrs[block.start:block.end]
                             if i.line is not None)
        return len(lines) == 1

    def _exit_twin(self, targets: list[int], exit_: _Outcome) -> int | None:
        """The one of ``targets`` that is just the ``return`` of a constant that ``exit_``
        is, both copies the compiler made of one exit (a copy has the position of the
        jump into it) or both on one line (on lines of their own, they are ``return``
        statements that the source wrote)."""
        if exit_.absorbed:
            for t in targets:
                if self.blocks_layout.exit_copy(exit_.absorbed[-1], t, clean_up=True):
                    return t
        value = exit_.test
        if not isinstance(value, ast.Constant):
            return None
        for t in targets:
            block = self.cfg.blocks.get(t)
            if block is None or block.handles or len(block.preds) != 1:
                continue
            ops = [i for i in self.bc.instrs[block.start:block.end] if i.op != "NOP"]
            if len(ops) == 2 and ops[0].op == "LOAD_CONST" and ops[1].op == "RETURN_VALUE" \
                    and type(ops[0].argval) is type(value.value) \
                    and ops[0].argval == value.value \
                    and (exit_.line in (None, ops[1].line) or ops[1].line is None
                         or bool(exit_.absorbed) and self.blocks_layout.copied_exit(exit_.absorbed[0])
                         and self.blocks_layout.copied_exit(t)):
                return t
        return None

    def _join_closed(self, join: int, folded: _Blocks, then_o: _Outcome, else_o: _Outcome,
                     pending: frozenset[int], region: _Blocks) -> bool:
        """All entries into ``join`` come from the two folded branches, or from the other
        arm of a conditional being folded around them, which meets them there (3.12+
        jumps from ``a or b`` in ``a or b if t else c`` straight to the end of the whole
        expression; so does ``c or d`` in the last arm)."""
        jb = self.cfg.blocks.get(join)
        if jb is None or jb.handles:
            return False
        absorbed = {*then_o.absorbed, *else_o.absorbed}
        extra = [p for p in jb.preds if p not in folded and p not in absorbed]
        if not extra:
            return True
        if not pending:
            return False
        ahead = self.blocks_layout.ahead(pending, join)
        return all(p in region or p in ahead for p in extra)

def _mentions(node: ast.expr | None, target: ast.expr) -> bool:
    return node is not None and any(n is target for n in ast.walk(node))


def _is_temp(node: ast.expr | None) -> TypeGuard[ast.Name]:
    return isinstance(node, ast.Name) and fact(node, KIND, "") == "temp"


#: the instructions that end a block for the translator (the executor runs the rest)
_TERMINATORS = frozenset({
    "JUMP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "JUMP_IF_NOT_EXC_MATCH", "FOR_ITER", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "SEND",
    "END_ASYNC_FOR"})
