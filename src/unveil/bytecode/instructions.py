"""Normalised instructions: one opcode set with one meaning each, for CPython 3.8-3.14.

:func:`read` turns a code object into a :class:`Bytecode`: a list of :class:`Instr`
whose jump targets are indices into that list, plus the exception handler that
protects each instruction. The normalisation, per version:

* superinstructions are expanded (``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST``...),
  borrowed and checked loads become ``LOAD_FAST``, ``LOAD_SMALL_INT`` and
  ``RETURN_CONST`` become ``LOAD_CONST`` (+ ``RETURN_VALUE``);
* ``TO_BOOL`` before a conditional jump or ``UNARY_NOT``, ``NOT_TAKEN``, ``NOP``, caches,
  ``EXTENDED_ARG``, ``RESUME``, ``PRECALL``, cell set-up and generator prologues are dropped;
  3.10's ``SETUP_*``/``POP_BLOCK`` too, except a ``SETUP_FINALLY`` that starts a handler
  (``finally: try: ...``): it stays as a ``NOP``, the handler's one instruction outside
  that ``try``;
* the NULL of ``LOAD_GLOBAL``/``LOAD_ATTR`` becomes an explicit ``PUSH_NULL`` (before or
  after the callable, as the version pushes it); method loads become ``LOAD_METHOD``;
* 3.10's ``DUP_TOP``/``ROT_*`` become ``COPY``/``SWAP``, its binary/in-place opcodes
  ``BINARY_OP``; ``JUMP_IF_X_OR_POP`` becomes ``COPY 1; POP_JUMP_IF_X; POP_TOP``;
* all unconditional jumps are ``JUMP``; ``POP_JUMP_*_IF_X`` are ``POP_JUMP_IF_X``;
* ``KW_NAMES`` + ``CALL`` becomes ``LOAD_CONST names`` + ``CALL_KW``; 3.13's
  ``SET_FUNCTION_ATTRIBUTE`` folds into ``MAKE_FUNCTION`` flags;
* ``FOR_ITER`` pops the iterator and continues after the loop's ``END_FOR`` on exhaustion;
* 3.13+'s fast load of a cell (its ``LOAD_CLOSURE``) becomes ``LOAD_CLOSURE``;
* the ``with`` prologue (``SETUP_WITH``, ``BEFORE_WITH``, 3.14's ``LOAD_SPECIAL`` sequence)
  becomes ``BEFORE_WITH`` whose ``arg`` is the number of stack slots of the exit callable;
* 3.14: a loop's test and jump back that the exception table leaves out of the range
  they loop in get its handler (:func:`_close_jump_gaps`);
* 3.9 reads as 3.10 (its jump arguments in bytes are offsets in the listing's ``argval``;
  it has no ``GEN_START``, ``ROT_N`` or ``MATCH_*``). What differs is layout, said by
  :class:`Layout` (``copied_loop_tests``, ``dead_code``); its dead code is kept in the
  stream, and :func:`last_statement_returns` reads its closing ``return None``
  (:func:`dead_final_return`, a ``return`` nothing reaches); the jumps its peephole pass
  threaded past a statement's jump get it back where the layout says (:mod:`.unthread`);
* 3.8 reads as 3.9: :func:`.legacy.as_39` rewrites its listing as the one 3.9 makes of the
  same source (its ``finally`` subroutines copied, ``WITH_CLEANUP_*`` as 3.9's ``with``
  exits, ``COMPARE_OP`` as ``IS_OP``/``CONTAINS_OP``/``JUMP_IF_NOT_EXC_MATCH``), with the
  lines of the 3.8 instructions each comes from; its ``BUILD_*_UNPACK n`` become
  ``BUILD_UNPACK n`` (argval: ``list``, ``tuple``, ``set``, ``map``, ``call_args``,
  ``call_kwargs``).

Jump targets come from ``argval`` (byte offsets), never from ``argrepr``. The raw
listing underneath, ``dis``'s as the rest of unveil reads it, is :mod:`.listing`.
"""

from __future__ import annotations

import bisect
import sys
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import Any, cast

from ..codeobj import CodeFlag, code_version
from ..errors import DecompilationError
from . import legacy
from .codetables import code_listing, code_nops, code_positions, read_listing
from .exceptions import RawHandler, parse_exception_table, simulate_block_stack
from .listing import Raw, instructions, tables
from .unthread import unthread

VERSION = sys.version_info[:2]

#: The conditional jumps of the normalised stream (each pops the value it tests).
CONDITIONAL_JUMPS = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                               "POP_JUMP_IF_NOT_NONE"})


@dataclass(frozen=True, slots=True)
class Layout:
    """How the compiler of one CPython version lays code out and folds it: the facts the
    decompiler reads about the version a code object comes from (:attr:`Bytecode.layout`),
    never about the Python running unveil."""

    version: tuple[int, int]
    #: 3.12+ moves exception handlers (and the code only they reach) after the rest of
    #: the function, so when no ``except`` clause falls through, an ``else`` clause and
    #: the code after the ``try`` statement come out alike. Before, code after the
    #: statement follows the handlers and an ``else`` clause comes before them.
    cold_handlers: bool
    #: 3.11+ lays an ``else`` clause out right after the ``try`` body, so a body that
    #: jumps over the handler goes on to code after the statement; 3.10 jumps over the
    #: handlers to an ``else`` clause as to the code after the statement.
    else_after_body: bool
    #: 3.10 gives a ``break`` (an unconditional jump) to a ``return`` of a few
    #: instructions a copy of that return, laid out where the break is, after the loop's
    #: iterator is dropped; 3.11+ jumps to it.
    copied_break_returns: bool
    #: Scopes: 3.12+ compiles list, set and dict comprehensions inline, into the code
    #: that uses them (PEP 709); their variables are locals of that code, and a cell
    #: among them is listed with the locals.
    inlined_comprehensions: bool
    #: 3.10-3.13 write a ``while`` loop's test twice, at the top and again at the end
    #: (the jump back is the test), so a test only at the top is an ``if`` inside
    #: ``while True:``. 3.9 and 3.14 test at the top only, as both forms compile.
    copied_loop_tests: bool
    #: Folding: 3.10-3.13 compile ``not a in b`` (and ``not a is b``) as ``a not in b``
    #: everywhere. 3.14 folds it only where a value is computed: a test jumps on the
    #: opposite instead, so there ``if not a in b:`` and ``if a not in b:`` differ.
    folded_not_tests: bool
    #: 3.11+ records each instruction's columns too (PEP 657): the compiler's copies of
    #: code keep the position of what they copy, and written code has its own
    positions: bool
    #: 3.11+ compiles ``'%s' % (a, b)`` (a literal format of ``%s``/``%r``/``%a`` and
    #: a tuple) as the f-string it means; 3.10 keeps the ``%``
    folded_percent_formats: bool
    #: 3.8/3.9 keep code nothing reaches, which tells how the source was written: a
    #: function whose last statement is not a ``return`` closes with ``LOAD_CONST None;
    #: RETURN_VALUE`` (:func:`last_statement_returns`), and an ``if`` arm or ``except``
    #: clause that ends in a ``raise`` still jumps to the end of its statement after it
    #: (an ``elif``/``else`` follows, or the ``try`` ends there). 3.10+ drop it.
    dead_code: bool

    @staticmethod
    def of(version: tuple[int, int]) -> Layout:
        """The layout of CPython ``version``'s compiler."""
        known = _LAYOUTS.get(version)
        if known is None:
            known = _LAYOUTS[version] = Layout(
                version, cold_handlers=version >= (3, 12), else_after_body=version >= (3, 11),
                copied_break_returns=version < (3, 11),
                inlined_comprehensions=version >= (3, 12),
                copied_loop_tests=(3, 10) <= version < (3, 14), folded_not_tests=version < (3, 14),
                positions=version >= (3, 11), folded_percent_formats=version >= (3, 11),
                dead_code=version < (3, 10))
        return known


_LAYOUTS: dict[tuple[int, int], Layout] = {}


def layout_of(code: CodeType) -> Layout:
    """The :class:`Layout` of the version whose compiler made ``code``."""
    if type(code) is CodeType:  # (a live code object: the running interpreter's)
        return HOST
    return Layout.of(code_version(code))

#: the layout of the running interpreter's compiler: the code objects it makes, and the
#: source its own ``compile``/``symtable`` read back
HOST = Layout.of(VERSION)


@dataclass(slots=True)
class Instr:
    """One normalised instruction."""

    op: str
    arg: int | None = None
    argval: Any = None
    target: int = -1  # index of the jump target in the normalised list
    offset: int = -1  # byte offset of the original instruction
    line: int | None = None

    def copy(self) -> Instr:
        """A copy to change (``dataclasses.replace`` is slow on a hot path)."""
        return Instr(self.op, self.arg, self.argval, self.target, self.offset, self.line)

    def __repr__(self) -> str:
        t = f" ->{self.target}" if self.target >= 0 else ""
        v = "" if self.argval is None else f" {self.argval!r}"
        return f"<{self.op}{v}{t} @{self.offset}>"


@dataclass(frozen=True, slots=True)
class Handler:
    """Where an exception raised by an instruction goes.

    The stack is cut to ``depth`` values; then, on 3.11+, the raising offset (if
    ``lasti``) and the exception are pushed; on 3.10 (``legacy``) six values: the
    previous exception's traceback, value and type, then the new one's.
    """

    target: int
    depth: int
    lasti: bool
    legacy: bool

    def __eq__(self, other: object) -> bool:
        # (the dataclass's own, with the common case first: instructions of one region
        # hold the same handler object)
        if self is other:
            return True
        if other.__class__ is not Handler:
            return NotImplemented
        assert isinstance(other, Handler)
        return self.target == other.target and self.depth == other.depth \
            and self.lasti == other.lasti and self.legacy == other.legacy

    def __hash__(self) -> int:
        return hash((self.target, self.depth, self.lasti, self.legacy))


@dataclass(slots=True)
class Bytecode:
    """A code object read into normalised instructions."""

    code: CodeType
    instrs: list[Instr]
    handlers: list[Handler | None]
    _positions: list[tuple[int | None, ...]] | None = field(default=None, repr=False,
                                                            compare=False)
    _indices: dict[int, int] | None = field(default=None, repr=False, compare=False)
    _nops: dict[int, tuple[int, int | None]] | None = field(default=None, repr=False,
                                                             compare=False)

    @property
    def layout(self) -> Layout:
        """How the compiler of :attr:`code`'s version laid it out."""
        return layout_of(self.code)

    def position(self, ins: Instr) -> tuple[int | None, ...] | None:
        """Where ``ins`` came from in the source: (line, end line, column, end column),
        on 3.11+ (None before, and for an instruction the reader made up)."""
        return self.position_at(ins.offset)

    def position_at(self, offset: int) -> tuple[int | None, ...] | None:
        """:meth:`position` of the instruction at byte ``offset``."""
        if self._positions is None:
            self._positions = code_positions(self.code)
        k = offset // 2
        return self._positions[k] if 0 <= k < len(self._positions) else None

    def index_at(self, offset: int) -> int | None:
        """The index of the first instruction read from byte ``offset`` (None if none)."""
        if self._indices is None:
            self._indices = {}
            for k, ins in enumerate(self.instrs):
                self._indices.setdefault(ins.offset, k)
        return self._indices.get(offset)

    def nop_line_before(self, offset: int) -> int | None:
        """The line of a ``NOP`` (dropped by :func:`read`) right before the instruction
        at byte ``offset``: a ``pass`` statement's, or one the compiler kept for a line
        (a ``break``'s); 3.10's ``POP_BLOCK`` takes the line of a ``break`` the same way."""
        found = self._nop_before(offset)
        return found[1] if found is not None else None

    def nop_position_before(self, offset: int) -> tuple[int | None, ...] | None:
        """:meth:`position` of that ``NOP`` (3.11+; None before, or where none)."""
        found = self._nop_before(offset)
        return self.position_at(found[0]) if found is not None else None

    def _nop_before(self, offset: int) -> tuple[int, int | None] | None:
        if self._nops is None:
            self._nops = code_nops(self.code)
        return self._nops.get(offset)

    def describe(self, index: int) -> str:
        """``OPNAME argval`` of instruction ``index``, for error messages."""
        ins = self.instrs[index]
        return ins.op if ins.argval is None else f"{ins.op} {ins.argval!r}"


def retarget(bc: Bytecode, instrs: list[Instr], handlers: list[Handler | None],
             index_map: dict[int, int]) -> Bytecode:
    """``bc`` rewritten as ``instrs`` (with their ``handlers``), whose jump and handler
    targets are still indices into ``bc.instrs``: ``index_map`` gives each its new index.
    A handler whose target has none is dropped; a jump whose target has none raises
    ``KeyError`` with the jump."""
    for ins in instrs:
        if ins.target >= 0:
            if ins.target not in index_map:
                raise KeyError(ins)
            ins.target = index_map[ins.target]
    return Bytecode(bc.code, instrs, [
        None if h is None or h.target not in index_map else replace(h, target=index_map[h.target])
        for h in handlers])


# ---------------------------------------------------------------- tables

_JUMPS_UNCONDITIONAL = {
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT",
    "JUMP", "JUMP_NO_INTERRUPT",
}
_POP_JUMPS = {
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}
_DROPPED = {
    "NOP", "CACHE", "EXTENDED_ARG", "RESUME", "PRECALL", "COPY_FREE_VARS", "MAKE_CELL",
    "NOT_TAKEN", "GEN_START", "SETUP_FINALLY", "SETUP_CLEANUP", "POP_BLOCK",
    "SETUP_ASYNC_WITH", "END_FOR",
}
# 3.10 binary and in-place opcodes
_LEGACY_BINARY = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
    "MODULO": "%", "POWER": "**", "LSHIFT": "<<", "RSHIFT": ">>", "AND": "&", "OR": "|",
    "XOR": "^", "MATRIX_MULTIPLY": "@",
}
# ops that pass through with their name and argval unchanged
_PLAIN = {
    "LOAD_CONST", "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "LOAD_FAST", "STORE_FAST",
    "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE",
    "LOAD_CLASSDEREF", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR", "DELETE_ATTR",
    "LOAD_FAST_AND_CLEAR", "IMPORT_NAME", "IMPORT_FROM", "LOAD_FROM_DICT_OR_GLOBALS",
    "LOAD_FROM_DICT_OR_DEREF",
}
_COUNTED = {
    "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
    "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND",
    "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "UNPACK_SEQUENCE", "UNPACK_EX", "COPY", "SWAP",
    "RAISE_VARARGS", "RERAISE", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_KW",
    "MATCH_CLASS", "FORMAT_VALUE", "CONVERT_VALUE", "GET_AWAITABLE", "IS_OP", "CONTAINS_OP",
    "BUILD_INTERPOLATION", "YIELD_VALUE",
}
_NOARG = {
    "POP_TOP", "RETURN_VALUE", "UNARY_NOT", "UNARY_NEGATIVE", "UNARY_INVERT",
    "UNARY_POSITIVE", "GET_ITER", "GET_YIELD_FROM_ITER", "GET_AITER", "GET_ANEXT",
    "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_SLICE", "STORE_SLICE",
    "LOAD_BUILD_CLASS", "LOAD_LOCALS", "SETUP_ANNOTATIONS", "IMPORT_STAR", "PRINT_EXPR",
    "PUSH_EXC_INFO", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "PREP_RERAISE_STAR",
    "YIELD_FROM", "END_SEND", "CLEANUP_THROW", "MATCH_MAPPING",
    "MATCH_SEQUENCE", "MATCH_KEYS", "GET_LEN", "COPY_DICT_WITHOUT_KEYS", "LIST_TO_TUPLE",
    "ASYNC_GEN_WRAP", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "BUILD_TEMPLATE", "PUSH_NULL",
    "BEFORE_ASYNC_WITH", "BEFORE_WITH", "TO_BOOL", "EXIT_INIT_CHECK", "LOAD_ASSERTION_ERROR",
}
# the instructions of those two that no case of :func:`read` before theirs reads (on any
# version): read first, as they are (3.10's ``BINARY_SUBSCR`` and ``BINARY_SLICE`` are no
# binary operator of ``_LEGACY_BINARY``)
_COUNTED_AS_IS = frozenset(_COUNTED - {"COPY", "MATCH_CLASS", "RERAISE", "UNPACK_EX",
                                       "YIELD_VALUE"})
_NOARG_AS_IS = frozenset(_NOARG - {"LOAD_LOCALS", "LOAD_ASSERTION_ERROR", "TO_BOOL",
                                   "MATCH_KEYS", "BEFORE_WITH", "BEFORE_ASYNC_WITH"})
_INTRINSIC_1 = {
    "INTRINSIC_PRINT": "PRINT_EXPR", "INTRINSIC_IMPORT_STAR": "IMPORT_STAR",
    "INTRINSIC_STOPITERATION_ERROR": "STOPITERATION_ERROR",
    "INTRINSIC_ASYNC_GEN_WRAP": "ASYNC_GEN_WRAP", "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
}
_COMMON_CONSTANTS = ("AssertionError", "NotImplementedError", "tuple", "all", "any", "list",
                     "set")


# ---------------------------------------------------------------- reading


_NO_FALLTHROUGH = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_ABSOLUTE",
                             "JUMP_FORWARD"})


def last_statement_returns(code: CodeType) -> bool | None:
    """Is the last statement of the function ``code`` a ``return``? Where the layout
    tells (:attr:`Layout.dead_code`, 3.8/3.9): False when the code ends with
    the compiler's closing ``return None`` and nothing reaches it, True when it does not
    end with one; None where the closing return is reached (the code after a ``return
    None`` as the last statement is the same), and on 3.10+."""
    if not layout_of(code).dead_code:
        return None
    raw = read_listing(code)  # (3.8's: as 3.9 lays it out)
    if len(raw) < 2 or raw[-1].opname != "RETURN_VALUE" or raw[-2].opname != "LOAD_CONST" \
            or raw[-2].argval is not None:
        return True
    if len(raw) < 3 or raw[-3].opname not in _NO_FALLTHROUGH:
        return None
    version = code_version(code)
    jumps = tables((3, 9) if version == (3, 8) else version).jumps
    closing = raw[-2].offset
    targets = {i.argval for i in raw if i.opcode in jumps}
    def dead(k: int) -> bool:
        """Is ``raw[k]`` after a ``return``/``raise``/jump with nothing jumping in between
        (an except clause's clean-up kept after its ``raise``, say)?"""
        while k and raw[k].offset not in targets:
            k -= 1
            if raw[k].opname in _NO_FALLTHROUGH:
                return True
        return False

    # (a jump kept after a ``return``, where no jump goes, is dead: it reaches nothing)
    if any(i.opcode in jumps and i.argval == closing and not dead(k)
           for k, i in enumerate(raw)):
        return None
    return False


def dead_final_return(code: CodeType) -> tuple[str, Any] | None:
    """3.8/3.9 (:attr:`Layout.dead_code`): what the ``return`` that ends the function
    ``code`` returns where nothing reaches it (written after a loop nothing leaves, kept
    as dead code): ``("const", value)`` or ``("name", name)``; None where it runs, returns
    ``None`` (the compiler's closing return reads the same) or something else."""
    if not layout_of(code).dead_code:
        return None
    raw = read_listing(code)  # (3.8's: as 3.9 lays it out)
    if len(raw) < 3 or raw[-1].opname != "RETURN_VALUE" or raw[-3].opname not in _NO_FALLTHROUGH:
        return None
    load = raw[-2]
    if load.opname == "LOAD_CONST" and load.argval is not None:
        found: tuple[str, Any] = ("const", load.argval)
    elif load.opname in ("LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF"):
        found = ("name", load.argval)
    else:
        return None
    version = code_version(code)
    jumps = tables((3, 9) if version == (3, 8) else version).jumps
    targets = {i.argval for i in raw if i.opcode in jumps}
    live = [k for k, i in enumerate(raw) if i.opcode in jumps and i.argval == load.offset]
    for k in live:  # (a jump there from code after a return, raise or jump reaches nothing)
        while k and raw[k].offset not in targets and raw[k - 1].opname not in _NO_FALLTHROUGH:
            k -= 1
        if not (k and raw[k].offset not in targets):
            return None
    return found



def readable(version: tuple[int, int]) -> bool:
    """Can :func:`read` read the bytecode of CPython ``version`` here? 3.8-3.14, from any
    Python (3.8-3.10's handlers come from simulating the block stack with the stack
    effects of the version's opcode table; 3.8's listing is first rewritten as 3.9's,
    :mod:`.legacy`)."""
    return (3, 8) <= version <= (3, 14)


def read(code: CodeType) -> Bytecode:
    """Read ``code`` into normalised instructions and handlers, by the rules of the
    version that compiled it (:func:`~unveil.codeobj.code_version`)."""
    version = code_version(code)
    if not readable(version):
        raise DecompilationError(
            f"unveil does not read Python {version[0]}.{version[1]}'s bytecode yet (it reads "
            "that of Python 3.8 to 3.14)",
            code_name=getattr(code, "co_qualname", code.co_name))
    table = tables((3, 9) if version == (3, 8) else version)  # (3.8: read as 3.9's)
    raw, lines = code_listing(code)
    cells = set(code.co_cellvars) | set(code.co_freevars)
    nvars = len(code.co_varnames)
    nparams = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & CodeFlag.VARARGS) \
        + bool(code.co_flags & CodeFlag.VARKEYWORDS)

    def is_cell(ins: Raw) -> bool:
        """Does this fast load read a cell (3.13+, which has no ``LOAD_CLOSURE``)? A slot
        past the plain locals is a cell, and so is a parameter that is also a cell; 3.12+
        comprehension variables that shadow a cell of the same name are plain locals (on
        3.12 every fast load is: its closures load with ``LOAD_CLOSURE``)."""
        if not fast_cells or ins.argval not in cells or ins.arg is None:
            return False
        return ins.arg >= nvars or ins.arg < nparams
    fast_cells = version >= (3, 13) and bool(cells)  # (else no fast load reads a cell)
    ranges = _raw_handlers(code, version, raw)
    # 3.10: a handler that opens with a ``try`` (``finally: try: ...``, or ``finally:
    # while True: try: ...`` after the loop's ``NOP``) keeps its first instruction as a
    # ``NOP``, the one instruction of the handler outside that try (so the handler's own
    # handler is the one around the statement, as on 3.11+)
    opens_try = {r.target for r in ranges} if version < (3, 11) else set()
    out: list[Instr] = []
    first_index: dict[int, int] = {}  # original offset -> first normalised index (or next)
    pending_jumps: list[tuple[int, int]] = []  # (normalised index, target byte offset)
    n = len(raw)
    k = 0
    kw_names: Any = None

    def emit(op: str, ins: Raw, arg: int | None = None, argval: Any = None,
             jump: int | None = None) -> None:
        if jump is not None:
            pending_jumps.append((len(out), jump))
        out.append(Instr(op, arg, argval, -1, ins.offset, lines.get(ins.offset)))

    jump_targets = {i.argval for i in raw if i.opcode in table.jumps}
    if version >= (3, 12):
        jump_targets.update(i.argval for i in raw if i.opname == "FOR_ITER")

    while k < n:
        ins = raw[k]
        name = ins.opname
        offset = ins.offset
        first_index.setdefault(offset, len(out))
        k += 1
        if name in _PLAIN and (name != "LOAD_FAST" or not fast_cells or not is_cell(ins)):
            # (the commonest cases, before the rest: one instruction as it is)
            out.append(Instr(name, ins.arg, ins.argval, -1, offset, lines.get(offset)))
            continue
        if name in _NOARG_AS_IS:
            out.append(Instr(name, None, None, -1, offset, lines.get(offset)))
            continue
        if name in _COUNTED_AS_IS:
            out.append(Instr(name, ins.arg, ins.arg, -1, offset, lines.get(offset)))
            continue
        if name in _DROPPED:
            if ins.offset in opens_try and _opens_try(raw, k - 1):
                emit("NOP", ins)
            continue
        # (the commonest of the rest next: no case before theirs reads these)
        if name in ("CALL", "CALL_METHOD"):
            if kw_names is not None:
                emit("LOAD_CONST", ins, argval=kw_names)
                emit("CALL_KW", ins, ins.arg, ins.arg)
                kw_names = None
            else:
                emit("CALL", ins, ins.arg, ins.arg)
            continue
        if name == "LOAD_GLOBAL":
            null = version >= (3, 11) and bool(cast(int, ins.arg) & 1)
            if null and version < (3, 13):
                emit("PUSH_NULL", ins)
            emit("LOAD_GLOBAL", ins, argval=ins.argval)
            if null and version >= (3, 13):
                emit("PUSH_NULL", ins)
            continue
        if name == "LOAD_ATTR":
            if version >= (3, 12) and cast(int, ins.arg) & 1:
                emit("LOAD_METHOD", ins, argval=ins.argval)
            else:
                emit("LOAD_ATTR", ins, argval=ins.argval)
            continue
        if name == "LOAD_METHOD":
            emit("LOAD_METHOD", ins, argval=ins.argval)
            continue
        if name in _JUMPS_UNCONDITIONAL:
            emit("JUMP", ins, jump=ins.argval)
            continue
        if name in _POP_JUMPS:
            emit(_POP_JUMPS[name], ins, jump=ins.argval)
            continue
        if name == "COPY" and ins.arg == 1 and _inlined_builtin_call(raw, k):
            # 3.14 runs ``any``/``all``/``tuple`` of a generator expression in line when
            # the name is the builtin; the plain call that follows is the same program
            target = raw[k + 2].argval
            while k < n and raw[k].offset != target:
                first_index.setdefault(raw[k].offset, len(out))
                k += 1
            continue
        if name == "RETURN_GENERATOR":
            if k < n and raw[k].opname == "POP_TOP":
                first_index.setdefault(raw[k].offset, len(out))
                k += 1
            continue
        if name in _PLAIN:
            if name == "LOAD_FAST" and is_cell(ins):
                # a fast load of a cell variable loads the cell (3.13's LOAD_CLOSURE)
                emit("LOAD_CLOSURE", ins, argval=ins.argval)
            else:
                emit(name, ins, ins.arg, ins.argval)
            continue
        if name in ("LOAD_FAST_CHECK", "LOAD_FAST_BORROW"):
            emit("LOAD_CLOSURE" if is_cell(ins) else "LOAD_FAST", ins, ins.arg, ins.argval)
            continue
        if name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            a, b = ins.argval
            emit("LOAD_FAST", ins, argval=a)
            emit("LOAD_FAST", ins, argval=b)
            continue
        if name == "STORE_FAST_LOAD_FAST":
            a, b = ins.argval
            emit("STORE_FAST", ins, argval=a)
            emit("LOAD_FAST", ins, argval=b)
            continue
        if name == "STORE_FAST_STORE_FAST":
            a, b = ins.argval
            emit("STORE_FAST", ins, argval=a)
            emit("STORE_FAST", ins, argval=b)
            continue
        if name == "LOAD_SMALL_INT":
            emit("LOAD_CONST", ins, argval=ins.arg)
            continue
        if name == "RETURN_CONST":
            emit("LOAD_CONST", ins, argval=ins.argval)
            emit("RETURN_VALUE", ins)
            continue
        if name == "LOAD_SUPER_ATTR":
            emit("LOAD_SUPER_ATTR", ins, cast(int, ins.arg) & 3, ins.argval)
            continue
        if name == "LOAD_LOCALS" and k < n and raw[k].opname == "LOAD_FROM_DICT_OR_DEREF" \
                and raw[k].offset not in jump_targets:
            nxt = raw[k]
            first_index.setdefault(nxt.offset, len(out))
            k += 1
            emit("LOAD_CLASSDEREF", nxt, argval=nxt.argval)
            continue
        if name in ("LOAD_ASSERTION_ERROR",):
            emit("LOAD_COMMON", ins, argval="AssertionError")
            continue
        if name == "LOAD_COMMON_CONSTANT":
            emit("LOAD_COMMON", ins, argval=_COMMON_CONSTANTS[cast(int, ins.arg)])
            continue
        if name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
            emit("COPY", ins, 1, 1)
            emit("POP_JUMP_IF_TRUE" if "TRUE" in name else "POP_JUMP_IF_FALSE", ins,
                 jump=ins.argval)
            emit("POP_TOP", ins)
            continue
        if name == "JUMP_IF_NOT_EXC_MATCH":
            emit("JUMP_IF_NOT_EXC_MATCH", ins, jump=ins.argval)
            continue
        if name == "FOR_ITER":
            emit("FOR_ITER", ins, jump=for_iter_exit(raw, ins, k, version))
            continue
        if name == "POP_ITER":
            emit("POP_TOP", ins)
            continue
        if name == "SEND":
            consumed = _match_send_loop(raw, k - 1)
            if consumed:
                for j in range(k, k - 1 + consumed):
                    first_index.setdefault(raw[j].offset, len(out))
                emit("YIELD_FROM", ins)
                k = k - 1 + consumed
                continue
            emit("SEND", ins, jump=ins.argval)
            continue
        if name == "TO_BOOL":
            follower = _next_real(raw, k)
            if follower is not None and (follower.opname in _POP_JUMPS
                                         or follower.opname == "UNARY_NOT"):
                continue
            emit("TO_BOOL", ins)
            continue
        if name == "COMPARE_OP":
            emit("COMPARE_OP", ins, argval=ins.argval)
            continue
        if name == "BINARY_OP":
            sym = table.nb_ops[cast(int, ins.arg)]
            if sym == "[]":
                emit("BINARY_SUBSCR", ins)
            else:
                emit("BINARY_OP", ins, ins.arg, sym)
            continue
        if name.startswith(("BINARY_", "INPLACE_")) and version < (3, 11):
            kind, _, opname = name.partition("_")
            if opname in _LEGACY_BINARY:
                sym = _LEGACY_BINARY[opname] + ("=" if kind == "INPLACE" else "")
                emit("BINARY_OP", ins, None, sym)
                continue
        if name == "DUP_TOP":
            emit("COPY", ins, 1, 1)
            continue
        if name == "DUP_TOP_TWO":
            emit("COPY", ins, 2, 2)
            emit("COPY", ins, 2, 2)
            continue
        if name in ("ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N"):
            depth = {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}.get(name, cast(int, ins.arg))
            for d in range(depth, 1, -1):
                emit("SWAP", ins, d, d)
            continue
        if name == "KW_NAMES":
            kw_names = code.co_consts[cast(int, ins.arg)]  # 3.11's dis leaves argval unknown
            continue
        if name == "CALL_FUNCTION_EX":
            if version >= (3, 14):
                emit("CALL_EX", ins, 2, 2)
            elif version >= (3, 11):
                emit("CALL_EX", ins, cast(int, ins.arg) & 1, cast(int, ins.arg) & 1)
            else:
                emit("CALL_FUNCTION_EX", ins, cast(int, ins.arg) & 1, cast(int, ins.arg) & 1)
            continue
        if name == "CALL_INTRINSIC_1":
            desc = table.intrinsic1[cast(int, ins.arg)]
            mapped = _INTRINSIC_1.get(desc)
            if mapped in ("IMPORT_STAR", "PRINT_EXPR"):
                # 3.12+: the intrinsic returns None, which a POP_TOP drops; the old
                # instructions push nothing
                emit(mapped, ins)
                if k < n and raw[k].opname == "POP_TOP" and raw[k].offset not in jump_targets:
                    first_index.setdefault(raw[k].offset, len(out) - 1)
                    k += 1
                else:
                    emit("LOAD_CONST", ins, argval=None)  # the None result
            elif mapped:
                emit(mapped, ins)
            else:
                emit("CALL_INTRINSIC_1", ins, ins.arg, desc)
            continue
        if name == "CALL_INTRINSIC_2":
            desc = table.intrinsic2[cast(int, ins.arg)]
            if desc == "INTRINSIC_PREP_RERAISE_STAR":
                emit("PREP_RERAISE_STAR", ins)
            else:
                emit("CALL_INTRINSIC_2", ins, ins.arg, desc)
            continue
        if name == "MAKE_FUNCTION":
            flags = ins.arg or 0
            if version >= (3, 13):
                while k < n and raw[k].opname == "SET_FUNCTION_ATTRIBUTE" \
                        and raw[k].offset not in jump_targets:
                    flags |= cast(int, raw[k].arg)
                    first_index.setdefault(raw[k].offset, len(out))
                    k += 1
            # 3.10 pushes the qualified name last; arg bit 0x100 says so
            emit("MAKE_FUNCTION", ins, flags | (0x100 if version < (3, 11) else 0), flags)
            continue
        if name == "WITH_EXCEPT_START":
            # arg: how deep the exit callable sits (3.14 keeps its self just above it);
            # argval: how deep the exception value sits
            depth = 7 if version < (3, 11) else 5 if version >= (3, 14) else 4
            emit("WITH_EXCEPT_START", ins, depth, 2 if version < (3, 11) else 1)
            continue
        if name in ("MATCH_CLASS", "MATCH_KEYS") and version < (3, 11):
            # 3.10 also pushes whether it matched: ``result is not None``
            emit(name, ins, ins.arg, ins.arg)
            emit("COPY", ins, 1, 1)
            emit("LOAD_CONST", ins, argval=None)
            emit("IS_OP", ins, 1, 1)
            continue
        if name == "END_ASYNC_FOR":
            # ends an ``async for``: pops the exception (3.10: its triple) and the iterator
            emit("END_ASYNC_FOR", ins, 3 if version < (3, 11) else 1, None)
            continue
        if name == "POP_EXCEPT":
            emit("POP_EXCEPT", ins, 3 if version < (3, 11) else 1, None)
            continue
        if name == "RERAISE" and version < (3, 11):
            emit("RERAISE", ins, ins.arg, 3)  # 3.10 re-raises the (tb, value, type) triple
            continue
        if name == "SET_FUNCTION_ATTRIBUTE":
            emit("SET_FUNCTION_ATTRIBUTE", ins, ins.arg, ins.arg)
            continue
        if name == "SETUP_WITH":
            emit("BEFORE_WITH", ins, 1, 1)
            continue
        if name == "BEFORE_WITH" or name == "BEFORE_ASYNC_WITH":
            emit(name, ins, 1, 1)
            continue
        if name == "COPY" and version >= (3, 14):
            matched = _match_load_special(raw, k - 1, jump_targets)
            if matched:
                op, consumed = matched
                for j in range(k, k - 1 + consumed):
                    first_index.setdefault(raw[j].offset, len(out))
                emit(op, ins, 2, 2)
                k = k - 1 + consumed
                continue
        if name == "LOAD_SPECIAL":
            emit("LOAD_SPECIAL", ins, ins.arg, ins.argval)
            continue
        if name == "YIELD_VALUE":
            emit("YIELD_VALUE", ins, ins.arg, ins.arg)
            continue
        if name == "UNPACK_EX":
            emit("UNPACK_EX", ins, ins.arg, (cast(int, ins.arg) & 0xFF, cast(int, ins.arg) >> 8))
            continue
        if name in _COUNTED:
            emit(name, ins, ins.arg, ins.arg)
            continue
        if name in legacy.UNPACK_BUILDS:  # (3.8)
            emit("BUILD_UNPACK", ins, ins.arg, legacy.UNPACK_BUILDS[name])
            continue
        if name in _NOARG:
            emit(name, ins)
            continue
        raise DecompilationError(
            f"unknown instruction for Python {version[0]}.{version[1]}",
            code_name=code.co_qualname if hasattr(code, "co_qualname") else code.co_name,
            offset=ins.offset, instruction=name)

    # resolve jump targets: an offset that produced no instruction maps to the next one
    end_index = len(out)
    offsets = sorted(first_index)
    for idx, target_off in pending_jumps:
        t = first_index.get(target_off)
        if t is None:
            pos = bisect.bisect_left(offsets, target_off)
            t = first_index[offsets[pos]] if pos < len(offsets) else end_index
        out[idx].target = t
    handlers = _handlers(ranges, out, first_index, offsets, version)
    if Layout.of(version).dead_code:
        unthread(out, handlers)  # (3.8/3.9: a test's jump to a ``break`` as written)
    return Bytecode(code, out, handlers)


def _next_real(raw: list[Raw], k: int) -> Raw | None:
    while k < len(raw) and raw[k].opname in ("NOT_TAKEN", "NOP", "CACHE", "EXTENDED_ARG"):
        k += 1
    return raw[k] if k < len(raw) else None


def for_iter_exit(raw: list[Raw], ins: Raw, k: int, version: tuple[int, int] = VERSION) -> int:
    """Byte offset where a ``FOR_ITER`` of CPython ``version`` continues once its iterator
    is exhausted."""
    target: int = ins.argval
    if version < (3, 12):
        return target
    idx = next((j for j in range(k, len(raw)) if raw[j].offset == target), None)
    if idx is None:
        return target
    skip = 0
    if raw[idx].opname == "END_FOR":
        skip = 1
        if version == (3, 13) and idx + 1 < len(raw) and raw[idx + 1].opname == "POP_TOP":
            skip = 2
        if version >= (3, 14) and idx + 1 < len(raw) and raw[idx + 1].opname == "POP_ITER":
            skip = 2
    if idx + skip < len(raw):
        return raw[idx + skip].offset
    return raw[-1].offset + 2


def _match_send_loop(raw: list[Raw], k: int) -> int:
    """3.11+'s ``yield from``/``await`` loop, as many instructions as it spans (0: no match).

    ``SEND end; YIELD_VALUE; RESUME; JUMP_BACKWARD_NO_INTERRUPT <SEND>; [CLEANUP_THROW];
    end: [END_SEND]`` is one ``YIELD_FROM``: pop the value to send and the receiver,
    push the result.
    """
    send = raw[k]
    j = k + 1
    if j >= len(raw) or raw[j].opname != "YIELD_VALUE":
        return 0
    j += 1
    if j < len(raw) and raw[j].opname == "RESUME":
        j += 1
    if j >= len(raw) or raw[j].opname not in ("JUMP_BACKWARD_NO_INTERRUPT", "JUMP_BACKWARD") \
            or raw[j].argval != send.offset:
        return 0
    j += 1
    if j < len(raw) and raw[j].opname == "CLEANUP_THROW" and raw[j].offset != send.argval:
        j += 1
    if j >= len(raw) or raw[j].offset != send.argval:
        return 0
    if raw[j].opname == "END_SEND":
        j += 1
    return j - k


def _match_load_special(raw: list[Raw], k: int,
                        targets: set[int]) -> tuple[str, int] | None:
    """3.14's ``with`` prologue: COPY 1; LOAD_SPECIAL exit; SWAP 2; SWAP 3;
    LOAD_SPECIAL enter; CALL 0."""
    seq = raw[k:k + 6]
    if len(seq) < 6:
        return None
    names = [i.opname for i in seq]
    if names != ["COPY", "LOAD_SPECIAL", "SWAP", "SWAP", "LOAD_SPECIAL", "CALL"]:
        return None
    if seq[0].arg != 1 or seq[2].arg != 2 or seq[3].arg != 3 or seq[5].arg != 0:
        return None
    if any(i.offset in targets for i in seq[1:]):
        return None
    exit_name, enter_name = str(seq[1].argval), str(seq[4].argval)
    if (exit_name, enter_name) == ("__exit__", "__enter__") or \
            (seq[1].arg, seq[4].arg) == (1, 0):
        return "BEFORE_WITH", 6
    if (exit_name, enter_name) == ("__aexit__", "__aenter__") or \
            (seq[1].arg, seq[4].arg) == (3, 2):
        return "BEFORE_ASYNC_WITH", 6
    return None


def _raw_handlers(code: CodeType, version: tuple[int, int], raw: list[Raw]
                  ) -> list[RawHandler]:
    if version == (3, 8):
        return simulate_block_stack(raw, (3, 9))  # (its listing as 3.9's)
    if version < (3, 11):
        return simulate_block_stack(instructions(code), version)  # (a jump may go to an EXTENDED_ARG)
    return parse_exception_table(code)


def _handlers(ranges: list[RawHandler], out: list[Instr], first_index: dict[int, int],
              offsets: list[int], version: tuple[int, int]) -> list[Handler | None]:
    legacy = version < (3, 11)
    result: list[Handler | None] = [None] * len(out)
    if not ranges:
        return result
    out_offsets = [ins.offset for ins in out]  # non-decreasing

    def index_of(off: int) -> int:
        t = first_index.get(off)
        if t is not None:
            return t
        pos = bisect.bisect_left(offsets, off)
        return first_index[offsets[pos]] if pos < len(offsets) else len(out)

    for r in ranges:
        target = index_of(r.target)
        if _is_generator_wrapper(out, target):
            continue  # 3.12+: StopIteration -> RuntimeError around a generator's body
        handler = Handler(target, r.depth, r.lasti, legacy)
        lo = bisect.bisect_left(out_offsets, r.start)
        hi = bisect.bisect_left(out_offsets, r.end)
        for i in range(lo, hi):
            result[i] = handler
    _close_jump_gaps(out, result, version)
    return result


def _close_jump_gaps(out: list[Instr], handlers: list[Handler | None],
                     version: tuple[int, int]) -> None:
    """3.14: a loop's test and jump back that the exception table leaves out of the
    protected range they loop in get its handler (where the compiler turned the test
    around: ``if not c: return`` right before the jump back, in a ``with``). Only that
    pair: elsewhere which jumps the table leaves out tells how the source was written,
    and 3.12-3.13 leave a loop's jump back out too, which the structurer expects."""
    if version < (3, 14):
        return
    for i in range(1, len(out) - 1):
        test, back = out[i], out[i + 1]
        if test.op not in CONDITIONAL_JUMPS or back.op != "JUMP" \
                or handlers[i] is not None or handlers[i + 1] is not None \
                or not 0 <= back.target < i:
            continue
        handler = handlers[i - 1]
        if handler is not None and handlers[back.target] == handler:
            handlers[i] = handlers[i + 1] = handler


def _is_generator_wrapper(out: list[Instr], target: int) -> bool:
    return (target + 1 < len(out) and out[target].op == "STOPITERATION_ERROR"
            and out[target + 1].op == "RERAISE")


def _inlined_builtin_call(raw: list[Raw], k: int) -> bool:
    """Is ``raw[k - 1]`` (a ``COPY 1``) the start of 3.14's in-line fast path for
    ``any``/``all``/``tuple`` over a generator expression?"""
    if k + 2 >= len(raw):
        return False
    const, is_op, jump = raw[k], raw[k + 1], raw[k + 2]
    return const.opname == "LOAD_COMMON_CONSTANT" \
        and _COMMON_CONSTANTS[cast(int, const.arg)] in ("any", "all", "tuple") \
        and is_op.opname == "IS_OP" and is_op.arg == 0 \
        and jump.opname == "POP_JUMP_IF_FALSE" and jump.argval > jump.offset


def _opens_try(raw: list[Raw], k: int) -> bool:
    """Do the dropped instructions from ``raw[k]`` on reach a ``SETUP_FINALLY`` (3.10)?"""
    while k < len(raw) and raw[k].opname in _DROPPED:
        if raw[k].opname == "SETUP_FINALLY":
            return True
        k += 1
    return False
