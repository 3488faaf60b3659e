"""3.12+ comprehensions, which the compiler inlines into the function that uses them.

PEP 709 compiles ``[e for x in it]`` in place::

    <it>; GET_ITER
    LOAD_FAST_AND_CLEAR x ...     # save the names the comprehension binds
    SWAP n; BUILD_LIST 0; SWAP 2
    FOR_ITER ... LIST_APPEND ... JUMP_BACKWARD
    <restore the saved names around the result>

Before the enclosing code is translated, each such region is decompiled on its own (as
if it were the body of the separate comprehension function of earlier versions) and
replaced by one ``COMPREHENSION`` instruction: it pops the iterator and pushes the saved
values and the comprehension expression, so that the restores that follow it read as
the no-ops they are.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from ..bytecode import Bytecode, Handler, Instr, retarget
from ..errors import DecompilationError
from .comprehensions import comprehension_from_body

if TYPE_CHECKING:
    from .scope import Scope

_KINDS = {"BUILD_LIST": "list", "BUILD_SET": "set", "BUILD_MAP": "dict"}


def fold(bc: Bytecode, dec: Scope) -> Bytecode:
    """``bc`` with every inlined comprehension replaced by a ``COMPREHENSION``."""
    instrs = bc.instrs
    if not any(i.op == "LOAD_FAST_AND_CLEAR" or i.op in _KINDS and i.arg == 0 for i in instrs):
        return bc
    out: list[Instr] = []
    handlers = []
    index_map: dict[int, int] = {}
    i = 0
    n = len(instrs)
    while i < n:
        region = _region(bc, i)
        if region is None:
            index_map[i] = len(out)
            out.append(replace(instrs[i]))
            handlers.append(bc.handlers[i])
            i += 1
            continue
        start, build, loop_exit, saved = region
        expr = _decompile_region(bc, build, loop_exit, dec)
        for k in range(start, loop_exit):
            index_map[k] = len(out)
        ins = instrs[start]
        out.append(Instr("COMPREHENSION", saved, expr, -1, ins.offset, ins.line))
        handlers.append(bc.handlers[start])
        i = loop_exit
    index_map[n] = len(out)
    try:
        return retarget(bc, out, handlers, index_map)
    except KeyError as exc:
        raise DecompilationError("jump into an inlined comprehension", code_name=dec.qualname,
                                 offset=exc.args[0].offset) from None


def _region(bc: Bytecode, i: int) -> tuple[int, int, int, int] | None:
    """(start, BUILD_* index, loop exit, number of saved names) of a region at ``i``."""
    instrs = bc.instrs
    if instrs[i].op in _KINDS and i > 0 and instrs[i - 1].op in ("GET_ITER", "GET_AITER"):
        # a comprehension that binds no name (``[a for () in c]``) saves none
        swap2 = instrs[i + 1] if i + 1 < len(instrs) else None
        if instrs[i].arg != 0 or swap2 is None or swap2.op != "SWAP" or swap2.arg != 2:
            return None
        loop_exit = _loop_exit(bc, i + 2)
        return None if loop_exit is None else (i, i, loop_exit, 0)
    if instrs[i].op != "LOAD_FAST_AND_CLEAR":
        return None
    k = i
    while k < len(instrs) and instrs[k].op == "LOAD_FAST_AND_CLEAR":
        k += 1
    saved = k - i
    if k + 3 >= len(instrs):
        return None
    swap, build, swap2 = instrs[k], instrs[k + 1], instrs[k + 2]
    if swap.op != "SWAP" or swap.arg != saved + 1 or build.op not in _KINDS \
            or build.arg != 0 or swap2.op != "SWAP" or swap2.arg != 2:
        return None
    loop_exit = _loop_exit(bc, k + 3)
    return None if loop_exit is None else (i, k + 1, loop_exit, saved)


def _loop_exit(bc: Bytecode, loop: int) -> int | None:
    """Where the comprehension's loop at ``loop`` ends, or None if it is not one."""
    if loop >= len(bc.instrs):
        return None
    ins = bc.instrs[loop]
    handler = bc.handlers[loop]
    if ins.op == "FOR_ITER":
        loop_exit = ins.target
    elif ins.op == "GET_ANEXT" and handler is not None:
        # async: the loop ends at the END_ASYNC_FOR that handles StopAsyncIteration
        loop_exit = handler.target + 1
        if bc.instrs[loop_exit - 1].op != "END_ASYNC_FOR":
            return None
    else:
        return None
    return loop_exit if loop_exit > loop else None


def _decompile_region(bc: Bytecode, build: int, loop_exit: int,
                      dec: Scope) -> ast.expr:
    """The comprehension expression of instructions ``build:loop_exit``."""
    sub: list[Instr] = []
    handlers: list[Handler | None] = []
    # An async loop keeps its StopAsyncIteration handler. Handler depths count the
    # enclosing stack and the saved names; inside the region only the result and the
    # iterator are on the stack at the loop head.
    head = bc.handlers[build + 2] if bc.instrs[build + 2].op == "GET_ANEXT" else None
    shift = head.depth - 2 if head is not None else 0
    for index, ins in enumerate(bc.instrs[build:loop_exit], build):
        copy = replace(ins)
        if copy.target >= 0 and not build <= copy.target <= loop_exit \
                and index > build and bc.instrs[index - 1].op == "CLEANUP_THROW":
            # the clean-up of an ``await`` before the comprehension, laid out inside it:
            # nothing reaches it (the await is one instruction here)
            copy.target = index - 1
        if copy.target >= 0:
            if not build <= copy.target <= loop_exit:
                raise DecompilationError("comprehension jumps out of itself",
                                         code_name=dec.qualname, offset=ins.offset)
            copy.target -= build
        sub.append(copy)
        h = bc.handlers[index]
        if head is not None and h is not None and build <= h.target < loop_exit:
            handlers.append(replace(h, target=h.target - build, depth=h.depth - shift))
        else:
            handlers.append(None)
    last = bc.instrs[loop_exit - 1]
    sub.append(Instr("RETURN_VALUE", None, None, -1, last.offset, last.line))
    handlers.append(None)
    sub_bc = Bytecode(bc.code, sub, handlers)
    kind = _KINDS[bc.instrs[build].op]
    stmts = dec.region_statements(sub_bc, [ast.Name(id=".0", ctx=ast.Load())])
    node = comprehension_from_body(stmts, kind, ast.Name(id=".0", ctx=ast.Load()), ".0",
                                   dec.qualname)
    return node
