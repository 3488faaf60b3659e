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

from ...bytecode import Bytecode, Handler, Instr, retarget
from ...errors import DecompilationError
from ..tidy.comprehensions import (
    comprehension_from_body,
    is_dropped,
    keep_dropped_names,
    read_apart,
)

if TYPE_CHECKING:
    from ..scope import Scope

_KINDS = {"BUILD_LIST": "list", "BUILD_SET": "set", "BUILD_MAP": "dict"}


def fold(bc: Bytecode, dec: Scope) -> Bytecode:
    """``bc`` with every inlined comprehension replaced by a ``COMPREHENSION``."""
    instrs = bc.instrs
    # (a region starts only at a ``LOAD_FAST_AND_CLEAR`` or an empty ``BUILD_*``; where
    # none does, the loop below would copy ``bc`` as it is)
    if not any(_region(bc, i) is not None for i, ins in enumerate(instrs)
               if ins.op == "LOAD_FAST_AND_CLEAR" or ins.op in _KINDS and ins.arg == 0):
        return bc
    out: list[Instr] = []
    handlers = []
    index_map: dict[int, int] = {}
    n = len(instrs)
    folded: set[int] = set()  # the instructions of regions already folded
    for i in range(n):
        if i in folded:
            continue
        region = _region(bc, i)
        if region is None:
            index_map[i] = len(out)
            ins = instrs[i]
            out.append(ins if ins.target < 0 else ins.copy())  # (retarget() moves jumps)
            handlers.append(bc.handlers[i])
            continue
        start, build, loop_exit, saved = region
        members = _members(bc, build, loop_exit)
        expr = _decompile_region(bc, build, loop_exit, members, dec)
        if is_dropped(expr):
            # names only the dropped code bound keep their scopes: the comprehension's
            # own variables (cells where a nested scope read them)
            own = [instrs[k].argval for k in range(start, start + saved)]
            cells = [v for v in own if v in dec.code.co_cellvars]
            # (a cell of its own that shares its name with a free variable is read with
            # the free variable's index, 3.12+: such reads are its own)
            apart = read_apart([instrs[k] for k in members
                                if instrs[k].op == "LOAD_GLOBAL"
                                or instrs[k].argval not in cells], dec.code)
            keep_dropped_names(expr, reads=[], cells=cells, bound=own, apart=apart,
                               inlines=True)
        inside = {*range(start, build), *members}
        for k in inside:
            index_map[k] = len(out)
        ins = instrs[start]
        out.append(Instr("COMPREHENSION", saved, expr, -1, ins.offset, ins.line))
        handlers.append(bc.handlers[start])
        if not inside.issuperset(range(start, loop_exit)):
            # code of the enclosing scope laid out inside it (an ``await``'s clean-up),
            # or its loop's end laid out after what follows it (3.12+: an ``async for``
            # nested in a plain ``for``)
            out.append(Instr("JUMP", None, None, loop_exit, ins.offset, ins.line))
            handlers.append(bc.handlers[start])
        folded |= inside
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
        if loop_exit < len(bc.instrs) and bc.instrs[loop_exit].op == "JUMP":
            loop_exit = bc.instrs[loop_exit].target  # (laid out apart from what follows)
    else:
        return None
    return loop_exit if loop_exit > loop else None


def _members(bc: Bytecode, build: int, loop_exit: int) -> list[int]:
    """The instructions of the comprehension from ``build``: those its flow reaches
    before ``loop_exit``, through jumps and its own exception handlers (not the clean-up
    that restores the saved names, nor the enclosing code's)."""
    instrs = bc.instrs
    outer = bc.handlers[build]
    seen: set[int] = set()
    todo = [build]
    while todo:
        k = todo.pop()
        while 0 <= k < len(instrs) and k != loop_exit and k not in seen:
            seen.add(k)
            ins = instrs[k]
            h = bc.handlers[k]
            if h is not None and (outer is None or h.target != outer.target
                                  and h.depth > outer.depth):
                todo.append(h.target)
            if ins.target >= 0:
                todo.append(ins.target)
            if ins.op in ("JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                break
            k += 1
    return sorted(seen)


def _decompile_region(bc: Bytecode, build: int, loop_exit: int, members: list[int],
                      dec: Scope) -> ast.expr:
    """The comprehension expression of instructions ``members`` (from ``build``), whose
    loop ends at ``loop_exit``."""
    sub: list[Instr] = []
    handlers: list[Handler | None] = []
    # (the loop's way out becomes the return of the result, after the last member
    # laid out before it)
    before = [k for k in members if k < loop_exit]
    order = [*before, -1, *(k for k in members if k > loop_exit)]
    where = {k: n for n, k in enumerate(order) if k >= 0}
    where[loop_exit] = len(before)
    # An async loop keeps its StopAsyncIteration handler. Handler depths count the
    # enclosing stack and the saved names; inside the region only the result and the
    # iterator are on the stack at the loop head.
    head = bc.handlers[build + 2] if bc.instrs[build + 2].op == "GET_ANEXT" else None
    own = bc.handlers[build]  # the clean-up that restores the saved names, if any
    if head is not None:
        shift = head.depth - 2
    elif own is not None and not build <= own.target < loop_exit:
        shift = own.depth - 1  # (it keeps the iterator; an inner ``async for`` may follow)
    else:
        shift = None
    last = bc.instrs[before[-1]]
    for index in order:
        if index < 0:  # the loop's way out: the result
            sub.append(Instr("RETURN_VALUE", None, None, -1, last.offset, last.line))
            handlers.append(None)
            continue
        ins = bc.instrs[index]
        copy = ins.copy()
        if copy.target >= 0 and copy.target not in where \
                and index > build and bc.instrs[index - 1].op == "CLEANUP_THROW":
            # the clean-up of an ``await`` before the comprehension, laid out inside it:
            # nothing reaches it (the await is one instruction here)
            copy.target = index - 1
        if copy.target >= 0:
            if copy.target not in where:
                raise DecompilationError("comprehension jumps out of itself",
                                         code_name=dec.qualname, offset=ins.offset)
            copy.target = where[copy.target]
        sub.append(copy)
        h = bc.handlers[index]
        if shift is not None and h is not None and h.target in where \
                and h.target != loop_exit:
            handlers.append(replace(h, target=where[h.target], depth=h.depth - shift))
        else:
            handlers.append(None)
    sub_bc = Bytecode(bc.code, sub, handlers)
    kind = _KINDS[bc.instrs[build].op]
    stmts = dec.region_statements(sub_bc, [ast.Name(id=".0", ctx=ast.Load())])
    node = comprehension_from_body(stmts, kind, ast.Name(id=".0", ctx=ast.Load()), ".0",
                                   dec.qualname, folded=bc.layout.folded_not_tests)
    return node
