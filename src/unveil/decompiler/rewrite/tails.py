"""Undo the compiler's copies of statements: exits, loop exits, clean-ups, re-raises.

The compiler copies small blocks that leave a function, a loop or a clause into every
place that jumps to them; each pass here finds such copies by their code and source
positions and gives them back their jump (one expression's copies:
:mod:`.tails_expressions`). :func:`undo_copies` runs them all, in the order they need.
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import TypeAlias

from ...bytecode import CONDITIONAL_JUMPS, Bytecode, Handler, Instr
from ...codeobj import code_kind
from .tails_expressions import (
    FLOW,
    MAX_COPY,
    TERMINAL,
    code_signature,
    common_suffix,
    count,
    has_tests,
    jump_instead,
    jumped_to,
    merge_tails,
    opcodes,
    prefix_effect,
    reachable,
    share_test_bodies,
    sharing_jumps,
    split_empty_tests,
    where_ops,
)


def undo_copies(bc: Bytecode, *, body_ends: bool = False) -> Bytecode:
    """``bc`` with the compiler's copies of code given back their jumps, in the order the
    passes need: a test's ways first, then one expression's copied tail, copied exits,
    loop exits and clean-ups. ``body_ends``: a module's or class body's reading that
    must not return (copies of its end shared, copied exits told by lines where there
    are no columns), for when the first one does."""
    with sharing_jumps():
        bc = merge_tails(share_implicit_returns(share_test_bodies(split_empty_tests(bc))))
        bc = share_nested_clause_ends(share_copied_exits(share_reraises(bc), lines=body_ends))
        if body_ends:
            bc = share_body_ends(bc)
        return split_clean_ups(share_clean_up_exits(share_loop_exits(bc)))


_CLEAN_UP = {"SWAP", "COPY", "POP_TOP", "NOP"}


def split_clean_ups(bc: Bytecode) -> Bytecode:
    """Give each test of ``a < b < c < d`` its own clean-up block and join.

    Every failed test of a chained comparison jumps to one block that drops the kept
    middle value (``SWAP 2; POP_TOP``) before the join, and the last comparison jumps
    over it to the join. Shared, that block belongs to no single test and the tests
    cannot fold one by one into ``and``s. Here each inner test gets a copy of it and
    a join of its own (a block that jumps on to the enclosing test's join), appended
    after the last instruction: each then folds like a two-part chain.
    """
    instrs = bc.instrs
    if not instrs or instrs[-1].op not in TERMINAL | {"JUMP"} or not has_tests(bc):
        return bc
    # (a clean-up is where two conditional jumps go, at least, and starts with one)
    tested = sorted(instrs[k].target for k in where_ops(bc, CONDITIONAL_JUMPS))
    if not any(a == b and a < len(instrs) and instrs[a].op in _CLEAN_UP
               for a, b in zip(tested, tested[1:], strict=False)):
        return bc
    sources: dict[int, list[int]] = {}
    for k, i in enumerate(instrs):
        if i.target >= 0:
            sources.setdefault(i.target, []).append(k)
    if not any(len(s) > 1 for s in sources.values()):
        return bc
    new = list(instrs)
    handlers = list(bc.handlers)
    for target, srcs in sorted(sources.items()):
        if len(srcs) < 2 or not all(instrs[k].op in CONDITIONAL_JUMPS and k < target for k in srcs) \
                or len({instrs[k].line for k in srcs}) != 1:
            continue
        end = target
        while end < len(instrs) and instrs[end].op in _CLEAN_UP \
                and (end == target or end not in sources) \
                and bc.handlers[end] == bc.handlers[target]:
            end += 1
        if end == target or end >= len(instrs) \
                or not any(instrs[k].op in ("SWAP", "POP_TOP") for k in range(target, end)):
            continue
        # the join: after the clean-up, or where it jumps (the end of an enclosing
        # conditional expression, ``g(a < b < c < d if t else x)``)
        after = instrs[end].target if instrs[end].op == "JUMP" and end not in sources \
            else end
        over = target - 1  # the last comparison's jump over the clean-up to the join
        while over > srcs[-1] and new[over].op == "NOP":
            over -= 1
        if new[over].op != "JUMP" or new[over].target != after:
            continue
        handler = bc.handlers[target]
        joins: list[int] = []
        for level in range(1, len(srcs)):
            join = len(new)
            new.append(Instr("JUMP", None, None, joins[-1] if joins else after,
                             instrs[end - 1].offset, instrs[end - 1].line))
            handlers.append(handler)
            joins.append(join)
            copy = len(new)
            new.extend(instrs[i].copy() for i in range(target, end))
            new.append(Instr("JUMP", None, None, join, instrs[end - 1].offset,
                             instrs[end - 1].line))
            handlers.extend(handler for _ in range(target, end + 1))
            new[srcs[level]] = replace(new[srcs[level]], target=copy)
        new[over] = replace(new[over], target=joins[-1])
    if len(new) == len(instrs):
        return bc
    return Bytecode(bc.code, new, handlers)


def share_clean_up_exits(bc: Bytecode) -> Bytecode:
    """Give a chained comparison's failed test its jump to the exit again.

    For ``assert a < b < c`` (``if not a < b < c: raise E``) the compiler copies the
    small exit block that follows the last comparison after the clean-up that drops the
    kept middle value (``POP_TOP``), instead of jumping to it. Where the clean-up runs
    on into an exact copy of the block just before it, or of a block elsewhere that a
    jump enters and that raises, at the same source positions (lines before 3.11:
    ``assert a < b < c and d``'s clean-up goes to the raise after ``d``), the copy
    becomes a jump to that block: the layout every other chained test has.
    """
    pops = opcodes(bc).get("POP_TOP")
    if not pops:
        return bc  # (a clean-up's copy starts at one)
    instrs = bc.instrs
    entered = jumped_to(bc)
    exits: dict[tuple[object, ...] | None, int] | None = None
    new: list[Instr] | None = None
    for t in pops:
        if t not in entered or not t:
            continue
        end = t + 1
        while end < len(instrs) and instrs[end].op not in FLOW and end not in entered:
            end += 1
        if end >= len(instrs) or end in entered or instrs[end].op not in TERMINAL:
            continue
        n = end - t  # the copy: instrs[t + 1:end + 1], the block: instrs[t - n:t]
        first = t - n
        if first < 1 or instrs[first - 1].op not in CONDITIONAL_JUMPS \
                or any(k in entered for k in range(first + 1, t)) \
                or any(bc.handlers[k] != bc.handlers[t] for k in range(first, end + 1)) \
                or common_suffix(instrs, list(range(first, t)), list(range(t + 1, end + 1))) != n:
            if instrs[end].op != "RAISE_VARARGS":
                continue  # (copied returns: see share_copied_exits)
            if exits is None:
                exits = _entered_exits(bc, entered)
            first = exits.get(_exit_key(bc, t + 1, end + 1), -1)
            if first < 0:
                continue
        new = new or list(instrs)
        jump_instead(new, instrs, range(t + 1, end + 1), first)
    return Bytecode(bc.code, new, list(bc.handlers)) if new else bc


def _entered_exits(bc: Bytecode, entered: set[int]) -> dict[tuple[object, ...] | None, int]:
    """The blocks a jump enters that run straight to a raise or return, by their code,
    source positions and handler (see :func:`_exit_key`)."""
    instrs = bc.instrs
    found: dict[tuple[object, ...] | None, int] = {}  # (looked up with a None key too)
    for s in sorted(entered):
        end = s
        while end < len(instrs) and instrs[end].op not in FLOW \
                and (end == s or end not in entered):
            end += 1
        if end < len(instrs) and end - s < MAX_COPY and instrs[end].op in TERMINAL \
                and (end == s or end not in entered):
            key = _exit_key(bc, s, end + 1)
            if key is not None:
                found.setdefault(key, s)
    return found


def _exit_key(bc: Bytecode, start: int, end: int) -> tuple[object, ...] | None:
    """What makes ``instrs[start:end]`` a copy of another stretch: code, source
    positions (lines before 3.11) and handler."""
    sig = code_signature(bc.instrs, start, end)
    if sig is None or len({bc.handlers[k] for k in range(start, end)}) != 1:
        return None
    where = tuple(bc.position(i) or i.line for i in bc.instrs[start:end])
    return sig, where, bc.handlers[start]


def share_nested_clause_ends(bc: Bytecode) -> Bytecode:
    """Give a ``try`` in an except clause its way on to the clause's end again.

    Where the clause, and the function, end with that ``try`` (3.11+), the compiler
    copies the clause's end and the implicit ``return None`` (``POP_EXCEPT``, ``return``)
    after the ``try`` body, and its own clause runs on into the same code after its
    ``POP_EXCEPT``. Copies of the implicit return carry the position of the code before
    them (a written ``return`` has its own); the body's copy becomes a jump to the
    clause's, the join after the inner ``try``.
    """
    instrs = bc.instrs
    n = len(instrs)
    shape = ["POP_EXCEPT", "LOAD_CONST", "RETURN_VALUE"]

    def implicit_copy(k: int) -> bool:
        where = bc.position(instrs[k])
        return [i.op for i in instrs[k:k + 3]] == shape and instrs[k + 1].argval is None \
            and where is not None and where[0] is not None \
            and all(bc.position(i) == where for i in instrs[k - 1:k + 3]) \
            and len({bc.handlers[j] for j in range(k, k + 3)}) == 1
    pops = opcodes(bc).get("POP_EXCEPT", [])
    if len(pops) < 3:
        return bc
    # (a copy starts at a ``POP_EXCEPT``: see ``implicit_copy``)
    starts = [k for k in pops if 1 <= k < n - 2 and instrs[k + 1].op == "LOAD_CONST"
              and instrs[k + 2].op == "RETURN_VALUE" and instrs[k + 1].argval is None]
    if not starts:
        return bc
    entered = jumped_to(bc)
    new: list[Instr] | None = None
    for k in starts:
        inner = bc.handlers[k - 1]
        if inner is None or bc.handlers[k] == inner or instrs[k - 1].op in FLOW \
                or any(j in entered for j in range(k, k + 3)) or not implicit_copy(k):
            continue
        target = next((t for t in range(inner.target + 1, n - 2)
                       if instrs[t - 1].op == "POP_EXCEPT" and t not in entered
                       and bc.handlers[t] == bc.handlers[k] and implicit_copy(t)), None)
        if target is None:
            continue
        new = new or list(instrs)
        jump_instead(new, instrs, range(k, k + 3), target)
    return Bytecode(bc.code, new, list(bc.handlers)) if new else bc


def share_loop_exits(bc: Bytecode) -> Bytecode:
    """Give a ``break`` its jump out of the loop again.

    The compiler replaces a jump to a small block that ends the function with a copy of
    it: ``for x in xs: ... break`` followed by ``return r`` becomes ``POP_TOP`` (the
    iterator) and a copy of ``return r``. Where the innermost ``for`` loop's code pops
    its iterator (a ``POP_TOP`` on a line of its own: the ``break``'s, not an expression
    statement's) and runs on into an exact copy of straight code after the loop that
    loads a value and returns or raises (a statement's start: after the ``else`` clause
    too; not a constant's return, which a ``return`` statement in the loop compiles to
    as well),
    the copy becomes the jump a ``break`` compiles to. In a ``while`` loop the ``break``
    leaves only a ``NOP`` on its line (the reader drops it) before the copy, which keeps
    the lines of the code it copies; in an except clause, its ``POP_EXCEPT``.
    """
    exits = where_ops(bc, _EXITS)
    if not exits:
        return bc  # (no exit to copy: see ``candidates``)
    instrs = bc.instrs
    # loops as (first, exit): a ``for`` loop's ``FOR_ITER`` and where it goes when done;
    # a ``while`` loop's head and the instruction after its jump back
    loops = sorted([(f, instrs[f].target) for f in opcodes(bc).get("FOR_ITER", ())]
                   + [(i.target, j + 1) for j in where_ops(bc, _JUMPS)
                      if 0 <= (i := instrs[j]).target < j
                      and instrs[i.target].op != "FOR_ITER"
                      and not _suppressed_exit(instrs, j)])
    if not loops:
        return bc
    entered = jumped_to(bc)
    # straight code that ends in a return or a raise, by its instructions (found when a
    # break's copy is)
    endings: dict[tuple[object, ...] | None, list[int]] | None = None

    def find_endings() -> dict[tuple[object, ...] | None, list[int]]:
        found: dict[tuple[object, ...] | None, list[int]] = {}
        for t in exits:
            for b in range(t, max(t - _MAX_LOOP_EXIT, 0) - 1, -1):
                if b < t and (instrs[b].op in FLOW or b + 1 in entered):
                    break
                if not _statement_start(instrs, b, entered):
                    continue
                key = code_signature(instrs, b, t + 1)
                if key is not None:
                    found.setdefault(key, []).append(b)
        return found

    new: list[Instr] | None = None
    handlers = list(bc.handlers)
    made: dict[tuple[object, ...] | None, int] = {}
    protected: dict[int, list[int]] | None = None
    # (the innermost loop around each instruction: of those around it, the last begun)
    # (a sweep: a handler laid out at the end that jumps back, 3.12+, is a "loop" over
    # all the code in between; filling in each one's range is quadratic)
    # (only where straight code runs from ``k + 1`` into a return or a raise of a few
    # instructions, loading first, can a break's copy start: the others are never read)
    candidates: list[int] = []
    for t in exits:
        for start in range(t, max(t - _MAX_LOOP_EXIT, 0), -1):
            if start < t and (instrs[start].op in FLOW or start + 1 in entered):
                break
            if instrs[start].op.startswith(("LOAD_", "PUSH_NULL")):
                candidates.append(start - 1)
    candidates.sort()
    innermost: dict[int, tuple[int, int]] = {}
    begun: list[tuple[int, int]] = []  # (-f, -e): the last in ``loops`` order on top
    next_loop = 0
    for k in candidates:  # (of the loops begun before ``k``, the last that ends after it)
        while next_loop < len(loops) and loops[next_loop][0] < k:
            f, e = loops[next_loop]
            heapq.heappush(begun, (-f, -e))
            next_loop += 1
        while begun and -begun[0][1] <= k:
            heapq.heappop(begun)
        if begun:
            innermost[k] = (-begun[0][0], -begun[0][1])
    for k in candidates:
        ins = instrs[k]
        if k + 1 >= len(instrs) or ins.op not in ("POP_TOP", "POP_EXCEPT") \
                and bc.nop_line_before(instrs[k + 1].offset) is None:
            continue  # (what a break leaves: a pop, a clause's end, a NOP on its line)
        inner = [innermost[k]] if k in innermost else []
        if not inner and bc.layout.cold_handlers and ins.op == "POP_EXCEPT":
            if protected is None:
                protected = _protected_by(bc)
            inner = _clause_loops(bc, k, loops, protected)
        if not inner or k + 1 >= len(instrs):
            continue
        f, exit_ = max(inner)  # (the innermost loop's: an inner loop's break pops its own)
        line = None
        if instrs[f].op == "FOR_ITER":
            # (the ``break`` statement's own line: not an expression statement's value)
            if k + 1 in entered or ins.op != "POP_TOP" or bc.handlers[k] != bc.handlers[f] \
                    or ins.line is None or ins.line == instrs[k - 1].line \
                    and not _break_position(bc, ins, instrs[k - 1]):
                continue
            start = k + 1
        elif ins.op == "POP_EXCEPT" and k + 1 not in entered and ins.line is not None \
                and ins.line not in (instrs[k - 1].line, instrs[k + 1].line):
            line = ins.line  # (a break in an except clause: its POP_EXCEPT on its line)
            start = k + 1
        else:
            line = bc.nop_line_before(instrs[k + 1].offset)
            if line is None or line in (ins.line, instrs[k + 1].line) or ins.op in FLOW \
                    or ins.offset == instrs[k + 1].offset:  # (one instruction read as two)
                continue
            start = k + 1
        end = start
        while end < len(instrs) and instrs[end].op not in FLOW and end + 1 not in entered:
            end += 1
        if end >= len(instrs) or end - start >= _MAX_LOOP_EXIT \
                or not instrs[start].op.startswith(("LOAD_", "PUSH_NULL")) \
                or instrs[end].op not in ("RETURN_VALUE", "RAISE_VARARGS") \
                or [i.op for i in instrs[start:end + 1]] == ["LOAD_CONST", "RETURN_VALUE"] \
                or any(bc.handlers[j] != bc.handlers[start] for j in range(start, end + 1)):
            continue
        if line is None and bc.handlers[start] != bc.handlers[k]:
            continue
        key = code_signature(instrs, start, end + 1)
        if endings is None:
            endings = find_endings()
        # (not another break's copy: 3.12+ lays a clause out after the loop)
        after = [b for b in endings.get(key, ()) if b >= exit_ and b != start
                 and instrs[b - 1].op != "POP_EXCEPT"
                 and all(bc.handlers[j] == bc.handlers[start] for j in range(b, b + end - k))]
        new = new or list(instrs)
        if after:
            target = min(after)
        elif line is not None or not bc.layout.positions \
                and _out_of_order(instrs, start, len(instrs)):
            # (every way out of an endless loop is a copy, or, 3.10, of a ``for`` loop
            # whose ``else`` leaves, a copy on a line after all the code that follows:
            # the code after the loop comes back once, after the last instruction)
            if key not in made:
                made[key] = len(new)
                new.extend(i.copy() for i in instrs[start:end + 1])
                handlers.extend(bc.handlers[start] for _ in range(start, end + 1))
            target = made[key]
        else:
            continue
        jump_instead(new, instrs, range(start, end + 1), target, line)
    return Bytecode(bc.code, new, handlers) if new else bc


_MAX_LOOP_EXIT = 6  # instructions the compiler copies at most (with the iterator's pop)
_EXITS = ("RETURN_VALUE", "RAISE_VARARGS")
_JUMPS = CONDITIONAL_JUMPS | {"JUMP"}


def _suppressed_exit(instrs: list[Instr], j: int) -> bool:
    """Is the jump at ``j`` where a ``with`` goes on after its ``__exit__`` suppressed an
    exception (3.12+ lays that out after the code it goes back to: no loop)?"""
    k = j - 1
    while k > 0 and instrs[k].op == "POP_TOP":
        k -= 1  # (the exit's values: 2, on 3.14 3)
    return instrs[j].op == "JUMP" and 2 <= j - 1 - k <= 3 and instrs[k].op == "POP_EXCEPT" \
        and any(i.op == "WITH_EXCEPT_START" for i in instrs[max(k - 5, 0):k])


def _break_position(bc: Bytecode, ins: Instr, before: Instr) -> bool:
    """Has ``ins`` the position of a ``break`` (5 characters) other than ``before``'s
    (3.11+: ``if c: break`` on one line)?"""
    where = bc.position(ins)
    return (where is not None and None not in where and where[0] == where[1]
            and where[3] - where[2] == 5  # type: ignore[operator]  # no None in it
            and where != bc.position(before))


def _protected_by(bc: Bytecode) -> dict[int, list[int]]:
    """The instructions each handler protects, by the handler's first instruction."""
    out: dict[int, list[int]] = {}
    for j, h in enumerate(bc.handlers):
        if h is not None:
            out.setdefault(h.target, []).append(j)
    return out


def _clause_loops(bc: Bytecode, k: int, loops: list[tuple[int, int]],
                  protected: dict[int, list[int]]) -> list[tuple[int, int]]:
    """The loops around the ``try`` whose except clause ends at the ``POP_EXCEPT`` ``k``,
    laid out after them (3.12+): those of the code the clause's handler protects."""
    before = bc.handlers[k - 1]
    if before is None:
        return []
    cleanup = protected.get(before.target)  # (the clause's clean-up protects its start)
    first = cleanup[0] if cleanup else None
    if first is None or bc.instrs[first].op != "PUSH_EXC_INFO":
        return []
    body = protected.get(first, [])
    if not body:
        return []
    low, high = body[0], body[-1]
    return [(f, e) for f, e in loops if f < high and low < e
            and any(f < j < e for j in body)]


def _statement_start(instrs: list[Instr], b: int, entered: set[int]) -> bool:
    """Whether a statement may start at ``b``: the first instruction, one jumped to or
    after code that does not go on, or the first of a new line after a statement's end
    (not the middle of an expression: after a test, or a shuffle of its values)."""
    if not b or b in entered:
        return True
    prev, ins = instrs[b - 1], instrs[b]
    if prev.op in TERMINAL or prev.op in ("JUMP", "END_FOR"):
        return True
    return ins.line != prev.line and prev.op not in FLOW and ins.op not in _CLEAN_UP


#: a copied exit: its code, its instructions' positions, its handler
_CopyKey: TypeAlias = "tuple[tuple[object, ...], tuple[object, ...], Handler | None]"


def share_copied_exits(bc: Bytecode, lines: bool = False) -> Bytecode:
    """Give a jump to a small block that returns its jump again.

    The compiler replaces a jump to a block of a few instructions that ends in a
    ``return`` with a copy of it, source positions and all: a ``break`` out of a loop
    whose ``else`` clause is followed by ``d`` (and the end) runs on into a copy of
    ``d``. Straight code from the start of a line that loads a value and returns it,
    with exactly the instructions and source positions (before 3.11, which has no
    columns: lines; without ``lines`` only one copy, at an except clause's end, on a
    line after all the code up to the later one, which is in order) of such code later
    on, is such a copy: it becomes a jump to the later one. Not a ``return`` alone (the structurer writes
    those in place; the implicit return's copies have the positions of their jumps, see
    :func:`share_implicit_returns`), nor a ``finally`` body's copies (its handler has
    one more), nor the copy only a handler reaches (but 3.10's). After
    :func:`merge_tails`: the copies of a one-line expression's end are shared at the
    value.
    """
    returns = opcodes(bc).get("RETURN_VALUE", [])
    if len(returns) < 2:
        return bc  # (a copy and the exit it copies: two returns, see ``ends``)
    instrs = bc.instrs
    clauses = not lines and not bc.layout.positions

    def where(k: int) -> object:
        ins = instrs[k]
        return ins.op, ins.argval if code_signature(instrs, k, k + 1) else None, \
            bc.position(ins) or ins.line

    # (a copy and the exit it copies end in two returns alike, positions and all)
    ends = [where(r) for r in returns]
    if len(set(ends)) == len(ends):
        return bc
    entered = jumped_to(bc)
    normal = reachable(bc, exceptions=False)
    latest: dict[tuple[object, ...], int] = {}  # stretch -> its last start
    count: dict[tuple[object, ...], int] = {}
    stretches: list[list[tuple[int, _CopyKey]]] = []
    for r in returns:
        found: list[tuple[int, _CopyKey]] = []
        # (3.10: a value and its return alone, at an except clause's end)
        for s in range(r - (1 if clauses else 2), max(r - MAX_COPY, -1), -1):
            if instrs[s].op in FLOW or s + 1 in entered or s not in normal and not clauses:
                break  # (a handler's way on is its clean-up's copy, see split_clean_ups)
            prev = instrs[s - 1] if s else None
            if prev is not None and s not in entered and prev.op not in TERMINAL \
                    and prev.op not in ("JUMP", "END_FOR") \
                    and (instrs[s].line is None or instrs[s].line == prev.line):
                continue  # (not the start of a line: part of a statement)
            key = code_signature(instrs, s, r + 1)
            if key is None or prefix_effect(instrs, list(range(s, r)), _STORES) != (1, 0) \
                    or instrs[s].line is None \
                    or len({bc.handlers[k] for k in range(s, r + 1)}) != 1:
                continue
            key = (key, tuple(where(k) for k in range(s, r + 1)), bc.handlers[s])
            found.append((s, key))
            latest[key] = s
            count[key] = count.get(key, 0) + 1
        stretches.append(found)
    if all(n < 2 for n in count.values()):
        return bc  # (no stretch has a copy)
    places: dict[object, int] = {}  # an instruction's code and position: how many
    for k in range(len(instrs)):
        w = where(k)
        places[w] = places.get(w, 0) + 1
    new: list[Instr] | None = None
    for found in stretches:  # (the longest copy)
        for s, key in reversed(found):
            if latest[key] > s and places[key[1][0]] == count[key] and (
                    not clauses or instrs[s - 1].op == "POP_EXCEPT" and count[key] == 2
                    and _out_of_order(instrs, s, latest[key])
                    and not _out_of_order(instrs, latest[key], len(instrs))):
                new = new or list(instrs)
                jump_instead(new, instrs, range(s, s + len(key[1])), latest[key])
                break
    return Bytecode(bc.code, new, list(bc.handlers)) if new else bc


def _out_of_order(instrs: list[Instr], s: int, later: int) -> bool:
    """Whether the copy at ``s`` of the exit at ``later`` (one line, no columns: 3.10)
    has a line after all of the code between them: a statement there would be in
    source order, a copy of the code after a compound statement is not."""
    line = instrs[s].line
    between = [i.line for i in instrs[s:later] if i.line is not None and i.line != line]
    return line is not None and bool(between) and max(between) < line


#: Statements' stores, for the effect of a copied exit.
_STORES = {**dict.fromkeys(("STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_FAST"), (1, 0)),
           "STORE_ATTR": (2, 0), "STORE_SUBSCR": (3, 0)}


def share_reraises(bc: Bytecode) -> Bytecode:
    """Give the ways out of a loop in a ``finally`` handler their one re-raise again.

    The compiler copies the ``RERAISE`` that ends a ``finally`` handler into every
    place that jumps to it: a ``while`` loop in the ``finally`` leaves its copy of the
    clause through its first test and through its last, each into a ``RERAISE`` of its
    own. Under a handler a loop runs in (elsewhere an ``if`` that ends the clause keeps
    a copy in each arm, see ``_strip_reraise``), re-raises that start their block, alike
    in argument, handler and source position (3.11+), are one: all but the last become
    jumps to it.
    """
    ops = opcodes(bc)
    if "RERAISE" not in ops or "JUMP" not in ops:
        return bc  # (re-raises under a loop's handler: see ``looping``)
    instrs = bc.instrs
    looping = {bc.handlers[t] for k in ops["JUMP"] if 0 <= (t := instrs[k].target) < k} - {None}
    if not looping:
        return bc
    entered = jumped_to(bc)
    last: dict[tuple[object, ...], int] = {}
    copies: list[tuple[int, tuple[object, ...]]] = []
    for k in ops["RERAISE"]:
        ins = instrs[k]
        if not k or bc.handlers[k] not in looping \
                or k not in entered and instrs[k - 1].op not in (*TERMINAL, *CONDITIONAL_JUMPS,
                                                                 "JUMP"):
            continue
        where = bc.position(ins)
        if where is None or where[0] is None:
            continue
        key = (ins.arg, bc.handlers[k], where)
        last[key] = k
        copies.append((k, key))
    moved = {k: last[key] for k, key in copies if last[key] != k}
    if not moved:
        return bc
    # (the jumps into a copy go to the kept one themselves: an empty block between them
    # would stand in the way of a test folded into one condition)
    new = [replace(i, target=moved[i.target]) if i.target in moved else i for i in instrs]
    for k, keep in moved.items():
        if instrs[k - 1].op not in TERMINAL and instrs[k - 1].op != "JUMP":
            jump_instead(new, instrs, [k], keep)  # (the copy code runs on into)
    return Bytecode(bc.code, new, list(bc.handlers))


def share_body_ends(bc: Bytecode) -> Bytecode:
    """Give a module's or class body's copies of its end one end again.

    The compiler copies the small block that ends a module or class body (``return
    None``, with a class body's ``__classcell__``/``__static_attributes__`` stores) into
    the places that jump to it: a ``break`` out of a loop that ends the body then reads
    as a ``return``, which such a body cannot have. Every copy of the last end becomes a
    jump to it (to the last one the body's flow reaches; from an except clause, where
    the clause ends, not after its copy of code after the ``try``).
    """
    if code_kind(bc.code) not in ("module", "class"):
        return bc
    instrs = bc.instrs
    # (the last the body's own flow reaches: a handler's way on comes back to it)
    normal = reachable(bc, exceptions=False)
    ends = opcodes(bc).get("RETURN_VALUE", [])
    kept = [r for r in ends if r in normal]
    if len(ends) < 2 or not kept:
        return bc
    keep = kept[-1]
    first = _body_end(instrs, keep)
    if first is None:
        return bc
    key = code_signature(instrs, first, keep + 1)
    entered = jumped_to(bc)
    new: list[Instr] | None = None
    for r in ends:
        start = _body_end(instrs, r) if r != keep else None
        if start is None or key is None or code_signature(instrs, start, r + 1) != key \
                or any(k in entered for k in range(start + 1, r + 1)):
            continue
        if r not in normal and (not start or instrs[start - 1].op != "POP_EXCEPT"):
            continue  # (a clause's copy of the code after the ``try`` too: its own)
        new = new or list(instrs)
        jump_instead(new, instrs, range(start, r + 1), first)
    return Bytecode(bc.code, new, list(bc.handlers)) if new else bc


_IMPLICIT_STORES = {"__classcell__", "__classdictcell__", "__static_attributes__"}


def _body_end(instrs: list[Instr], r: int) -> int | None:
    """Where the implicit end of a module or class body that returns at ``r`` starts:
    ``return None`` or the class cell's, after the stores the compiler adds."""
    load = instrs[r - 1] if r else None
    if load is not None and load.op == "LOAD_CONST" and load.argval is None:
        start = r - 1
    elif r >= 3 and instrs[r - 1].op == "STORE_NAME" and instrs[r - 1].argval == "__classcell__" \
            and instrs[r - 2].op == "COPY":
        start = r - 3
    else:
        return None
    while start >= 2 and instrs[start - 1].op == "STORE_NAME" \
            and instrs[start - 1].argval in _IMPLICIT_STORES \
            and instrs[start - 2].op.startswith("LOAD_"):
        start -= 2
    return start


def share_implicit_returns(bc: Bytecode) -> Bytecode:
    """Give the code that ends a function its one ``return None`` again.

    The compiler copies the implicit ``return None`` (it has no line of its own) into
    every place that goes to it, each copy at the source position of the jump (or of the
    code that runs on) into it: a ``while`` loop that ends a function then has one
    copy after its first test and one after its last. Where a loop's last test leaves
    to such a copy and there are others (told from ``return`` statements by their
    positions, on 3.10 by their lines; only jumped to: a ``return`` statement's
    clean-up runs on into it), all but the last become jumps to it: the layout of code
    that goes on after the loop.
    """
    # (a function's own: a module's or class body's end, or a type parameter scope's, is
    # never written as a ``return``)
    if code_kind(bc.code) != "function" or count(bc, "RETURN_VALUE") < 2 \
            or not has_tests(bc):
        return bc  # (two returns at least, one a loop's test leaves to: see below)
    positions = bc.layout.positions  # (3.10: lines)

    def position(ins: Instr) -> object:
        return bc.position(ins) if positions else ins.line

    instrs = bc.instrs
    # (the ``return None``s outside handlers: the copies are among them; two at least,
    # one jumped to before the last)
    found = [k - 1 for k in opcodes(bc)["RETURN_VALUE"] if k
             and instrs[k - 1].op == "LOAD_CONST" and instrs[k - 1].argval is None
             and bc.handlers[k - 1] is None]
    if len(found) < 2 or not any(not r or instrs[r - 1].op in _GONE_ON for r in found[:-1]):
        return bc
    sources: dict[int, list[int]] = {}
    for k, i in enumerate(instrs):
        if i.target >= 0:
            sources.setdefault(i.target, []).append(k)

    def loop_test(rs: list[int]) -> bool:
        """Whether the last test of a loop, right before its jump back, leaves to one
        of ``rs``."""
        return any(instrs[p].op in CONDITIONAL_JUMPS
                   and (instrs[p].target < p or p + 1 < len(instrs)
                        and instrs[p + 1].op == "JUMP" and instrs[p + 1].target < p)
                   for r in rs for p in sources.get(r, []) + ([r - 1] if r else []))

    found = [r for r in found if r + 1 not in sources]
    if len(found) < 2 or not any(not r or instrs[r - 1].op in _GONE_ON for r in found[:-1]) \
            or not loop_test(found):
        return bc  # (the copies are among ``found``: none of them would do)
    copies: list[int] = []  # (only jumped to: a return statement's clean-up runs on)
    jumped: set[int] = set()
    for r in found:
        preds = list(sources.get(r, ()))
        if r and instrs[r - 1].op not in TERMINAL and instrs[r - 1].op != "JUMP":
            preds.append(r - 1)
        if not r or instrs[r - 1].op in _GONE_ON:
            jumped.add(r)  # (or runs on from a test: 3.11's loop test jumps back)
        where = position(instrs[r + 1])
        if preds and where is not None and all(position(instrs[p]) == where for p in preds):
            copies.append(r)
    # (only around a ``while`` loop that ends the function: one copy is where its
    # last test leaves the loop, the test right before the jump back)
    if len(copies) < 2 or not any(r in jumped for r in copies[:-1]) or not loop_test(copies):
        return bc
    keep = copies[-1]
    new = list(instrs)
    for r in copies[:-1]:
        if r not in jumped:
            continue
        jump_instead(new, instrs, range(r, r + 2), keep)
    return Bytecode(bc.code, new, list(bc.handlers))


_GONE_ON = frozenset(TERMINAL | CONDITIONAL_JUMPS | {"JUMP"})  # (code after them is jumped to)
