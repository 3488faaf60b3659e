"""Facts the decompiler attaches to ``ast`` nodes, declared in one place.

The phases note on the nodes they build what a later phase must know and the node's
own fields cannot say (the source line of a statement, how a name is loaded, that a
value was stored to several names...). Each fact is a plain attribute, so copies of a
node keep it. It is declared here once, as a :class:`Fact` (its name, the type of its
value, what it means); set with :func:`attach`, which refuses a name not declared, and
read with :func:`fact` (``fact(node, LINE, None)``), which type checkers see as typed
and which costs what ``getattr`` costs. The decompiler's own node types (``exprs``,
``markers``) declare their fields in their classes instead.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, overload

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
D = TypeVar("D")


class Fact(str, Generic[T_co]):
    """A node fact: the attribute's name (the string itself), its value's type ``T``, and
    ``doc``, what it says of the node."""

    doc: str

    def __new__(cls, name: str, doc: str) -> Fact[T_co]:
        new = super().__new__(cls, name)
        new.doc = doc
        return new

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # (copies)
        return str(self), self.doc


# statements

LINE: Fact[int | None] = Fact(
    "line", "the source line of the instruction that made the statement")
AS_TESTED: Fact[bool] = Fact(
    "as_tested", "an ``if`` whose test is the bytecode's and whose body is what runs when it "
    "holds, laid out after it (an ``if c: continue`` or ``if c: pass`` there was written)")
WRITTEN_ELSE: Fact[bool] = Fact(
    "written_else", "3.8/3.9: an ``if`` with an ``else`` whose arm that ends in a ``raise`` "
    "still jumps past it (dead code: the ``else`` was written)")
WRITTEN_FLAT: Fact[bool] = Fact(
    "written_flat", "3.8/3.9: an ``if`` whose first arm leaves and, by its dead jump, ends "
    "where the other begins: that code follows the ``if`` (no ``else`` was written)")
RERAISE_OF: Fact[ast.expr] = Fact(
    "reraise_of", "a bare ``raise``: the exception value it raises again")
WITH_EXIT: Fact[ast.expr] = Fact(
    "with_exit", "a placeholder statement: the manager whose ``__exit__`` call it matches")
IS_ASYNC: Fact[bool] = Fact(
    "is_async", "that placeholder: whether the call is ``await``-ed (``async with``)")
MAP_ADD: Fact[bool] = Fact(
    "map_add", "an item assignment made by ``MAP_ADD`` (a dict comprehension's item)")
CONDITION: Fact[int] = Fact(
    "condition", "a class-body annotation item: the index of the condition guarding it")
BEFORE: Fact[set[int]] = Fact(
    "before", "a ``pop_except`` marker: ids of the stack values computed before it")
OFFSET: Fact[int] = Fact(
    "offset", "a ``pop_except`` marker: the byte offset of its ``POP_EXCEPT``")
SPECIALS: Fact[list[Any]] = Fact(
    "specials", "a ``with`` set-up marker: the values the set-up pushed (``Special``s)")
EXPLICIT: Fact[bool] = Fact(
    "explicit", "a ``continue`` whose bytecode jumps straight back to the loop's head; a ``return "
    "None`` the source wrote (kept at the function's end)")
WRITTEN: Fact[bool] = Fact(
    "written", "a ``continue`` whose jump has the position of a ``continue`` statement")
BACK_KEPT: Fact[bool] = Fact(
    "back_kept", "3.8/3.9: a written ``continue`` that the jump back of its loop's own, dead, "
    "follows (the end of the loop's body: kept there, where it is not the compiler's)")
IMPLICIT: Fact[bool] = Fact(
    "implicit", "a ``return None`` that is the compiler's copy of the one at the function's end "
    "(an ``if`` that ends in one keeps its ``else``)")
POSITION: Fact[tuple[int | None, ...] | None] = Fact(
    "position", "a ``return`` or ``raise``: where its instruction came from "
    "(``written.exit_position``); the compiler's copies of it share it")

# names

#: how a name is loaded or stored: the value of a Name's ``KIND`` (``exprs.name`` makes them)
NameKind: TypeAlias = Literal["fast", "deref", "global", "name", "temp"]

KIND: Fact[NameKind] = Fact(
    "kind", "a Name: how it is loaded or stored (fast, deref, global, name, temp, ...)")
SLOT: Fact[int] = Fact(
    "slot", "a Name of the state machine: the stack slot ``_s<slot>`` it stands for")
COMMON: Fact[bool] = Fact(
    "common", "a Name from ``LOAD_COMMON_CONSTANT`` (``AssertionError``, ...)")
ORIGIN: Fact[ast.expr] = Fact(
    "origin", "a temporary's Name: the display (tuple, dict) assigned to it")

# values

SEQ: Fact[int] = Fact(
    "_seq", "when the value was computed (``machine.stamp``), for keeping order")
TARGETS: Fact[list[ast.expr]] = Fact(
    "targets", "a value stored to names while on the stack (``a = b = v``): those names")
REFS: Fact[int] = Fact(
    "refs", "a Shared value: how many references the bytecode will take of it")
DISCARDS: Fact[int] = Fact(
    "discards", "a Shared value: how many of its references were popped unused")
EMBEDDED: Fact[bool] = Fact(
    "embedded", "a Shared value evaluated inside the statement that holds it")
EVALUATED: Fact[bool] = Fact(
    "evaluated", "a Shared value an earlier statement evaluates")
BIND_FIRST: Fact[bool] = Fact(
    "bind_first", "a Shared value named by a walrus where it is first evaluated")
WALRUS: Fact[str] = Fact(
    "walrus", "a Shared value rendered as ``(name := ...)``: that name")
STALE: Fact[list[ast.Name]] = Fact(
    "stale", "a Shared value stored to a name while the stack still held loads of the name's old "
    "value: those Name nodes")
WRITES: Fact[tuple[str, ...]] = Fact(
    "writes", "an import's value: the local names the import statement stores")
TEMPS: Fact[list[ast.Name | None]] = Fact(
    "temps", "an unpacking: the temporaries its items go to, in order")
FLIPPED: Fact[bool] = Fact(
    "flipped", "an ``is``/``in`` test whose sense no operator of the bytecode holds: ``negate`` "
    "turned it, or a ``POP_JUMP_IF_NONE`` made it")
INPLACE: Fact[bool] = Fact(
    "inplace", "a BinOp from an in-place operator (``x += y``)")
DISPLAY: Fact[bool] = Fact(
    "display", "a frozenset constant written as a set display (``x in {1, 2}``)")
CONTAINER_OP: Fact[str] = Fact(
    "container_op", "a call made by ``LIST_APPEND``/``SET_ADD``/...: the method's name")
LIST_TO_TUPLE: Fact[bool] = Fact(
    "list_to_tuple", "``tuple(xs)`` made by ``LIST_TO_TUPLE`` (``*tuple(xs)`` is ``*xs``)")
ZERO_ARG_SUPER: Fact[bool] = Fact(
    "zero_arg_super", "a ``super(...)`` call written as ``super()``")
EG_MATCH: Fact[ast.expr] = Fact(
    "eg_match", "the match half of an ``except*`` split: the ``ExcMatch`` it stands for")
EXIT: Fact[ast.expr] = Fact(
    "exit", "a ``with`` exit's result: the ``__exit__`` function called")
EXIT_SELF: Fact[ast.expr | None] = Fact(
    "exit_self", "that result: the manager passed as ``self`` (3.10), or None")
COUNT: Fact[int] = Fact(
    "count", "a ``match`` class pattern: how many positional sub-patterns it has")
ASYNC_COMPREHENSION: Fact[bool] = Fact(
    "async_comprehension", "a comprehension that is ``async`` (an ``async for`` in it)")

# arguments

RETURNS: Fact[ast.expr | None] = Fact(
    "returns", "an ``ast.arguments``: the return annotation, carried with the parameters")

#: every declared fact, by name: what it says of the node
FACTS: dict[str, str] = {str(f): f.doc for f in list(globals().values()) if isinstance(f, Fact)}
_NAMES = frozenset(FACTS)

N = TypeVar("N", bound=ast.AST)


if TYPE_CHECKING:
    @overload
    def fact(node: object, name: Fact[bool], default: bool, /) -> bool: ...
    @overload
    def fact(node: object, name: Fact[T], /) -> T: ...
    @overload
    def fact(node: object, name: Fact[T], default: None, /) -> T | None: ...
    @overload
    def fact(node: object, name: Fact[T], default: D, /) -> T | D: ...
    def fact(node: object, name: Fact[T], default: object = None, /) -> object:
        """The fact ``name`` of ``node``, or ``default`` where it was not attached."""
else:
    fact = getattr  # a fact is a plain attribute


def attach(node: N, **facts: object) -> N:
    """Note ``facts`` on ``node`` (declared names only); ``node`` again."""
    if not _NAMES.issuperset(facts):  # (one test in C: this runs for most nodes built)
        name = next(n for n in facts if n not in FACTS)
        raise AssertionError(f"undeclared node fact {name!r}: declare it in ir/facts.py")
    node.__dict__.update(facts)
    return node
