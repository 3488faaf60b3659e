"""Reading code objects: one normalised instruction stream for CPython 3.8-3.14.

This package is the only place that knows how bytecode differs between CPython
versions. Everything above it (the decompiler) sees :class:`Instr` objects whose
opcodes have one meaning each, jump targets given as instruction indices, and
exception handlers as :class:`Handler` records, whatever the interpreter.
"""

from .codetables import read_listing
from .instructions import (
    CONDITIONAL_JUMPS,
    HOST,
    Bytecode,
    Handler,
    Instr,
    Layout,
    dead_final_return,
    for_iter_exit,
    last_statement_returns,
    layout_of,
    read,
    readable,
    retarget,
)
from .lines import line_table
from .listing import (
    LITERAL_TYPES,
    Raw,
    branches,
    chains,
    has_opcode,
    instructions,
    qualname_constants,
)

__all__ = ["CONDITIONAL_JUMPS", "HOST", "LITERAL_TYPES", "Bytecode", "Handler", "Instr", "Layout",
           "Raw", "branches", "chains", "dead_final_return", "for_iter_exit", "has_opcode", "instructions", "last_statement_returns", "layout_of", "line_table", "qualname_constants",
           "read", "read_listing", "readable", "retarget"]
