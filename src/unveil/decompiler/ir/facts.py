"""Facts the decompiler attaches to ``ast`` nodes, declared in one place.

The phases note on the nodes they build what a later phase must know and the node's
own fields cannot say (the source line of a statement, how a name is loaded, that a
value was stored to several names...). Each fact is a plain attribute, so copies of a
node keep it; it is set with :func:`attach`, which refuses a name not declared in
:data:`FACTS`, and read with ``getattr(node, name, default)``. The decompiler's own
node types (``exprs``, ``ir``) declare their fields in their classes instead.
"""

from __future__ import annotations

import ast
from typing import TypeVar

FACTS: dict[str, str] = {
    # statements
    "line": "int: the source line of the instruction that made the statement",
    "as_tested": "an ``if`` whose test is the bytecode's and whose body is what runs when "
                 "it holds, laid out after it (an ``if c: continue`` or ``if c: pass`` there was "
                 "written)",
    "reraise_of": "a bare ``raise``: the exception value it raises again",
    "with_exit": "a placeholder statement: the manager whose ``__exit__`` call it matches",
    "is_async": "that placeholder: whether the call is ``await``-ed (``async with``)",
    "map_add": "an item assignment made by ``MAP_ADD`` (a dict comprehension's item)",
    "condition": "a class-body annotation item: the index of the condition guarding it",
    "before": "a ``pop_except`` marker: ids of the stack values computed before it",
    "offset": "a ``pop_except`` marker: the byte offset of its ``POP_EXCEPT``",
    "specials": "a ``with`` set-up marker: the values the set-up pushed (``Special``s)",
    "explicit": "a ``continue`` whose bytecode jumps straight back to the loop's head; "
                "a ``return None`` the source wrote (kept at the function's end)",
    "written": "a ``continue`` whose jump has the position of a ``continue`` statement",
    "implicit": "a ``return None`` that is the compiler's copy of the one at the "
                "function's end (an ``if`` that ends in one keeps its ``else``)",
    "position": "a ``return`` or ``raise``: where its instruction came from "
                "(``written.exit_position``); the compiler's copies of it share it",
    # names
    "kind": "a Name: how it is loaded or stored (fast, deref, global, name, temp, ...)",
    "slot": "a Name of the state machine: the stack slot ``_s<slot>`` it stands for",
    "common": "a Name from ``LOAD_COMMON_CONSTANT`` (``AssertionError``, ...)",
    "origin": "a temporary's Name: the display (tuple, dict) assigned to it",
    # values
    "_seq": "int: when the value was computed (``machine.stamp``), for keeping order",
    "targets": "a value stored to names while on the stack (``a = b = v``): those names",
    "refs": "a Shared value: how many references the bytecode will take of it",
    "discards": "a Shared value: how many of its references were popped unused",
    "embedded": "a Shared value evaluated inside the statement that holds it",
    "evaluated": "a Shared value an earlier statement evaluates",
    "bind_first": "a Shared value named by a walrus where it is first evaluated",
    "walrus": "a Shared value rendered as ``(name := ...)``: that name",
    "stale": "a Shared value stored to a name while the stack still held loads of the "
             "name's old value: those Name nodes",
    "writes": "an import's value: the local names the import statement stores",
    "temps": "an unpacking: the temporaries its items go to, in order",
    "flipped": "an ``is``/``in`` test whose sense no operator of the bytecode holds: "
               "``negate`` turned it, or a ``POP_JUMP_IF_NONE`` made it",
    "inplace": "a BinOp from an in-place operator (``x += y``)",
    "display": "a frozenset constant written as a set display (``x in {1, 2}``)",
    "container_op": "a call made by ``LIST_APPEND``/``SET_ADD``/...: the method's name",
    "list_to_tuple": "``tuple(xs)`` made by ``LIST_TO_TUPLE`` (``*tuple(xs)`` is ``*xs``)",
    "zero_arg_super": "a ``super(...)`` call written as ``super()``",
    "eg_match": "the match half of an ``except*`` split: the ``ExcMatch`` it stands for",
    "exit": "a ``with`` exit's result: the ``__exit__`` function called",
    "exit_self": "that result: the manager passed as ``self`` (3.10), or None",
    "count": "a ``match`` class pattern: how many positional sub-patterns it has",
    "async_comprehension": "a comprehension that is ``async`` (an ``async for`` in it)",
    # arguments
    "returns": "an ``ast.arguments``: the return annotation, carried with the parameters",
}

N = TypeVar("N", bound=ast.AST)


def attach(node: N, **facts: object) -> N:
    """Note ``facts`` on ``node`` (declared names only); ``node`` again."""
    for name in facts:
        if name not in FACTS:
            raise AssertionError(f"undeclared node fact {name!r}: declare it in facts.FACTS")
    node.__dict__.update(facts)
    return node
