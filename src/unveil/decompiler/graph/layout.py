"""What the compiler's layout of basic blocks tells about the source: the jumps it made
for a test (not written as statements), the copies it made of small exits, the blocks
that only jump on. Queries on one code object's CFG and positions; no translation.
"""

from __future__ import annotations

from collections.abc import Container

from ...bytecode import CONDITIONAL_JUMPS
from .cfg import CFG


class BlockLayout:
    """Questions about the blocks of ``cfg`` and the source positions of their code."""

    def __init__(self, cfg: CFG) -> None:
        self.cfg = cfg
        self.bc = cfg.bc

    def line_of(self, bid: int) -> int | None:
        """The line block ``bid`` starts on."""
        block = self.cfg.blocks.get(bid)
        return None if block is None or block.start >= block.end \
            else self.bc.instrs[block.start].line

    def compiler_jump(self, bid: int, valued: bool = False) -> bool:
        """Whether block ``bid`` is only a jump the compiler made for the test that falls
        into it, at the test's source position (or before it on its line: the value of
        ``X if c else Y``, a constant the compiler knows, ``(0 if u else v)`` as a test).
        ``valued``: values are on the stack, so no statement jumps there (3.10 has no
        columns: a jump on the test's line is taken for one)."""
        instrs = self.bc.instrs
        block = self.cfg.blocks.get(bid)
        if block is None or block.handles or block.end - block.start != 1 \
                or block.start == 0 or instrs[block.start].op != "JUMP":
            return False
        test, jump = instrs[block.start - 1], instrs[block.start]
        where = self.bc.position(jump)
        tested_at = self.bc.position(test)
        if valued and where is None and test.op in CONDITIONAL_JUMPS:
            return jump.line is not None and jump.line == test.line
        on = self.cfg.blocks.get(jump.target)
        if self.bc.layout.dead_code and test.op in CONDITIONAL_JUMPS and on is not None \
                and jump.line is not None and jump.line == test.line \
                and on.end - on.start == 1 and self.bc.instrs[on.start].op == "JUMP" \
                and self.bc.instrs[on.start].line != jump.line:
            return True  # (3.8/3.9: a chained comparison's jump to a body that only jumps)
        if self.bc.layout.dead_code and test.op in CONDITIONAL_JUMPS \
                and instrs[block.start + 1].op == "POP_TOP" and jump.line == test.line \
                and (jump.target == block.start + 2 or jump.target == block.start + 3
                     and instrs[block.start + 2].op == "JUMP"
                     and instrs[block.start + 2].target == test.target):
            return True  # (3.8/3.9: a chained comparison's jump over its clean-up (and the
            # clean-up's jump where the test goes): ``assert a and b < c < d``, ``or``)
        return test.op in CONDITIONAL_JUMPS and where is not None and where[2] is not None \
            and tested_at is not None and (where == tested_at or (
                where[0] == where[1] == tested_at[0] and tested_at[2] is not None
                and where[3] <= tested_at[2]))  # type: ignore[operator]  # positions checked not None

    def constant_jump(self, bid: int, src: int | None, valued: bool = False) -> bool:
        """Whether block ``bid`` is only the jump of a constant the compiler knows in the
        ``else`` arm of a conditional expression used as a test (``x if (b if a else 0)
        else y``): it follows the jump out of the body arm (a jump the compiler made for
        that arm's test) and sits after the test on its line. ``valued``: as for
        :meth:`compiler_jump`."""
        instrs = self.bc.instrs
        block = self.cfg.blocks.get(bid)
        if block is None or block.handles or block.end - block.start != 1 \
                or block.start < 2 or instrs[block.start].op != "JUMP" \
                or not self.compiler_jump(block.start - 1, valued):  # (out of the body arm)
            return False
        jump = instrs[block.start]
        where = self.bc.position(jump)
        if valued and where is None:
            return jump.line is not None and jump.line == instrs[block.start - 1].line
        return self.after_test(where, src)

    def constant_dropped(self, bid: int, to: int | None, src: int | None) -> bool:
        """Whether block ``bid``, the jump out of the body arm of a conditional expression
        used as a test, jumps over the dropped ``NOP`` of a true constant in its ``else``
        arm (``x if (b if a else 1) else y``), to the next instruction, ``to``."""
        block = self.cfg.blocks.get(bid)
        if block is None or to is None or block.succs != [to] or to != block.end \
                or not self.compiler_jump(bid):
            return False
        return self.after_test(self.bc.nop_position_before(self.bc.instrs[to].offset), src)

    def after_test(self, where: tuple[int | None, ...] | None, src: int | None) -> bool:
        """Whether source position ``where`` lies after the test ending block ``src``, on
        its line, or is the test's own (3.11 gives the jumps of a conditional expression
        the position of the whole expression, or statement)."""
        block = self.cfg.blocks.get(src) if src is not None else None
        tested_at = None if block is None else self.bc.position(self.bc.instrs[block.end - 1])
        if where is None or tested_at is None or where[2] is None or tested_at[3] is None:
            return False
        return where == tested_at or where[0] == where[1] == tested_at[1] \
            and where[2] >= tested_at[3]

    def is_return(self, bid: int) -> bool:
        block = self.cfg.blocks.get(bid)
        return block is not None and block.end > block.start \
            and self.bc.instrs[block.end - 1].op == "RETURN_VALUE"

    def leads_to(self, target: int, to: int, hops: list[int]) -> bool:
        """Does ``to`` lead to ``target``: it is ``target``, or (where the other side
        passed jumps to get there, or ``to`` is a jump the compiler made for the test: the
        one after a chained comparison) a block that only jumps there."""
        return to == target or (bool(hops) or self.compiler_jump(to)) \
            and self.through_jumps(to, set())[0] == target

    def exit_copy(self, bid: int, of: int, clean_up: bool = False) -> bool:
        """Whether block ``bid`` is the compiler's copy of block ``of``, a few
        instructions that raise or return: the same code at the same source positions
        (a jump to a small exit is replaced by its code). ``clean_up``: after values
        dropped from the stack (a chained comparison's clean-up)."""
        a, b = self.cfg.blocks.get(bid), self.cfg.blocks.get(of)
        if a is None or b is None or a is b or a.succs or b.succs or a.handles \
                or b.handles or a.handler != b.handler:
            return False
        instrs = self.bc.instrs
        mine = list(range(a.start, a.end))
        if clean_up:
            # (a ``NOP`` is a statement's line: ``break`` into a copy is no clean-up)
            while mine and instrs[mine[0]].op in ("POP_TOP", "SWAP"):
                del mine[0]
            if len(mine) == a.end - a.start:
                return False
        theirs = list(range(b.start, b.end))
        return bool(mine) and len(mine) == len(theirs) \
            and instrs[mine[-1]].op in ("RAISE_VARARGS", "RETURN_VALUE") \
            and all(instrs[m].op == instrs[t].op and instrs[m].argval == instrs[t].argval
                    and self.position(m) == self.position(t)
                    for m, t in zip(mine, theirs, strict=True))

    def drop_one(self, bid: int, twin: int) -> int | None:
        """Where block ``bid`` goes when all it does is drop the top stack value: its
        successor, or ``twin`` when the rest of it is a copy of that exit block (3.12+
        copies small exits)."""
        block = self.cfg.blocks.get(bid)
        if block is None or block.handles:
            return None
        instrs = [i for i in self.bc.instrs[block.start:block.end] if i.op != "NOP"]
        if not instrs or instrs[0].op != "POP_TOP":
            return None
        if [i.op for i in instrs[1:]] in ([], ["JUMP"]) and len(block.succs) == 1:
            return block.succs[0]
        return twin if self.exit_copy(bid, twin, clean_up=True) else None

    def through_jumps(self, bid: int, owned: set[int],
                      taken: Container[int] = frozenset()) -> tuple[int, list[int]]:
        """Where ``bid`` leads past blocks that only jump, and those of them that only
        ``owned`` blocks (or each other) enter: folding the edge leaves them unused
        (unless ``taken`` already, into a block of their own)."""
        hops: list[int] = []
        seen = {bid}
        while True:
            block = self.cfg.blocks.get(bid)
            if block is None or block.handles or len(block.succs) != 1:
                return bid, hops
            ops = [i.op for i in self.bc.instrs[block.start:block.end] if i.op != "NOP"]
            nxt = block.succs[0]
            if ops not in ([], ["JUMP"]) or nxt in seen:
                return bid, hops
            if bid not in taken and all(p in owned or p in hops for p in block.preds):
                hops.append(bid)
            seen.add(nxt)
            bid = nxt

    def copied_exit(self, bid: int) -> bool:
        """Whether block ``bid`` (that returns) has the source position of every jump
        into it, as the compiler's copies of an exit without a line of its own have (a
        ``return`` statement on the line of its ``if`` has columns of its own)."""
        block = self.cfg.blocks[bid]
        where = self.position(block.end - 1)
        if not self.bc.layout.positions and any(
                self.bc.instrs[self.cfg.blocks[p].end - 1].op in CONDITIONAL_JUMPS
                and self.bc.instrs[self.cfg.blocks[p].end - 1].target != block.start
                for p in block.preds):
            return False  # (3.10: fallen into from a test, ``if c: return`` on one line)
        return bool(block.preds) and all(
            self.position(self.cfg.blocks[p].end - 1) == where for p in block.preds)

    def position(self, k: int) -> object:
        """Instruction ``k``'s place in the source: its line, with columns on 3.11+."""
        ins = self.bc.instrs[k]
        where = self.bc.position(ins)
        return ins.line if where is None else where

    def ahead(self, starts: frozenset[int], stop: int, limit: int = 64) -> set[int]:
        """Blocks reached from ``starts`` before ``stop`` (at most ``limit`` of them)."""
        seen: set[int] = set()
        todo = [s for p in starts if p in self.cfg.blocks for s in self.cfg.blocks[p].succs]
        while todo and len(seen) < limit:
            b = todo.pop()
            if b == stop or b in seen or b not in self.cfg.blocks:
                continue
            seen.add(b)
            todo.extend(self.cfg.blocks[b].succs)
        return seen
