"""Basic blocks of normalised instructions and the edges between them.

A block ends at a jump, a return or raise, before a jump target, and wherever the
protecting exception handler changes, so every block has exactly one handler.
Unreachable blocks are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...bytecode import Bytecode, Handler, Instr

CONDITIONAL = {"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE",
               "POP_JUMP_IF_NOT_NONE", "JUMP_IF_NOT_EXC_MATCH", "FOR_ITER", "SEND"}
TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
# END_ASYNC_FOR either re-raises or goes on with the next instruction: it ends its block
_ENDS_BLOCK = frozenset(TERMINAL | {"END_ASYNC_FOR"})  # (of those that do not jump)


@dataclass(slots=True)
class Block:
    """Instructions ``start <= i < end`` of the bytecode."""

    id: int
    start: int
    end: int
    handler: Handler | None
    succs: list[int] = field(default_factory=list)  # fallthrough first, then jump target
    preds: list[int] = field(default_factory=list)
    handler_block: int | None = None
    handles: list[int] = field(default_factory=list)  # blocks this one is the handler of

    def last(self, bc: Bytecode) -> Instr:
        return bc.instrs[self.end - 1]

    def instrs(self, bc: Bytecode) -> list[Instr]:
        """The block's instructions."""
        return bc.instrs[self.start:self.end]


@dataclass(slots=True)
class CFG:
    bc: Bytecode
    blocks: dict[int, Block]  # by id (= index of first instruction)
    order: list[int]  # ids in instruction order
    entry: int
    #: 3.8/3.9 (``Layout.dead_code``): block id -> where the statement its ``raise``
    #: (or ``break``/``continue``) ends goes on as laid out (:func:`_dead_jumps`)
    dead_jumps: dict[int, int] = field(default_factory=dict)
    #: 3.8/3.9: block id -> the target of the dead jump kept right after the ``return``
    #: the block ends in (:func:`_return_jumps`): a statement ended there
    return_jumps: dict[int, int] = field(default_factory=dict)

    def block_at(self, index: int) -> Block:
        return self.blocks[index]


def build(bc: Bytecode, start: int = 0, end: int | None = None) -> CFG:
    """Split ``bc.instrs[start:end]`` into reachable basic blocks (split only where
    reachable code jumps: a jump from dead code, such as 3.12's ``CLEANUP_THROW`` stub
    into an ``await`` folded to one instruction, does not cut a block)."""
    end = len(bc.instrs) if end is None else end
    cfg = _build(bc, start, end, None)
    dead_code = bc.layout.dead_code
    if sum(b.end - b.start for b in cfg.blocks.values()) == end - start and not dead_code:
        return cfg  # (every instruction reached: no block to cut again, no dead code to read)
    live = {i for b in cfg.blocks.values() for i in range(b.start, b.end)}
    if len(live) < end - start:
        cfg = _build(bc, start, end, live)
    if dead_code:
        cfg.dead_jumps = _dead_jumps(cfg, live, end)
        cfg.return_jumps = _return_jumps(cfg, live, end)
    return cfg


def _dead_jumps(cfg: CFG, live: set[int], end: int) -> dict[int, int]:
    """Where the statement a ``raise`` ends goes on, as 3.8/3.9 lay it out: the dead
    jump they keep after it (through an ``except`` clause's ``POP_EXCEPT``) to the end
    of the ``if`` arm or clause; without one, the code right after it. A ``break`` or
    ``continue`` (a jump) keeps one too: where its ``if`` arm ends."""
    instrs = cfg.bc.instrs
    out: dict[int, int] = {}
    for b in cfg.blocks.values():
        if instrs[b.end - 1].op == "JUMP":
            i = _after_clean_up(instrs, b.end, end, live)  # (a break in an except clause)
            if i < end and i not in live and instrs[i].op == "JUMP" \
                    and instrs[i].target in cfg.blocks \
                    and (instrs[i].target > i or _else_after(cfg, live, i)):
                out[b.id] = instrs[i].target
            continue
        if instrs[b.end - 1].op != "RAISE_VARARGS":
            continue
        i = _after_clean_up(instrs, b.end, end, live)
        if i < end and i not in live and instrs[i].op == "JUMP":
            if instrs[i].target in cfg.blocks:
                out[b.id] = instrs[i].target
        elif i == b.end and i in cfg.blocks:
            out[b.id] = i  # (no dead jump: the arm ends where the raise is laid out)
    return out


def _after_clean_up(instrs: list[Instr], i: int, end: int, live: set[int]) -> int:
    """The index past the dead clean-up of an except clause from ``i``: ``POP_EXCEPT``
    and, for ``except E as name``, ``name = None; del name``."""
    while i < end and i not in live:
        if instrs[i].op == "POP_EXCEPT":
            i += 1
        elif i + 2 < end and instrs[i].op == "LOAD_CONST" and instrs[i].argval is None \
                and instrs[i + 1].op.startswith("STORE_") \
                and instrs[i + 2].op.startswith("DELETE_") \
                and instrs[i + 1].argval == instrs[i + 2].argval:
            i += 3
        else:
            break
    return i


def _return_jumps(cfg: CFG, live: set[int], end: int) -> dict[int, int]:
    """Where the dead jump 3.8/3.9 keep right after a ``return`` goes, by the block the
    ``return`` ends. Their peephole pass drops what follows a ``return`` up to the next
    label only, so a jump kept there is at a label: a statement that ends with that
    ``return`` ended there (an ``if`` whose ``else`` arm it ends), and the jump is that of
    the statement around it (an ``if`` arm's jump past its ``else``, a loop's jump back)."""
    instrs = cfg.bc.instrs
    out: dict[int, int] = {}
    for b in cfg.blocks.values():
        if instrs[b.end - 1].op != "RETURN_VALUE":
            continue
        i = _after_clean_up(instrs, b.end, end, live)  # (a clause's end: the if's)
        if i < end and i not in live and instrs[i].op == "JUMP" and instrs[i].target is not None:
            out[b.id] = instrs[i].target
    return out


def _else_after(cfg: CFG, live: set[int], i: int) -> bool:
    """Is the dead jump back at ``i`` an ``if`` arm's (threaded to its loop's start), not
    the loop's own closing one: is the code after it an ``else`` arm, which a test in the
    loop's body jumps to (not the loop's test, which leaves it there)?"""
    instrs = cfg.bc.instrs
    head = cfg.blocks[instrs[i].target]
    return any(instrs[j].target == i + 1 and instrs[j].op in CONDITIONAL
               for j in live if head.end <= j < i)


def _build(bc: Bytecode, start: int, end: int, live: set[int] | None) -> CFG:
    instrs, handlers = bc.instrs, bc.handlers
    leaders = {start}
    handler_seen: Handler | None = None  # (whose target is a leader already)
    # (the previous instruction's handler, carried along: the first one's own, so that
    # no change of handler starts a block there)
    prev = handlers[start] if start < end else None
    for i, ins, h in zip(range(start, end), instrs[start:end], handlers[start:end],
                         strict=True):
        if live is not None and i not in live:
            if i - 1 in live:
                leaders.add(i)
                if bc.layout.dead_code and instrs[i].op == "JUMP" \
                        and instrs[i - 1].op == "JUMP" and instrs[i].target in live:
                    leaders.add(instrs[i].target)  # (where a break's ``if`` arm ends)
                if bc.layout.dead_code and instrs[i - 1].op == "RAISE_VARARGS":
                    j = _after_clean_up(instrs, i, end, live)
                    if j < end and j not in live and instrs[j].op == "JUMP" \
                            and instrs[j].target in live:
                        leaders.add(instrs[j].target)  # (where a raise's statement ends)
            prev = h
            continue
        target = ins.target
        if target >= 0:
            if start <= target < end:
                leaders.add(target)
            leaders.add(i + 1)
        elif ins.op in _ENDS_BLOCK:
            leaders.add(i + 1)
        if h is not None:
            if h is not handler_seen and start <= h.target < end:
                leaders.add(h.target)
            handler_seen = h  # (the instructions of a region hold one handler object)
        if h is not prev and h != prev or ins.op == "FOR_ITER":
            leaders.add(i)  # (a loop's test starts a block even where nothing jumps back)
        prev = h
    starts = sorted(x for x in leaders if start <= x < end)
    ids = set(starts)  # (the ids of the blocks)
    blocks: dict[int, Block] = {}
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else end
        last = instrs[e - 1]
        op = last.op
        if op == "JUMP":
            succs = [last.target]
        elif op in CONDITIONAL:
            succs = [e, last.target]
        elif op not in TERMINAL:
            succs = [e]
        else:
            succs = []
        if not ids.issuperset(succs):  # (commonly every successor is a block: kept as is)
            succs = [t for t in succs if t in ids]
        h = handlers[s]
        blocks[s] = Block(s, s, e, h, succs, [],
                          h.target if h is not None and h.target in ids else None, [])
    # reachability from the entry, following normal and exception edges
    seen: set[int] = set()
    todo = [start]
    while todo:
        bid = todo.pop()
        if bid in seen or bid not in blocks:
            continue
        seen.add(bid)
        b = blocks[bid]
        todo.extend(b.succs)
        if b.handler_block is not None:
            todo.append(b.handler_block)
    blocks = {bid: b for bid, b in blocks.items() if bid in seen}
    for b in blocks.values():
        for s in b.succs:
            blocks[s].preds.append(b.id)
        if b.handler_block is not None:
            blocks[b.handler_block].handles.append(b.id)
    return CFG(bc, blocks, sorted(blocks), start)
