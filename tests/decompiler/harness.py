"""Oracle for the decompiler: run a function and its decompiled versions side by side.

Given an original function, :func:`check_function` builds candidates

* ``recompile``: ``FunctionType(unveil.recompile(f.__code__), f.__globals__, ...)``,
* ``source``: the text of ``unveil.decompile(f)`` executed in a copy of the module
  namespace (only for functions without free variables),

runs the original and every candidate on each input (fresh deep copies of the
arguments, defaults and closure cells; module-level data reset before each run) and
compares results, raised exceptions, mutated arguments, module-level data (such as
the corpus ``LOG`` lists), generator items and return values and coroutine traces.
A mismatch fails with the decompiled source and the first difference.

Only the standard library and pytest are used, so this runs under Pyodide too.
"""

from __future__ import annotations
import __future__

import builtins
import copy
import inspect
import os
import sys
import types
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import CellType, CodeType, FunctionType, ModuleType
from typing import Any

import pytest

import unveil

from .corpus import functions_of
from .corpus._support import Case, as_case

#: Trace events (calls, lines, returns) one run may take before it is stopped.
STEP_LIMIT = 1_000_000
#: Items taken from one generator, iterator or coroutine before it is cut off.
ITEM_LIMIT = 10_000
#: ``UNVEIL_STRICT=1`` turns ``NotImplementedError`` from unveil into failures, not skips.
STRICT = os.environ.get("UNVEIL_STRICT", "") not in ("", "0")

_DATA_TYPES = (
    list,
    dict,
    set,
    frozenset,
    tuple,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    bool,
    type(None),
    deque,
)
_CODE_FLAGS = (
    inspect.CO_VARARGS
    | inspect.CO_VARKEYWORDS
    | inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
)


class StepLimitExceeded(BaseException):
    """A run took more than :data:`STEP_LIMIT` trace events (probably an endless loop)."""


class _StepBudget:
    """Counts trace events while active and stops the traced code past a limit.

    Uses ``sys.settrace`` because Pyodide has no signals or threads for timeouts.
    """

    def __init__(self, limit: int = STEP_LIMIT) -> None:
        self.limit = limit
        self.steps = 0
        self._old: Any = None

    def _trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        self.steps += 1
        if self.steps > self.limit:
            raise StepLimitExceeded(f"more than {self.limit} trace events")
        return self._trace

    def __enter__(self) -> _StepBudget:
        self._old = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._old)


# --------------------------------------------------------------------------------------
# Normalisation: turn any value into nested tuples that compare with ``==``.
# --------------------------------------------------------------------------------------


def normalize(value: Any, _path: frozenset[int] = frozenset(), _depth: int = 0) -> Any:
    """A comparable snapshot of ``value``.

    Floats compare by ``repr`` (so ``nan == nan`` and ``-0.0 != 0.0``), types of
    scalars matter (``1``, ``1.0`` and ``True`` differ), classes, functions and
    exception types compare by name (the re-executed module has its own classes).
    """
    t = type(value)
    if value is None or t in (bool, int, str, bytes):
        return (t.__name__, value)
    if t in (float, complex):
        return (t.__name__, repr(value))
    if _depth > 30:
        return ("<too deep>",)
    if id(value) in _path:
        return ("<cycle>",)
    path = _path | {id(value)}
    depth = _depth + 1

    def norm(v: Any) -> Any:
        return normalize(v, path, depth)

    if isinstance(value, BaseException):
        return _normalize_exception(value, norm)
    if isinstance(value, (list, tuple, deque)):
        items = tuple(norm(v) for v in value)
        extra = norm(vars(value)) if hasattr(value, "__dict__") and vars(value) else ()
        return (t.__name__, items, extra) if extra else (t.__name__, items)
    if isinstance(value, dict):
        return (t.__name__, tuple((norm(k), norm(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (t.__name__, tuple(sorted(repr(norm(v)) for v in value)))
    if isinstance(value, (bytearray, memoryview)):
        return (t.__name__, bytes(value))
    if isinstance(value, (int, str, bytes, float, complex)):
        base = next(b for b in (bool, int, str, bytes, float, complex) if isinstance(value, b))
        return (t.__name__, norm(base(value)), repr(value))
    if isinstance(value, type):
        return ("<class>", value.__name__)
    if isinstance(value, ModuleType):
        return ("<module>", value.__name__)
    if isinstance(value, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return (f"<{t.__name__}>", value.__name__)
    if callable(value) and isinstance(
        value, (FunctionType, types.BuiltinFunctionType, types.MethodType)
    ):
        return ("<callable>", getattr(value, "__name__", t.__name__))
    if isinstance(value, (range, slice)):
        return (t.__name__, repr(value))
    if t.__module__ in ("typing", "types", "annotationlib", "string.templatelib"):
        return ("<object>", t.__name__, repr(value))
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict):
        return ("<object>", t.__name__, norm(state))
    slots = [
        s for klass in t.__mro__ for s in getattr(klass, "__slots__", ()) if isinstance(s, str)
    ]
    if slots:
        return (
            "<object>",
            t.__name__,
            tuple((s, norm(getattr(value, s, "<unset>"))) for s in slots),
        )
    text = repr(value)
    if " at 0x" in text:
        return ("<object>", t.__name__)
    return ("<object>", t.__name__, text)


def _normalize_exception(exc: BaseException, norm: Callable[[Any], Any]) -> Any:
    parts: list[Any] = ["<exception>", type(exc).__name__, norm(exc.args)]
    attrs = {k: v for k, v in vars(exc).items() if k != "__notes__"}
    if attrs:
        parts.append(("attrs", norm(attrs)))
    notes = getattr(exc, "__notes__", None)
    if notes:
        parts.append(("notes", norm(list(notes))))
    if exc.__cause__ is not None:
        parts.append(("cause", norm(exc.__cause__)))
    if exc.__context__ is not None and not exc.__suppress_context__:
        parts.append(("context", norm(exc.__context__)))
    if exc.__suppress_context__:
        parts.append(("suppress_context", True))
    if isinstance(exc, StopIteration):
        parts.append(("value", norm(exc.value)))
    return tuple(parts)


def show(node: Any, limit: int = 300) -> str:
    """Readable text for a normalised value."""
    text = _show(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show(node: Any) -> str:
    if not isinstance(node, tuple) or not node or not isinstance(node[0], str):
        return repr(node)
    tag = node[0]
    if tag == "value" and len(node) == 2:
        return f"returned {_show(node[1])}"
    if tag == "did not finish":
        return f"did not finish ({node[1]})"
    if tag == "raised" and len(node) == 2:
        return f"raised {_show(node[1])}"
    if tag.endswith(" run>"):
        parts = [
            "[" + ", ".join(_show(item) for item in part) + "]"
            if isinstance(part, tuple) and _tag(part) is None
            else _show(part)
            for part in node[1:]
        ]
        return f"{tag[1:-1]}: " + ", ".join(parts)
    if tag in ("yield", "item", "return") and len(node) == 2:
        return f"{tag} {_show(node[1])}"
    if len(node) == 2 and tag in ("int", "str", "bytes", "bool", "NoneType"):
        return repr(node[1])
    if len(node) == 2 and tag in ("float", "complex", "range", "slice"):
        return str(node[1])
    if tag in ("list", "tuple", "deque") and len(node) >= 2:
        inner = ", ".join(_show(v) for v in node[1])
        if tag == "list":
            return f"[{inner}]"
        if tag == "tuple":
            return f"({inner}{',' if len(node[1]) == 1 else ''})"
        return f"deque([{inner}])"
    if tag in ("dict", "OrderedDict", "defaultdict", "Counter") and len(node) == 2:
        inner = ", ".join(f"{_show(k)}: {_show(v)}" for k, v in node[1])
        return "{" + inner + "}" if tag == "dict" else f"{tag}({{{inner}}})"
    if tag in ("set", "frozenset") and len(node) == 2:
        return f"{tag}({{{', '.join(node[1])}}})"
    if tag == "<exception>":
        rest = "".join(f" {k}={_show(v)}" for k, v in node[3:] if isinstance(k, str))
        return f"{node[1]}{_show(node[2])}{rest}"
    if tag in ("<class>", "<module>", "<callable>"):
        return f"{tag[1:-1]} {node[1]}"
    if tag == "<object>":
        return f"<{node[1]} {_show(node[2])}>" if len(node) > 2 else f"<{node[1]}>"
    return repr(node)


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """``(path, a_part, b_part)`` of the first place where two snapshots differ."""
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = first_difference(
                a.get(key, ("<missing>",)),
                b.get(key, ("<missing>",)),
                f"{path}.{key}" if path else str(key),
            )
            if found:
                return found
        return None
    if _tag(a) is not None and _tag(a) == _tag(b):
        tag = _tag(a)
        if tag in ("value", "raised") or tag.endswith(" run>"):
            # Run records: compare their parts in order, items one by one.
            for x, y in zip(a[1:], b[1:], strict=False):
                if x == y:
                    continue
                if isinstance(x, tuple) and isinstance(y, tuple) and _tag(x) is None:
                    return _first_item_difference(x, y, f"{path}.{tag.strip('<>')}.items")
                return first_difference(x, y, path)
        if tag in _MAPPING_TAGS and len(a) == len(b) == 2:
            for (ka, va), (kb, vb) in zip(a[1], b[1], strict=False):
                if ka != kb:
                    return (f"{path} (keys)", a, b)
                found = first_difference(va, vb, f"{path}[{_show(ka)}]")
                if found:
                    return found
            return (f"{path} (length {len(a[1])} vs {len(b[1])})", a, b)
        if tag in _SEQUENCE_TAGS and len(a) == len(b) == 2:
            return _first_item_difference(a[1], b[1], path, whole=(a, b))
    return (path, a, b)


_SEQUENCE_TAGS = ("list", "tuple", "deque")
_MAPPING_TAGS = ("dict", "OrderedDict", "defaultdict", "Counter")


def _tag(node: Any) -> str | None:
    if isinstance(node, tuple) and node and isinstance(node[0], str):
        return node[0]
    return None


def _first_item_difference(
    xs: tuple[Any, ...], ys: tuple[Any, ...], path: str, whole: tuple[Any, Any] | None = None
) -> tuple[str, Any, Any] | None:
    for i, (x, y) in enumerate(zip(xs, ys, strict=False)):
        found = first_difference(x, y, f"{path}[{i}]")
        if found:
            return found
    if len(xs) != len(ys):
        if whole is not None:
            return (f"{path} (length {len(xs)} vs {len(ys)})", whole[0], whole[1])
        return (f"{path} (length {len(xs)} vs {len(ys)})", ("tuple", xs), ("tuple", ys))
    return None


# --------------------------------------------------------------------------------------
# Module state: module-level data (``LOG`` and friends) reset before every run.
# --------------------------------------------------------------------------------------


def _is_data(value: Any) -> bool:
    return isinstance(value, _DATA_TYPES) and not isinstance(value, type)


def _state_holders(namespace: dict[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """``(prefix, mapping, owner)`` for the namespace and its own classes' dicts."""
    holders: list[tuple[str, dict[str, Any], Any]] = [("", namespace, None)]
    module_name = namespace.get("__name__")
    for name, value in list(namespace.items()):
        if isinstance(value, type) and value.__module__ == module_name:
            holders.append((name + ".", dict(vars(value)), value))
    return holders


def _shared_memo(namespace: dict[str, Any]) -> dict[int, Any]:
    """A deepcopy memo that keeps module-level non-data objects (sentinels, classes)."""
    memo = {id(v): v for v in namespace.values() if not _is_data(v)}
    memo.update({id(v): v for v in vars(builtins).values()})
    return memo


@dataclass
class _Snapshot:
    data: dict[tuple[str, str], Any]  # (holder prefix, name) -> saved copy
    names: dict[str, set[str]]  # holder prefix -> names present


def take_snapshot(namespace: dict[str, Any]) -> _Snapshot:
    """Deep copies of a namespace's data values and of its classes' data attributes."""
    memo = _shared_memo(namespace)
    data = {}
    names = {}
    for prefix, mapping, _owner in _state_holders(namespace):
        names[prefix] = set(mapping)
        for name, value in mapping.items():
            if not name.startswith("__") and _is_data(value):
                data[(prefix, name)] = copy.deepcopy(value, dict(memo))
    return _Snapshot(data, names)


def restore_snapshot(namespace: dict[str, Any], snap: _Snapshot) -> None:
    """Put the data saved by :func:`take_snapshot` back (mutable values in place)."""
    memo = _shared_memo(namespace)
    for prefix, mapping, owner in _state_holders(namespace):
        if prefix not in snap.names:
            continue
        for name in list(mapping):
            if name not in snap.names[prefix] and not name.startswith("__"):
                if owner is None:
                    del namespace[name]
                else:
                    delattr(owner, name)
        for (p, name), saved in snap.data.items():
            if p != prefix:
                continue
            fresh = copy.deepcopy(saved, dict(memo))
            current = mapping.get(name)
            if type(current) is type(fresh) and isinstance(current, (list, deque)):
                current.clear()
                current.extend(fresh)
            elif type(current) is type(fresh) and isinstance(current, (dict, set)):
                current.clear()
                current.update(fresh)
            elif owner is None:
                namespace[name] = fresh
            else:
                setattr(owner, name, fresh)


def capture_state(namespace: dict[str, Any]) -> dict[str, Any]:
    """Normalised module-level data of a namespace (after a run)."""
    state = {}
    for prefix, mapping, _owner in _state_holders(namespace):
        for name, value in mapping.items():
            if not name.startswith("__") and _is_data(value):
                state[prefix + name] = normalize(value)
    return dict(sorted(state.items()))


# --------------------------------------------------------------------------------------
# Running one function on one case.
# --------------------------------------------------------------------------------------


def fresh_function(
    func: FunctionType, namespace: dict[str, Any] | None = None, code: CodeType | None = None
) -> FunctionType:
    """A copy of ``func`` with deep-copied defaults and closure cells."""
    namespace = func.__globals__ if namespace is None else namespace
    memo = _shared_memo(namespace)
    closure = None
    if func.__closure__ is not None:
        cells = []
        for cell in func.__closure__:
            try:
                contents = cell.cell_contents
            except ValueError:
                cells.append(CellType())
            else:
                cells.append(CellType(copy.deepcopy(contents, dict(memo))))
        closure = tuple(cells)
    new = FunctionType(
        func.__code__ if code is None else code,
        namespace,
        func.__name__,
        copy.deepcopy(func.__defaults__, dict(memo)),
        closure,
    )
    new.__kwdefaults__ = copy.deepcopy(func.__kwdefaults__, dict(memo))
    new.__qualname__ = func.__qualname__
    new.__dict__.update(func.__dict__)
    return new


def _drive_generator(gen: Any, sends: Iterable[Any] | None) -> Any:
    items = []
    pending = list(sends or ())
    to_send = None
    try:
        while len(items) < ITEM_LIMIT:
            items.append(normalize(gen.send(to_send)))
            to_send = pending.pop(0) if pending else None
        gen.close()
        end: Any = ("truncated",)
    except StopIteration as stop:
        end = ("return", normalize(stop.value))
    except Exception as exc:
        end = ("raised", normalize(exc))
    return ("<generator run>", tuple(items), end)


def _drive_awaitable(awaitable: Any, events: list[Any]) -> Any:
    """Step an awaitable with ``send(None)`` until it finishes; return its value."""
    while len(events) < ITEM_LIMIT:
        events.append(("yield", normalize(awaitable.send(None))))
    awaitable.close()
    raise RuntimeError("awaitable did not finish")


def _drive_coroutine(coro: Any) -> Any:
    events: list[Any] = []
    try:
        _drive_awaitable(coro, events)
        end: Any = ("truncated",)
    except StopIteration as stop:
        end = ("return", normalize(stop.value))
    except Exception as exc:
        end = ("raised", normalize(exc))
    return ("<coroutine run>", tuple(events), end)


def _drive_async_generator(agen: Any, sends: Iterable[Any] | None) -> Any:
    events: list[Any] = []
    pending = list(sends or ())
    to_send = None
    end: Any = ("truncated",)
    while len(events) < ITEM_LIMIT:
        try:
            _drive_awaitable(agen.asend(to_send), events)
        except StopIteration as stop:
            events.append(("item", normalize(stop.value)))
        except StopAsyncIteration:
            end = ("done",)
            break
        except Exception as exc:
            end = ("raised", normalize(exc))
            break
        to_send = pending.pop(0) if pending else None
    return ("<async generator run>", tuple(events), end)


def _drive(value: Any, sends: Iterable[Any] | None) -> Any:
    if isinstance(value, types.GeneratorType):
        return _drive_generator(value, sends)
    if isinstance(value, types.CoroutineType):
        return _drive_coroutine(value)
    if isinstance(value, types.AsyncGeneratorType):
        return _drive_async_generator(value, sends)
    if (
        hasattr(value, "__next__")
        and not isinstance(value, (str, bytes))
        and getattr(value, "__iter__", None) is not None
        and iter(value) is value
    ):
        items = []
        try:
            for item in value:
                items.append(normalize(item))
                if len(items) >= ITEM_LIMIT:
                    break
            end: Any = ("done",)
        except Exception as exc:
            end = ("raised", normalize(exc))
        return ("<iterator run>", type(value).__name__, tuple(items), end)
    return ("value", normalize(value))


def translation(original: dict[str, Any], namespace: dict[str, Any]) -> dict[int, Any]:
    """Deepcopy memo entries mapping ``original``'s module-level objects (classes,
    sentinels) to the same-named ones of ``namespace``, so arguments built from the
    original module's classes become instances of the re-executed module's classes."""
    return {
        id(value): namespace[name]
        for name, value in original.items()
        if not _is_data(value) and name in namespace and namespace[name] is not value
    }


def _translate(value: Any, mapping: dict[int, Any], seen: set[int]) -> Any:
    """Swap objects (and classes of instances) found in ``mapping`` inside ``value``.

    Done after deep-copying because ``copy.deepcopy`` in 3.14 skips the memo for classes.
    """
    if id(value) in mapping:
        return mapping[id(value)]
    if id(value) in seen or isinstance(value, (str, bytes, int, float, complex, type)):
        return value
    seen.add(id(value))
    if isinstance(value, list):
        value[:] = [_translate(v, mapping, seen) for v in value]
    elif isinstance(value, dict):
        items = [
            (_translate(k, mapping, seen), _translate(v, mapping, seen)) for k, v in value.items()
        ]
        value.clear()
        value.update(items)
    elif isinstance(value, set):
        items = [_translate(v, mapping, seen) for v in value]
        value.clear()
        value.update(items)
    elif type(value) is tuple:
        return tuple(_translate(v, mapping, seen) for v in value)
    elif isinstance(value, tuple) and hasattr(value, "_make"):
        cls = mapping.get(id(type(value)), type(value))
        return cls._make(_translate(v, mapping, seen) for v in value)
    elif isinstance(getattr(value, "__dict__", None), dict):
        new_cls = mapping.get(id(type(value)))
        if new_cls is not None:
            value.__class__ = new_cls
        for key, item in list(vars(value).items()):
            vars(value)[key] = _translate(item, mapping, seen)
    return value


def run_case(
    func: FunctionType,
    case: Case,
    namespace: dict[str, Any],
    snapshot: _Snapshot,
    translate: dict[int, Any] | None = None,
) -> dict[str, Any]:
    """Run ``func`` (a fresh copy is made here) on ``case``; a normalised outcome."""
    restore_snapshot(namespace, snapshot)
    memo = _shared_memo(namespace)
    args = copy.deepcopy(case.args, dict(memo))
    kwargs = copy.deepcopy(case.kwargs, dict(memo))
    if translate:
        args = _translate(args, translate, set())
        kwargs = _translate(kwargs, translate, set())
    fresh = fresh_function(func, namespace)
    outcome: Any
    budget = _StepBudget()
    try:
        with budget:
            outcome = _drive(fresh(*args, **kwargs), case.sends)
    except StepLimitExceeded:
        outcome = ("did not finish", f"stopped after {STEP_LIMIT} trace events")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        outcome = ("raised", normalize(exc))
    result = {
        "outcome": outcome,
        "args": normalize(args),
        "kwargs": normalize(kwargs),
        "module state": capture_state(namespace),
    }
    if fresh.__closure__:
        cells = []
        for cell in fresh.__closure__:
            try:
                cells.append(normalize(cell.cell_contents))
            except ValueError:
                cells.append(("<empty cell>",))
        result["closure cells"] = tuple(cells)
    restore_snapshot(namespace, snapshot)
    return result


# --------------------------------------------------------------------------------------
# Candidates and the checks.
# --------------------------------------------------------------------------------------


class NotReady(Exception):
    """unveil raised ``NotImplementedError`` for this input."""


@dataclass
class Candidate:
    """A function to compare with the original, and how it was made."""

    label: str
    func: FunctionType
    namespace: dict[str, Any]
    source: str | None


def _call_unveil(what: str, call: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return call()
    except NotImplementedError as exc:
        raise NotReady(f"unveil.{what}: NotImplementedError: {exc}") from exc


def _source_for_message(func: Any) -> str:
    try:
        return str(_call_unveil("decompile", lambda: unveil.decompile(func)))
    except Exception as exc:  # noqa: BLE001 - only for the failure message
        return f"<unveil.decompile raised {type(exc).__name__}: {exc}>"


def _signature_problems(original: CodeType, new: CodeType) -> list[str]:
    problems = []
    for attr in (
        "co_name",
        "co_argcount",
        "co_posonlyargcount",
        "co_kwonlyargcount",
        "co_freevars",
    ):
        if getattr(original, attr) != getattr(new, attr):
            problems.append(f"{attr}: {getattr(original, attr)!r} != {getattr(new, attr)!r}")
    nargs = (
        original.co_argcount
        + original.co_kwonlyargcount
        + bool(original.co_flags & inspect.CO_VARARGS)
        + bool(original.co_flags & inspect.CO_VARKEYWORDS)
    )
    if original.co_varnames[:nargs] != new.co_varnames[:nargs]:
        problems.append(
            f"argument names: {original.co_varnames[:nargs]!r} != {new.co_varnames[:nargs]!r}"
        )
    if original.co_flags & _CODE_FLAGS != new.co_flags & _CODE_FLAGS:
        problems.append(
            f"flags: {original.co_flags & _CODE_FLAGS:#x} != {new.co_flags & _CODE_FLAGS:#x}"
        )
    return problems


def recompiled_candidate(func: FunctionType, title: str | None = None,
                         force_fallback: bool = False) -> Candidate:
    """``FunctionType(unveil.recompile(f.__code__), ...)`` with ``f``'s defaults and closure."""
    title = title or func.__qualname__
    code = _call_unveil("recompile", lambda: unveil.recompile(
        func.__code__, force_fallback=force_fallback))
    if not isinstance(code, CodeType):
        raise AssertionError(
            f"[recompile] {title}: unveil.recompile returned {type(code).__name__}, "
            "not a code object"
        )
    problems = _signature_problems(func.__code__, code)
    if problems:
        raise AssertionError(
            f"[recompile] {title}: code object does not match the original:\n  "
            + "\n  ".join(problems)
            + _source_block(_source_for_message(func))
        )
    new = fresh_function(func, code=code)
    return Candidate("recompile", new, func.__globals__, None)


def _future_flags(code: CodeType | None) -> int:
    """The ``from __future__`` compiler flags that ``code`` was compiled with."""
    if code is None:
        return 0
    return code.co_flags & __future__.annotations.compiler_flag


def exec_source(
    source: str, namespace: dict[str, Any], filename: str, like: CodeType | None = None
) -> None:
    """Compile (with the future flags of ``like``) and run ``source`` in ``namespace``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        code = compile(source, filename, "exec", flags=_future_flags(like), dont_inherit=True)
        exec(code, namespace)


def source_candidate(func: FunctionType, title: str | None = None,
                     force_fallback: bool = False) -> Candidate:
    """Run the text of ``unveil.decompile(func)`` in a copy of the module namespace."""
    source = _call_unveil("decompile", lambda: unveil.decompile(
        func, force_fallback=force_fallback))
    if not isinstance(source, str):
        raise AssertionError(f"unveil.decompile returned {type(source).__name__}, not str")
    namespace = dict(func.__globals__)
    filename = f"<decompiled {func.__qualname__}>"
    try:
        if func.__name__ == "<lambda>" and source.startswith("def "):
            # statements no lambda can hold (Dynamo's code for one): a ``def`` stands in
            from unveil.decompiler.api import LAMBDA_NAME

            exec_source(source, namespace, filename, like=func.__code__)
            new = namespace.get(LAMBDA_NAME)
            if isinstance(new, FunctionType):  # (source cannot name it <lambda>)
                new.__name__ = new.__qualname__ = func.__name__
        elif func.__name__ == "<lambda>":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                code = compile(
                    source.strip(),
                    filename,
                    "eval",
                    flags=_future_flags(func.__code__),
                    dont_inherit=True,
                )
                new = eval(code, namespace)
        else:
            namespace.pop(func.__name__, None)
            exec_source(source, namespace, filename, like=func.__code__)
            new = namespace.get(func.__name__)
    except Exception as exc:
        raise AssertionError(
            f"[source] {title or func.__qualname__}: decompiled text does not run: "
            f"{type(exc).__name__}: {exc}" + _source_block(source)
        ) from exc
    if not isinstance(new, FunctionType):
        raise AssertionError(
            f"[source] {title or func.__qualname__}: decompiled text does not define function "
            f"{func.__name__!r} "
            f"(got {type(new).__name__})" + _source_block(source)
        )
    new.__qualname__ = func.__qualname__
    return Candidate("source", new, namespace, source)


def _source_block(source: str | None) -> str:
    if source is None:
        return ""
    return "\n--- decompiled source ---\n" + source.rstrip() + "\n--- end ---"


def _function_attributes(func: FunctionType) -> dict[str, Any]:
    """Attributes that a ``def`` statement sets and the source path must reproduce."""
    attrs = {
        "__name__": normalize(func.__name__),
        "__doc__": normalize(func.__doc__),
        "__defaults__": normalize(func.__defaults__),
        "__kwdefaults__": normalize(func.__kwdefaults__),
    }
    try:
        annotations = func.__annotations__
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        attrs["__annotations__"] = ("raised", normalize(exc))
    else:
        attrs["__annotations__"] = normalize(dict(annotations))
    return attrs


def compare_runs(
    original: FunctionType,
    candidates: list[Candidate],
    cases: list[Case],
    title: str,
    source_of: Callable[[Candidate], str | None],
) -> list[str]:
    """Run everything on every case; a failure message per mismatching candidate."""
    failures: list[str] = []
    if not candidates:
        return failures
    snapshot = take_snapshot(original.__globals__)
    expected = [run_case(original, case, original.__globals__, snapshot) for case in cases]
    for cand in candidates:
        cand_snapshot = take_snapshot(cand.namespace)
        translate = translation(original.__globals__, cand.namespace)
        for case, want in zip(cases, expected, strict=True):
            got = run_case(cand.func, case, cand.namespace, cand_snapshot, translate)
            diff = first_difference(want, got)
            if diff is not None:
                failures.append(_difference_message(cand.label, title, case, diff, source_of(cand)))
                break
    return failures


def _difference_message(
    label: str, title: str, case: Case, diff: tuple[str, Any, Any], source: str | None
) -> str:
    where, want, have = diff
    return (
        f"[{label}] {title}: behaviour differs on {case!r}\n"
        f"  first difference at {where}:\n"
        f"    original:   {show(want)}\n"
        f"    decompiled: {show(have)}" + _source_block(source)
    )


def check_function(
    func: FunctionType,
    cases: Iterable[Any] | None = None,
    *,
    title: str | None = None,
    paths: Iterable[str] = ("recompile", "source"),
    force_fallback: bool = False,
) -> None:
    """Compare ``func`` with its recompiled and re-executed decompiled versions
    (``force_fallback``: with its body written as the state machine).

    ``cases`` defaults to ``func.__cases__``. Fails (``AssertionError``) on the first
    mismatch per candidate; skips if unveil raises ``NotImplementedError`` (unless
    ``UNVEIL_STRICT=1``) and nothing else failed.
    """
    if not isinstance(func, FunctionType):
        raise TypeError(f"check_function needs a plain function, got {type(func).__name__}")
    case_list = [as_case(c) for c in (cases if cases is not None else func.__cases__)]
    title = title or f"{func.__module__}::{func.__qualname__}"
    candidates: list[Candidate] = []
    not_ready: list[str] = []
    errors: list[str] = []
    paths = tuple(paths)
    if "recompile" in paths:
        try:
            candidates.append(recompiled_candidate(func, title, force_fallback))
        except NotReady as exc:
            not_ready.append(str(exc))
        except AssertionError as exc:
            errors.append(str(exc))
        except Exception as exc:  # DecompilationError and friends
            errors.append(
                f"[recompile] {title}: unveil.recompile raised {type(exc).__name__}: {exc}"
            )
    if "source" in paths and not func.__code__.co_freevars:
        try:
            cand = source_candidate(func, title, force_fallback)
        except NotReady as exc:
            not_ready.append(str(exc))
        except AssertionError as exc:
            errors.append(str(exc))
        except Exception as exc:
            errors.append(f"[source] {title}: unveil.decompile raised {type(exc).__name__}: {exc}")
        else:
            candidates.append(cand)
            want, have = _function_attributes(func), _function_attributes(cand.func)
            diff = first_difference(want, have)
            if diff:
                errors.append(
                    f"[source] {title}: function attribute {diff[0]} differs: "
                    f"original {show(diff[1])}, decompiled {show(diff[2])}"
                    + _source_block(cand.source)
                )

    def source_of(cand: Candidate) -> str | None:
        return cand.source if cand.source is not None else _source_for_message(func)

    errors += compare_runs(func, candidates, case_list, title, source_of)
    _finish(errors, not_ready)


def _finish(errors: list[str], not_ready: list[str]) -> None:
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)
    if not_ready:
        if STRICT:
            pytest.fail("\n".join(not_ready), pytrace=False)
        pytest.skip("; ".join(dict.fromkeys(not_ready)))


# --------------------------------------------------------------------------------------
# Classes and whole modules.
# --------------------------------------------------------------------------------------


def _class_functions(cls: type) -> list[FunctionType]:
    found = []
    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            found += [
                f for f in (value.fget, value.fset, value.fdel) if isinstance(f, FunctionType)
            ]
        elif isinstance(value, FunctionType):
            found.append(value)
    return list({id(f): f for f in found}.values())


def _driver_outcomes(
    drivers: list[FunctionType], namespace: dict[str, Any]
) -> list[tuple[str, Case, dict[str, Any]]]:
    snapshot = take_snapshot(namespace)
    return [
        (driver.__name__, case, run_case(driver, case, namespace, snapshot))
        for driver in drivers
        for case in driver.__cases__
    ]


def _compare_driver_outcomes(
    label: str, title: str, expected: list[Any], got: list[Any], source: str | None
) -> list[str]:
    for (name, case, want), (_, _, have) in zip(expected, got, strict=True):
        diff = first_difference(want, have)
        if diff:
            return [_difference_message(label, f"{title} (driver {name})", case, diff, source)]
    return []


def check_class(cls: type, module: ModuleType) -> None:
    """Check a class through the corpus functions named by ``@exercised_by``.

    ``recompile``: every method's ``__code__`` is replaced by its recompiled code for
    the duration of the drivers. ``source``: the text of ``unveil.decompile(cls)`` is
    executed in a copy of the module namespace and the drivers run there.
    """
    title = f"{module.__name__}::{cls.__qualname__}"
    drivers = [getattr(module, name) for name in cls.__exercised_by__]
    namespace = vars(module)
    expected = _driver_outcomes(drivers, namespace)
    errors: list[str] = []
    not_ready: list[str] = []

    originals = {}
    try:
        for func in _class_functions(cls):
            try:
                code = _call_unveil("recompile", lambda f=func: unveil.recompile(f.__code__))
            except NotReady as exc:
                not_ready.append(str(exc))
                break
            except Exception as exc:
                errors.append(
                    f"[recompile] {title}: unveil.recompile of {func.__qualname__} "
                    f"raised {type(exc).__name__}: {exc}"
                )
                break
            problems = _signature_problems(func.__code__, code)
            if problems:
                errors.append(
                    f"[recompile] {title}: code of {func.__qualname__} does not "
                    f"match: " + "; ".join(problems)
                )
                break
            originals[func] = func.__code__
            func.__code__ = code
        else:
            got = _driver_outcomes(drivers, namespace)
            errors += _compare_driver_outcomes(
                "recompile", title, expected, got, _source_for_message(cls)
            )
    finally:
        for func, code in originals.items():
            func.__code__ = code

    try:
        source = _call_unveil("decompile", lambda: unveil.decompile(cls))
    except NotReady as exc:
        not_ready.append(str(exc))
    except Exception as exc:
        errors.append(f"[source] {title}: unveil.decompile raised {type(exc).__name__}: {exc}")
    else:
        copy_ns = dict(namespace)
        copy_ns.pop(cls.__name__, None)
        try:
            exec_source(source, copy_ns, f"<decompiled {cls.__qualname__}>")
            new_cls = copy_ns[cls.__name__]
            if not isinstance(new_cls, type):
                raise TypeError(f"{cls.__name__} is a {type(new_cls).__name__}, not a class")
        except Exception as exc:
            errors.append(
                f"[source] {title}: decompiled class does not run: "
                f"{type(exc).__name__}: {exc}" + _source_block(source)
            )
        else:
            got = _driver_outcomes(drivers, copy_ns)
            errors += _compare_driver_outcomes("source", title, expected, got, source)
    _finish(errors, not_ready)


def check_module(module: ModuleType) -> None:
    """Decompile the module's whole code object, run it, compare every corpus function."""
    filename = module.__file__
    assert filename is not None
    with open(filename, encoding="utf-8") as handle:
        original_source = handle.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        code = compile(original_source, filename, "exec", dont_inherit=True)
    title = module.__name__
    try:
        source = _call_unveil("decompile", lambda: unveil.decompile(code))
    except NotReady as exc:
        _finish([], [str(exc)])
        return
    except Exception as exc:
        pytest.fail(
            f"[module] {title}: unveil.decompile raised {type(exc).__name__}: {exc}", pytrace=False
        )
    namespace: dict[str, Any] = {
        "__name__": module.__name__,
        "__package__": module.__package__,
        "__file__": filename,
        "__builtins__": builtins,
    }
    try:
        exec_source(source, namespace, f"<decompiled module {title}>")
    except Exception as exc:
        pytest.fail(
            f"[module] {title}: decompiled module does not run: "
            f"{type(exc).__name__}: {exc}" + _source_block(source),
            pytrace=False,
        )
    errors: list[str] = []
    for name, func in functions_of(module):
        new = namespace.get(name)
        if not isinstance(new, FunctionType):
            errors.append(
                f"[module] {title}: {name} is missing from the decompiled module "
                f"(got {type(new).__name__})"
            )
            continue
        cand = Candidate("module", new, namespace, source)
        errors += compare_runs(
            func, [cand], list(func.__cases__), f"{title}::{name}", lambda c: None
        )
        if len(errors) >= 5:
            break
    if errors:
        errors.append(_source_block(source))
    _finish(errors, [])
