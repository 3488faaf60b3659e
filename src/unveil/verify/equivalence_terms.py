"""The equivalence check's values and states: terms, the objects a frame makes, the
state of one path, and what the opcode groups ask of the explorer (:class:`Exploring`).
See :mod:`unveil.verify.equivalence`."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Protocol

from ..bytecode import LITERAL_TYPES, Raw
from ..codeobj import CodeFlag
from ..decompiler.tidy.temporaries import Fixed

MAX_PATHS = 4096
MAX_STEPS = 50_000  # instructions executed, all paths together
MAX_BACK_JUMPS = 8  # on one path: more is a loop, which is not checked

NULL_FIRST = sys.version_info < (3, 13)  # 3.10-3.12 push NULL below the callable
BLOCKS = sys.version_info < (3, 11)  # 3.10 sets up handlers at run time (a block stack)
PY314 = sys.version_info >= (3, 14)  # kwargs slot in CALL_FUNCTION_EX, LOAD_SPECIAL, ...
SUPPORTED = (3, 10) <= sys.version_info[:2] <= (3, 14)
SIGNATURE_FLAGS = (CodeFlag.VARARGS | CodeFlag.VARKEYWORDS | CodeFlag.GENERATOR
                    | CodeFlag.COROUTINE | CodeFlag.ITERABLE_COROUTINE | CodeFlag.ASYNC_GENERATOR)

Term = tuple  # a symbolic value; see the module docstring
NULL: Term = ("null",)
UNBOUND: Term = ("unbound",)
NONE: Term = ("const", "NoneType", "None", False)


class Undecided(Exception):
    """The code does something this checker does not model."""


# ---------------------------------------------------------------- terms


def const_term(value: Any) -> Term:
    """The term of a constant; tuples become tuple terms, code objects are named."""
    if type(value) is tuple:
        return ("tuple", *(const_term(v) for v in value))
    if isinstance(value, CodeType):  # numbered among its namesakes, in co_consts order
        return ("code", value.co_name)
    if type(value) is slice:  # 3.14 folds constant slices
        return ("slice", *(const_term(v) for v in (value.start, value.stop, value.step)))
    if type(value) is frozenset:
        return ("const", "frozenset", repr(sorted(map(repr, value))), bool(value))
    if type(value) in LITERAL_TYPES:
        return ("const", type(value).__name__, repr(value), bool(value))
    # any other object (Dynamo's code holds modules, functions, tensors as constants):
    # itself, as the recompiled code holds the same object; its repr and truth may run
    # code, and cost (a tensor's). Its kind is "object", never a literal type's name (a
    # class may be called `int`), so nothing reads it as a literal.
    return ("const", "object", f"<{type(value).__qualname__} at {id(value):#x}>", None)


@dataclass
class Obj:
    """A list, dict or set the frame built itself."""

    kind: str
    items: list[Any]  # list/set: terms; dict: [key, value] pairs
    escaped: bool = False

    def copy(self) -> Obj:
        return Obj(self.kind, [list(i) if self.kind == "dict" else i for i in self.items],
                   self.escaped)


@dataclass
class State:
    """One path's machine state."""

    pc: int
    stack: list[Term]
    local: dict[str, Term]
    heap: dict[int, Obj]
    trace: list[Any]
    effects: int = 0
    exc_info: Term = ("exc_info0",)
    kw_names: Term | None = None
    bools: set[Term] = field(default_factory=set)  # terms known to be True or False
    canon: dict[Any, int] = field(default_factory=dict)  # object or code -> order seen
    # 3.10: (handler offset or None for an active handler, stack level)
    blocks: list[tuple[int | None, int]] = field(default_factory=list)
    back_jumps: int = 0
    # the time of the loop iteration this path runs in (empty outside loops); see now()
    scope: tuple[int, ...] = ()
    # stores to globals and cells since the last effect: (opcode, name) -> (value, as
    # rendered); no code runs between them, so only the last value of each counts
    stores: dict[tuple[str, str], tuple[Term, Any]] = field(default_factory=dict)
    # the outcome of each test of a term in ``bools`` on this path: testing a bool again
    # runs no code and gives the same answer, so the other way is no path
    outcomes: dict[Term, bool] = field(default_factory=dict)
    # the offset of the instruction that made each entry of ``trace`` (to say where two
    # paths part; not compared)
    where: list[int] = field(default_factory=list)
    # results of calls to fixed functions known never to return None (Known.never_none)
    not_none: set[Term] = field(default_factory=set)

    def fork(self) -> State:
        return State(self.pc, list(self.stack), dict(self.local),
                     {k: o.copy() for k, o in self.heap.items()}, list(self.trace),
                     self.effects, self.exc_info, self.kw_names, set(self.bools),
                     dict(self.canon), list(self.blocks), self.back_jumps, self.scope,
                     dict(self.stores), dict(self.outcomes), list(self.where),
                     set(self.not_none))

    def note(self, entry: Any) -> None:
        """Add ``entry`` to the path, made by the instruction running now."""
        self.trace.append(entry)
        self.where.append(self.pc - 1)

    def now(self) -> tuple[int, ...]:
        """When on this path: the number of effects so far, after the loop iterations
        (each named by the time its loop started) this path runs in."""
        return (*self.scope, self.effects)


@dataclass
class Loop:
    """A natural loop of the code: ``body`` holds the instruction indices that can come
    back to ``header`` without passing it (the header included)."""

    header: int
    body: frozenset[int]
    changed: frozenset[str]  # locals the body stores or deletes
    deleted: frozenset[str]  # locals the body may leave unbound
    live: frozenset[str]  # locals that may be read at the header before a store


@dataclass
class Summary:
    """A loop being summarised: its body runs once from a header state whose changing
    locals are opaque (``("phi", time, name, maybe_unbound)``), and every way that run
    ends is kept."""

    loop: Loop
    work: list[State] = field(default_factory=list)
    # (kind, state, path): kind "continue" (back at the header), "exit" (left the loop,
    # goes on in the frame) or "end" (the frame returned or raised); path as the
    # summary shows it, ending included
    endings: list[tuple[str, State, tuple[Any, ...]]] = field(default_factory=list)


def condition(cond: Any, outcome: bool) -> tuple[Any, bool]:
    """``not x`` taken false is ``x`` taken true; ``a is not b`` is ``a is b`` inverted."""
    while cond[0] == "not":
        cond, outcome = cond[1], not outcome
    if cond[0] == "is" and cond[3]:
        cond, outcome = (*cond[:3], 0), not outcome
    return cond, outcome


_SINGLETONS = ("NoneType", "bool", "ellipsis")


def identical(left: Term, right: Term) -> bool | None:
    """``left is right`` when it is known without running code (``is`` runs none): two
    constants one of which is a singleton (``None``, ``True``, ``False``, ``...``), or
    objects the frame made (each is itself, and no constant); else None."""
    if left[0] == right[0] == "const" and (left[1] in _SINGLETONS or right[1] in _SINGLETONS):
        return left == right
    if left[0] == right[0] == "obj":
        return left[1] == right[1]
    if {left[0], right[0]} == {"obj", "const"}:
        return False
    return None


def is_term(left: Term, right: Term, negated: bool) -> Term:
    """The term of ``left is right`` (``is not`` when ``negated``): a constant where
    :func:`identical` knows it."""
    known = identical(left, right)
    if known is not None:
        return const_term(known != negated)
    return ("is", left, right, int(negated))


# A function made in the frame is one of its objects: [code, closure and defaults,
# __name__, __qualname__]. __qualname__ is kept (code may read and set it) but not compared:
# recompiled code is compiled inside a wrapper function, so the qualified names of its
# nested functions differ by that prefix; they only show in reprs and tracebacks.
FUNCTION_NAMES = {"__name__": 2, "__qualname__": 3}
FUNCTION_ATTRS = ("__closure__", *FUNCTION_NAMES)


def function_attr(obj: Obj, name: str) -> Term:
    if name == "__closure__":
        return dict(obj.items[1]).get(8, NONE)
    return obj.items[FUNCTION_NAMES[name]]


def const_value(term: Term) -> Any:
    """The value of a constant string term."""
    return ast.literal_eval(term[2])

class Exploring(Protocol):
    """What the opcode groups (:mod:`.equivalence_ops`) use of the explorer that runs them
    (:class:`unveil.verify.equivalence.Explorer`)."""

    code: CodeType
    codes: dict[tuple[str, int], CodeType]
    fixed: Fixed | None
    for_exits: dict[int, int]
    work: list[State]

    def effect(self, state: State, *what: Any, result_bool: bool = False) -> Term: ...
    def call(self, state: State, fn: Term, args: list[Term], kwnames: tuple[str, ...],
             kwvalues: list[Term]) -> Term: ...
    def branch(self, state: State, term: Term, jump_if: bool, ins: Raw,
               keep: bool = False) -> bool: ...
    def jump(self, state: State, ins: Raw) -> None: ...
    def end(self, state: State, what: Term) -> None: ...
    def flush(self, state: State) -> None: ...
    def raise_(self, state: State, exc: Term, *, forked: bool = False) -> None: ...
    def new_obj(self, state: State, kind: str, items: list[Any]) -> Term: ...
    def local_obj(self, state: State, term: Term) -> Obj | None: ...
    def items_of(self, state: State, term: Term) -> list[Term] | None: ...
    def render(self, state: State, term: Any, escape: bool = True,
               seen: frozenset[int] = frozenset()) -> Any: ...
    def truth(self, state: State, term: Term) -> bool | None: ...
