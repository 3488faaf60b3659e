"""3.8/3.9: a test's jump as written, where the peephole pass threaded it.

3.9's peephole pass (and :mod:`.legacy`'s rewrite of 3.8's listing, which does it again)
sends every jump to an unconditional jump where that one goes, whatever lines they are on
(3.10 does so only within a line): ``if c: f()`` + ``break`` tests ``c`` with a jump out
of the loop, and ``if a or b: break`` tests ``a`` with one, as ``if not c: break`` and
``if a: break`` do. :func:`unthread` gives such a test back the jump to the ``break``
(or ``continue``, or any jump that is a statement of its own) it had, where the layout
says it had it: the jump is the first one after the test that goes where the test goes,
and the test is either the ``if`` whose body falls into it or a test of the condition
right before it. The code does the same; what it reads as changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Instr(Protocol):
    """What is read of an instruction (``.instructions.Instr``)."""

    op: str
    target: int
    offset: int
    line: int | None


class Handler(Protocol):
    """What is read of a handler (``.instructions.Handler``)."""

    @property
    def target(self) -> int: ...


_TESTS = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
_NO_FALLTHROUGH = ("JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE")
#: (the first three jump: code that falls into a jump after them is no statement's)
_STATEMENT_OPS = ("FOR_ITER", "JUMP_IF_NOT_EXC_MATCH", "SEND", "POP_TOP",
                  "POP_EXCEPT", "BEFORE_WITH", "PRINT_EXPR", "IMPORT_STAR", "YIELD_VALUE")


def unthread(instrs: Sequence[Instr], handlers: Sequence[Handler | None]) -> None:
    """Give each conditional jump of ``instrs`` (3.9's layout, ``handlers`` protecting
    them) that 3.9 threaded past a jump of the source's own its jump to that one."""
    live = _live(instrs, handlers)
    n = len(instrs)
    backs = [(k, instrs[k].target) for k in sorted(live)
             if instrs[k].op == "JUMP" and 0 <= instrs[k].target <= k]
    targets = {instrs[k].target for k in live if instrs[k].target >= 0} \
        | {h.target for h in handlers if h is not None}
    for c in range(n):
        ins = instrs[c]
        if not _test(instrs, live, c):
            continue
        to = ins.target
        j = next((k for k in range(c + 1, n) if k in live and instrs[k].op == "JUMP"
                  and instrs[k].target == to), None)
        if j is None or to == j + 1 or c < to < j or handlers[c] != handlers[j] \
                or _loop_test(instrs, backs, c) \
                or any(k > j and c < t <= j for k, t in backs):  # (a loop around the jump)
            continue
        if _tested(instrs, live, c, j) or _statement(instrs, handlers, targets, j):
            if _inside(instrs, live, backs, c, j, to):
                ins.target = j
    _after_returns(instrs, handlers, live)
    _else_jumps(instrs, handlers, live)
    _chain_ends(instrs, live)
    _else_ends(instrs, handlers, live)


def _else_ends(instrs: Sequence[Instr], handlers: Sequence[Handler | None],
               live: set[int]) -> None:
    """An ``if`` arm's jump over its ``else`` goes to the end of the statement; where the
    ``else`` arm falls into a jump of its own line there (``continue``), the pass threaded
    the arm's jump on: it gets its jump back."""
    n = len(instrs)
    tested = {instrs[k].target for k in live if _test(instrs, live, k)}
    for x in range(1, n - 1):
        ins = instrs[x]
        if ins.op != "JUMP" or x not in live or x + 1 not in tested \
                or ins.line != instrs[x - 1].line or instrs[x - 1].op in _NO_FALLTHROUGH \
                or instrs[x - 1].target >= 0:
            continue  # (not the compiler's jump at the end of an ``if`` arm)
        to = ins.target
        j = next((k for k in range(x + 1, n) if k in live and instrs[k].op == "JUMP"
                  and instrs[k].target == to), None)
        if j is None or to == j + 1 or x < to < j or handlers[x] != handlers[j]:
            continue
        before = instrs[j - 1]
        if before.op in _NO_FALLTHROUGH or before.target >= 0 or instrs[j].line is None \
                or instrs[j].line == before.line:
            continue  # (the ``else`` arm falls into a statement of its own)
        if all(instrs[k].target < 0 or x < instrs[k].target <= j or instrs[k].target == to
               for k in range(x + 1, j) if k in live):
            ins.target = j


def _chain_ends(instrs: Sequence[Instr], live: set[int]) -> None:
    """A chained comparison ending a condition jumps over its clean-up (``POP_TOP``, and
    a jump where the condition is false) to the ``if`` body; where that body is a jump
    (``if a < b < c: break``, ``elif a is b is c: pass``, the ``if`` arm's jump over its
    ``else``), the pass threaded the jump (and the condition's earlier tests that go
    there too) on. They get their jump to it back: the body right after the clean-up,
    on a line of its own where the condition's false way jumps over it."""
    n = len(instrs)
    for x in range(n - 2):
        ins = instrs[x]
        if ins.op != "JUMP" or x not in live or x + 1 not in live \
                or instrs[x + 1].op != "POP_TOP":
            continue
        to = ins.target
        if instrs[x + 2].op == "JUMP" and instrs[x + 2].target == to and x + 2 in live:
            j = x + 2  # (the clean-up falls into the body)
        elif x + 3 < n and instrs[x + 2].op == "JUMP" and x + 2 in live \
                and instrs[x + 3].op == "JUMP" and instrs[x + 3].target == to \
                and x + 3 not in live and instrs[x + 3].line is not None \
                and instrs[x + 3].line != instrs[x + 2].line:
            j = x + 3
        else:
            continue
        ins.target = j
        k = x - 1
        while k >= 0 and instrs[k].op not in _NO_FALLTHROUGH \
                and not instrs[k].op.startswith(("STORE_", "DELETE_")) \
                and instrs[k].op not in _STATEMENT_OPS:
            if _test(instrs, live, k) and instrs[k].target == to:
                instrs[k].target = j  # (``a or b < c < d``: the test before it)
            k -= 1


def _else_jumps(instrs: Sequence[Instr], handlers: Sequence[Handler | None],
                live: set[int]) -> None:
    """A jump kept, dead, right after the ``RERAISE`` that ends a ``try`` statement's
    handlers, on a line of its own, is its ``else`` clause's (``else: break``), which the
    ``try`` body jumped to before the peephole pass threaded that jump on: it gets its
    jump back."""
    for j in range(1, len(instrs)):
        jump = instrs[j]
        if jump.op != "JUMP" or j in live or instrs[j - 1].op != "RERAISE" or j - 1 not in live \
                or jump.line is None or jump.line == instrs[j - 1].line:
            continue  # (on the handlers' last line: the loop's own jump back after them)
        to = jump.target
        ways = {to} | {k for k in live if instrs[k].op == "JUMP" and instrs[k].target == to}
        for x in range(j - 2, 0, -1):
            h = handlers[x - 1]
            if x in live and instrs[x].op == "JUMP" and instrs[x].target in ways \
                    and h is not None and h.target == x + 1 and handlers[x] == handlers[j]:
                instrs[x].target = j  # (the body's jump over its handlers)
                for y in range(x + 2, j - 1):  # (the clauses' ends that go there too: the
                    # statement after the ``try``, not its ``else``; a clause's own
                    # ``break`` keeps its clause's end after it, dead)
                    if instrs[y].op == "JUMP" and instrs[y - 1].op == "POP_EXCEPT" \
                            and y in live and y + 1 in live and instrs[y].target in ways:
                        instrs[y].target = j
                break


def _after_returns(instrs: Sequence[Instr], handlers: Sequence[Handler | None],
                   live: set[int]) -> None:
    """A jump kept, dead, right after a ``return``: the peephole pass keeps what follows a
    ``return`` only from a jump target on, so something jumped there before it threaded
    the jump on. The tests of an ``if`` whose body (straight code) ends in that ``return``
    (``if c: return x`` + ``continue``, on a line of its own) jumped there: they get that
    jump back."""
    for j in range(1, len(instrs)):
        jump = instrs[j]
        if jump.op != "JUMP" or j in live \
                or instrs[j - 1].op not in ("RETURN_VALUE", "RAISE_VARARGS") or j - 1 not in live or jump.line is None or jump.line == instrs[j - 1].line:
            continue  # (a jump of the line before: the compiler's, the loop's jump back)
        k = j - 2
        while k >= 0 and instrs[k].op not in _NO_FALLTHROUGH and instrs[k].target < 0:
            k -= 1  # (back over the ``if`` body, straight code, to the test that jumps over it)
        tests = []
        while k >= 0 and _test(instrs, live, k) and instrs[k].target == jump.target:
            tests.append(k)
            k -= 1
            while k >= 0 and instrs[k].op not in _NO_FALLTHROUGH and instrs[k].target < 0 \
                    and not instrs[k].op.startswith(("STORE_", "DELETE_")) \
                    and instrs[k].op not in _STATEMENT_OPS:
                k -= 1  # (an earlier test of the same condition: ``if a and b:``)
        for c in tests:
            if handlers[c] == handlers[j]:  # (not through a ``with``'s or ``try``'s exit)
                instrs[c].target = j


def _test(instrs: Sequence[Instr], live: set[int], c: int) -> bool:
    """Is instruction ``c`` a statement's test that runs (not a ``JUMP_IF_X_OR_POP``'s,
    read as ``COPY 1`` and a test at one offset: a value)?"""
    ins = instrs[c]
    return ins.op in _TESTS and c in live \
        and not (c and instrs[c - 1].op == "COPY" and instrs[c - 1].offset == ins.offset)


def _tested(instrs: Sequence[Instr], live: set[int], c: int, j: int) -> bool:
    """Is the jump at ``j`` the body of an ``if`` whose condition the test at ``c`` is a
    part of: the condition's last test jumps over it, and only tests run from ``c``?"""
    t = instrs[j - 1].target
    if not _test(instrs, live, j - 1) or not (t == j + 1 or j + 1 < len(instrs)
                                              and instrs[j + 1].op == "JUMP"
                                              and instrs[j + 1].target == t):
        return False  # (past the jump, or where the jump after it goes: threaded too)
    return all(instrs[k].op not in _NO_FALLTHROUGH and instrs[k].op not in _STATEMENT_OPS
               and not instrs[k].op.startswith(("STORE_", "DELETE_"))
               for k in range(c + 1, j - 1))


def _statement(instrs: Sequence[Instr], handlers: Sequence[Handler | None], targets: set[int],
               j: int) -> bool:
    """Is the jump at ``j`` a ``break`` or ``continue`` of its own (the code before it
    falls into it): it starts a line (after the ``POP_TOP`` of a ``for`` loop's iterator,
    on its line), and nothing jumps to it?"""
    line = instrs[j].line
    s = j - 1 if j and instrs[j - 1].op == "POP_TOP" and instrs[j - 1].line == line else j
    if s == 0 or s in targets or j in targets or line is None:
        return False
    before = instrs[s - 1]
    return before.op not in _NO_FALLTHROUGH and before.op not in _STATEMENT_OPS[:3] \
        and before.op not in _TESTS \
        and before.line is not None and before.line != line and handlers[s - 1] == handlers[j]


def _inside(instrs: Sequence[Instr], live: set[int], backs: list[tuple[int, int]], c: int,
            j: int, to: int) -> bool:
    """Does every jump between ``c`` and ``j`` stay there (or go to ``j + 1``, past the
    jump, or where a jump there goes, or to ``to`` as a jump or a test that is not a
    loop's: threaded as well)?"""
    after = instrs[j + 1].target if j + 1 < len(instrs) and instrs[j + 1].op == "JUMP" else -1
    for k in range(c + 1, j):
        t = instrs[k].target
        if k not in live or t < 0 or c < t <= j + 1 or t == after:
            continue  # (``after``: past the jump, threaded)
        if t != to or not (instrs[k].op == "JUMP" or _test(instrs, live, k)
                           and not _loop_test(instrs, backs, k)):
            return False
    return True


def _loop_test(instrs: Sequence[Instr], backs: list[tuple[int, int]], c: int) -> bool:
    """Is the test at ``c`` a ``while`` loop's: a jump back (``backs``: (index, target)
    of each) goes to the start of its line?"""
    line = instrs[c].line
    return any(k > c and t <= c and all(instrs[m].line == line for m in range(t, c + 1))
               for k, t in backs)


def _live(instrs: Sequence[Instr], handlers: Sequence[Handler | None]) -> set[int]:
    """The indices of the instructions that run: from the first, by falling through,
    jumps and handlers."""
    seen: set[int] = set()
    todo = [0] if instrs else []
    while todo:
        k = todo.pop()
        if k in seen or not 0 <= k < len(instrs):
            continue
        seen.add(k)
        ins = instrs[k]
        if ins.op not in _NO_FALLTHROUGH:
            todo.append(k + 1)
        if ins.target >= 0:
            todo.append(ins.target)
        h = handlers[k]
        if h is not None:
            todo.append(h.target)
    return seen
