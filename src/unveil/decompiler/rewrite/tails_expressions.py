"""Undo the compiler's copies of a short tail into the arms of a one-line expression.

CPython 3.12+ copies small blocks that end a function (``x = <value>; return x``) into
every branch that jumps to them. For ``result = a < b < c`` or ``return f(x if c else
y)`` the two arms of the conditional then end in identical instructions, and no join
is left where the value could be merged back. Where both arms of a conditional jump
differ only in code on the jump's own line (one expression), the second arm's copy of
the shared end is kept and the first arm jumps to it: the join the source had.

Also the primitives of :mod:`.tails`, which undoes the copies of whole statements.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import cast

from ...bytecode import CONDITIONAL_JUMPS, Bytecode, Instr, retarget
from ...codeobj import code_kind

TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
FLOW = CONDITIONAL_JUMPS | TERMINAL | {"JUMP", "FOR_ITER", "SEND", "END_ASYNC_FOR",
                                      "JUMP_IF_NOT_EXC_MATCH"}
MAX_COPY = 5  # instructions of an exit block the compiler copies at most (4, and a
#              ``RETURN_CONST`` read as two)
_TAKES_ONE = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "RETURN_VALUE"}


def merge_tails(bc: Bytecode) -> Bytecode:
    """``bc`` with copied tails of one-line conditional expressions shared again (an
    outer test's arm is straight code to its copy only once an inner one's are shared:
    ``return g(a < b == (c if t else d))``; a few rounds)."""
    for _ in range(_MERGE_ROUNDS):
        merged = _merge_tails_once(bc)
        if merged is bc:
            break
        bc = merged
    return bc


_MERGE_ROUNDS = 3


def _merge_tails_once(bc: Bytecode) -> Bytecode:
    instrs = bc.instrs
    if not has_tests(bc):
        return bc
    entries: dict[int, int] = {}
    sources: dict[int, list[int]] = {}
    tests_on: dict[int, list[int]] = {}  # the live conditional jumps, by line, in order
    tests: list[int] = []  # the conditional jumps with a line
    live = reachable(bc)  # (a folded comprehension leaves dead clean-up code behind)
    for k, i in enumerate(instrs):
        test = i.op in CONDITIONAL_JUMPS and i.line is not None
        if test:
            tests.append(k)
        if i.target >= 0 and k in live:
            entries[i.target] = entries.get(i.target, 0) + 1
            sources.setdefault(i.target, []).append(k)
            if test:
                tests_on.setdefault(cast(int, i.line), []).append(k)
    for k, h in enumerate(bc.handlers):
        if h is not None and k in live:
            entries[h.target] = entries.get(h.target, 0) + 2  # never merged
    new = list(instrs)
    changed = False
    for j in tests:
        ins = instrs[j]
        # (the first arm may be where earlier tests of the same condition go too: the
        # ``c`` of ``x if c or d else y``)
        earlier = [k for k in sources.get(j + 1, ()) if k < j and instrs[k].op in CONDITIONAL_JUMPS
                   and instrs[k].line == ins.line]
        if len(earlier) != entries.get(j + 1, 0):
            continue
        # the jump's target may also be where earlier tests of the same expression go
        # (``a < b < c < d`` leaves each comparison for one clean-up block)
        same_line = all(instrs[k].line == ins.line for k in sources.get(ins.target, ()))
        # the second arm may run on into the end of an enclosing expression on the same
        # line (``x and (a if c else b)``: the ``and`` jumps to where ``b`` ends)
        outer: dict[int, int] = {}
        for k in tests_on.get(cast(int, ins.line), ()):  # (``tests`` have lines)
            if k < j and instrs[k].target > ins.target:
                outer[instrs[k].target] = outer.get(instrs[k].target, 0) + 1
        first, second = _both_arms(
            bc, entries, (j + 1, bool(earlier), len(earlier), None),
            (ins.target, True, len(sources.get(ins.target, ())) if same_line else 1, outer))
        if first is None or second is None:
            continue
        # (a kept test, ``x or y``: the jump's arm is the kept value, all of it shared)
        kept = j > 0 and instrs[j - 1].op == "COPY" and instrs[j - 1].arg == 1
        n = _value_split(instrs, first, second, common_suffix(instrs, first, second), kept)
        if n == 0 or (n == len(first) and n == len(second)) \
                or bc.handlers[first[0]] != bc.handlers[second[0]]:
            continue
        lines = _expression_lines(bc, instrs[first[len(first) - n]],
                                  instrs[second[len(second) - n]], ins)
        if any(instrs[k].line not in lines for k in first[:len(first) - n]) \
                or any(instrs[k].line not in lines for k in second[:len(second) - n]):
            continue  # not one expression: an if statement whose arms end alike
        keep = second[len(second) - n]
        cut = first[len(first) - n]
        if bc.handlers[keep] != bc.handlers[second[0]]:
            continue  # (a return alone, after a try body's block: the join stays in it)
        if any(instrs[k].target > cut for k in first[:len(first) - n]
               if instrs[k].op in CONDITIONAL_JUMPS):
            continue  # a test inside the first arm jumps into the shared end
        jump_instead(new, instrs, first[first.index(cut):], keep)
        changed = True
    return Bytecode(bc.code, new, list(bc.handlers)) if changed else bc


def jumped_to(bc: Bytecode) -> set[int]:
    """The instructions a jump or a handler goes to (not to be changed: inside
    :func:`sharing_jumps`, the one set of a Bytecode read again)."""
    if _SHARED.bc is bc:
        return _SHARED.entered
    entered = {i.target for i in bc.instrs if i.target >= 0}
    entered.update(h.target for h in bc.handlers if h is not None)
    if _SHARED.depth:
        _SHARED.bc, _SHARED.entered = bc, entered
    return entered


def opcodes(bc: Bytecode) -> dict[str, list[int]]:
    """Where ``bc`` has instructions of each opcode, in order (not to be changed;
    inside :func:`sharing_jumps`, found once per Bytecode): a pass whose pattern starts
    at an opcode reads those instructions alone, and has nothing to do where there
    are none."""
    if _SHARED.ops_bc is bc:
        return _SHARED.ops
    ops: dict[str, list[int]] = {}
    for k, i in enumerate(bc.instrs):
        at = ops.get(i.op)
        if at is None:
            ops[i.op] = [k]
        else:
            at.append(k)
    if _SHARED.depth:
        _SHARED.ops_bc, _SHARED.ops = bc, ops
    return ops


def count(bc: Bytecode, op: str) -> int:
    """How many instructions of ``bc`` are ``op``s."""
    return len(opcodes(bc).get(op, ()))


def has_tests(bc: Bytecode) -> bool:
    """Whether ``bc`` has a conditional jump (no pass here makes one: a pass that
    starts from one has nothing to do without)."""
    return not CONDITIONAL_JUMPS.isdisjoint(opcodes(bc))


def where_ops(bc: Bytecode, names: Iterable[str]) -> list[int]:
    """Where ``bc``'s instructions of any of the opcodes ``names`` are, in order (not
    to be changed)."""
    ops = opcodes(bc)
    found = [ops[op] for op in names if op in ops]
    return found[0] if len(found) == 1 else sorted(k for at in found for k in at)


class _Shared:
    """:func:`jumped_to` and :func:`opcodes` of the Bytecode last read inside
    :func:`sharing_jumps` (itself: entered and left as a context manager)."""

    __slots__ = ("bc", "depth", "entered", "ops", "ops_bc")

    def __init__(self) -> None:
        self.depth = 0
        self.bc: Bytecode | None = None
        self.entered: set[int] = set()
        self.ops_bc: Bytecode | None = None
        self.ops: dict[str, list[int]] = {}

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if not self.depth:
            self.bc, self.entered = None, set()
            self.ops_bc, self.ops = None, {}


_SHARED = _Shared()


def sharing_jumps() -> AbstractContextManager[None]:
    """Passes that read one Bytecode in turn (each returns the one it was given when it
    changes nothing) find what it jumps to, and its opcodes, once; none may change a
    Bytecode in place meanwhile. Outside, nothing is kept. (A plain object, not a
    generator's context manager: it is entered for every code object.)"""
    return _SHARED


def jump_instead(new: list[Instr], instrs: list[Instr], copy: Sequence[int],
                  target: int, line: int | None = None) -> None:
    """In ``new``, the compiler's copy at indices ``copy`` becomes a jump to ``target``,
    the code it copied (its other instructions, ``NOP``s); ``line``: the jump's own."""
    first = instrs[copy[0]]
    new[copy[0]] = Instr("JUMP", None, None, target, first.offset,
                         first.line if line is None else line)
    for k in copy[1:]:
        new[k] = replace(instrs[k], op="NOP", arg=None, argval=None, target=-1)


def _expression_lines(bc: Bytecode, a: Instr, b: Instr, jump: Instr) -> set[int | None]:
    """The lines an expression's arms may span: the jump's own, or all of those of the
    instruction the compiler copied into both arms (``a`` and ``b``, at one position
    that holds the jump's line: ``raise E(x if c\\n else y)``; 3.10: from its line to
    the jump's)."""
    lines: set[int | None] = {jump.line, None}
    pa, pb = bc.position(a), bc.position(b)
    if pa is not None and pa == pb and pa[0] is not None and pa[1] is not None \
            and jump.line is not None and pa[0] <= jump.line <= pa[1]:
        lines.update(range(pa[0], pa[1] + 1))
    elif pa is None and a.line == b.line and a.line is not None and jump.line is not None \
            and a.line < jump.line and a.op not in TERMINAL:
        # (3.10, lines alone: a statement after the test starts on a later line; the
        # copied code that starts before it ends the expression the test is part of,
        # from the value both arms leave: not a return alone)
        lines.update(range(a.line, jump.line + 1))
    return lines


def reachable(bc: Bytecode, exceptions: bool = True) -> set[int]:
    """The instructions that flow or (``exceptions``) an exception can reach from the
    first."""
    instrs, handlers, n = bc.instrs, bc.handlers, len(bc.instrs)
    seen: set[int] = set()
    todo = [0]
    while todo:
        k = todo.pop()
        while k < n and k not in seen:  # (a straight run, then its other ways)
            seen.add(k)
            ins = instrs[k]
            if ins.target >= 0:
                todo.append(ins.target)
            if exceptions:
                h = handlers[k]
                if h is not None:
                    todo.append(h.target)
            if ins.op in _ENDS_RUN:
                break
            k += 1
    return seen


_ENDS_RUN = TERMINAL | {"JUMP"}


_LONG: list[int] = []  # (an arm longer than the limit it was walked to)


def _both_arms(bc: Bytecode, entries: dict[int, int], a: tuple, b: tuple
               ) -> tuple[list[int] | None, list[int] | None]:
    """:func:`_arm` of both ``a`` and ``b`` (start, allow_entry, max_entries, outer), or
    Nones once either is None: walked to a doubling limit, so that the walk of an arm
    that fails stops the other's (linear, not quadratic, in a function of straight
    code that the first arm of every test runs on to the end of; from a short limit: the
    arms of most tests that are no expression's run far, or stop at once)."""
    limit = 16
    first: list[int] | None
    second: list[int] | None
    first = second = _LONG
    while True:
        if first is _LONG:
            first = _arm(bc, a[0], entries, a[1], a[2], a[3], limit)
            if first is None:
                return None, None
        if second is _LONG:
            second = _arm(bc, b[0], entries, b[1], b[2], b[3], limit)
            if second is None:
                return None, None
        if first is not _LONG and second is not _LONG:
            return first, second
        limit *= 4


def _arm(bc: Bytecode, start: int, entries: dict[int, int],
         allow_entry: bool, max_entries: int = 1,
         outer: dict[int, int] | None = None, limit: int = -1) -> list[int] | None:
    """Indices from ``start`` to a terminal instruction, straight-line and entered only
    at ``start`` (at most ``max_entries`` times) and by the ``outer`` jumps of an
    enclosing expression, all under one exception handler; None otherwise (``_LONG``
    once more than ``limit`` instructions were walked, where ``limit`` >= 0)."""
    instrs, handlers, n = bc.instrs, bc.handlers, len(bc.instrs)
    if start >= n:
        return None
    if entries.get(start, 0) > (max(1, max_entries) if allow_entry else 0):
        return None
    out: list[int] = []
    inner: dict[int, int] = {}  # targets of the arm's own forward tests (``x or y``)
    around = outer or {}
    handler = handlers[start]
    k = entered = start
    while k < n:
        if k != entered and entries.get(k, 0) != inner.get(k, 0) + around.get(k, 0):
            return None
        ins = instrs[k]
        op = ins.op
        h = handlers[k]
        if h is not handler and h != handler and not (op == "RETURN_VALUE" and h is None):
            return None  # (3.10 leaves a ``try`` body's block before it returns)
        out.append(k)
        if op in TERMINAL:
            return out if all(t <= k for t in inner) else None
        if len(out) == limit:
            return _LONG
        target = ins.target
        if op == "JUMP" and target > k and entries.get(target) == 1:
            k = entered = target  # a jump to code entered only from here
            continue
        if op in CONDITIONAL_JUMPS and target > k:
            inner[target] = inner.get(target, 0) + 1
        elif op in FLOW:
            return None
        k += 1
    return None


def _value_split(instrs: list[Instr], first: list[int], second: list[int], n: int,
                 kept: bool = False) -> int:
    """How much of the common suffix ``n`` to share: from where each arm has left one
    value, the expression's, on the stack as it was at the jump (less what the
    expression itself consumed, as a chained comparison does); else from where one
    value is consumed. ``kept``: the jump keeps its test as the second arm's value."""
    for k in range(min(n, len(first) - 1, len(second) - (0 if kept else 1)), 0, -1):
        value = instrs[first[len(first) - k - 1]]
        shared = instrs[first[len(first) - k]]
        if value.offset == shared.offset and "PUSH_NULL" in (value.op, shared.op):
            continue  # (one instruction of the compiler's: a load and the NULL it pushes)
        if shared.op in _FROM_DICT:
            continue  # (nor is the namespace a class's names are looked up in, 3.12+)
        if value.op == "LOAD_CONST" and hasattr(value.argval, "co_code"):
            continue  # (a function's code is not a value to choose: ``lambda: 0``)
        if value.op == "MAKE_FUNCTION" and _makes_a_called_scope(instrs, first[:len(first) - k]):
            continue  # (nor is a comprehension's function: ``{.. for ..} if c else {..}``)
        a = prefix_effect(instrs, first[:len(first) - k])
        b = prefix_effect(instrs, second[:len(second) - k])
        if a is not None and b is not None and a[0] == b[0] and a[0] <= 1 \
                and min(a[1], b[1]) >= a[0] - 1:
            return k
    while n and instrs[first[len(first) - n]].op not in _TAKES_ONE:
        n -= 1
    return n


_FROM_DICT = frozenset({"LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FROM_DICT_OR_DEREF"})


def _makes_a_called_scope(instrs: list[Instr], arm: list[int]) -> bool:
    """Whether the code the last ``MAKE_FUNCTION`` of ``arm`` makes is a scope the
    source never names, only calls where it is made (a comprehension, a generator
    expression, a type-parameter scope)."""
    for k in reversed(arm):
        code = instrs[k].argval
        if instrs[k].op == "LOAD_CONST" and hasattr(code, "co_code"):
            return code_kind(code) in ("comprehension", "genexpr", "generic")
    return False


#: (values popped, values pushed) of the instructions an expression's arm is made of.
_EFFECTS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("LOAD_CONST", "LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                     "LOAD_CLOSURE", "PUSH_NULL"), (0, 1)),
    **dict.fromkeys(("UNARY_NOT", "UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE",
                     "LOAD_ATTR", "GET_ITER", "GET_AITER", "FORMAT_SIMPLE", "CONVERT_VALUE",
                     "CALL_INTRINSIC_1", "LOAD_FROM_DICT_OR_GLOBALS",
                     "LOAD_FROM_DICT_OR_DEREF"), (1, 1)),
    **dict.fromkeys(("FORMAT_WITH_SPEC", "CALL_INTRINSIC_2"), (2, 1)),
    "BINARY_SLICE": (3, 1),
    **dict.fromkeys(("BINARY_OP", "COMPARE_OP", "CONTAINS_OP", "IS_OP", "BINARY_SUBSCR"),
                    (2, 1)),
    "POP_TOP": (1, 0),
    "STORE_FAST": (1, 0),  # (a walrus; an inlined comprehension's variable put back)
    **dict.fromkeys(CONDITIONAL_JUMPS, (1, 0)),  # (the arm's own ``and``/``or`` tests)
    "LOAD_METHOD": (1, 2),
    "JUMP": (0, 0),
    "NOP": (0, 0),
}


def _effect(ins: Instr) -> tuple[int, int] | None:
    n = ins.arg or 0
    if ins.op in _EFFECTS:
        return _EFFECTS[ins.op]
    if ins.op == "SWAP":
        return n, n
    if ins.op == "COPY":
        return n, n + 1
    if ins.op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return n, 1
    if ins.op in ("LIST_APPEND", "SET_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
                  "DICT_MERGE"):  # (pop one value into the container ``n`` below it)
        return n + 1, n
    if ins.op == "MAP_ADD":
        return n + 2, n
    if ins.op == "COMPREHENSION":  # (3.12+ inlined: the variables it saved, then its value)
        return 1, n + 1
    if ins.op == "BUILD_MAP":
        return 2 * n, 1
    if ins.op == "MAKE_FUNCTION":  # (flags: one value per part; 0x100: 3.10's qualname)
        return 1 + bin(n & 0x10F).count("1"), 1
    if ins.op == "CALL":  # (3.10's comes from ``CALL_METHOD``: a method load's two)
        return n + 2, 1
    if ins.op == "CALL_FUNCTION":  # (3.10)
        return n + 1, 1
    if ins.op == "CALL_FUNCTION_KW":  # (3.10: the names' tuple on top)
        return n + 2, 1
    if ins.op == "CALL_KW":  # (3.11+: the names' tuple on top of a call's)
        return n + 3, 1
    return None


def prefix_effect(instrs: list[Instr], arm: list[int],
                   more: dict[str, tuple[int, int]] | None = None) -> tuple[int, int] | None:
    """The net stack change of an arm's instructions and the lowest depth they reach
    (relative to the jump), or None when an instruction is not a plain expression's
    (nor in ``more``)."""
    depth = low = 0
    for k in arm:
        e = _effect(instrs[k]) or (more or {}).get(instrs[k].op)
        if e is None:
            return None
        low = min(low, depth - e[0])
        depth += e[1] - e[0]
    return depth, low


def common_suffix(instrs: list[Instr], a: list[int], b: list[int]) -> int:
    n = 0
    while n < len(a) and n < len(b):
        x, y = instrs[a[-1 - n]], instrs[b[-1 - n]]
        # (``arg`` of a superinstruction's half is the packed pair: compare ``argval``)
        if x.op != y.op or x.argval != y.argval or type(x.argval) is not type(y.argval) \
                or (x.argval is None and x.arg != y.arg) or x.target != y.target:
            break
        n += 1
    return n

def code_signature(instrs: list[Instr], start: int, end: int) -> tuple[object, ...] | None:
    """What makes ``instrs[start:end]`` the same code as another stretch (None when a
    value cannot be compared that way)."""
    key = tuple((i.op, type(i.argval), i.argval, i.arg if i.argval is None else None,
                 i.target) for i in instrs[start:end])
    try:
        hash(key)
    except TypeError:
        return None
    return key


def split_empty_tests(bc: Bytecode) -> Bytecode:
    """Give a test whose two ways meet at once a value to choose between.

    The compiler folds ``0 if (0 if u else 0) else 0`` into a test of ``u`` whose two
    ways go to the same place, where the value is loaded. Read as it stands, a value
    already on the stack would be the one chosen (``(g if u else g)(0)``, ``u`` tested
    before ``g`` is loaded). Where the next value is loaded by one instruction, the way
    that runs on loads a copy of it and jumps past it: ``g(0 if u else 0)``.
    """
    if not has_tests(bc):
        return bc
    instrs = bc.instrs
    splits: dict[int, int] = {}  # the empty way's first instruction -> the value's load
    # (a loop's head is no value's load: ``while f(a) or 1`` tests again at the end and
    # both ways go back to the next statement)
    heads: set[int] | None = None  # (found once a test's ways meet)
    for j in where_ops(bc, CONDITIONAL_JUMPS):
        ins = instrs[j]
        k = j + 1
        while k < len(instrs) and k != ins.target and (
                instrs[k].op == "NOP" or instrs[k].op == "JUMP" and instrs[k].target > k):
            k = instrs[k].target if instrs[k].op == "JUMP" else k + 1
        t = ins.target
        # (on the test's line: one expression, not the next statement's first value;
        # a function's code is no value to choose)
        if k == t and t + 1 < len(instrs) and instrs[t].op in _PURE_LOADS \
                and instrs[t].line == ins.line and not hasattr(instrs[t].argval, "co_code") \
                and bc.handlers[t] == bc.handlers[j]:
            if heads is None:
                heads = {i.target for k, i in enumerate(instrs) if 0 <= i.target <= k}
            if t not in heads:
                splits[j + 1] = t
    if not splits:
        return bc
    out: list[Instr] = []
    handlers = []
    index_map: dict[int, int] = {}
    for k, ins in enumerate(instrs):
        if k in splits:
            load = instrs[splits[k]]
            out += [load.copy(), Instr("JUMP", None, None, splits[k] + 1, load.offset, load.line)]
            handlers += [bc.handlers[k]] * 2
        index_map[k] = len(out)
        out.append(ins.copy())
        handlers.append(bc.handlers[k])
    return retarget(bc, out, handlers, index_map)


_PURE_LOADS = {"LOAD_CONST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_FAST", "LOAD_DEREF"}


def share_test_bodies(bc: Bytecode) -> Bytecode:
    """Give the tests of ``x if (b if a else c) else y`` their one body back.

    The compiler copies a small body that ends the code (``return x``) into each way
    that jumps to it: the way ``b``'s test runs on into holds a copy of what runs after
    ``c``'s. Where tests on one line jump to the same place and each runs on into the
    same exit, entered from nowhere else, an earlier one's copy jumps to the last one's.
    (Written twice, ``(x if b else y) if a else (x if c else y)``, each test has an
    ``else`` of its own to jump to.)
    """
    if not has_tests(bc):
        return bc
    instrs = bc.instrs
    tests: dict[tuple[int, int], list[int]] = {}  # (target, line) -> the tests
    for j in where_ops(bc, CONDITIONAL_JUMPS):
        ins = instrs[j]
        if ins.target > j and ins.line is not None:
            tests.setdefault((ins.target, ins.line), []).append(j)
    if all(len(jumps) < 2 for jumps in tests.values()):
        return bc
    entered = jumped_to(bc)
    new = list(instrs)
    changed = False
    for jumps in tests.values():
        last = jumps[-1]
        body = _copied_exit(bc, last + 1, entered)
        if len(jumps) < 2 or body is None:
            continue
        key = code_signature(instrs, body[0], body[-1] + 1)
        for j in jumps[:-1]:
            copy = _copied_exit(bc, j + 1, entered)
            if copy is not None and copy[-1] < last and key is not None \
                    and code_signature(instrs, copy[0], copy[-1] + 1) == key:
                jump_instead(new, instrs, copy, last + 1)
                changed = True
    return Bytecode(bc.code, new, list(bc.handlers)) if changed else bc


def _copied_exit(bc: Bytecode, start: int, entered: set[int]) -> list[int] | None:
    """The indices of a small exit at ``start`` (what the compiler copies: a few
    instructions that return), entered only by running on into it; None otherwise."""
    instrs = bc.instrs
    out: list[int] = []
    for k in range(start, min(start + MAX_COPY, len(instrs))):
        if k in entered or bc.handlers[k] != bc.handlers[start] \
                or instrs[k].op in FLOW and instrs[k].op != "RETURN_VALUE":
            return None
        out.append(k)
        if instrs[k].op == "RETURN_VALUE":
            return out
    return None
