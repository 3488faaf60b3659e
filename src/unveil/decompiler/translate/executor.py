"""Symbolic execution of straight-line code: stack operations become expressions.

The executor runs the instructions of one basic block on a symbolic :class:`State`:
a stack of expression trees and the statements emitted so far. Each opcode family
is one handler (loads, stores, operators, displays, calls, functions, imports,
exceptions, generators, pattern matching); terminators (jumps, returns, raises)
are left to the translator.

Evaluation order is kept exactly: when a statement is emitted, every value still
waiting on the stack that the statement could change, or whose evaluation has
effects, is first assigned to a temporary; when a ``SWAP`` would let a later value
be evaluated before an earlier one, both are assigned to temporaries. Values used
twice (``COPY``) become :class:`~unveil.decompiler.exprs.Shared`.

Where things are: the state, context and the machinery that keeps the order in
:mod:`.machine`; the families that compute values (loads, stores, stack shuffles,
operators, displays) in :mod:`.opcodes_values`; calls and what they make (functions,
classes, imports, exception handling, generators, ``match``) in :mod:`.opcodes_flow`.
"""

from __future__ import annotations

from typing import cast

from .machine import Context, Machine, State
from .opcodes_flow import Calls, Exceptions, Functions, Generators, Imports, Inlined, Matching
from .opcodes_values import Displays, Loads, Operators, StackOps, Stores


class Executor(Loads, Stores, StackOps, Operators, Displays, Calls, Inlined, Functions, Imports,
               Exceptions, Generators, Matching):  # (its bases: the opcode families)
    """Runs non-terminator instructions on a :class:`State`, one handler per opcode family."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.state = State()
        self.ins = None
        self.spec_counts = {}
        self.walrus = {}


Executor._table = {op: getattr(Executor, method)
                   for family in cast(tuple[type[Machine], ...], Executor.__bases__)
                   for op, method in family.ops.items()}
