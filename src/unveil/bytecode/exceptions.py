"""Exception handlers of a code object, as byte-offset ranges.

CPython 3.11+ keeps them in ``co_exceptiontable``; CPython 3.10 sets them up at run
time with ``SETUP_FINALLY``/``SETUP_WITH``/``SETUP_ASYNC_WITH`` and ``POP_BLOCK``,
so for 3.10 the block stack is simulated over the control-flow graph, with the stack
effects of the code's version from its opcode table (on any Python).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from ..errors import BadInputError
from . import opcodes
from .legacy import UNPACK_BUILDS
from .listing import Raw, instruction_starts, where


@dataclass(frozen=True, slots=True)
class RawHandler:
    """Instructions at byte offsets ``start <= off < end`` jump to ``target`` on an exception."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def parse_exception_table(code: CodeType) -> list[RawHandler]:
    """Decode ``co_exceptiontable`` (3.11+): varint entries of start, size, target, depth/lasti."""
    table: bytes = code.co_exceptiontable  # type: ignore[attr-defined, unused-ignore]  # 3.11+
    out: list[RawHandler] = []
    pos = 0

    def varint() -> int:
        nonlocal pos
        b = table[pos]
        pos += 1
        val = b & 63
        while b & 64:
            b = table[pos]
            pos += 1
            val = (val << 6) | (b & 63)
        return val

    try:
        while pos < len(table):
            start = varint() * 2
            size = varint() * 2
            target = varint() * 2
            dl = varint()
            out.append(RawHandler(start, start + size, target, dl >> 1, bool(dl & 1)))
    except IndexError:
        raise BadInputError(f"malformed exception table in {where(code)}: it ends inside "
                            "an entry") from None
    starts = instruction_starts(code)
    for h in out:
        if h.target not in starts:
            raise BadInputError(f"malformed exception table in {where(code)}: the handler "
                                f"of offsets {h.start}-{h.end} is at offset {h.target}, "
                                "where no instruction starts")
    return out


_SETUP_OPS = {"SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"}


def simulate_block_stack(instrs: list[Raw], version: tuple[int, int]) -> list[RawHandler]:
    """Recover 3.9/3.10 handlers by walking the block stack and the stack depth of
    ``instrs``, a listing of CPython ``version`` (3.8's as :mod:`.legacy` rewrites it: 3.9's,
    with 3.8's ``BUILD_*_UNPACK``).

    Returns one-instruction ranges (``end = start + 2``); the caller maps them to
    normalised instructions. Handlers of 3.10 push six values: the previous
    exception triple and the new one.
    """
    table = opcodes.table(version)
    stack_effect = table.stack_effect
    by_offset = {ins.offset: k for k, ins in enumerate(instrs)}
    # state per instruction index: (depth, block stack as tuple of (kind, target, level))
    state: dict[int, tuple[int, tuple[tuple[str, int, int], ...]]] = {}
    # a generator starts with the value it was first sent, which GEN_START pops
    start_depth = 1 if instrs and instrs[0].opname == "GEN_START" else 0
    work: list[tuple[int, int, tuple[tuple[str, int, int], ...]]] = [(0, start_depth, ())]
    handlers: dict[int, tuple[int, int]] = {}
    while work:
        k, depth, blocks = work.pop()
        while True:
            if k >= len(instrs):
                break
            prev = state.get(k)
            if prev is not None:
                break
            state[k] = (depth, blocks)
            ins = instrs[k]
            name = ins.opname
            # which handler protects this instruction: topmost SETUP block
            for kind, target, level in reversed(blocks):
                if kind == "finally":
                    handlers[ins.offset] = (target, level)
                    break
            nxt = k + 1
            jump_to: int | None = None
            fallthrough = True
            if name in _SETUP_OPS:
                target = ins.argval
                if name == "SETUP_FINALLY":
                    level = depth
                    new_depth = depth
                elif name == "SETUP_WITH":
                    level = depth  # exit replaced the manager; block set before result
                    new_depth = depth + 1
                else:  # SETUP_ASYNC_WITH: result popped, block set, result pushed again
                    level = depth - 1
                    new_depth = depth
                # handler entry: stack cut to level, six values pushed, EXCEPT_HANDLER block
                hblocks = blocks + (("except", target, level),)
                work.append((by_offset[target], level + 6, hblocks))
                blocks = blocks + (("finally", target, level),)
                depth = new_depth
                k = nxt
                continue
            if name == "POP_BLOCK":
                blocks = blocks[:-1]
                k = nxt
                continue
            if name == "POP_EXCEPT":
                # pops the EXCEPT_HANDLER block and three values
                for j in range(len(blocks) - 1, -1, -1):
                    if blocks[j][0] == "except":
                        blocks = blocks[:j] + blocks[j + 1:]
                        break
                depth -= 3
                k = nxt
                continue
            if ins.opcode in table.jumps:
                jump_to = by_offset.get(ins.argval)
                if name in ("JUMP_FORWARD", "JUMP_ABSOLUTE"):
                    fallthrough = False
            if name in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                fallthrough = False
            if jump_to is not None:
                jdepth = depth + stack_effect(ins.opcode, ins.arg, jump=True)
                work.append((jump_to, jdepth, blocks))
            if not fallthrough:
                break
            if ins.opname in UNPACK_BUILDS:
                depth += 1 - (ins.arg or 0)
            elif ins.opcode in table.has_arg:
                depth += stack_effect(ins.opcode, ins.arg, jump=False)
            else:
                depth += stack_effect(ins.opcode)
            k = nxt
    return [RawHandler(off, off + 2, by_target_offset, level, False)
            for off, (by_target_offset, level) in sorted(handlers.items())]
