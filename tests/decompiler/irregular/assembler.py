"""A small bytecode assembler for the running interpreter (CPython 3.10 to 3.14).

It builds code objects that no compiler produces (values kept on the stack across
jumps, lists shared by ``COPY`` and mutated later, dead blocks, irreducible loops,
arbitrary objects in ``co_consts``...), so the decompiler can be tested on the kind
of bytecode TorchDynamo writes::

    code = asm(
        [
            ("LOAD_FAST", "x"),
            ("POP_JUMP_IF_FALSE", "no"),
            ("LOAD_CONST", 1),
            ("RETURN_VALUE",),
            "no",
            ("LOAD_CONST", 2),
            ("RETURN_VALUE",),
        ],
        argnames=("x",),
    )

An instruction is a tuple ``(OPNAME, *operands)``; a plain string is a label that
names the position of the next instruction. Operands are symbolic:

* ``LOAD_CONST value``: the value itself (any object; constants are kept by identity,
  ``co_consts[0]`` is always ``None`` so no string becomes a docstring);
* ``LOAD_FAST``/``STORE_FAST``/``DELETE_FAST name``: a local name (locals that are not
  parameters are created as needed; on 3.12+ ``LOAD_FAST`` of a non-parameter becomes
  ``LOAD_FAST_CHECK``, as a compiler does for possibly unbound locals);
* ``LOAD_DEREF``/``STORE_DEREF``/``LOAD_CLOSURE name``: a cell or free variable (given
  to :func:`asm` as ``cellvars``/``freevars``; ``MAKE_CELL``/``COPY_FREE_VARS`` come with
  the prologue on 3.11+, ``LOAD_CLOSURE`` is ``LOAD_FAST`` on 3.13+);
* ``LOAD_GLOBAL name [push_null]``, ``LOAD_ATTR``/``STORE_ATTR``/``LOAD_NAME``... ``name``:
  a name (the flag bits of 3.11+ are encoded here);
* jumps: a label. The direction-neutral names ``JUMP``, ``POP_JUMP_IF_FALSE``,
  ``POP_JUMP_IF_TRUE``, ``POP_JUMP_IF_NONE`` and ``POP_JUMP_IF_NOT_NONE`` become the
  right forward/backward/absolute opcode of each version (a backward conditional jump on
  3.12+, where none exists, becomes the inverted forward jump over a ``JUMP_BACKWARD``;
  3.13+ gets the ``TO_BOOL`` its conditional jumps need);
* anything else: an ``int`` (default 0).

Macros, expanded per version (see :data:`MACROS`):

* ``("BINARY_OP", "+")``, ``("COMPARE_OP", "<")`` (also ``in``, ``not in``, ``is``,
  ``is not``), ``("SUBSCR",)`` (``a[b]``), ``("SLICE",)`` (``a[b:c]``, three operands):
  the instructions the running compiler emits for that operator;
* ``("CALL", n)``: call with ``n`` positional arguments; the callable slot must have
  been prepared with ``("LOAD_GLOBAL", name, True)`` or ``("NULL_PREFIX",)`` before and
  ``("NULL_SUFFIX",)`` after the code computing the callable (3.11/3.12 want the
  ``NULL`` below the callable, 3.13+ above it, 3.10 none);
* ``("CALL_EX", with_kwargs)``: ``CALL_FUNCTION_EX`` (same callable slot as ``CALL``);
* ``("LOAD_METHOD", name)`` and ``("CALL_METHOD", n)``: a method call;
* ``("COPY", n)`` and ``("SWAP", n)`` (on 3.10: ``DUP_TOP``/``DUP_TOP_TWO``/``ROT_N``;
  ``COPY`` deeper than 2 does not exist there);
* ``("FOR_ITER", label)`` and ``("END_FOR",)``: put the label right before ``END_FOR``;
  it becomes nothing (3.10, 3.11), ``END_FOR`` (3.12), ``END_FOR; POP_TOP`` (3.13) or
  ``END_FOR; POP_ITER`` (3.14); after it the iterator is gone;
* ``("LIST_TO_TUPLE",)``; ``("YIELD",)`` (a ``yield`` of the top of the stack, which the
  sent value replaces; the code must be made with ``generator=True``).

Exception handlers (3.11+) are given as ``handlers=[(start, end, target, depth, lasti)]``
with labels (``end`` exclusive). ``co_stacksize`` is computed (and the stack depth checked
to agree wherever paths meet); jump targets and the exception table are checked against
:mod:`dis` after assembling.
"""

from __future__ import annotations

import dis
import opcode
import sys
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

PY = sys.version_info[:2]

__all__ = ["PY", "AssemblyError", "asm", "instructions_of"]


class AssemblyError(Exception):
    """The instructions cannot be assembled for this interpreter."""


# --------------------------------------------------------------------------------------
# What the running interpreter wants.
# --------------------------------------------------------------------------------------

_OPMAP = dis.opmap
_CACHE_OP = _OPMAP.get("CACHE", 0)


def cache_entries(opname: str) -> int:
    """Inline cache entries (code units) after ``opname`` on this interpreter."""
    table = getattr(opcode, "_inline_cache_entries", None)
    if table is None:  # 3.10: no inline caches
        return 0
    if isinstance(table, dict):  # 3.13+: by name
        return int(table.get(opname, 0))
    return int(table[_OPMAP[opname]])  # 3.11, 3.12: by opcode number


if hasattr(dis, "hasjump"):  # 3.13+
    _JUMP_OPS = {dis.opname[o] for o in dis.hasjump}
else:
    _JUMP_OPS = {dis.opname[o] for o in (*dis.hasjrel, *dis.hasjabs)}
_ABSOLUTE_OPS = {dis.opname[o] for o in dis.hasjabs} if PY < (3, 11) else set()
_BACKWARD_OPS = {name for name in _JUMP_OPS if "BACKWARD" in name}
_NO_FALLTHROUGH = {
    "RETURN_VALUE",
    "RETURN_CONST",
    "RAISE_VARARGS",
    "RERAISE",
    "JUMP_FORWARD",
    "JUMP_BACKWARD",
    "JUMP_ABSOLUTE",
    "JUMP_BACKWARD_NO_INTERRUPT",
}
_CONDITIONAL = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
_INVERSE = {
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE",
}
_LOCAL_OPS = {"LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR"}
_NAME_OPS = {dis.opname[o] for o in dis.hasname}
# Not dis.hasfree: 3.14 lists LOAD_DEREF and LOAD_CLOSURE under haslocal.
_DEREF_OPS = {
    "LOAD_DEREF",
    "STORE_DEREF",
    "DELETE_DEREF",
    "LOAD_CLOSURE",
    "MAKE_CELL",
    "LOAD_CLASSDEREF",
    "LOAD_FROM_DICT_OR_DEREF",
} & set(_OPMAP)


def instructions_of(code: types.CodeType) -> list[tuple[str, int | None]]:
    """``(opname, arg)`` of every instruction (no caches, no ``EXTENDED_ARG``)."""
    return [(i.opname, i.arg) for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]


def _snippet(source: str) -> list[tuple[str, int | None]]:
    """What the compiler emits for ``source`` (an expression of ``a``, ``b``, ``c``)
    besides loading the operands and returning."""
    scope: dict[str, Any] = {}
    exec(compile(f"def _s(a, b, c):\n    return {source}\n", "<snippet>", "exec"), scope)
    skip = ("RESUME", "RETURN_VALUE", "NOT_TAKEN", "CACHE")
    return [
        (op, arg)
        for op, arg in instructions_of(scope["_s"].__code__)
        if op not in skip and not op.startswith("LOAD_FAST")
    ]


_SNIPPETS: dict[str, list[tuple[str, int | None]]] = {}


def _operator(source: str) -> list[tuple[str, int | None]]:
    if source not in _SNIPPETS:
        _SNIPPETS[source] = _snippet(source)
    return _SNIPPETS[source]


_BINARY = ("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@")
_COMPARE = ("<", "<=", "==", "!=", ">", ">=", "in", "not in", "is", "is not")


def _yield_sequence() -> list[tuple[str, int | None]]:
    """``YIELD_VALUE`` and the ``RESUME`` after it, as the compiler writes them."""
    scope: dict[str, Any] = {}
    exec(compile("def _g(a):\n    yield a\n", "<snippet>", "exec"), scope)
    ops = instructions_of(scope["_g"].__code__)
    i = next(k for k, (op, _) in enumerate(ops) if op == "YIELD_VALUE")
    seq = [ops[i]]
    if i + 1 < len(ops) and ops[i + 1][0] == "RESUME":
        seq.append(ops[i + 1])
    return seq


# --------------------------------------------------------------------------------------
# Macro expansion.
# --------------------------------------------------------------------------------------


@dataclass
class _Ins:
    op: str
    arg: Any = None  # symbolic until resolved
    target: str | None = None  # label of a jump
    extra: Any = None  # LOAD_GLOBAL/LOAD_ATTR flag bit
    # filled in by the layout:
    num: int = 0  # resolved argument
    start: int = 0  # offset of the first byte (EXTENDED_ARG prefixes included)
    end: int = 0  # offset after the inline caches


def _expand(item: tuple[Any, ...]) -> list[_Ins | str]:
    """Version-specific instructions for one symbolic instruction or macro."""
    op, *operands = item
    arg = operands[0] if operands else None
    if op == "JUMP":
        return [_Ins("JUMP", target=arg)]
    if op in _CONDITIONAL:
        if op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE") and PY < (3, 11):
            is_op = 0 if op == "POP_JUMP_IF_NONE" else 1
            return [_Ins("LOAD_CONST", None), _Ins("IS_OP", is_op), _Ins("COND_TRUE", target=arg)]
        out: list[_Ins | str] = []
        if PY >= (3, 13) and op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"):
            out.append(_Ins("TO_BOOL"))
        out.append(_Ins("COND:" + op, target=arg))
        return out
    if op == "BINARY_OP" and isinstance(arg, str):
        if arg not in _BINARY:
            raise AssemblyError(f"unknown binary operator {arg!r}")
        return [_Ins(o, a) for o, a in _operator(f"a {arg} b")]
    if op == "COMPARE_OP" and isinstance(arg, str):
        if arg not in _COMPARE:
            raise AssemblyError(f"unknown comparison {arg!r}")
        return [_Ins(o, a) for o, a in _operator(f"a {arg} b")]
    if op == "SUBSCR":
        return [_Ins(o, a) for o, a in _operator("a[b]")]
    if op == "SLICE":
        return [_Ins(o, a) for o, a in _operator("a[b:c]")]
    if op == "NULL_PREFIX":
        return [_Ins("PUSH_NULL")] if (3, 11) <= PY < (3, 13) else []
    if op == "NULL_SUFFIX":
        return [_Ins("PUSH_NULL")] if PY >= (3, 13) else []
    if op == "LOAD_GLOBAL":
        null = bool(operands[1]) if len(operands) > 1 else False
        if null and PY < (3, 11):
            return [_Ins("LOAD_GLOBAL", arg)]  # 3.10 calls need no NULL
        return [_Ins("LOAD_GLOBAL", arg, extra=null)]
    if op == "CALL":
        if PY < (3, 11):
            return [_Ins("CALL_FUNCTION", arg)]
        if PY < (3, 12):
            return [_Ins("PRECALL", arg), _Ins("CALL", arg)]
        return [_Ins("CALL", arg)]
    if op == "CALL_EX":
        kwargs = bool(arg)
        if PY >= (3, 14):
            return ([] if kwargs else [_Ins("PUSH_NULL")]) + [_Ins("CALL_FUNCTION_EX", 0)]
        return [_Ins("CALL_FUNCTION_EX", int(kwargs))]
    if op == "LOAD_METHOD":
        if PY < (3, 12):
            return [_Ins("LOAD_METHOD", arg)]
        return [_Ins("LOAD_ATTR", arg, extra=True)]
    if op == "CALL_METHOD":
        if PY < (3, 11):
            return [_Ins("CALL_METHOD", arg)]
        return _expand(("CALL", arg))
    if op == "COPY" and PY < (3, 11):
        if arg == 1:
            return [_Ins("DUP_TOP")]
        if arg == 2:
            return [_Ins("DUP_TOP_TWO"), _Ins("POP_TOP")]
        raise AssemblyError(f"COPY {arg} has no 3.10 equivalent")
    if op == "SWAP" and PY < (3, 11):
        if arg < 2:
            raise AssemblyError(f"SWAP {arg}")
        return [_rot(arg)] + [_rot(arg - 1) for _ in range(arg - 2)]
    if op == "FOR_ITER":
        return [_Ins("FOR_ITER", target=arg)]
    if op == "END_FOR":
        if PY < (3, 12):
            return []
        if PY < (3, 13):
            return [_Ins("END_FOR")]
        return [_Ins("END_FOR"), _Ins("POP_ITER" if PY >= (3, 14) else "POP_TOP")]
    if op == "LIST_TO_TUPLE":
        if PY < (3, 12):
            return [_Ins("LIST_TO_TUPLE")]
        return [_Ins("CALL_INTRINSIC_1", dis._intrinsic_1_descs.index("INTRINSIC_LIST_TO_TUPLE"))]
    if op == "YIELD":
        return [_Ins(o, a) for o, a in _yield_sequence()]
    if op not in _OPMAP:
        raise AssemblyError(f"no opcode {op} in Python {PY[0]}.{PY[1]}")
    if op in _JUMP_OPS:
        return [_Ins(op, target=arg)]
    return [_Ins(op, arg, extra=operands[1] if len(operands) > 1 else None)]


def _rot(n: int) -> _Ins:
    """3.10: move the top of the stack ``n - 1`` places down."""
    if n == 2:
        return _Ins("ROT_TWO")
    if n == 3:
        return _Ins("ROT_THREE")
    if n == 4:
        return _Ins("ROT_FOUR")
    return _Ins("ROT_N", n)


def _choose_jumps(items: list[_Ins | str]) -> list[_Ins | str]:
    """Pick the real opcode of every direction-neutral jump."""
    where = {item: k for k, item in enumerate(items) if isinstance(item, str)}
    out: list[_Ins | str] = []
    fresh = 0
    for k, item in enumerate(items):
        if isinstance(item, str) or item.target is None:
            out.append(item)
            continue
        if item.target not in where:
            raise AssemblyError(f"undefined label {item.target!r}")
        backward = where[item.target] <= k
        op = item.op
        if op == "COND_TRUE":
            op = "COND:POP_JUMP_IF_TRUE"
        if op == "JUMP":
            if PY < (3, 11):
                item.op = "JUMP_ABSOLUTE" if backward else "JUMP_FORWARD"
            else:
                item.op = "JUMP_BACKWARD" if backward else "JUMP_FORWARD"
            out.append(item)
        elif op.startswith("COND:"):
            cond = op[5:]
            if PY < (3, 11):
                item.op = cond
                out.append(item)
            elif PY < (3, 12):
                item.op = cond.replace("POP_JUMP_IF", "POP_JUMP_BACKWARD_IF" if backward else "POP_JUMP_FORWARD_IF")
                out.append(item)
            elif not backward:
                item.op = cond
                out.append(item)
            else:  # 3.12+: no backward conditional jumps
                fresh += 1
                over = f"\x00over{fresh}"
                out += [_Ins(_INVERSE[cond], target=over), _Ins("JUMP_BACKWARD", target=item.target), over]
        else:
            if PY >= (3, 11) and op in _BACKWARD_OPS and not backward:
                raise AssemblyError(f"{op} to a later label {item.target!r}")
            if PY >= (3, 11) and op not in _BACKWARD_OPS and backward:
                raise AssemblyError(f"{op} to an earlier label {item.target!r}")
            out.append(item)
    return out


# --------------------------------------------------------------------------------------
# The skeleton: a compiled function with the right parameters, locals and flags.
# --------------------------------------------------------------------------------------


def _skeleton(
    name: str,
    argnames: Sequence[str],
    kwonly: Sequence[str],
    varargs: str | None,
    varkw: str | None,
    local_names: Iterable[str],
    generator: bool,
    cellvars: Sequence[str] = (),
    freevars: Sequence[str] = (),
) -> types.CodeType:
    """A compiled function with these parameters, locals, cells, free variables and
    flags (its body is thrown away)."""
    params = list(argnames)
    if varargs:
        params.append("*" + varargs)
    elif kwonly:
        params.append("*")
    params += kwonly
    if varkw:
        params.append("**" + varkw)
    body = [f"{n} = None" for n in local_names]
    if cellvars:
        body.append(f"lambda: ({', '.join(cellvars)},)")
    if freevars:
        body.append(f"({', '.join(freevars)},)")
    if generator:
        body.append("yield")
    lines = [f"def {name}({', '.join(params)}):"] + ["    " + b for b in body or ["pass"]]
    if freevars:
        lines = (
            ["def __asm_outer():"]
            + [f"    {n} = None" for n in freevars]
            + ["    " + line for line in lines]
        )
    module = compile("\n".join(lines) + "\n", "<asm>", "exec", dont_inherit=True)
    code = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    if freevars:
        code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    if set(code.co_cellvars) != set(cellvars) or set(code.co_freevars) != set(freevars):
        raise AssemblyError(f"cells {code.co_cellvars} and free variables {code.co_freevars}")
    return code


def _deref_names(code: types.CodeType) -> list[str]:
    """Names in the order of the arguments of LOAD_DEREF and friends."""
    if PY < (3, 11):
        return [*code.co_cellvars, *code.co_freevars]
    out = []
    while True:
        try:
            out.append(code._varname_from_oparg(len(out)))  # type: ignore[attr-defined]
        except IndexError:
            return out


def _prologue(skeleton: types.CodeType) -> list[_Ins]:
    """The skeleton's instructions up to its first ``RESUME`` (3.11+)."""
    if PY < (3, 11):
        return []
    out = []
    for op, arg in instructions_of(skeleton):
        out.append(_Ins(op, arg))
        if op == "RESUME":
            return out
    raise AssemblyError("no RESUME in the skeleton")


# --------------------------------------------------------------------------------------
# Assembling.
# --------------------------------------------------------------------------------------


def asm(
    instructions: Sequence[tuple[Any, ...] | str],
    *,
    name: str = "f",
    argnames: Sequence[str] = (),
    kwonly: Sequence[str] = (),
    varargs: str | None = None,
    varkw: str | None = None,
    consts: Sequence[Any] = (),
    handlers: Sequence[tuple[str, str, str, int, bool]] = (),
    generator: bool = False,
    cellvars: Sequence[str] = (),
    freevars: Sequence[str] = (),
    filename: str = "<asm>",
    firstlineno: int = 1,
) -> types.CodeType:
    """Assemble ``instructions`` (see the module docstring) into a function code object.

    ``cellvars`` (parameters or locals) and ``freevars`` name the cells, used with
    ``LOAD_DEREF``, ``STORE_DEREF``, ``LOAD_CLOSURE``... by name; the function object
    needs a closure of ``len(freevars)`` cells.
    """
    if handlers and PY < (3, 11):
        raise AssemblyError("exception tables exist from 3.11 on")
    params = [*argnames, *kwonly] + [n for n in (varargs, varkw) if n]
    local_names: list[str] = []
    for item in instructions:
        if isinstance(item, tuple) and item[0] in _LOCAL_OPS and item[1] not in params:
            if item[1] not in local_names:
                local_names.append(item[1])
    local_names += [n for n in cellvars if n not in params and n not in local_names]
    skeleton = _skeleton(
        name, argnames, kwonly, varargs, varkw, local_names, generator, cellvars, freevars
    )
    varnames = list(skeleton.co_varnames)
    deref_names = _deref_names(skeleton)

    prologue = _prologue(skeleton)
    items: list[_Ins | str] = list(prologue)
    for item in instructions:
        if isinstance(item, str):
            if item in items:
                raise AssemblyError(f"label {item!r} defined twice")
            items.append(item)
        else:
            items += _expand(item)
    items = _choose_jumps(items)

    const_list: list[Any] = [None, *consts]
    names: list[str] = []

    def const_index(value: Any) -> int:
        for k, c in enumerate(const_list):
            if c is value:
                return k
        const_list.append(value)
        return len(const_list) - 1

    def name_index(n: str) -> int:
        if n not in names:
            names.append(n)
        return names.index(n)

    code_items: list[_Ins] = []
    labels: dict[str, int] = {}  # label -> index into code_items
    for item in items:
        if isinstance(item, str):
            labels[item] = len(code_items)
            continue
        op = item.op
        if op == "LOAD_CONST":
            item.num = const_index(item.arg)
        elif op in _LOCAL_OPS:
            if item.arg not in varnames:
                raise AssemblyError(f"unknown local {item.arg!r}")
            item.num = varnames.index(item.arg)
            if op == "LOAD_FAST" and PY >= (3, 12) and item.arg not in params:
                item.op = "LOAD_FAST_CHECK"
        elif op in _DEREF_OPS and isinstance(item.arg, str):
            if item.arg not in deref_names:
                raise AssemblyError(f"no cell or free variable {item.arg!r}")
            item.num = deref_names.index(item.arg)
            if _OPMAP[op] > 255:  # 3.13+: LOAD_CLOSURE is a pseudo instruction
                item.op = "LOAD_FAST"
        elif op in _NAME_OPS and isinstance(item.arg, str):
            index = name_index(item.arg)
            if op == "LOAD_GLOBAL" and PY >= (3, 11):
                index = index << 1 | bool(item.extra)
            elif op == "LOAD_ATTR" and PY >= (3, 12):
                index = index << 1 | bool(item.extra)
            item.num = index
        elif item.target is None:
            item.num = 0 if item.arg is None else int(item.arg)
        if op not in _OPMAP and item.op not in _OPMAP:
            raise AssemblyError(f"no opcode {op} in Python {PY[0]}.{PY[1]}")
        code_items.append(item)

    _layout(code_items, labels)
    label_offset = {lab: _offset_of(code_items, k) for lab, k in labels.items()}
    code_bytes = _encode(code_items)
    table = _exception_table(handlers, label_offset)
    # The prologue (RETURN_GENERATOR, POP_TOP, RESUME) is outside the compiler's stack
    # accounting too: the analysis starts at its RESUME.
    start = max(len(prologue) - 1, 0)
    stacksize = _stack_size(code_items, labels, handlers, label_offset, start)

    flags = skeleton.co_flags
    replace: dict[str, Any] = {
        "co_code": code_bytes,
        "co_consts": tuple(const_list),
        "co_names": tuple(names),
        "co_stacksize": stacksize,
        "co_flags": flags,
        "co_firstlineno": firstlineno,
        "co_filename": filename,
        "co_linetable": _linetable(len(code_bytes)),
    }
    if PY >= (3, 11):
        replace["co_exceptiontable"] = table
    code = skeleton.replace(**replace)
    _verify(code, code_items, label_offset, handlers)
    return code


def _offset_of(code_items: list[_Ins], k: int) -> int:
    return code_items[k].start if k < len(code_items) else (code_items[-1].end if code_items else 0)


def _ext_count(num: int) -> int:
    if num < 0:
        raise AssemblyError(f"negative argument {num}")
    return 0 if num <= 0xFF else 1 if num <= 0xFFFF else 2 if num <= 0xFFFFFF else 3


def _layout(code_items: list[_Ins], labels: dict[str, int]) -> None:
    """Offsets and jump arguments, growing ``EXTENDED_ARG`` prefixes until stable."""
    ext = [0] * len(code_items)
    for _ in range(20):
        pos = 0
        for k, ins in enumerate(code_items):
            ins.start = pos
            op_off = pos + 2 * ext[k]
            ins.end = op_off + 2 + 2 * cache_entries(ins.op)
            pos = ins.end
        for ins in code_items:
            if ins.target is None:
                continue
            target = _offset_of(code_items, labels[ins.target])
            if ins.op in _ABSOLUTE_OPS:
                ins.num = target // 2
            elif ins.op in _BACKWARD_OPS:
                ins.num = (ins.end - target) // 2
            else:
                ins.num = (target - ins.end) // 2
            if ins.num < 0:
                raise AssemblyError(f"{ins.op} cannot reach {ins.target!r}")
        new = [_ext_count(ins.num) for ins in code_items]
        if new == ext:
            return
        ext = [max(a, b) for a, b in zip(ext, new, strict=True)]
    raise AssemblyError("layout did not settle")


def _encode(code_items: list[_Ins]) -> bytes:
    out = bytearray()
    ext_op = _OPMAP["EXTENDED_ARG"]
    for ins in code_items:
        n_ext = (ins.end - ins.start - 2 - 2 * cache_entries(ins.op)) // 2
        for k in range(n_ext, 0, -1):
            out += bytes((ext_op, (ins.num >> (8 * k)) & 0xFF))
        out += bytes((_OPMAP[ins.op], ins.num & 0xFF))
        out += bytes((_CACHE_OP, 0)) * cache_entries(ins.op)
        assert len(out) == ins.end
    return bytes(out)


def _varint(value: int) -> list[int]:
    """The exception table's variable-length integer: 6-bit chunks, most significant first."""
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    return [c | 64 for c in chunks[:-1]] + [chunks[-1]]


def _exception_table(
    handlers: Sequence[tuple[str, str, str, int, bool]], label_offset: dict[str, int]
) -> bytes:
    entries = []
    for start, end, target, depth, lasti in handlers:
        s, e, t = (label_offset[x] // 2 for x in (start, end, target))
        if e <= s:
            raise AssemblyError(f"empty handler range {start!r}..{end!r}")
        entries.append((s, e, t, depth, bool(lasti)))
    entries.sort()
    for a, b in zip(entries, entries[1:], strict=False):
        if b[0] < a[1]:
            raise AssemblyError("exception ranges overlap")
    out = []
    for s, e, t, depth, lasti in entries:
        first = _varint(s)
        first[0] |= 128
        out += first + _varint(e - s) + _varint(t) + _varint(depth << 1 | lasti)
    return bytes(out)


def _linetable(size: int) -> bytes:
    """Every instruction on the first line."""
    units = size // 2
    out = bytearray()
    if PY < (3, 11):
        while size > 0:  # (byte delta, line delta) pairs
            step = min(254, size)
            out += bytes((step, 0))
            size -= step
        return bytes(out)
    while units > 0:  # "no column" entries (code 13) of up to 8 units, line delta 0
        step = min(8, units)
        out += bytes((0x80 | (13 << 3) | (step - 1), 0))
        units -= step
    return bytes(out)


def _stack_effect(ins: _Ins, jump: bool) -> int:
    code = _OPMAP[ins.op]
    if code < dis.HAVE_ARGUMENT:
        return dis.stack_effect(code, None, jump=jump)
    return dis.stack_effect(code, ins.num, jump=jump)


def _stack_size(
    code_items: list[_Ins],
    labels: dict[str, int],
    handlers: Sequence[tuple[str, str, str, int, bool]],
    label_offset: dict[str, int],
    start: int = 0,
) -> int:
    """The largest stack depth on any path; the depth must agree where paths meet."""
    if not code_items:
        raise AssemblyError("no instructions")
    ranges = [
        (label_offset[s], label_offset[e], labels[t], depth, lasti)
        for s, e, t, depth, lasti in handlers
    ]
    depth_at: dict[int, int] = {}
    depth_at[start] = 0
    pending = [(start, 0)]
    highest = 0

    def reach(k: int, depth: int, why: str) -> None:
        if depth < 0:
            raise AssemblyError(f"stack underflow before instruction {k} ({why})")
        if k >= len(code_items):
            raise AssemblyError(f"control runs off the end ({why})")
        known = depth_at.get(k)
        if known is None:
            depth_at[k] = depth
            pending.append((k, depth))
        elif known != depth:
            raise AssemblyError(
                f"stack depth {depth} vs {known} at instruction {k} {code_items[k].op} ({why})"
            )

    while pending:
        k, depth = pending.pop()
        ins = code_items[k]
        highest = max(highest, depth)
        for start, end, target, hdepth, lasti in ranges:
            if start <= ins.start < end:
                if depth < hdepth:
                    raise AssemblyError(f"handler depth {hdepth} above the stack at {k}")
                reach(target, hdepth + int(lasti) + 1, f"handler of {ins.op} at {k}")
                highest = max(highest, hdepth + int(lasti) + 1)
        if ins.target is not None:
            after = depth + _stack_effect(ins, True)
            highest = max(highest, after)
            reach(labels[ins.target], after, f"{ins.op} at {k}")
        if ins.op not in _NO_FALLTHROUGH:
            after = depth + _stack_effect(ins, False)
            highest = max(highest, after)
            reach(k + 1, after, f"after {ins.op} at {k}")
    return highest


def _verify(
    code: types.CodeType,
    code_items: list[_Ins],
    label_offset: dict[str, int],
    handlers: Sequence[tuple[str, str, str, int, bool]],
) -> None:
    """Check with :mod:`dis` that every jump lands where it was meant to."""
    found = [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    if [i.opname for i in found] != [ins.op for ins in code_items]:
        raise AssemblyError("dis reads different instructions")
    for got, ins in zip(found, code_items, strict=True):
        if ins.target is None:
            continue
        jump_target = getattr(got, "jump_target", None)
        target = jump_target if jump_target is not None else got.argval
        want = label_offset[ins.target]
        if target != want:
            raise AssemblyError(f"{ins.op} at {got.offset} lands on {target}, not {want}")
    if handlers and hasattr(dis, "_parse_exception_table"):
        parsed = dis._parse_exception_table(code)
        want_entries = sorted(
            (label_offset[s], label_offset[e], label_offset[t], d, bool(lasti))
            for s, e, t, d, lasti in handlers
        )
        got_entries = sorted((e.start, e.end, e.target, e.depth, e.lasti) for e in parsed)
        if got_entries != want_entries:
            raise AssemblyError(f"exception table reads {got_entries}, wanted {want_entries}")

