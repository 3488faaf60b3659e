"""Reading code objects: one normalised instruction stream for CPython 3.10-3.14.

This package is the only place that knows how bytecode differs between CPython
versions. Everything above it (the decompiler) sees :class:`Instr` objects whose
opcodes have one meaning each, jump targets given as instruction indices, and
exception handlers as :class:`Handler` records, whatever the interpreter.
"""

from .instructions import (
    COLD_HANDLERS,
    CONDITIONAL_JUMPS,
    COPIED_BREAK_RETURNS,
    COPIED_LOOP_TESTS,
    ELSE_AFTER_BODY,
    FOLDED_NOT_TESTS,
    INLINED_COMPREHENSIONS,
    Bytecode,
    Handler,
    Instr,
    for_iter_exit,
    line_table,
    read,
    retarget,
)
from .listing import LITERAL_TYPES, Raw, branches, instructions, qualname_constants

__all__ = ["COLD_HANDLERS", "CONDITIONAL_JUMPS", "COPIED_BREAK_RETURNS", "COPIED_LOOP_TESTS", "ELSE_AFTER_BODY",
           "FOLDED_NOT_TESTS", "INLINED_COMPREHENSIONS", "LITERAL_TYPES", "Bytecode", "Handler", "Instr", "Raw", "branches", "for_iter_exit",
           "instructions", "line_table", "qualname_constants", "read", "retarget"]
