"""Bytecode that no compiler produces, the kind TorchDynamo writes, through the decompiler.

Every case assembles a code object with :mod:`.irregular.assembler` for the running
interpreter, checks the assembled function against hand-written expectations (so the
assembler is tested too), checks that ``unveil.decompile`` of the code object gives
text that compiles, and then runs the harness oracle (``harness.check_function``): the
original against ``FunctionType(unveil.recompile(code), ...)`` and, where the code has
no constants without a literal form, against the decompiled text executed as source.

Only the standard library and pytest: this runs under Pyodide too.
"""

from __future__ import annotations

import builtins
import copy
import math
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import unveil

from . import harness
from .corpus._support import Case, as_case, kw
from .irregular.assembler import PY, AssemblyError, asm

#: Stack entries a call's callable takes: the callable, and a ``NULL`` from 3.11 on.
SLOT = 1 if PY < (3, 11) else 2


# --------------------------------------------------------------------------------------
# The machinery.
# --------------------------------------------------------------------------------------


class Raises:
    """Expected outcome: the call raises an exception of this type."""

    def __init__(self, exc_type: type[BaseException]) -> None:
        self.exc_type = exc_type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Raises) and other.exc_type is self.exc_type

    def __hash__(self) -> int:
        return hash(self.exc_type)

    def __repr__(self) -> str:
        return f"Raises({self.exc_type.__name__})"


@dataclass
class Irregular:
    """One assembled function, its inputs and what the original must do on them."""

    code: types.CodeType
    namespace: dict[str, Any]
    cases: list[Any]
    expect: list[Any]  # per case: the result, Raises(...), or (items, return value) for generators
    logs: list[list[Any]] | None = None  # per case: LOG after the call
    source: bool = True  # also execute the decompiled text (needs literal constants only)
    # more checks, given the original function and the one made from unveil.recompile
    extra: Callable[[types.FunctionType, types.FunctionType], None] | None = None
    closure: tuple[types.CellType, ...] | None = None  # for code with free variables


BUILDERS: dict[str, Callable[[], Irregular]] = {}
MARKS: dict[str, list[Any]] = {}


def case(*marks: Any, since: tuple[int, int] | None = None) -> Callable[[Any], Any]:
    """Register a case builder; ``since``: the first version where it makes sense."""

    def register(builder: Callable[[], Irregular]) -> Callable[[], Irregular]:
        name = builder.__name__
        BUILDERS[name] = builder
        marks_list = list(marks)
        if since is not None and PY < since:
            marks_list.append(
                pytest.mark.skip(reason=f"needs Python {since[0]}.{since[1]}+ bytecode")
            )
        MARKS[name] = marks_list
        return builder

    return register


def namespace(**extra: Any) -> dict[str, Any]:
    """A module namespace for an assembled function: ``LOG`` and logging helpers."""
    log: list[Any] = []

    def tick(tag: Any, value: Any) -> Any:
        log.append(tag)
        return value

    def collect(*args: Any, **kwargs: Any) -> Any:
        log.append("collect")
        return (args, sorted(kwargs.items())) if kwargs else args

    ns: dict[str, Any] = {
        "__name__": "irregular_cases",
        "__builtins__": builtins,
        "LOG": log,
        "tick": tick,
        "collect": collect,
    }
    ns.update(extra)
    return ns


def _drive(value: Any, sends: tuple[Any, ...] | None) -> Any:
    if not isinstance(value, types.GeneratorType):
        return value
    items = []
    pending = list(sends or ())
    to_send = None
    try:
        while True:
            items.append(value.send(to_send))
            to_send = pending.pop(0) if pending else None
    except StopIteration as stop:
        return (items, stop.value)


def _outcome(func: types.FunctionType, entry: Any) -> tuple[Any, list[Any]]:
    c: Case = as_case(entry)
    log = func.__globals__["LOG"]
    log.clear()
    args = copy.deepcopy(c.args)
    kwargs = copy.deepcopy(c.kwargs)
    fresh = harness.fresh_function(func)  # fresh closure cells
    try:
        result = _drive(fresh(*args, **kwargs), c.sends)
    except Exception as exc:  # noqa: BLE001 - the expected outcome
        result = Raises(type(exc))
    logged = list(log)
    log.clear()
    return result, logged


def _make_function(spec: Irregular, code: types.CodeType) -> types.FunctionType:
    return types.FunctionType(code, spec.namespace, code.co_name, None, spec.closure)


def _decompiled_text(code: types.CodeType, title: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            text = unveil.decompile(code)
    except NotImplementedError as exc:
        if harness.STRICT:
            pytest.fail(f"{title}: unveil.decompile: NotImplementedError: {exc}", pytrace=False)
        pytest.skip(f"unveil.decompile: NotImplementedError: {exc}")
    except Exception as exc:
        pytest.fail(
            f"{title}: unveil.decompile raised {type(exc).__name__}: {exc}", pytrace=False
        )
    assert isinstance(text, str), f"unveil.decompile returned {type(text).__name__}"
    scoped = text
    if code.co_freevars:  # a closure's text compiles inside a scope that binds its free variables
        scoped = "def _scope():\n" + "".join(f"    {n} = None\n" for n in code.co_freevars)
        scoped += "".join("    " + line + "\n" for line in text.splitlines())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(scoped, f"<decompiled {title}>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        pytest.fail(
            f"{title}: the decompiled text does not compile: {exc}"
            f"\n--- decompiled source ---\n{text.rstrip()}\n--- end ---",
            pytrace=False,
        )
    return text



@case()
def slot_names_clash_with_locals() -> Irregular:
    """A value kept on the stack across a join needs a variable of its own (a stack
    slot); the code already has locals named like slots (``_s0``, ``_s1``)."""
    code = asm(
        [
            ("LOAD_FAST", "x"),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "other"),
            ("LOAD_CONST", 1),
            ("STORE_FAST", "_s0"),
            ("LOAD_CONST", "a"),
            ("STORE_FAST", "_s1"),
            ("LOAD_FAST", "_s1"),
            ("JUMP", "join"),
            "other",
            ("LOAD_CONST", 2),
            ("STORE_FAST", "_s0"),
            ("LOAD_CONST", "b"),
            ("STORE_FAST", "_s1"),
            ("LOAD_CONST", "c"),
            "join",
            ("BUILD_TUPLE", 2),
            ("LOAD_FAST", "_s0"),
            ("LOAD_FAST", "_s1"),
            ("BUILD_TUPLE", 3),
            ("RETURN_VALUE",),
        ],
        name="slot_names_clash_with_locals",
        argnames=("x", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [(5, True), (5, False), ("q", 0)],
        [((5, "a"), 1, "a"), ((5, "c"), 2, "b"), (("q", "c"), 2, "b")],
    )


def _params() -> list[Any]:
    return [pytest.param(name, marks=MARKS[name], id=name) for name in BUILDERS]


def run_irregular(name: str) -> None:
    spec = BUILDERS[name]()
    title = f"irregular::{name}"
    original = _make_function(spec, spec.code)

    # The assembled code does what it was written to do (this checks the assembler).
    assert len(spec.expect) == len(spec.cases)
    for i, entry in enumerate(spec.cases):
        got, logged = _outcome(original, entry)
        assert got == spec.expect[i], f"assembled {name} on {as_case(entry)!r}: {got!r}"
        if spec.logs is not None:
            assert logged == spec.logs[i], f"assembled {name} on {as_case(entry)!r}: {logged!r}"

    _decompiled_text(spec.code, title)
    paths = ("recompile", "source") if spec.source else ("recompile",)
    harness.check_function(original, spec.cases, title=title, paths=paths)
    if spec.extra is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            new = _make_function(spec, unveil.recompile(spec.code))
        spec.extra(original, new)


# --------------------------------------------------------------------------------------
# Values on the stack across branches.
# --------------------------------------------------------------------------------------


@case()
def value_across_branch() -> Irregular:
    """``x * 10`` pushed before a conditional jump; one branch adds to it, the other
    packs it into a tuple under a new value."""
    code = asm(
        [
            ("LOAD_FAST", "x"),
            ("LOAD_CONST", 10),
            ("BINARY_OP", "*"),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "other"),
            ("LOAD_CONST", 1),
            ("BINARY_OP", "+"),
            ("RETURN_VALUE",),
            "other",
            ("LOAD_CONST", "v"),
            ("SWAP", 2),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="value_across_branch",
        argnames=("x", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [(2, True), (2, False), ("ab", 0), ("ab", 1), (None, 0)],
        [21, ("v", 20), ("v", "ab" * 10), Raises(TypeError), Raises(TypeError)],
    )


@case()
def merge_with_value_below() -> Irregular:
    """Two branches push different values on top of two values pushed before the jump;
    the join consumes all three."""
    code = asm(
        [
            ("LOAD_FAST", "a"),
            ("LOAD_FAST", "b"),
            ("LOAD_FAST", "c"),
            ("POP_JUMP_IF_FALSE", "low"),
            ("LOAD_CONST", 100),
            ("JUMP", "join"),
            "low",
            ("LOAD_FAST", "a"),
            "join",
            ("BINARY_OP", "*"),
            ("BINARY_OP", "-"),
            ("RETURN_VALUE",),
        ],
        name="merge_with_value_below",
        argnames=("a", "b", "c"),
    )
    return Irregular(
        code,
        namespace(),
        [(3, 4, True), (3, 4, False), ([1], 2, 0), ("x", 2, 1)],
        [-397, -9, Raises(TypeError), Raises(TypeError)],
    )


@case()
def deep_stack_across_jump() -> Irregular:
    """Twelve values (three of them from logged calls) live across a conditional jump;
    one branch moves the bottom one to the top."""
    body: list[Any] = []
    for k in range(12):
        if k in (0, 5, 11):
            body += [
                ("LOAD_GLOBAL", "tick", True),
                ("LOAD_CONST", f"t{k}"),
                ("LOAD_FAST", "x"),
                ("CALL", 2),
            ]
        else:
            body += [("LOAD_FAST", "x"), ("LOAD_CONST", k), ("BINARY_OP", "+")]
    body += [
        ("LOAD_FAST", "flag"),
        ("POP_JUMP_IF_FALSE", "swap"),
        ("LOAD_CONST", "a"),
        ("JUMP", "join"),
        "swap",
        ("SWAP", 12),
        ("LOAD_CONST", "b"),
        "join",
        ("BUILD_TUPLE", 13),
        ("RETURN_VALUE",),
    ]
    code = asm(body, name="deep_stack_across_jump", argnames=("x", "flag"))

    def values(x: int) -> list[int]:
        return [x if k in (0, 5, 11) else x + k for k in range(12)]

    def swapped(x: int) -> list[int]:
        v = values(x)
        return [v[11], *v[1:11], v[0]]

    return Irregular(
        code,
        namespace(),
        [(1, True), (1, False), (10, False), ("s", True)],
        [(*values(1), "a"), (*swapped(1), "b"), (*swapped(10), "b"), Raises(TypeError)],
        logs=[["t0", "t5", "t11"], ["t0", "t5", "t11"], ["t0", "t5", "t11"], ["t0"]],
    )


@case()
def loop_carried_stack_value() -> Irregular:
    """An accumulator that lives on the stack across the backward jump of a loop."""
    code = asm(
        [
            ("LOAD_CONST", 0),
            "top",
            ("LOAD_FAST", "i"),
            ("LOAD_FAST", "n"),
            ("COMPARE_OP", "<"),
            ("POP_JUMP_IF_FALSE", "done"),
            ("LOAD_FAST", "i"),
            ("BINARY_OP", "+"),
            ("LOAD_FAST", "i"),
            ("LOAD_CONST", 1),
            ("BINARY_OP", "+"),
            ("STORE_FAST", "i"),
            ("JUMP", "top"),
            "done",
            ("LOAD_FAST", "i"),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="loop_carried_stack_value",
        argnames=("i", "n"),
    )
    return Irregular(
        code,
        namespace(),
        [(0, 5), (3, 3), (7, 2), (-2, 1), ("a", 2)],
        [(10, 5), (0, 3), (0, 7), (-3, 1), Raises(TypeError)],
    )


# --------------------------------------------------------------------------------------
# Lists shared on the stack.
# --------------------------------------------------------------------------------------


@case()
def copied_list_extended_in_branch() -> Irregular:
    """A new list is COPY'd; the top copy is extended or appended to in one branch;
    both copies are returned with ``copy is copy`` computed by the bytecode."""
    code = asm(
        [
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            ("COPY", 1),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "no"),
            ("LOAD_FAST", "extra"),
            ("LIST_EXTEND", 1),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            ("JUMP", "join"),
            "no",
            ("LOAD_CONST", "no"),
            ("LIST_APPEND", 1),
            "join",
            ("COPY", 2),
            ("COPY", 2),
            ("IS_OP", 0),
            ("BUILD_TUPLE", 3),
            ("RETURN_VALUE",),
        ],
        name="copied_list_extended_in_branch",
        argnames=("a", "extra", "flag"),
    )

    def same_object(original: types.FunctionType, new: types.FunctionType) -> None:
        for func in (original, new):
            first, second, same = func(1, (2, 3), True)
            assert first is second and same is True, func

    return Irregular(
        code,
        namespace(),
        [(1, (2, 3), True), (1, [], True), ("a", "xy", False), (None, {"k": 0}, True)],
        [
            ([1, 2, 3, 1], [1, 2, 3, 1], True),
            ([1, 1], [1, 1], True),
            (["a", "no"], ["a", "no"], True),
            ([None, "k", None], [None, "k", None], True),
        ],
        extra=same_object,
    )


@case()
def shared_list_and_dict_merges() -> Irregular:
    """``LIST_EXTEND`` and ``DICT_UPDATE`` into a list and a dict that are also kept on
    the stack: they are not ``list.extend``/``dict.update`` (``DICT_UPDATE`` takes only
    mappings, and both raise ``TypeError`` with their own messages)."""
    code = asm(
        [
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            ("COPY", 1),
            ("LOAD_FAST", "extra"),
            ("LIST_EXTEND", 1),
            ("BUILD_MAP", 0),
            ("COPY", 1),
            ("LOAD_FAST", "kw"),
            ("DICT_UPDATE", 1),
            ("BUILD_TUPLE", 4),
            ("RETURN_VALUE",),
        ],
        name="shared_list_and_dict_merges",
        argnames=("a", "extra", "kw"),
    )
    return Irregular(
        code,
        namespace(),
        [(1, (2, 3), {"k": 1}), (0, 5, {}), (0, [], 5), (0, [], [("k", 1)]), (0, None, {})],
        [
            ([1, 2, 3], [1, 2, 3], {"k": 1}, {"k": 1}),
            Raises(TypeError),
            Raises(TypeError),
            Raises(TypeError),
            Raises(TypeError),
        ],
    )


@case()
def argument_list_shared_on_stack() -> Irregular:
    """An argument list kept twice on the stack; one branch extends it with a tuple,
    the other with itself; the join appends through the top copy."""
    code = asm(
        [
            ("LOAD_FAST", "out"),
            ("COPY", 1),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "self"),
            ("LOAD_CONST", (1, 2)),
            ("LIST_EXTEND", 1),
            ("JUMP", "join"),
            "self",
            ("LOAD_FAST", "out"),
            ("LIST_EXTEND", 1),
            "join",
            ("LOAD_CONST", "end"),
            ("LIST_APPEND", 1),
            ("IS_OP", 0),
            ("RETURN_VALUE",),
        ],
        name="argument_list_shared_on_stack",
        argnames=("out", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [([0], True), ([0, 1], False), ([], False), (["x"], 1)],
        [True, True, True, True],
    )


@case()
def delete_and_slice_shared_list() -> Irregular:
    """A new list kept three times on the stack: ``del L[i]`` through one copy, a slice
    of another in either branch, ``del L[0]`` after the join through the bottom one."""
    code = asm(
        [
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "xs"),
            ("LIST_EXTEND", 1),
            ("COPY", 1),
            ("COPY", 1),
            ("LOAD_FAST", "i"),
            ("DELETE_SUBSCR",),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "head"),
            ("LOAD_CONST", 1),
            ("LOAD_CONST", None),
            ("SLICE",),
            ("JUMP", "join"),
            "head",
            ("LOAD_CONST", None),
            ("LOAD_CONST", 2),
            ("SLICE",),
            "join",
            ("COPY", 2),
            ("LOAD_CONST", 0),
            ("DELETE_SUBSCR",),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="delete_and_slice_shared_list",
        argnames=("xs", "i", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [
            ([1, 2, 3, 4], 0, True),
            ([1, 2, 3, 4], 2, False),
            ([9, 8], -1, True),
            ([1], 5, True),
            ([1, 2], 1, False),
            ("abc", 0, True),
            ("abc", 0, False),
            ([1, 2], "0", True),
        ],
        [
            ([3, 4], [3, 4]),
            ([2, 4], [1, 2]),
            ([], []),
            Raises(IndexError),
            ([], [1]),
            (["c"], ["c"]),
            (["c"], ["b", "c"]),
            Raises(TypeError),
        ],
    )


@case()
def slice_of_copied_list_extended_below() -> Irregular:
    """Dynamo's graph-break epilogue in small: a one-item list is COPY'd, a slice of it
    taken, SWAP'd under it, and ``LIST_EXTEND 2`` extends the slice (not the list)."""
    code = asm(
        [
            ("LOAD_FAST", "x"),
            ("BUILD_LIST", 1),
            ("COPY", 1),
            ("LOAD_CONST", 0),
            ("LOAD_CONST", 1),
            ("SLICE",),
            ("SWAP", 2),
            ("LOAD_FAST", "extra"),
            ("LIST_EXTEND", 2),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="slice_of_copied_list_extended_below",
        argnames=("x", "extra"),
    )
    return Irregular(
        code,
        namespace(),
        [(1, [2, 3]), ("a", ()), (None, "bc")],
        [([1, 2, 3], [1]), (["a"], ["a"]), ([None, "b", "c"], [None])],
    )


@case()
def store_and_delete_on_argument_across_jump() -> Irregular:
    """``del xs[0]`` in one branch, ``xs[-1] = 'new'`` through a SWAP'd copy in the
    other, then a value pushed in each branch is returned with the list."""
    code = asm(
        [
            ("LOAD_FAST", "xs"),
            ("COPY", 1),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "store"),
            ("LOAD_CONST", 0),
            ("DELETE_SUBSCR",),
            ("LOAD_CONST", "del"),
            ("JUMP", "join"),
            "store",
            ("LOAD_CONST", "new"),
            ("SWAP", 2),
            ("LOAD_CONST", -1),
            ("STORE_SUBSCR",),
            ("LOAD_CONST", "set"),
            "join",
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="store_and_delete_on_argument_across_jump",
        argnames=("xs", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [([1, 2, 3], True), ([1, 2, 3], False), ([], True), ([], False), ({-1: 0}, False)],
        [
            ([2, 3], "del"),
            ([1, 2, "new"], "set"),
            Raises(IndexError),
            Raises(IndexError),
            ({-1: "new"}, "set"),
        ],
    )


# --------------------------------------------------------------------------------------
# Evaluation order.
# --------------------------------------------------------------------------------------


def _tick(tag: str, load: tuple[str, Any]) -> list[Any]:
    return [("LOAD_GLOBAL", "tick", True), ("LOAD_CONST", tag), load, ("CALL", 2)]


@case()
def swap_copy_keep_call_order() -> Irregular:
    """Three logged calls whose results SWAP/COPY reorder: the calls must still happen
    in bytecode order, each once."""
    code = asm(
        [
            *_tick("a", ("LOAD_FAST", "x")),
            *_tick("b", ("LOAD_FAST", "y")),
            ("SWAP", 2),
            *_tick("c", ("LOAD_CONST", 3)),
            ("SWAP", 3),
            ("BINARY_OP", "-"),
            ("COPY", 1),
            ("BINARY_OP", "*"),
            ("BINARY_OP", "-"),
            ("RETURN_VALUE",),
        ],
        name="swap_copy_keep_call_order",
        argnames=("x", "y"),
    )
    return Irregular(
        code,
        namespace(),
        [(5, 2), (2, 5), ("s", 2), (1.5, 0.5)],
        [-6, -6, Raises(TypeError), 2.0],
        logs=[["a", "b", "c"]] * 4,
    )


@case()
def pending_call_result_across_branch() -> Irregular:
    """A call's result waits on the stack while either branch makes another call; a
    third call follows the join, and SWAP reverses the three."""
    code = asm(
        [
            *_tick("first", ("LOAD_FAST", "x")),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "other"),
            *_tick("then", ("LOAD_CONST", 1)),
            ("JUMP", "join"),
            "other",
            *_tick("else", ("LOAD_CONST", 2)),
            "join",
            *_tick("last", ("LOAD_FAST", "flag")),
            ("SWAP", 3),
            ("BUILD_TUPLE", 3),
            ("RETURN_VALUE",),
        ],
        name="pending_call_result_across_branch",
        argnames=("x", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [(7, True), (7, False), ("s", 0)],
        [(True, 1, 7), (False, 2, 7), (0, 2, "s")],
        logs=[["first", "then", "last"], ["first", "else", "last"], ["first", "else", "last"]],
    )


class Truth:
    """A value whose truth test is logged (and raises for ``None``)."""

    def __init__(self, log: list[Any], value: Any) -> None:
        self.log = log
        self.value = value

    def __bool__(self) -> bool:
        self.log.append(("bool", self.value))
        if self.value is None:
            raise ValueError("no truth")
        return bool(self.value)


@case()
def truth_tests_jumping_to_next() -> Irregular:
    """Conditional jumps to the very next instruction: they do nothing but the truth
    test, which must still happen (once per jump, with its side effects)."""
    code = asm(
        [
            ("LOAD_GLOBAL", "make_truth", True),
            ("LOAD_FAST", "v"),
            ("CALL", 1),
            ("COPY", 1),
            ("POP_JUMP_IF_FALSE", "next1"),
            "next1",
            ("POP_JUMP_IF_TRUE", "next2"),
            "next2",
            ("LOAD_CONST", "end"),
            ("RETURN_VALUE",),
        ],
        name="truth_tests_jumping_to_next",
        argnames=("v",),
    )
    ns = namespace()
    ns["make_truth"] = lambda v: Truth(ns["LOG"], v)
    return Irregular(
        code,
        ns,
        [1, 0, "", None],
        ["end", "end", "end", Raises(ValueError)],
        logs=[[("bool", 1)] * 2, [("bool", 0)] * 2, [("bool", "")] * 2, [("bool", None)]],
    )


# --------------------------------------------------------------------------------------
# Calls.
# --------------------------------------------------------------------------------------


def _pick(kind: str) -> Any:
    table = {"add": lambda a, b=10: a + b, "rep": lambda s, n=2: s * n, "tup": lambda *a: a}
    return table[kind]


@case()
def null_call_callable_before_branch() -> Irregular:
    """The callable (itself the result of a call) and its NULL are pushed before a
    branch; the branches call it with different arguments."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_GLOBAL", "pick", True),
            ("LOAD_FAST", "kind"),
            ("CALL", 1),
            ("NULL_SUFFIX",),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "one"),
            ("LOAD_FAST", "x"),
            ("LOAD_CONST", 3),
            ("CALL", 2),
            ("RETURN_VALUE",),
            "one",
            ("LOAD_FAST", "x"),
            ("CALL", 1),
            ("LOAD_CONST", "one"),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="null_call_callable_before_branch",
        argnames=("kind", "x", "flag"),
    )
    return Irregular(
        code,
        namespace(pick=_pick),
        [("add", 1, True), ("add", 1, False), ("rep", "ab", True), ("tup", 0, 1), ("nope", 1, 1)],
        [4, (11, "one"), "ababab", (0, 3), Raises(KeyError)],
    )


@case()
def global_with_null_bit_before_branch() -> Irregular:
    """``LOAD_GLOBAL max`` with the NULL bit and a first argument before the branch;
    one branch adds a second argument."""
    code = asm(
        [
            ("LOAD_GLOBAL", "max", True),
            ("LOAD_FAST", "a"),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "one"),
            ("LOAD_FAST", "b"),
            ("CALL", 2),
            ("RETURN_VALUE",),
            "one",
            ("CALL", 1),
            ("RETURN_VALUE",),
        ],
        name="global_with_null_bit_before_branch",
        argnames=("a", "b", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [(3, 5, True), ([3, 1], 0, False), (3, 0, False), ("a", 1, True)],
        [5, 3, Raises(TypeError), Raises(TypeError)],
    )


@case()
def method_call_split_across_branch() -> Irregular:
    """``s.split`` loaded as a method before a ``POP_JUMP_IF_NONE``; the branches call
    it with and without an argument."""
    code = asm(
        [
            ("LOAD_FAST", "s"),
            ("LOAD_METHOD", "split"),
            ("LOAD_FAST", "sep"),
            ("POP_JUMP_IF_NONE", "bare"),
            ("LOAD_FAST", "sep"),
            ("CALL_METHOD", 1),
            ("RETURN_VALUE",),
            "bare",
            ("CALL_METHOD", 0),
            ("RETURN_VALUE",),
        ],
        name="method_call_split_across_branch",
        argnames=("s", "sep"),
    )
    return Irregular(
        code,
        namespace(),
        [("a b,c", None), ("a b,c", ","), ("abc", ""), (5, None)],
        [["a", "b,c"], ["a b", "c"], Raises(ValueError), Raises(AttributeError)],
    )


@case()
def method_load_kept_across_loop() -> Irregular:
    """What Dynamo's side-effect replay does (``kwargs.update`` in transformers'
    ``merge_with_config_defaults``): a method loaded before a ``for`` loop stays on the
    stack, with its self, while the loop runs; it is called after the loop."""
    code = asm(
        [
            ("LOAD_FAST", "d"),
            ("LOAD_METHOD", "update"),
            ("LOAD_FAST", "extra"),
            ("LOAD_FAST", "xs"),
            ("GET_ITER",),
            "top",
            ("FOR_ITER", "exit"),
            ("STORE_FAST", "v"),
            ("LOAD_GLOBAL", "tick", True),
            ("LOAD_FAST", "v"),
            ("LOAD_FAST", "v"),
            ("CALL", 2),
            ("POP_TOP",),
            ("JUMP", "top"),
            "exit",
            ("END_FOR",),
            ("CALL_METHOD", 1),
            ("POP_TOP",),
            ("LOAD_FAST", "d"),
            ("RETURN_VALUE",),
        ],
        name="method_load_kept_across_loop",
        argnames=("d", "extra", "xs"),
    )
    return Irregular(
        code,
        namespace(),
        [({}, {"a": 1}, [1, 2]), ({"a": 0}, {"b": 2}, []), ({}, 5, [3]), (5, {}, [])],
        [{"a": 1}, {"a": 0, "b": 2}, Raises(TypeError), Raises(AttributeError)],
        logs=[[1, 2], [], [3], []],
    )


@case()
def name_read_after_a_store_kept_on_the_stack() -> Irregular:
    """What Dynamo does before calling a wrapped forward (transformers'
    ``can_return_tuple``): ``self`` is copied, stored to a temporary and kept in the call's
    argument tuple; the temporary is then read while the tuple waits on the stack, in a
    list that is sliced (so it is named first). The read must come after the store."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_GLOBAL", "collect"),
            ("NULL_SUFFIX",),
            ("LOAD_FAST", "a"),
            ("COPY", 1),
            ("STORE_FAST", "t"),
            ("BUILD_TUPLE", 1),
            ("LOAD_FAST", "t"),
            ("LOAD_ATTR", "real"),
            ("BUILD_LIST", 1),
            ("COPY", 1),
            ("LOAD_CONST", 0),
            ("LOAD_CONST", 1),
            ("BUILD_SLICE", 2),
            ("SUBSCR",),
            ("SWAP", 2),
            ("POP_TOP",),
            ("SWAP", 2),
            ("LIST_EXTEND", 1),
            ("CALL_EX", False),
            ("RETURN_VALUE",),
        ],
        name="name_read_after_a_store_kept_on_the_stack",
        argnames=("a",),
    )
    return Irregular(code, namespace(), [1, 2.5, "s"], [(1, 1), (2.5, 2.5), Raises(AttributeError)],
                     logs=[["collect"], ["collect"], []])


@case()
def slice_kept_as_a_value() -> Irregular:
    """A slice object built and kept as a value, not used as a subscript's key right
    away (Dynamo's side-effect replay: ``output[:] = ...`` with the slice made early):
    in source it is ``slice(None, None)``, since ``:`` is syntax only in a subscript."""
    code = asm(
        [
            ("LOAD_CONST", None),
            ("LOAD_CONST", None),
            ("BUILD_SLICE", 2),
            ("STORE_FAST", "s"),
            ("LOAD_FAST", "x"),
            ("LOAD_FAST", "s"),
            ("SUBSCR",),
            ("LOAD_FAST", "x"),
            ("LOAD_CONST", 1),
            ("LOAD_FAST", "n"),
            ("BUILD_SLICE", 2),
            ("SUBSCR",),
            ("LOAD_FAST", "s"),
            ("BUILD_TUPLE", 3),
            ("RETURN_VALUE",),
        ],
        name="slice_kept_as_a_value",
        argnames=("x", "n"),
    )
    def holds_the_constant(original: Any, new: Any) -> None:
        # recompiled, the slice is a constant, not a call of the global ``slice`` (which
        # a module may rebind): the check shows it does what the original does
        assert "slice" not in new.__code__.co_names, new.__code__.co_names
        assert "slice(None, None)" in unveil.decompile(code)  # (the source spells it)
        if PY >= (3, 11):
            from unveil.verify.equivalence import prove_equivalent

            verdict = prove_equivalent(code, new.__code__)
            assert verdict.equivalent, verdict.reason

    return Irregular(
        code, namespace(), [([1, 2, 3], 2), ("abc", None), (5, 1)],
        [([1, 2, 3], [2], slice(None, None)), ("abc", "bc", slice(None, None)),
         Raises(TypeError)], extra=holds_the_constant)


@case()
def frozenset_constants_kept_as_values() -> Irregular:
    """Frozensets in ``co_consts`` used as values, alone and inside a tuple (Dynamo's
    replay of a ``frozenset`` it built): in source ``frozenset({...})`` calls the global
    ``frozenset``; recompiled, the code holds the constants themselves, and a frozenset
    inside a tuple stays a frozenset (not a set display)."""
    code = asm(
        [
            ("LOAD_CONST", frozenset({"q", "seen"})),
            ("LOAD_CONST", (frozenset({1, 2}), 3)),
            ("LOAD_FAST", "x"),
            ("BUILD_TUPLE", 3),
            ("RETURN_VALUE",),
        ],
        name="frozenset_constants_kept_as_values",
        argnames=("x",),
    )

    def holds_the_constants(original: Any, new: Any) -> None:
        assert "frozenset" not in new.__code__.co_names, new.__code__.co_names
        text = unveil.decompile(code)
        assert "frozenset({'q', 'seen'})" in text and "(frozenset({1, 2}), 3)" in text, text
        if PY >= (3, 11):
            from unveil.verify.equivalence import prove_equivalent

            verdict = prove_equivalent(code, new.__code__)
            assert verdict.equivalent, verdict.reason

    return Irregular(
        code, namespace(), [1, None],
        [(frozenset({"q", "seen"}), (frozenset({1, 2}), 3), 1),
         (frozenset({"q", "seen"}), (frozenset({1, 2}), 3), None)], extra=holds_the_constants)


@case()
def call_function_ex_list_extended_in_branches() -> Irregular:
    """What Dynamo does before calling a resume function: an argument list on the stack,
    extended differently in two branches, then ``CALL_FUNCTION_EX``."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_GLOBAL", "collect"),
            ("NULL_SUFFIX",),
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "other"),
            ("LOAD_FAST", "xs"),
            ("LIST_EXTEND", 1),
            ("JUMP", "join"),
            "other",
            ("LOAD_CONST", (7, 8)),
            ("LIST_EXTEND", 1),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            "join",
            ("LIST_TO_TUPLE",),
            ("CALL_EX", False),
            ("RETURN_VALUE",),
        ],
        name="call_function_ex_list_extended_in_branches",
        argnames=("a", "xs", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [(1, [2, 3], True), (1, [2, 3], False), (0, "ab", True), (0, {"k": 1}, True)],
        [(1, 2, 3), (1, 7, 8, 1), (0, "a", "b"), (0, "k")],
        logs=[["collect"], ["collect"], ["collect"], ["collect"]],
    )


@case()
def call_function_ex_with_kwargs_built_in_branches() -> Irregular:
    """A list and a dict on the stack under a branch: one branch extends the list under
    the dict (SWAP) and merges a mapping argument, the other builds a one-key dict and
    extends the list through a COPY; then ``CALL_FUNCTION_EX`` with keywords."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_GLOBAL", "collect"),
            ("NULL_SUFFIX",),
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "a"),
            ("LIST_APPEND", 1),
            ("BUILD_MAP", 0),
            ("LOAD_FAST", "flag"),
            ("POP_JUMP_IF_FALSE", "other"),
            ("SWAP", 2),
            ("LOAD_FAST", "xs"),
            ("LIST_EXTEND", 1),
            ("SWAP", 2),
            ("LOAD_FAST", "kw"),
            ("DICT_UPDATE", 1),
            ("JUMP", "join"),
            "other",
            ("LOAD_CONST", "k"),
            ("LOAD_FAST", "a"),
            ("BUILD_MAP", 1),
            ("DICT_UPDATE", 1),
            ("COPY", 2),
            ("LOAD_CONST", (7, 8)),
            ("LIST_EXTEND", 1),
            ("POP_TOP",),
            "join",
            ("CALL_EX", True),
            ("RETURN_VALUE",),
        ],
        name="call_function_ex_with_kwargs_built_in_branches",
        argnames=("a", "xs", "kw", "flag"),
    )
    return Irregular(
        code,
        namespace(),
        [
            (1, [2, 3], {"z": 4}, True),
            (1, [], {}, False),
            (1, [2], {"z": 1, "a": 2}, True),
            (1, "ab", {}, True),
            (1, [], {1: 2}, True),
        ],
        [
            ((1, 2, 3), [("z", 4)]),
            ((1, 7, 8), [("k", 1)]),
            ((1, 2), [("a", 2), ("z", 1)]),
            (1, "a", "b"),
            Raises(TypeError),
        ],
        logs=[["collect"], ["collect"], ["collect"], ["collect"], []],
    )


# --------------------------------------------------------------------------------------
# Unreachable code and constants.
# --------------------------------------------------------------------------------------


@case()
def unreachable_blocks() -> Irregular:
    """Dead code after a return that jumps back into live code, and a block that only
    reaches itself."""
    code = asm(
        [
            ("LOAD_FAST", "x"),
            "mid",
            ("LOAD_CONST", 2),
            ("BINARY_OP", "*"),
            ("RETURN_VALUE",),
            "dead",
            ("LOAD_GLOBAL", "undefined_thing"),
            ("LOAD_CONST", 1),
            ("BINARY_OP", "+"),
            ("JUMP", "mid"),
            "spin",
            ("NOP",),
            ("JUMP", "spin"),
            "dead_too",
            ("LOAD_CONST", "never"),
            ("RETURN_VALUE",),
        ],
        name="unreachable_blocks",
        argnames=("x",),
    )
    return Irregular(
        code,
        namespace(),
        [3, "ab", None, [1]],
        [6, "abab", Raises(TypeError), [1, 1]],
    )


class Box:
    """A constant without a literal form."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Box({self.value!r})"


def triple(x: Any) -> Any:
    return x * 3


BOX = Box(7)
SHARED = [1, 2]
ODD_CONSTANTS = (
    float("nan"),
    -0.0,
    float("inf"),
    complex(-0.0, 1),
    2**100,
    slice(1, None, 2),
    b"\x00\xff",
    ...,
    {"k": [1]},
)


@case()
def non_literal_constants() -> Irregular:
    """``co_consts`` holding an object, a function, a class, a module, a list, and
    values whose repr is no literal; the code uses them and returns some of them."""
    code = asm(
        [
            ("LOAD_CONST", BOX),
            ("LOAD_ATTR", "value"),
            ("LOAD_FAST", "x"),
            ("BINARY_OP", "+"),
            ("NULL_PREFIX",),
            ("LOAD_CONST", triple),
            ("NULL_SUFFIX",),
            ("LOAD_FAST", "x"),
            ("CALL", 1),
            ("NULL_PREFIX",),
            ("LOAD_CONST", Box),
            ("NULL_SUFFIX",),
            ("LOAD_FAST", "x"),
            ("CALL", 1),
            ("LOAD_ATTR", "value"),
            ("LOAD_CONST", math),
            ("LOAD_METHOD", "floor"),
            ("LOAD_FAST", "x"),
            ("CALL_METHOD", 1),
            ("LOAD_FAST", "seq"),
            ("LOAD_CONST", ODD_CONSTANTS[5]),
            ("SUBSCR",),
            *[("LOAD_CONST", c) for c in ODD_CONSTANTS],
            ("LOAD_CONST", BOX),
            ("LOAD_CONST", SHARED),
            ("LOAD_CONST", Box),
            ("LOAD_CONST", math),
            ("LOAD_CONST", triple),
            ("BUILD_TUPLE", 10 + len(ODD_CONSTANTS)),
            ("RETURN_VALUE",),
        ],
        name="non_literal_constants",
        argnames=("x", "seq"),
    )
    n = len(ODD_CONSTANTS)

    def identities(original: types.FunctionType, new: types.FunctionType) -> None:
        want = original(2, [0, 1, 2, 3])
        got = new(2, [0, 1, 2, 3])
        assert got[:5] == (9, 6, 2, 2, [1, 3])
        for k in range(n):
            assert repr(got[5 + k]) == repr(ODD_CONSTANTS[k]), k
            assert type(got[5 + k]) is type(ODD_CONSTANTS[k]), k
        for k, obj in enumerate((BOX, SHARED, Box, math, triple)):
            assert got[5 + n + k] is obj is want[5 + n + k], obj
        assert math.copysign(1.0, got[6]) == -1.0

    return Irregular(
        code,
        namespace(),
        [(2, [0, 1, 2, 3]), (2.5, "abcd"), ("s", [])],
        [
            (9, 6, 2, 2, [1, 3], *ODD_CONSTANTS, BOX, SHARED, Box, math, triple),
            (9.5, 7.5, 2.5, 2, "bd", *ODD_CONSTANTS, BOX, SHARED, Box, math, triple),
            Raises(TypeError),
        ],
        source=False,
        extra=identities,
    )


@case()
def frozenset_constant_as_value() -> Irregular:
    """A ``frozenset`` in ``co_consts`` (compilers put one there only for ``x in {...}``)
    returned as a value and used as an operand of ``|``."""
    code = asm(
        [
            ("LOAD_CONST", frozenset({1, 2})),
            ("LOAD_FAST", "x"),
            ("LOAD_CONST", frozenset({1, 2})),
            ("BINARY_OP", "|"),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="frozenset_constant_as_value",
        argnames=("x",),
    )
    return Irregular(
        code,
        namespace(),
        [({3},), (frozenset({4}),), ([],)],
        [(frozenset({1, 2}), {1, 2, 3}), (frozenset({1, 2}), frozenset({1, 2, 4})), Raises(TypeError)],
    )


MIXED_TUPLE = (1, [2], {3}, "s")


@case()
def tuple_constant_holding_objects() -> Irregular:
    """A tuple constant whose items include a list and a set (objects without a literal
    form inside a tuple that has one), returned and indexed."""
    code = asm(
        [
            ("LOAD_CONST", MIXED_TUPLE),
            ("LOAD_CONST", MIXED_TUPLE),
            ("LOAD_FAST", "i"),
            ("SUBSCR",),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="tuple_constant_holding_objects",
        argnames=("i",),
    )

    def identities(original: types.FunctionType, new: types.FunctionType) -> None:
        got = new(1)
        assert got[1] is MIXED_TUPLE[1] and got[0][2] is MIXED_TUPLE[2]

    return Irregular(
        code,
        namespace(),
        [0, 1, 2, -1, 9],
        [(MIXED_TUPLE, 1), (MIXED_TUPLE, [2]), (MIXED_TUPLE, {3}), (MIXED_TUPLE, "s"), Raises(IndexError)],
        source=False,
        extra=identities,
    )


# --------------------------------------------------------------------------------------
# Cells.
# --------------------------------------------------------------------------------------


def _poke(cells: tuple[types.CellType, ...], value: Any) -> int:
    cells[0].cell_contents = value
    return len(cells)


@case()
def closure_tuple_as_value() -> Irregular:
    """``LOAD_CLOSURE x; BUILD_TUPLE 1`` handed to a function as a value (Dynamo does this
    to build resume functions with closures): the callee writes through the cell and the
    code reads the new value with ``LOAD_DEREF``."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_GLOBAL", "poke"),
            ("NULL_SUFFIX",),
            ("LOAD_CLOSURE", "x"),
            ("BUILD_TUPLE", 1),
            ("LOAD_FAST", "v"),
            ("CALL", 2),
            ("LOAD_DEREF", "x"),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="closure_tuple_as_value",
        argnames=("x", "v"),
        cellvars=("x",),
    )
    return Irregular(code, namespace(poke=_poke), [(1, 2), ("a", None)], [(1, 2), (1, None)])


@case()
def unused_free_variable() -> Irregular:
    """A free variable the code never reads (Dynamo's resume functions have them): the
    recompiled code must keep it, or it no longer fits the function's closure."""
    code = asm(
        [("LOAD_FAST", "a"), ("LOAD_CONST", 1), ("BINARY_OP", "+"), ("RETURN_VALUE",)],
        name="unused_free_variable",
        argnames=("a",),
        freevars=("y",),
    )
    return Irregular(
        code, namespace(), [1, "s"], [2, Raises(TypeError)], closure=(types.CellType(10),)
    )


def _same_cells(original: types.FunctionType, new: types.FunctionType) -> None:
    """Dynamo asserts that the code it installs has the original's cell variables."""
    assert new.__code__.co_cellvars == original.__code__.co_cellvars


@case()
def unused_cell_variables() -> Irregular:
    """Cell variables (a parameter and a local) the code never closes over: Dynamo's code
    for a frame whose closures it traced into the graph keeps the frame's cells, and
    rejects a replacement without them (``cell var mismatch``)."""
    code = asm(
        [
            ("LOAD_DEREF", "x"),
            ("LOAD_CONST", 2),
            ("BINARY_OP", "*"),
            ("RETURN_VALUE",),
        ],
        name="unused_cell_variables",
        argnames=("x",),
        cellvars=("masked", "x"),
    )
    return Irregular(code, namespace(), [1, "s", None], [2, "ss", Raises(TypeError)],
                     extra=_same_cells)


@case()
def lambda_with_statements() -> Irregular:
    """A code object named ``<lambda>`` whose body is statements, not one expression
    (Dynamo's code for a compiled lambda: the graph call, then the result taken apart)."""
    code = asm(
        [
            *_tick("graph", ("LOAD_FAST", "x")),
            ("STORE_FAST", "out"),
            *_tick("replay", ("LOAD_CONST", None)),
            ("POP_TOP",),
            ("LOAD_FAST", "out"),
            ("LOAD_CONST", 1),
            ("BINARY_OP", "+"),
            ("RETURN_VALUE",),
        ],
        name="lam",
        argnames=("x",),
    )
    code = code.replace(co_name="<lambda>", **({"co_qualname": "<lambda>"} if PY >= (3, 11) else {}))
    return Irregular(code, namespace(), [1, 2.5, "s"], [2, 3.5, Raises(TypeError)],
                     logs=[["graph", "replay"]] * 2 + [["graph", "replay"]])


@case()
def free_variable_swapped_through_stack() -> Irregular:
    """The old value of a free variable stays on the stack while the variable is set to
    the argument, then is returned: the cell is changed for the caller."""
    code = asm(
        [
            ("LOAD_DEREF", "y"),
            ("LOAD_FAST", "a"),
            ("STORE_DEREF", "y"),
            ("LOAD_DEREF", "y"),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="free_variable_swapped_through_stack",
        argnames=("a",),
        freevars=("y",),
    )
    return Irregular(
        code, namespace(), [1, [2]], [(10, 1), (10, [2])], closure=(types.CellType(10),)
    )


# --------------------------------------------------------------------------------------
# Control flow without structure.
# --------------------------------------------------------------------------------------


def _irreducible(trace_on_stack: bool) -> list[Any]:
    """A loop of blocks A and B entered at A (fall through) or at B (jump)."""

    def record(load: tuple[str, Any]) -> list[Any]:
        if trace_on_stack:
            return [load, ("LIST_APPEND", 1)]
        return [("LOAD_FAST", "trace"), load, ("LIST_APPEND", 1), ("POP_TOP",)]

    start = [("BUILD_LIST", 0)] if trace_on_stack else [("BUILD_LIST", 0), ("STORE_FAST", "trace")]
    end = [] if trace_on_stack else [("LOAD_FAST", "trace")]
    return [
        *start,
        ("LOAD_FAST", "start_b"),
        ("POP_JUMP_IF_TRUE", "B"),
        "A",
        *record(("LOAD_CONST", "A")),
        ("LOAD_FAST", "i"),
        ("LOAD_CONST", 1),
        ("BINARY_OP", "+"),
        ("STORE_FAST", "i"),
        ("LOAD_FAST", "i"),
        ("LOAD_FAST", "n"),
        ("COMPARE_OP", ">="),
        ("POP_JUMP_IF_TRUE", "end"),
        "B",
        *record(("LOAD_FAST", "i")),
        ("LOAD_FAST", "i"),
        ("LOAD_CONST", 2),
        ("BINARY_OP", "%"),
        ("POP_JUMP_IF_FALSE", "A"),
        ("LOAD_FAST", "i"),
        ("LOAD_CONST", 3),
        ("BINARY_OP", "+"),
        ("STORE_FAST", "i"),
        ("JUMP", "A"),
        "end",
        *end,
        ("LOAD_FAST", "i"),
        ("BUILD_TUPLE", 2),
        ("RETURN_VALUE",),
    ]


def _irreducible_reference(i: Any, n: Any, start_b: bool) -> Any:
    """What the assembled loop computes, written with a flag for the second entry."""
    trace: list[Any] = []
    in_b = start_b
    while True:
        if not in_b:
            trace.append("A")
            i = i + 1
            if i >= n:
                return (trace, i)
        in_b = False
        trace.append(i)
        if i % 2:
            i = i + 3


def _expected(reference: Callable[..., Any], cases: list[Any]) -> list[Any]:
    out = []
    for entry in cases:
        try:
            out.append(reference(*copy.deepcopy(as_case(entry).args)))
        except Exception as exc:  # noqa: BLE001 - the expected outcome
            out.append(Raises(type(exc)))
    return out


_IRREDUCIBLE_CASES = [
    (0, 5, False),
    (0, 5, True),
    (1, 10, True),
    (2, 12, False),
    (7, 3, False),
    ("a", 3, True),
    (0.5, 4, True),
]
_IRREDUCIBLE_EXPECT = _expected(_irreducible_reference, _IRREDUCIBLE_CASES)


@case()
def irreducible_two_entries() -> Irregular:
    """Two entries into one loop: no structured form exists, the state machine runs."""
    code = asm(
        _irreducible(trace_on_stack=False),
        name="irreducible_two_entries",
        argnames=("i", "n", "start_b"),
    )
    return Irregular(code, namespace(), _IRREDUCIBLE_CASES, _IRREDUCIBLE_EXPECT)


@case()
def irreducible_with_stack_value() -> Irregular:
    """The same irreducible loop with its trace list kept on the stack throughout."""
    code = asm(
        _irreducible(trace_on_stack=True),
        name="irreducible_with_stack_value",
        argnames=("i", "n", "start_b"),
    )
    return Irregular(code, namespace(), _IRREDUCIBLE_CASES, _IRREDUCIBLE_EXPECT)


@case()
def jump_into_for_loop_body() -> Irregular:
    """A ``for`` loop entered in the middle of its body with a first item pushed by
    hand; the body breaks out (dropping the iterator) or goes back to ``FOR_ITER``."""
    code = asm(
        [
            ("BUILD_LIST", 0),
            ("STORE_FAST", "acc"),
            ("LOAD_FAST", "xs"),
            ("GET_ITER",),
            ("LOAD_FAST", "first"),
            ("JUMP", "body"),
            "top",
            ("FOR_ITER", "exit"),
            "body",
            ("STORE_FAST", "v"),
            ("LOAD_FAST", "acc"),
            ("LOAD_FAST", "v"),
            ("LOAD_CONST", 10),
            ("BINARY_OP", "*"),
            ("LIST_APPEND", 1),
            ("POP_TOP",),
            ("LOAD_FAST", "v"),
            ("LOAD_FAST", "stop"),
            ("COMPARE_OP", "=="),
            ("POP_JUMP_IF_FALSE", "top"),
            ("POP_TOP",),
            ("LOAD_CONST", "break"),
            ("JUMP", "out"),
            "exit",
            ("END_FOR",),
            ("LOAD_CONST", "done"),
            "out",
            ("LOAD_FAST", "acc"),
            ("SWAP", 2),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
        ],
        name="jump_into_for_loop_body",
        argnames=("xs", "first", "stop"),
    )
    return Irregular(
        code,
        namespace(),
        [([1, 2, 3], 0, 2), ([1, 2, 3], 5, 9), ([], 4, 4), ("ab", "c", "b"), (5, 0, 0)],
        [
            ([0, 10, 20], "break"),
            ([50, 10, 20, 30], "done"),
            ([40], "break"),
            (["c" * 10, "a" * 10, "b" * 10], "break"),
            Raises(TypeError),
        ],
    )


@case()
def extended_args() -> Irregular:
    """More than 256 constants and locals and a jump over more than 256 code units:
    ``EXTENDED_ARG`` everywhere."""
    body: list[Any] = [("LOAD_FAST", "x"), ("POP_JUMP_IF_TRUE", "far")]
    for k in range(300):
        body += [("LOAD_CONST", f"c{k}"), ("STORE_FAST", f"v{k}")]
    body += [
        ("LOAD_FAST", "v299"),
        ("LOAD_FAST", "v3"),
        ("BUILD_TUPLE", 2),
        ("RETURN_VALUE",),
        "far",
        ("LOAD_CONST", 299.5),
        ("LOAD_FAST", "x"),
        ("BUILD_TUPLE", 2),
        ("RETURN_VALUE",),
    ]
    code = asm(body, name="extended_args", argnames=("x",))
    return Irregular(code, namespace(), [0, 1, "s"], [("c299", "c3"), (299.5, 1), (299.5, "s")])


# --------------------------------------------------------------------------------------
# Exception tables (3.11+).
# --------------------------------------------------------------------------------------


@case(since=(3, 11))
def handler_shared_by_two_ranges() -> Irregular:
    """One ``except ValueError`` handler protecting two unrelated ranges with an
    unprotected test between them; other exceptions are re-raised."""
    code = asm(
        [
            "r1",
            ("LOAD_GLOBAL", "int", True),
            ("LOAD_FAST", "a"),
            ("CALL", 1),
            ("STORE_FAST", "r"),
            "e1",
            ("LOAD_FAST", "r"),
            ("LOAD_CONST", 0),
            ("COMPARE_OP", "<"),
            ("POP_JUMP_IF_FALSE", "ok"),
            "r2",
            ("LOAD_GLOBAL", "int", True),
            ("LOAD_FAST", "b"),
            ("CALL", 1),
            ("STORE_FAST", "r"),
            "e2",
            "ok",
            ("LOAD_FAST", "r"),
            ("RETURN_VALUE",),
            "handler",
            ("PUSH_EXC_INFO",),
            ("LOAD_GLOBAL", "ValueError"),
            ("CHECK_EXC_MATCH",),
            ("POP_JUMP_IF_FALSE", "reraise"),
            ("POP_TOP",),
            "handled",
            ("POP_EXCEPT",),
            ("LOAD_CONST", "bad"),
            ("RETURN_VALUE",),
            "reraise",
            ("RERAISE", 0),
            "cleanup",
            ("COPY", 3),
            ("POP_EXCEPT",),
            ("RERAISE", 1),
        ],
        name="handler_shared_by_two_ranges",
        argnames=("a", "b"),
        handlers=[
            ("r1", "e1", "handler", 0, False),
            ("r2", "e2", "handler", 0, False),
            ("handler", "handled", "cleanup", 1, True),
            ("reraise", "cleanup", "cleanup", 1, True),
        ],
    )
    return Irregular(
        code,
        namespace(),
        [("5", "x"), ("-1", "7"), ("-1", "x"), ("x", "1"), (None, "1"), ("-2", None)],
        [5, 7, "bad", "bad", Raises(TypeError), Raises(TypeError)],
    )


@case(since=(3, 11))
def handler_with_stack_value_from_two_ranges() -> Irregular:
    """A handler entered at depth 1 from two ranges that hold different values there:
    the handler returns the value it finds, so it must know which range raised."""
    code = asm(
        [
            ("LOAD_CONST", "first"),
            "r1",
            ("LOAD_GLOBAL", "int", True),
            ("LOAD_FAST", "a"),
            ("CALL", 1),
            ("STORE_FAST", "r"),
            "e1",
            ("POP_TOP",),
            ("LOAD_CONST", "second"),
            "r2",
            ("LOAD_GLOBAL", "int", True),
            ("LOAD_FAST", "b"),
            ("CALL", 1),
            ("LOAD_FAST", "r"),
            ("BINARY_OP", "+"),
            ("STORE_FAST", "r"),
            "e2",
            ("POP_TOP",),
            ("LOAD_FAST", "r"),
            ("RETURN_VALUE",),
            "handler",
            ("PUSH_EXC_INFO",),
            ("POP_TOP",),
            "handled",
            ("POP_EXCEPT",),
            ("LOAD_CONST", "failed"),
            ("SWAP", 2),
            ("BUILD_TUPLE", 2),
            ("RETURN_VALUE",),
            "cleanup",
            ("COPY", 3),
            ("POP_EXCEPT",),
            ("RERAISE", 1),
        ],
        name="handler_with_stack_value_from_two_ranges",
        argnames=("a", "b"),
        handlers=[
            ("r1", "e1", "handler", 1, False),
            ("r2", "e2", "handler", 1, False),
            ("handler", "handled", "cleanup", 2, True),
        ],
    )
    return Irregular(
        code,
        namespace(),
        [("1", "2"), ("x", "2"), ("1", "y"), (None, "1"), ("1", [])],
        [3, ("failed", "first"), ("failed", "second"), ("failed", "first"), ("failed", "second")],
    )


# --------------------------------------------------------------------------------------
# Generators and a Dynamo-like graph break.
# --------------------------------------------------------------------------------------


@case()
def generator_list_across_yields() -> Irregular:
    """A generator whose result list and iterator stay on the stack across ``yield``;
    sent values that are not ``None`` are appended to the list it returns."""
    code = asm(
        [
            ("BUILD_LIST", 0),
            ("LOAD_FAST", "xs"),
            ("GET_ITER",),
            "top",
            ("FOR_ITER", "exit"),
            ("YIELD",),
            ("COPY", 1),
            ("POP_JUMP_IF_NONE", "skip"),
            ("LIST_APPEND", 2),
            ("JUMP", "top"),
            "skip",
            ("POP_TOP",),
            ("JUMP", "top"),
            "exit",
            ("END_FOR",),
            ("RETURN_VALUE",),
        ],
        name="generator_list_across_yields",
        argnames=("xs",),
        generator=True,
    )
    return Irregular(
        code,
        namespace(),
        [kw([1, 2, 3]).sending(10, None, 30), kw([]), kw("ab").sending("x")],
        [([1, 2, 3], [10, 30]), ([], []), (["a", "b"], ["x"])],
    )


def _graph(x: Any) -> tuple[Any, Any]:
    return x + 1, x * 2


def _resume(b: Any, a: Any) -> Any:
    return (a, b, "resumed")


@case()
def dynamo_like_graph_break() -> Irregular:
    """The shape of a Dynamo graph break: call a compiled graph (a function constant),
    unpack its outputs, keep one on the stack across a logged "print", then call a
    resume function (another constant) with it and a local."""
    code = asm(
        [
            ("NULL_PREFIX",),
            ("LOAD_CONST", _graph),
            ("NULL_SUFFIX",),
            ("LOAD_FAST", "x"),
            ("CALL", 1),
            ("UNPACK_SEQUENCE", 2),
            ("STORE_FAST", "tmp"),
            *_tick("print", ("LOAD_FAST", "tmp")),
            ("POP_TOP",),
            ("NULL_PREFIX",),
            ("LOAD_CONST", _resume),
            ("NULL_SUFFIX",),
            ("COPY", SLOT + 1),
            ("LOAD_FAST", "tmp"),
            ("CALL", 2),
            ("SWAP", 2),
            ("POP_TOP",),
            ("RETURN_VALUE",),
        ],
        name="dynamo_like_graph_break",
        argnames=("x",),
    )
    return Irregular(
        code,
        namespace(),
        [1, 2.5, "s"],
        [(2, 2, "resumed"), (3.5, 5.0, "resumed"), Raises(TypeError)],
        logs=[["print"], ["print"], []],
        source=False,
    )


# --------------------------------------------------------------------------------------
# The test.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params())
def test_irregular(name: str) -> None:
    run_irregular(name)


def test_enough_cases() -> None:
    assert len(BUILDERS) >= 15


def test_assembler_encodings() -> None:
    """The assembler itself: EXTENDED_ARG, stack checks, labels, exception tables."""
    import dis

    code = BUILDERS["extended_args"]().code
    ops = [i.opname for i in dis.get_instructions(code)]
    assert "EXTENDED_ARG" in ops
    assert code.co_stacksize == 2
    assert len(code.co_consts) > 256 and len(code.co_varnames) > 256
    with pytest.raises(AssemblyError, match="stack depth"):
        asm(
            [
                ("LOAD_FAST", "x"),
                ("POP_JUMP_IF_FALSE", "join"),
                ("LOAD_CONST", 1),
                "join",
                ("RETURN_VALUE",),
            ],
            argnames=("x",),
        )
    with pytest.raises(AssemblyError, match="undefined label"):
        asm([("JUMP", "nowhere")])
    with pytest.raises(AssemblyError, match="underflow"):
        asm([("POP_TOP",), ("LOAD_CONST", None), ("RETURN_VALUE",)])
    deep = BUILDERS["deep_stack_across_jump"]().code
    assert deep.co_stacksize >= 13
    if PY >= (3, 11):
        handled = BUILDERS["handler_with_stack_value_from_two_ranges"]().code
        entries = dis._parse_exception_table(handled)  # type: ignore[attr-defined]
        assert sorted((e.depth, e.lasti) for e in entries) == [(1, False), (1, False), (2, True)]


