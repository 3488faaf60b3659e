"""Trust tool: decompile and recompile every code object, then compare the bytecode.

The comparison oracle (:func:`normalize`, :func:`compare`) is deliberately independent
of the decompiler: it only uses :func:`dis.get_instructions` and the code object's own
attributes, so a bug in ``unveil.bytecode`` cannot hide itself.

What :func:`normalize` ignores, and why (keep this list minimal):

* line numbers, positions, ``co_firstlineno``, ``co_linetable``: source layout only;
* ``CACHE``, ``EXTENDED_ARG``, ``NOP``, ``RESUME`` and 3.14's ``NOT_TAKEN``: inline
  caches, argument width, line-number placeholders, the function-entry marker and a
  branch-monitoring marker carry no program logic (whether an exception-table range
  covers a ``NOT_TAKEN`` even depends on the lines);
* table *indices* in arguments: constants are compared by value (floats by ``repr``,
  nested code by name and normalized form), names and local, cell and free variables by
  name, jump targets by the index of the target in the normalized stream (a target on a
  dropped instruction maps to the next kept one);
* the ``CO_NESTED`` flag: purely informational, and it is set when a function is
  recompiled inside a wrapper that provides its free variables (and 3.14's
  ``CO_HAS_DOCSTRING``, as the docstring itself is compared);
* exception-table entries are rewritten to instruction indices; entries that become
  empty once the dropped instructions are gone are removed, and adjacent entries with
  the same handler, depth and lasti are merged (dropping a NOP may join two ranges).

Extra rewrites, each needed because CPython's code generation depends on *line
numbers* (found by compiling the standard library's source and its ``ast.unparse``
round trip, which must compare equal):

* a jump to an unconditional jump is followed to the final target (the compiler only
  threads jumps between instructions on the same line);
* "conditional jump over an unconditional jump to L" becomes "inverted conditional jump
  to L" (3.12 has no backward conditional jump and emits the first form when the test
  and the loop are on one line, the second otherwise);
* 3.11's ``POP_JUMP_FORWARD_IF_X`` / ``POP_JUMP_BACKWARD_IF_X`` become ``POP_JUMP_IF_X``
  (the direction follows from the target);
* 3.13+ super-instructions (``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ...) are
  split in two: they are only formed from instructions on the same line;
* 3.14's ``LOAD_FAST_BORROW`` (a reference-counting optimization decided on the
  control-flow graph, whose blocks depend on lines) counts as ``LOAD_FAST``;
* 3.13+ class bodies store their first line number in ``__firstlineno__``; that constant
  is replaced by a placeholder.

Known residue: on 3.10/3.11 ``JUMP_IF_FALSE_OR_POP`` to a conditional jump is sometimes
rewritten to ``POP_JUMP_IF_FALSE`` past it, again depending on lines (3 code objects
in the 3.10/3.11 standard library); that is reported as a difference.

Everything else counts: opcodes, argument values, the low flag bits packed next to a
name index (``LOAD_GLOBAL``'s push-NULL bit, ``LOAD_ATTR``'s method bit, ...), the code
object's name, argument counts and names, flags, cell and free variables and docstring.
"""

from __future__ import annotations

import dataclasses
import difflib
import dis
import importlib.util
import json
import marshal
import os
import sys
import time
import warnings
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, TextIO

from .codeobj import CodeEntry, CodeFlag, code_kind, iter_code_objects
from .decompiler import api
from .errors import BadInputError, DecompilationError

__all__ = [
    "CheckReport",
    "CodeEntry",
    "Difference",
    "FileReport",
    "FunctionResult",
    "check_code",
    "check_targets",
    "code_kind",
    "compare",
    "iter_code_objects",
    "normalize",
    "resolve_targets",
]

# --------------------------------------------------------------------------- oracle

SKIPPED_OPNAMES = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "RESUME", "NOT_TAKEN"})
# CodeFlag.NESTED is informational; CodeFlag.HAS_DOCSTRING is covered by the docstring field.
IGNORED_FLAGS = CodeFlag.NESTED | (CodeFlag.HAS_DOCSTRING if sys.version_info >= (3, 14) else 0)

HEADER_TAG = "<code>"
EXCEPTION_TAG = "<exception>"
HEADER_FIELDS = (
    "name", "argcount", "posonlyargcount", "kwonlyargcount", "parameter names", "flags",
    "cellvars", "freevars", "docstring",
)

_JUMP_OPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
_CONST_OPS = frozenset(dis.hasconst)
_NAME_OPS = frozenset(dis.hasname)
_VAR_OPS = frozenset(dis.haslocal) | frozenset(dis.hasfree)

# 3.13+ combines two adjacent local-variable ops into one only when they are on the same
# line, so they are split back (3.14 adds the borrowed variant).
_SUPERINSTRUCTIONS = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("LOAD_FAST", "LOAD_FAST"),
}
# Jumps whose target is followed when it is another unconditional jump (the compiler
# threads jumps only between instructions of the same line).
_UNCONDITIONAL_JUMPS = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
    "JUMP_NO_INTERRUPT",
})
# 3.11 has forward and backward conditional jumps; the target index says which.
_OPNAME_ALIASES = {
    f"POP_JUMP_{way}_IF_{cond}": f"POP_JUMP_IF_{cond}"
    for way in ("FORWARD", "BACKWARD") for cond in ("TRUE", "FALSE", "NONE", "NOT_NONE")
}
# 3.14 turns LOAD_FAST into LOAD_FAST_BORROW (no reference count) where an analysis of
# the control-flow graph allows, and that graph depends on the lines too.
_OPNAME_ALIASES["LOAD_FAST_BORROW"] = "LOAD_FAST"
_INVERTED = {
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE",
}

# Opcodes whose argument packs flag bits below the co_names index: opname -> bit count.
_NAME_FLAG_BITS: dict[str, int] = {}
if sys.version_info >= (3, 11):
    _NAME_FLAG_BITS["LOAD_GLOBAL"] = 1
if sys.version_info >= (3, 12):
    _NAME_FLAG_BITS.update(LOAD_ATTR=1, LOAD_SUPER_ATTR=2)


def _norm_const(value: object, nested: bool) -> tuple:
    """A hashable, type-exact stand-in for a constant."""
    if isinstance(value, CodeType):
        if nested:
            return ("code", value.co_name, tuple(normalize(value)))
        return ("code", value.co_name)
    if isinstance(value, (float, complex)):
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_norm_const(v, nested) for v in value))
    if isinstance(value, frozenset):
        items = sorted((_norm_const(v, nested) for v in value), key=repr)
        return ("frozenset", tuple(items))
    if isinstance(value, slice):
        parts = (value.start, value.stop, value.step)
        return ("slice", tuple(_norm_const(v, nested) for v in parts))
    return (type(value).__name__, value)


def _docstring(code: CodeType) -> str | None:
    """The function docstring stored in ``co_consts`` (not visible in instructions)."""
    if sys.version_info >= (3, 14):
        has = code.co_flags & CodeFlag.HAS_DOCSTRING
        return code.co_consts[0] if has else None
    if not code.co_flags & CodeFlag.OPTIMIZED or code.co_name.startswith("<"):
        return None  # modules and classes store __doc__ explicitly; lambdas have none
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def _header(code: CodeType) -> tuple:
    nparams = code.co_argcount + code.co_kwonlyargcount
    nparams += bool(code.co_flags & CodeFlag.VARARGS) + bool(code.co_flags & CodeFlag.VARKEYWORDS)
    return (
        HEADER_TAG, code.co_name, code.co_argcount, code.co_posonlyargcount,
        code.co_kwonlyargcount, code.co_varnames[:nparams], code.co_flags & ~IGNORED_FLAGS,
        code.co_cellvars, code.co_freevars, _docstring(code),
    )


def _parse_exception_table(code: CodeType) -> list[tuple[int, int, int, int, int]]:
    """``(start, end, target, depth, lasti)`` in byte offsets, end exclusive (3.11+)."""
    data = getattr(code, "co_exceptiontable", b"")
    entries = []
    it = iter(data)

    def varint(byte: int) -> int:
        value = byte & 63
        while byte & 64:
            byte = next(it)
            value = (value << 6) | (byte & 63)
        return value

    for first in it:
        start = varint(first) * 2
        end = start + varint(next(it)) * 2
        target = varint(next(it)) * 2
        depth_lasti = varint(next(it))
        entries.append((start, end, target, depth_lasti >> 1, depth_lasti & 1))
    return entries


def _jump_target(ins: dis.Instruction) -> int:
    target = getattr(ins, "jump_target", None)
    return ins.argval if target is None else target


def normalize(code: CodeType, *, nested: bool = True) -> list[tuple]:
    """Return ``code`` as a list of comparable tuples.

    The first tuple is a header (name, argument layout, flags, cell/free variables,
    docstring), then one ``(opname, argument)`` tuple per kept instruction (name ops
    with flag bits give ``(opname, name, flags)``), then one
    ``("<exception>", start, end, target, depth, lasti)`` tuple per exception-table
    entry, all positions being indices into this instruction list. With
    ``nested=False`` a nested code object constant is represented by its name only
    (it is checked on its own).
    """
    instructions = list(dis.get_instructions(code))
    kept = [ins for ins in instructions if ins.opname not in SKIPPED_OPNAMES]
    kept_offsets = [ins.offset for ins in kept]

    def kept_index(offset: int) -> int:
        return bisect_left(kept_offsets, offset)

    # "jump if C over an unconditional jump to L" is "jump if not C to L" (3.12 can only
    # emit the first form for a conditional jump backwards on one line)
    fused: dict[int, str] = {}  # index of the conditional jump -> inverted opname
    for n in range(len(kept) - 1):
        cond = _OPNAME_ALIASES.get(kept[n].opname, kept[n].opname)
        if (cond in _INVERTED and kept[n + 1].opname in _UNCONDITIONAL_JUMPS
                and n not in fused and n - 1 not in fused
                and kept_index(_jump_target(kept[n])) == n + 2):
            fused[n] = _INVERTED[cond]
    # output position of each kept instruction (super-instructions expand to two)
    positions = []
    pos = 0
    for n, ins in enumerate(kept):
        positions.append(pos)
        if n - 1 not in fused:
            pos += 2 if ins.opname in _SUPERINSTRUCTIONS else 1
    positions.append(pos)

    def resolve(offset: int) -> int:
        k = kept_index(offset)
        seen = set()
        while k < len(kept) and kept[k].opname in _UNCONDITIONAL_JUMPS and k not in seen:
            seen.add(k)
            k = kept_index(_jump_target(kept[k]))
        return positions[k]

    firstlineno_store = sys.version_info >= (3, 13) and code_kind(code) == "class"
    out: list[tuple] = [_header(code)]
    for n, ins in enumerate(kept):
        opname = _OPNAME_ALIASES.get(ins.opname, ins.opname)
        if n in fused:
            out.append((fused[n], ("->", resolve(_jump_target(kept[n + 1])))))
            continue
        if n - 1 in fused:
            continue
        if ins.opname in _SUPERINSTRUCTIONS:
            first, second = _SUPERINSTRUCTIONS[ins.opname]
            out.append((first, ins.argval[0]))
            out.append((second, ins.argval[1]))
            continue
        if (firstlineno_store and n + 1 < len(kept) and kept[n + 1].opname == "STORE_NAME"
                and kept[n + 1].argval == "__firstlineno__"):
            out.append(("LOAD_CONST", ("firstlineno", None)))
            continue
        if ins.opcode in _JUMP_OPS:
            out.append((opname, ("->", resolve(_jump_target(ins)))))
        elif ins.opcode in _CONST_OPS:
            out.append((opname, _norm_const(ins.argval, nested)))
        elif ins.opcode in _NAME_OPS:
            bits = _NAME_FLAG_BITS.get(ins.opname, 0)
            if bits:
                out.append((opname, ins.argval, ins.arg & ((1 << bits) - 1)))
            else:
                out.append((opname, ins.argval))
        elif ins.opcode in _VAR_OPS:
            out.append((opname, ins.argval))
        else:
            out.append((opname, ins.arg))

    merged: list[list[int]] = []
    for start, end, target, depth, lasti in _parse_exception_table(code):
        s = positions[kept_index(start)]
        e = positions[kept_index(end)]
        t = positions[kept_index(target)]
        if s >= e:
            continue
        if merged and merged[-1][1] == s and merged[-1][2:] == [t, depth, lasti]:
            merged[-1][1] = e
        else:
            merged.append([s, e, t, depth, lasti])
    out.extend((EXCEPTION_TAG, *entry) for entry in merged)
    return out


def _fmt_const(norm: tuple) -> str:
    kind, value = norm[0], norm[1]
    if kind == "firstlineno":
        return "<first line number>"
    if kind == "code":
        return f"<code {value}>"
    if kind in ("float", "complex"):
        return str(value)
    if kind in ("tuple", "frozenset", "slice"):
        inner = ", ".join(_fmt_const(v) for v in value)
        if kind == "tuple":
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"frozenset({{{inner}}})" if kind == "frozenset" else f"slice({inner})"
    return repr(value)


def format_item(item: tuple) -> str:
    """One normalized tuple as a readable line."""
    tag = item[0]
    if tag == HEADER_TAG:
        fields = zip(HEADER_FIELDS, item[1:], strict=True)
        return "code " + ", ".join(f"{n}={v!r}" for n, v in fields)
    if tag == EXCEPTION_TAG:
        s, e, t, depth, lasti = item[1:]
        return f"exception [{s}, {e}) -> {t} depth={depth}{' lasti' if lasti else ''}"
    if len(item) == 3:
        return f"{item[0]} {item[1]!r} (flags {item[2]})"
    opname, arg = item
    if arg is None:
        return opname
    if isinstance(arg, tuple) and arg and arg[0] == "->":
        return f"{opname} -> {arg[1]}"
    if opname in dis.opmap and dis.opmap[opname] in _CONST_OPS and isinstance(arg, tuple):
        return f"{opname} {_fmt_const(arg)}"
    return f"{opname} {arg!r}"


@dataclass(frozen=True)
class Difference:
    """The first place where two normalized code objects disagree."""

    where: str
    expected: str
    actual: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.where}: expected {self.expected}, got {self.actual}"


def _split(items: list[tuple]) -> tuple[tuple, list[tuple], list[tuple]]:
    body = [i for i in items[1:] if i[0] != EXCEPTION_TAG]
    table = [i for i in items[1:] if i[0] == EXCEPTION_TAG]
    return items[0], body, table


def _listing(items: list[tuple]) -> list[str]:
    return [f"{n:4d} {format_item(i)}" for n, i in enumerate(items)]


def compare(original: CodeType, recompiled: CodeType, *, nested: bool = True,
            context: int = 3) -> Difference | None:
    """Return the first difference between two code objects' normalized forms, or None.

    ``detail`` holds a unified diff of the instruction listings around that point.
    """
    a_items = normalize(original, nested=nested)
    b_items = normalize(recompiled, nested=nested)
    if a_items == b_items:
        return None
    a_head, a_body, a_table = _split(a_items)
    b_head, b_body, b_table = _split(b_items)
    detail = "\n".join(difflib.unified_diff(
        _listing(a_body + a_table), _listing(b_body + b_table), "original", "recompiled",
        n=context, lineterm=""))
    if a_head != b_head:
        for name, x, y in zip(HEADER_FIELDS, a_head[1:], b_head[1:], strict=True):
            if x != y:
                shown = (hex(x), hex(y)) if name == "flags" else (repr(x), repr(y))
                return Difference(f"code object {name}", *shown, detail)
    for n, (x, y) in enumerate(zip(a_body, b_body, strict=False)):
        if x != y:
            return Difference(f"instruction {n}", format_item(x), format_item(y), detail)
    if len(a_body) != len(b_body):
        n = min(len(a_body), len(b_body))
        more = a_body if len(a_body) > n else b_body
        extra = f"{len(more) - n} more instructions, first {format_item(more[n])}"
        exp, act = (extra, "end of code") if more is a_body else ("end of code", extra)
        return Difference(f"instruction {n}", exp, act, detail)
    for n in range(max(len(a_table), len(b_table))):
        x = format_item(a_table[n]) if n < len(a_table) else "no entry"
        y = format_item(b_table[n]) if n < len(b_table) else "no entry"
        if x != y:
            return Difference(f"exception table entry {n}", x, y, detail)
    raise AssertionError("normalized forms differ but no difference was found")


# --------------------------------------------------------------------------- one function

STATUSES = ("identical", "differs", "failed")
REASONS = ("decompile-error", "crash", "compile-error", "recompile-error", "timeout",
           "worker-died")


@dataclass
class FunctionResult:
    """The outcome for one code object."""

    file: str
    qualname: str
    kind: str
    line: int
    status: str  # identical | differs | failed
    reason: str | None = None  # one of REASONS when failed
    message: str | None = None  # the exception or the first difference
    detail: str | None = None  # diff of the listings (when asked for)
    decompiled: bool = False
    compiled: bool = False
    decompile_ms: float | None = None
    recompile_ms: float | None = None

    @property
    def total_ms(self) -> float | None:
        """Decompile plus recompile time, when both ran."""
        if self.decompile_ms is None or self.recompile_ms is None:
            return self.decompile_ms
        return self.decompile_ms + self.recompile_ms

    def where(self) -> str:
        """``file:line qualname``."""
        return f"{self.file}:{self.line} {self.qualname}"


def _exception_message(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _caused_by_syntax_error(exc: BaseException) -> bool:
    seen = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, SyntaxError):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def check_code(code: CodeType, *, qualname: str | None = None, file: str = "",
               details: bool = False) -> FunctionResult:
    """Decompile, recompile and compare one code object, in this process (no timeout).

    Decompilation and recompilation are separate steps so that the result tells
    "could not decompile" from "decompiled to source that does not compile".
    """
    result = FunctionResult(
        file=file, qualname=qualname or getattr(code, "co_qualname", code.co_name),
        kind=code_kind(code), line=code.co_firstlineno, status="failed")
    t0 = time.perf_counter()
    try:
        source = api.decompile(code)
        if not isinstance(source, str):
            raise TypeError(f"decompile returned {type(source).__name__}, not str")
    except DecompilationError as exc:
        result.reason, result.message = "decompile-error", _exception_message(exc)
        return result
    except Exception as exc:  # noqa: BLE001 - every other exception is a crash
        result.reason, result.message = "crash", _exception_message(exc)
        return result
    finally:
        result.decompile_ms = (time.perf_counter() - t0) * 1000
    result.decompiled = True
    t1 = time.perf_counter()
    try:
        new = api.recompile(code)
        if not isinstance(new, CodeType):
            raise TypeError(f"recompile returned {type(new).__name__}, not a code object")
    except Exception as exc:  # noqa: BLE001
        syntax = _caused_by_syntax_error(exc)
        result.reason = "compile-error" if syntax else "recompile-error"
        result.message = _exception_message(exc)
        return result
    finally:
        result.recompile_ms = (time.perf_counter() - t1) * 1000
    result.compiled = True
    diff = compare(code, new, nested=False)
    if diff is None:
        result.status = "identical"
    else:
        result.status, result.message = "differs", str(diff)
        result.detail = diff.detail if details else None
    return result


# --------------------------------------------------------------------------- targets

DEFAULT_EXCLUDE = frozenset({"__pycache__"})


def _walk_dir(root: Path, exclude: frozenset[str]) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in exclude and d not in DEFAULT_EXCLUDE
                             and not d.startswith("."))
        found.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return found


def _module_files(name: str, exclude: frozenset[str]) -> list[Path]:

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise BadInputError(f"cannot find module {name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a parent package failed to import
        raise BadInputError(
            f"cannot find module {name!r}: importing its package raised "
            f"{_exception_message(exc)}") from None
    if spec is None:
        raise BadInputError(f"{name!r} is not a file, a directory or an importable module")
    if spec.submodule_search_locations:
        files: list[Path] = []
        for location in spec.submodule_search_locations:
            files.extend(_walk_dir(Path(location), exclude))
        if not files:
            raise BadInputError(f"package {name!r} has no Python source files on disk")
        return files
    origin = spec.origin
    if origin == "frozen":
        origin = getattr(spec.loader_state, "filename", None)
    if not origin or not origin.endswith(".py") or not os.path.isfile(origin):
        raise BadInputError(f"module {name!r} has no Python source file ({spec.origin})")
    return [Path(origin)]


def resolve_targets(targets: Iterable[str | os.PathLike[str]], *,
                    exclude: Iterable[str] = ()) -> list[tuple[Path, bool]]:
    """Expand targets to ``(file, explicit)`` pairs: a .py file, a directory or a module.

    Directories are walked recursively, skipping hidden directories, ``__pycache__``
    and any directory whose name is in ``exclude``. Raises BadInputError.
    """

    excluded = frozenset(exclude)
    out: list[tuple[Path, bool]] = []
    for target in targets:
        path = Path(target)
        text = str(target)
        if path.is_file():
            if path.suffix != ".py":
                raise BadInputError(f"{text} is not a Python source file (.py)")
            out.append((path, True))
        elif path.is_dir():
            out.extend((p, False) for p in _walk_dir(path, excluded))
        elif text and all(part.isidentifier() for part in text.split(".")):
            out.extend((p, False) for p in _module_files(text, excluded))
        else:
            raise BadInputError(f"{text} is not a file, a directory or an importable module")
    seen: set[Path] = set()
    unique = []
    for path, explicit in out:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((path, explicit))
    return unique


def compile_file(path: Path) -> CodeType:
    """Compile a source file (never import it); warnings are silenced."""
    source = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, str(path), "exec", dont_inherit=True)


# --------------------------------------------------------------------------- reports


@dataclass
class FileReport:
    """Counts for one file; ``error`` is set when the file was skipped."""

    path: str
    functions: int = 0
    identical: int = 0
    differs: int = 0
    failed: int = 0
    error: str | None = None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[min(len(ordered), int(rank)) - 1]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class CheckReport:
    """Everything :func:`check_targets` found."""

    results: list[FunctionResult] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)
    wall_s: float = 0.0
    jobs: int = 1
    timeout: float | None = None
    python: str = field(default_factory=lambda: sys.version.split()[0])
    interrupted: bool = False

    def count(self, status: str) -> int:
        """How many functions have this status."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> int:
        """Number of functions that failed."""
        return self.count("failed")

    @property
    def differs(self) -> int:
        """Number of functions that recompiled to different bytecode."""
        return self.count("differs")

    def totals(self) -> dict[str, Any]:
        """Aggregate numbers (counts, percentages, timings)."""
        n = len(self.results)
        times = [t for r in self.results if (t := r.total_ms) is not None]
        decompile_times = [r.decompile_ms for r in self.results
                           if r.decompiled and r.decompile_ms is not None]

        def pct(k: int) -> float:
            return round(100.0 * k / n, 2) if n else 0.0

        decompiled = sum(r.decompiled for r in self.results)
        compiled = sum(r.compiled for r in self.results)
        identical = self.count("identical")
        return {
            "python": self.python,
            "files": len(self.files),
            "files_skipped": sum(1 for f in self.files if f.error),
            "functions": n,
            "identical": identical,
            "differs": self.differs,
            "failed": self.failed,
            "decompiled": decompiled,
            "compiled": compiled,
            "pct_decompiled": pct(decompiled),
            "pct_compiled": pct(compiled),
            "pct_identical": pct(identical),
            "failures_by_reason": dict(Counter(r.reason for r in self.results if r.reason)),
            "functions_by_kind": dict(Counter(r.kind for r in self.results)),
            "p50_ms": _round(percentile(times, 50)),
            "p99_ms": _round(percentile(times, 99)),
            "p50_decompile_ms": _round(percentile(decompile_times, 50)),
            "p99_decompile_ms": _round(percentile(decompile_times, 99)),
            "wall_s": round(self.wall_s, 3),
            "functions_per_s": round(n / self.wall_s, 1) if self.wall_s else None,
            "jobs": self.jobs,
            "timeout_s": self.timeout,
            "interrupted": self.interrupted,
        }

    def to_dict(self, *, include_identical: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: totals, per-file counts and per-function results."""
        results = [dataclasses.asdict(r) for r in self.results
                   if include_identical or r.status != "identical"]
        return {
            "totals": self.totals(),
            "files": [dataclasses.asdict(f) for f in self.files],
            "results": results,
        }

    def write_json(self, path: str | os.PathLike[str], **kwargs: bool) -> None:
        """Write :meth:`to_dict` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(**kwargs), fh, indent=1)
            fh.write("\n")

    def summary(self) -> str:
        """One line of totals."""
        t = self.totals()
        n = t["functions"]
        line = (f"{n} functions in {t['files']} files: {t['identical']} identical "
                f"({t['pct_identical']}%), {t['differs']} differ, {t['failed']} failed")
        if t["failures_by_reason"]:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(t["failures_by_reason"].items()))
            line += f" ({reasons})"
        if t["files_skipped"]:
            line += f"; {t['files_skipped']} files skipped"
        return line + f"; {t['wall_s']:.1f}s"


# --------------------------------------------------------------------------- progress


class _Progress:
    """A one-line bar on a tty, periodic plain lines otherwise."""

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None,
                 interval: float = 10.0) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = 0.1 if self.tty else interval
        self.start = self.last = time.monotonic()
        self.done = 0
        self.counts: Counter[str] = Counter()

    def update(self, status: str) -> None:
        self.done += 1
        self.counts[status] += 1
        now = time.monotonic()
        if self.enabled and (now - self.last >= self.interval or self.done == self.total):
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate else 0.0
        c = self.counts
        text = (f"{self.done}/{self.total} {frac:4.0%} | identical {c['identical']} "
                f"differs {c['differs']} failed {c['failed']} | {rate:.0f} fn/s "
                f"ETA {int(eta) // 60}:{int(eta) % 60:02d}")
        if self.tty:
            width = 24
            filled = int(width * frac)
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r[{bar}] {text}\x1b[K")
        else:
            self.stream.write(f"check: {text}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- workers

_NO_PROCESSES = ("emscripten", "wasi")  # Pyodide & co: no subprocesses, no timeout
CHUNK = 64  # functions sent to a worker at a time (all from one file)


def _worker_main(conn: Any, details: bool) -> None:
    """Worker loop: load a file's code, check a range of its code objects."""
    warnings.simplefilter("ignore")
    entries: list[CodeEntry] = []
    path = ""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if msg is None:
            return
        if msg[0] == "load":
            _, path, data = msg
            entries = list(iter_code_objects(marshal.loads(data)))
            continue
        _, start, stop = msg
        for i in range(start, stop):
            qualname, code = entries[i]
            try:
                res = check_code(code, qualname=qualname, file=path, details=details)
            except Exception as exc:  # noqa: BLE001 - e.g. the oracle itself failed
                res = FunctionResult(path, qualname, code_kind(code), code.co_firstlineno,
                                     "failed", "crash", _exception_message(exc))
            conn.send((i, dataclasses.asdict(res)))


@dataclass
class _File:
    path: str
    data: bytes
    entries: list[tuple[str, str, int]]  # qualname, kind, line
    report: FileReport


class _Worker:
    def __init__(self, ctx: Any, details: bool) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, details), daemon=True)
        self.proc.start()
        child.close()
        self.loaded: int | None = None
        self.task: tuple[int, int, int] | None = None  # file index, next index, stop
        self.deadline = 0.0

    def assign(self, file_index: int, files: list[_File], start: int, stop: int,
               timeout: float | None) -> None:
        if self.loaded != file_index:
            self.conn.send(("load", files[file_index].path, files[file_index].data))
            self.loaded = file_index
        self.conn.send(("check", start, stop))
        self.task = (file_index, start, stop)
        self.deadline = time.monotonic() + timeout if timeout else float("inf")

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _mp_context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    # fork keeps monkeypatched or in-memory state (stand-ins, tests) in the workers
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _prepare(targets: Iterable[str | os.PathLike[str]], exclude: Iterable[str],
             limit: int | None) -> list[_File]:

    files: list[_File] = []
    budget = limit if limit is not None else -1
    for path, explicit in resolve_targets(targets, exclude=exclude):
        if budget == 0:
            break
        report = FileReport(str(path))
        try:
            code = compile_file(path)
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError) as exc:
            if explicit:
                raise BadInputError(f"{path} does not compile: {_exception_message(exc)}") \
                    from None
            report.error = f"does not compile: {_exception_message(exc)}"
            files.append(_File(str(path), b"", [], report))
            continue
        entries = [(q, code_kind(c), c.co_firstlineno) for q, c in iter_code_objects(code)]
        if budget > 0:
            entries = entries[:budget]
            budget -= len(entries)
        report.functions = len(entries)
        files.append(_File(str(path), marshal.dumps(code), entries, report))
    return files


def check_targets(targets: Iterable[str | os.PathLike[str]], *, jobs: int = 1,
                  progress: bool = True, timeout: float | None = 10.0,
                  exclude: Iterable[str] = (), limit: int | None = None,
                  details: bool = False,
                  on_result: Callable[[FunctionResult], None] | None = None) -> CheckReport:
    """Check every code object of every target; see the module docstring.

    Each code object goes through :func:`check_code` (``unveil.decompile`` then
    ``unveil.recompile``, then :func:`compare` of its own instructions) in a worker
    process; one that runs past ``timeout`` seconds is killed and marked
    ``failed: timeout``, and a worker that dies marks its function ``worker-died``.
    With ``timeout=None`` and ``jobs <= 1`` (and always under Pyodide, which has no
    processes) everything runs in this process, without a timeout.
    ``limit`` caps the number of code objects; ``details`` keeps listing diffs.
    Raises BadInputError for a target that does not exist or an explicit file that
    does not compile; files found in directories that do not compile are skipped.
    """
    started = time.monotonic()
    files = _prepare(targets, exclude, limit)
    report = CheckReport(files=[f.report for f in files], jobs=max(1, jobs), timeout=timeout)
    total = sum(len(f.entries) for f in files)
    bar = _Progress(total, progress)
    slots: dict[tuple[int, int], FunctionResult] = {}

    def record(file_index: int, index: int, res: FunctionResult) -> None:
        slots[(file_index, index)] = res
        fr = files[file_index].report
        setattr(fr, res.status, getattr(fr, res.status) + 1)
        bar.update(res.status)
        if on_result is not None:
            on_result(res)

    def synthetic(file_index: int, index: int, reason: str, message: str) -> FunctionResult:
        qualname, kind, line = files[file_index].entries[index]
        return FunctionResult(files[file_index].path, qualname, kind, line, "failed",
                              reason, message)

    try:
        if (timeout is None and jobs <= 1) or sys.platform in _NO_PROCESSES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for fi, f in enumerate(files):
                    if not f.entries:
                        continue
                    entries = list(iter_code_objects(marshal.loads(f.data)))
                    for i in range(len(f.entries)):
                        q, code = entries[i]
                        record(fi, i, check_code(code, qualname=q, file=f.path,
                                                 details=details))
        else:
            _run_pool(files, max(1, jobs), timeout, details, record, synthetic)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        bar.close()
    report.results = [slots[k] for k in sorted(slots)]
    report.wall_s = time.monotonic() - started
    if report.interrupted:
        raise KeyboardInterrupt
    return report


def _run_pool(files: list[_File], jobs: int, timeout: float | None, details: bool,
              record: Callable[[int, int, FunctionResult], None],
              synthetic: Callable[[int, int, str, str], FunctionResult]) -> None:
    """Feed chunks of functions to worker processes, enforcing the per-function deadline."""
    queue: list[tuple[int, int, int]] = []
    for fi, f in enumerate(files):
        for start in range(0, len(f.entries), CHUNK):
            queue.append((fi, start, min(start + CHUNK, len(f.entries))))
    queue.reverse()  # pop() from the end keeps file order
    if not queue:
        return
    import multiprocessing.connection

    ctx = _mp_context()
    workers = [_Worker(ctx, details) for _ in range(min(jobs, len(queue)))]
    try:
        while True:
            for w in workers:
                if w.task is None and queue:
                    fi, start, stop = queue.pop()
                    w.assign(fi, files, start, stop, timeout)
            busy = [w for w in workers if w.task is not None]
            if not busy:
                break
            wait_s = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = multiprocessing.connection.wait(
                [w.conn for w in busy], timeout=None if wait_s == float("inf") else wait_s)
            now = time.monotonic()
            for i, w in enumerate(workers):
                if w.task is None:
                    continue
                fi, nxt, stop = w.task
                if w.conn in ready:
                    try:
                        index, data = w.conn.recv()
                    except (EOFError, OSError):
                        record(fi, nxt, synthetic(fi, nxt, "worker-died", _death(w.proc)))
                        workers[i] = _restart(w, ctx, details, queue, fi, nxt + 1, stop)
                        continue
                    record(fi, index, FunctionResult(**data))
                    if index + 1 >= stop:
                        w.task = None
                    else:
                        w.task = (fi, index + 1, stop)
                        w.deadline = now + timeout if timeout else float("inf")
                elif now >= w.deadline:
                    record(fi, nxt, synthetic(fi, nxt, "timeout",
                                              f"no result within {timeout:g}s"))
                    workers[i] = _restart(w, ctx, details, queue, fi, nxt + 1, stop)
    finally:
        for w in workers:
            w.stop(kill=w.task is not None)


def _death(proc: Any) -> str:
    """Why a worker process ended, e.g. "worker process killed by SIGSEGV"."""
    proc.join(timeout=2)
    code = proc.exitcode
    if code is not None and code < 0:
        import signal

        try:
            return f"worker process killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"worker process died (exit code {code})"


def _restart(w: _Worker, ctx: Any, details: bool, queue: list[tuple[int, int, int]],
             fi: int, start: int, stop: int) -> _Worker:
    """Kill a stuck or dead worker, requeue the rest of its chunk, start a fresh one."""
    w.stop(kill=True)
    if start < stop:
        queue.append((fi, start, stop))
    return _Worker(ctx, details)
