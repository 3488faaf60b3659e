"""What the source wrote, told from what the compiler added by positions and lines.

The compiler copies a function's closing ``return None`` into every way that reaches
it and turns the end of a body into a jump of its own; the copies carry the position of
the code before them (or of the jump into them), a written statement its own. On 3.10,
without columns, lines tell them apart where they can.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ...codeobj import code_kind
from ..graph.regions import dominates

if TYPE_CHECKING:
    from ..graph.cfg import CFG
    from ..ir.blocks import IRBlock
    from .base import Ctx


def written_return(cfg: CFG, block: IRBlock) -> bool:
    """Is ``block``, a ``return None`` alone that several ways go to, a statement of
    the source? The implicit one at a function's end has no line: the compiler
    gives each way its own copy, on the line of the jump into it."""
    line = block.term.line
    first = cfg.blocks.get(block.blocks[0]) if len(block.blocks) == 1 else None
    if block.stmts or line is None or first is None or len(first.preds) < 2 \
            or [i.op for i in first.instrs(cfg.bc)] \
            != ["LOAD_CONST", "RETURN_VALUE"]:
        return False
    return all(cfg.blocks[p].last(cfg.bc).line != line for p in first.preds)


def exit_position(cfg: CFG, block: IRBlock) -> tuple[int | None, ...] | None:
    """Where the ``return`` or ``raise`` that ends ``block`` came from: its position (on
    3.10 its line). The compiler's copies of an exit share it; the same statement
    written twice has two."""
    last = cfg.blocks.get(block.blocks[-1]) if block.blocks else None
    if last is None:
        return None
    ins = last.last(cfg.bc)
    where = cfg.bc.position(ins)
    if where is not None and where[0] is not None:
        return where
    return (ins.line,) if ins.line is not None else None


def written_jump(cfg: CFG, block: IRBlock | None, test: IRBlock, width: int) -> bool:
    """Is ``block`` a jump of the source's own (a ``continue``: ``width``
    characters on a line of its own), not the compiler's jump for the end of a
    body? 3.10 has lines only: one other than the test's."""
    if block is None or block.stmts or len(block.blocks) != 1 or not test.blocks:
        return False
    bc = cfg.bc
    jump = cfg.blocks[block.blocks[0]].last(bc)
    tested = cfg.blocks[test.blocks[-1]].last(bc)
    on = cfg.blocks.get(jump.target)
    if bc.layout.dead_code and jump.op == "JUMP" and jump.line == tested.line \
            and on is not None and on.end - on.start == 1 and on.last(bc).op == "JUMP":
        jump = on.last(bc)  # (3.8/3.9: a chained comparison's jump to a body that jumps)
    where = bc.position(jump)
    if where is None or where[0] is None:
        return jump.line is not None and jump.line != tested.line
    # (the compiler's jump has the position of the test, whatever its width)
    return _width(where) == width and where != bc.position(tested)


def written_pass(cfg: CFG, block: IRBlock | None, test: IRBlock) -> bool:
    """Does ``block``, an arm laid out right after ``test`` that does nothing, start
    on a line of its own, a ``pass`` statement's (``if c: pass`` / ``else: ...``; its
    ``NOP``, or the clean-up after it, which takes its line)?"""
    if block is None or not block.blocks or not test.blocks:
        return False
    first = cfg.blocks.get(block.blocks[0])
    if first is None or first.end <= first.start:
        return False
    nop = cfg.bc.instrs[first.start]
    tested = cfg.blocks[test.blocks[-1]].last(cfg.bc)
    line = nop.line if nop.op == "NOP" or nop.op in _CLEAN_UP \
        else cfg.bc.nop_line_before(nop.offset)  # (the reader drops a ``NOP``)
    return line is not None and tested.line is not None and line > tested.line


def implicit_return(cfg: CFG, block: IRBlock) -> bool:
    """Is the ``return None`` that ends ``block`` the compiler's copy of the return
    at the function's end (the source wrote none)? A copy has the position of the
    code before it or of the jump into it; a written ``return`` has its own."""
    bc = cfg.bc
    last = cfg.blocks.get(block.blocks[-1]) if block.blocks else None
    if last is None or last.end - last.start < 2 \
            or bc.instrs[last.end - 1].op != "RETURN_VALUE" \
            or bc.instrs[last.end - 2].op != "LOAD_CONST":
        return False
    k = last.end - 2
    load = bc.instrs[k]
    if k > last.start:
        before = [bc.instrs[k - 1]]
    else:
        if not last.preds:
            return False
        before = [cfg.blocks[p].last(bc) for p in last.preds]
        if any(i.target >= 0 and i.target != last.start for i in before):
            return False  # (fallen into: a return written after a test)
    where = bc.position(load)
    if where is None or where[0] is None:  # (3.10: lines only)
        # (a written return in a clause shares its line with the clause's clean-up)
        return load.line is not None and all(
            i.line == load.line and i.op not in _CLEAN_UP for i in before)
    if all(bc.position(i) == where and i.op not in _CLEAN_UP for i in before):
        return True  # (a clause's clean-up before a written return has its position)
    # (a written ``return`` has the position of the keyword, ``return None`` of the
    # statement or of its ``None``)
    return _width(where) not in (4, 6, 11)


def written_continue(cfg: CFG, block: IRBlock) -> bool:
    """Does ``block`` end in a jump back of a ``continue`` statement (the position of
    the 8 characters ``continue`` on a line of its own, not that of the code before
    it; 3.10: another line than the code before it)?"""
    if not block.blocks:
        return False
    bc = cfg.bc
    last = cfg.blocks.get(block.blocks[-1])
    if last is None or last.end <= last.start or bc.instrs[last.end - 1].op != "JUMP":
        return False
    jump = bc.instrs[last.end - 1]
    k = last.end - 2
    while k >= last.start and bc.instrs[k].op in _CLEAN_UP:
        # (a clause's clean-up before the jump has the jump's position: its
        # ``POP_EXCEPT``, and ``name = None; del name`` for ``except E as name``)
        k -= 3 if bc.instrs[k].op.startswith("DELETE_") and k - 2 >= last.start \
            and bc.instrs[k - 1].op.startswith("STORE_") else 1
    if k >= last.start:
        before = [bc.instrs[k]]
    else:
        before = [cfg.blocks[p].last(bc) for p in last.preds]
    if bc.layout.dead_code and not _dead_clause_end(cfg, max(k + 1, last.start), last.end):
        return False  # (3.8/3.9: a ``continue`` keeps its clause's own end after it, dead)
    where = bc.position(jump)
    if where is None or where[0] is None:
        if bc.layout.dead_code:
            # (3.8/3.9: a loop's own jump back has the line of the code laid out before
            # it, clean-up aside; a ``continue``'s starts a line of its own)
            prev = bc.instrs[k] if k >= last.start else \
                bc.instrs[last.start - 1] if last.start > 0 else None
            return jump.line is not None and prev is not None and prev.line is not None \
                and prev.line != jump.line
        return jump.line is not None and bool(before) \
            and all(i.line is not None and i.line < jump.line for i in before)
    return _width(where) == 8 and all(bc.position(i) != where for i in before)


def back_kept(cfg: CFG, block: IRBlock) -> bool:
    """3.8/3.9: is the jump back that ends ``block`` followed by another to the same
    place, dead: the loop's own jump back at the end of its body, after a ``continue``
    written there?"""
    last = cfg.blocks.get(block.blocks[-1]) if block.blocks else None
    instrs = cfg.bc.instrs
    if last is None or not cfg.bc.layout.dead_code or last.end >= len(instrs) \
            or last.end in cfg.blocks:
        return False
    jump, after = instrs[last.end - 1], instrs[last.end]
    return jump.op == after.op == "JUMP" and jump.target == after.target < last.end


def kept_back_jump(cfg: CFG, head: int) -> int:
    """3.8/3.9: where the last jump back to the loop head at instruction ``head`` is
    kept, dead, after the loop's body (its last statement leaves: ``else: ...; break``):
    the loop's code ends there; -1 where none is (or the layout keeps no dead code)."""
    if not cfg.bc.layout.dead_code:
        return -1
    instrs = cfg.bc.instrs
    return max((i for i in range(head + 1, len(instrs)) if instrs[i].op == "JUMP"
                and instrs[i].target == head
                and not any(b.start <= i < b.end for b in cfg.blocks.values())), default=-1)


def _dead_clause_end(cfg: CFG, start: int, end: int) -> bool:
    """For a jump back at ``end - 1`` after the clean-up of an except clause from
    ``start`` (none: True): does dead code after it end that clause again, as 3.8/3.9
    keep it after a ``continue`` (a clause that ends as the loop goes on has none)?"""
    instrs = cfg.bc.instrs
    ops = [i.op for i in instrs[start:end]]
    if "POP_EXCEPT" not in ops:
        return True
    return end not in cfg.blocks and [i.op for i in instrs[end:end + len(ops)]] == ops


def continue_before_cleanup(cfg: CFG, block: IRBlock) -> bool:
    """Does a ``NOP`` the reader dropped, with the position of the 8 characters
    ``continue`` on a line of its own, stand in the straight code that leads to
    ``block``'s jump back? A ``continue`` runs the copy of a ``finally`` clause first,
    and its jump has that copy's position (3.11+)."""
    bc = cfg.bc
    cur = cfg.blocks.get(block.blocks[-1]) if block.blocks else None
    for _ in range(_CLEAN_UP_BLOCKS):
        if cur is None:
            return False
        for k in range(cur.start, cur.end):
            where = bc.nop_position_before(bc.instrs[k].offset)
            if where is not None and where[0] is not None and _width(where) == 8:
                return True
        if len(cur.preds) != 1:
            return False
        cur = cfg.blocks.get(next(iter(cur.preds)))
    return False


_CLEAN_UP_BLOCKS = 3  # blocks looked through: the jump, the clean-up's copy, its start


def _width(where: tuple[int | None, ...]) -> int | None:
    """How many characters a position on one line spans (``None``: several lines, or
    no columns)."""
    if where[0] != where[1] or None in where[2:]:
        return None
    return where[3] - where[2]  # type: ignore[operator]  # no None in them (tested above)


_CLEAN_UP = ("POP_EXCEPT", "POP_BLOCK", "DELETE_FAST", "DELETE_NAME", "DELETE_DEREF")


def else_pass(cfg: CFG, blocks: Mapping[int, IRBlock], b: int, merge: int) -> bool:
    """3.8/3.9: was ``else: pass`` written after the ``if`` at ``b``, whose arms meet at
    ``merge``, where its test jumps? Its first arm then ends in the ``if``'s jump over
    the ``else``, to the next instruction, which the peephole pass keeps."""
    if merge not in blocks or merge not in blocks[b].term.targets or not blocks[merge].blocks:
        return False
    start = blocks[merge].blocks[0]
    before = next((c for c in cfg.blocks.values() if c.end == start), None)
    jump = cfg.bc.instrs[start - 1] if start else None
    return before is not None and jump is not None and jump.op == "JUMP" \
        and jump.target == start


def written_else(cfg: CFG, blocks: Mapping[int, IRBlock], b: int, merge: int,
                 arms: list[set[int]]) -> bool:
    """3.8/3.9: was the ``if`` at ``b`` written with an ``else``, as the dead code in its
    arms tells (:func:`dead_jump_else`, :func:`return_label_else`)? Not where its first
    arm, as laid out, ends in a ``break``, ``continue`` or ``raise`` right before the
    other: an ``else`` keeps the ``if``'s jump over it there (a dead jump after a
    ``return`` may be another ``if``'s, ending at the same place)."""
    return not _left_before_other(cfg, blocks, b) \
        and (dead_jump_else(cfg, blocks, b, merge, arms) or return_label_else(cfg, blocks, arms))


def _left_before_other(cfg: CFG, blocks: Mapping[int, IRBlock], b: int) -> bool:
    """Does the code laid out for the first arm of the ``if`` at ``b`` end right before
    its other arm (the test's jump target) in a jump or ``raise`` that runs, or the
    ``RERAISE`` that ends a ``try`` statement's handlers (no dead jump of the ``if``'s own
    between them)?"""
    term = blocks[b].term
    other = [t for t in term.targets if t != term.fall and t in blocks and blocks[t].blocks]
    if len(other) != 1 or len(term.targets) != 2:
        return False
    start = blocks[other[0]].blocks[0]
    before = next((c for c in cfg.blocks.values() if c.end == start), None)
    return before is not None and before.end > before.start \
        and cfg.bc.instrs[start - 1].op in ("JUMP", "RAISE_VARARGS", "RERAISE")


def dead_jump_else(cfg: CFG, blocks: Mapping[int, IRBlock], b: int, merge: int,
                   arms: list[set[int]]) -> bool:
    """3.8/3.9: does an arm of the ``if`` at ``b`` (``arms``: the blocks each of its
    targets reaches) end in a ``raise`` whose dead jump goes to ``merge``, or in a
    ``break``/``continue`` with a dead jump after it (an ``else`` was written)? With no
    ``merge`` (-1: an arm returns, or the arms meet in the middle of a block, such as the
    function's closing ``return None`` the other arm falls into), a raise's dead jump into
    the other arm's code past its start says so too."""
    instrs = cfg.bc.instrs
    targets = blocks[b].term.targets
    for k, (t, arm) in enumerate(zip(targets, arms, strict=True)):
        other = arms[1 - k] if len(arms) == 2 else set()
        for n in arm:
            last = blocks[n].blocks[-1]
            to = cfg.dead_jumps.get(last)
            if len(targets) == 2 and instrs[cfg.blocks[last].end - 1].op == "JUMP" \
                    and _jump_over_else(cfg, blocks, cfg.blocks[last].end, targets[1 - k]):
                return True  # (its dead jump over the other arm, which both arms leave)
            if to is None:
                if _jumps_past(cfg, blocks, last, other):
                    return True
                continue
            end = cfg.blocks[last].end
            if instrs[end - 1].op == "JUMP":  # (a break's: the other arm laid out after)
                if end + 1 in targets and end + 1 != t:
                    return True
            elif to == merge and merge != end:
                return True
            elif len(targets) == 2 and _jump_over_else(cfg, blocks, end, targets[1 - k]):
                return True
            elif merge < 0 and len(targets) == 2 and to != targets[1 - k] \
                    and (to in other or any(o in blocks and blocks[o].blocks[0] < to
                                            < cfg.blocks[blocks[o].blocks[-1]].end
                                            for o in other)):
                return True
    return False


def _jump_over_else(cfg: CFG, blocks: Mapping[int, IRBlock], i: int, other: int) -> bool:
    """Is the dead jump at ``i``, right after a ``raise``, the jump of an ``if`` arm over
    its ``else``: the other arm (starting at block ``other``) laid out right after it?
    Wherever it goes (past an ``elif`` chain whose arms all leave, or to the head of the
    loop the statement ends, as 3.9's peephole threads it), an ``if`` without an
    ``else`` keeps no jump there."""
    instrs = cfg.bc.instrs
    return other in blocks and i < len(instrs) and instrs[i].op == "JUMP" \
        and i not in cfg.blocks and bool(blocks[other].blocks) \
        and blocks[other].blocks[0] == i + 1


def _jumps_past(cfg: CFG, blocks: Mapping[int, IRBlock], last: int, other: set[int]) -> bool:
    """Does the ``raise`` that ends block ``last`` keep a dead jump to dead code past the
    code of the other arm (``other``), laid out after it (both arms leave, the statement's
    end is never reached: its ``else`` arm is between the jump and where it goes)?"""
    instrs = cfg.bc.instrs
    i = cfg.blocks[last].end
    if instrs[i - 1].op != "RAISE_VARARGS" or i >= len(instrs) or instrs[i].op != "JUMP" \
            or i in cfg.blocks:
        return False
    laid = [cfg.blocks[c] for o in other if o in blocks for c in blocks[o].blocks]
    return bool(laid) and min(c.start for c in laid) > i \
        and instrs[i].target >= max(c.end for c in laid)


def layout_merge(cfg: CFG, blocks: Mapping[int, IRBlock], b: int, ctx: Ctx,
                 arm_reach: Callable[..., set[int]], idom: dict[int, int]) -> int:
    """3.8/3.9: where the ``if`` at ``b``, whose arms meet nowhere in ``ctx.region``,
    ends as their dead code tells (:func:`dead_jump_merge`; out of an except clause,
    :func:`closing_merge`); -1 where it does not. ``idom``: the dominator tree."""
    if not cfg.bc.layout.dead_code:
        return -1
    arms = [arm_reach(b, t, ctx) for t in blocks[b].term.targets]
    found = dead_jump_merge(cfg, blocks, b, arms, lambda n: dominates(idom, b, n))
    if found in ctx.region or ctx.clause is not None:
        return found
    return closing_merge(cfg, blocks, b, ctx, arm_reach)


def dead_jump_merge(cfg: CFG, blocks: Mapping[int, IRBlock], b: int,
                    arms: list[set[int]], dominated: Callable[[int], bool]) -> int:
    """3.8/3.9: where the ``if`` at ``b`` (no merge found: its other arm leaves too, by
    a ``break`` say) ends, as the dead jump after the ``break``, ``continue`` or
    ``raise`` that ends one of its arms (``arms``: the blocks each target reaches) says:
    past its ``else``/``elif`` arm, to code that arm goes on to (``if a: break`` / ``elif
    b: break`` then ``c``); -1 where none says so. ``dominated(n)``: is ``n`` after the
    test only."""
    targets = blocks[b].term.targets
    if len(targets) != 2 or len(arms) != 2:
        return -1
    ends = {to for k, arm in enumerate(arms) for n in arm | ({targets[k]} & blocks.keys())
            if (to := cfg.dead_jumps.get(blocks[n].blocks[-1] if blocks[n].blocks else -1))
            is not None and to in arms[1 - k] and to != targets[1 - k] and to not in arm
            and dominated(to)}
    return ends.pop() if len(ends) == 1 else -1


def closing_merge(cfg: CFG, blocks: Mapping[int, IRBlock], b: int, ctx: Ctx,
                  arm_reach: Callable[..., set[int]]) -> int:
    """3.8/3.9: where the ``if`` at ``b`` (no merge found, not in an except clause) ends
    when one of its arms goes on to the function's closing ``return None`` and the other
    never does (it returns or raises): there (``if c: ...`` / ``else: return x``, the
    function's last statement); -1 where not. ``arm_reach(b, target, ctx, clauses=True)``:
    the blocks an arm reaches."""
    bc = cfg.bc
    last = len(bc.instrs) - 2
    closing = cfg.order[-1] if cfg.order else -1  # (the closing return's own block)
    if not bc.layout.dead_code or code_kind(bc.code) != "function" or last < 0 \
            or bc.instrs[last].op != "LOAD_CONST" or bc.instrs[last].argval is not None \
            or closing not in blocks or closing not in ctx.region or closing == ctx.follow \
            or blocks[b].handler_block is not None:  # (in a try: its clean-up comes first)
        return -1
    found = blocks[closing]
    if found.term.kind != "return" or found.stmts \
            or not cfg.blocks[closing].start <= last < cfg.blocks[closing].end:
        return -1
    ends = [closing in arm_reach(b, t, ctx, clauses=True) for t in blocks[b].term.targets]
    return closing if ends.count(True) == 1 else -1


def return_label_else(cfg: CFG, blocks: Mapping[int, IRBlock], arms: list[set[int]]) -> bool:
    """3.8/3.9: was the ``if`` whose arms reach ``arms`` written with an ``else``, as the
    dead jump after a ``return`` tells (``CFG.return_jumps``)? Yes where its second arm
    (as laid out) ends in such a ``return`` (the jump is at the ``if``'s end label, which
    only an ``else`` makes) or its first arm does and the jump goes past the second (it
    is the ``if``'s own jump over its ``else``)."""
    ends = []
    for arm in arms:
        last = [blocks[n].blocks[-1] for n in arm if n in blocks]
        if not last:
            return False
        ends.append((min(last), max(last)))
    if len(ends) != 2:
        return False
    (_, first), (_, second) = sorted(ends)
    if second in cfg.return_jumps:
        return True
    to = cfg.return_jumps.get(first)
    return to is not None and to >= cfg.blocks[second].end


def dead_jump_flat(cfg: CFG, blocks: Mapping[int, IRBlock], b: int) -> bool:
    """3.8/3.9: was the ``if`` at ``b`` written without an ``else``, though neither arm
    falls out of it? Yes where a dead jump (``CFG.dead_jumps``, ``CFG.return_jumps``) in
    the code laid out for its first arm (its handlers included) goes to where the other
    arm starts: the first arm's last statement ended there, and an ``else`` would have
    put the ``if``'s jump over it between the two."""
    targets = blocks[b].term.targets
    if len(targets) != 2 or not all(t in blocks for t in targets):
        return False
    first, second = sorted(blocks[t].blocks[0] for t in targets)
    instrs = cfg.bc.instrs
    return _left_before_other(cfg, blocks, b) or any(first <= last < second and to == second
               and instrs[cfg.blocks[last].end - 1].op != "JUMP"
               for jumps in (cfg.dead_jumps, cfg.return_jumps) for last, to in jumps.items())


#: where an ``else`` clause ends as the layout says (``()``: there is none; None: it does
#: not say)
LayoutElse = tuple[int | None] | tuple[()] | None


def _clause_ends(cfg: CFG, start: int, after: int) -> set[int]:
    """Where the dead jumps that end the ``except`` clauses laid out from ``start`` to
    ``after`` go, after a clause's ``break`` or ``continue`` (its ``POP_EXCEPT``, dead,
    and the compiler's jump to the end of the ``try`` statement, threaded: back to the
    head of the loop whose body the statement ends)."""
    instrs = cfg.bc.instrs
    out = set()
    for b in cfg.blocks.values():
        i = b.end
        if not start <= b.id < after or instrs[b.end - 1].op != "JUMP" \
                or i >= len(instrs) or instrs[i].op != "POP_EXCEPT" or i in cfg.blocks:
            continue
        while i < min(b.end + 4, len(instrs)) and i not in cfg.blocks \
                and instrs[i].op in _CLEAN_UP + ("LOAD_CONST", "STORE_FAST", "STORE_NAME",
                                                 "STORE_DEREF"):
            i += 1  # (the clause's clean-up, dead: ``POP_EXCEPT``, ``name = None; del name``)
        if i < len(instrs) and i not in cfg.blocks and instrs[i].op == "JUMP":
            out.add(instrs[i].target)
    return out


def try_end_else(cfg: CFG, blocks: Mapping[int, IRBlock], h: int, body_exit: int,
                 landing: int) -> tuple[int] | tuple[()] | None:
    """3.8/3.9: where the ``try`` statement whose handler starts at block ``h`` ends, as
    the dead jump one of its ``except`` clauses (laid out before ``landing``, where its
    body goes on) keeps after a ``raise``, ``break`` or ``continue`` (and ``POP_EXCEPT``)
    says, when that is past ``landing`` (or back to the head of the loop the statement
    ends) and the code from ``body_exit`` goes there (None: no such jump). With no clause
    falling through, that code is its ``else`` clause: ``(end,)``; ``()`` where such a
    jump goes to ``landing``: the statement ends there, without one."""
    if h not in blocks or landing not in blocks:
        return None
    start, after = blocks[h].blocks[0], blocks[landing].blocks[0]
    instrs = cfg.bc.instrs
    raised = {to for last, to in cfg.dead_jumps.items()
              if start <= last < after and instrs[cfg.blocks[last].end].op == "POP_EXCEPT"}
    jumped = _clause_ends(cfg, start, after)
    if after in raised | jumped:
        return ()
    ends = {to for to in raised if after < to and to in blocks}
    ends |= {to for to in jumped if to < start and to in blocks}
    if len(ends) != 1:
        return None
    end = ends.pop()
    seen: set[int] = set()
    todo = [body_exit]
    while todo and len(seen) < 64:  # (the body's way on reaches it)
        n = todo.pop()
        if n == end:
            return (end,) if end != body_exit else None
        if n not in seen and n in blocks:
            seen.add(n)
            todo.extend(blocks[n].term.targets)
    return None
