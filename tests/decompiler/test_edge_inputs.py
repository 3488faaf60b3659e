"""Inputs at the edges: every one gives source that behaves as the original, or one
:class:`~unveil.errors.UnveilError` sentence, never an exception from inside unveil.

Long and deep expressions (deeper than Python's recursion limit), constants that
cannot be printed in decimal, and bytecode no compiler wrote (arguments past their
tables, jumps into the middle of an instruction, a cut exception table)."""
# pyodide-compatible

from __future__ import annotations

import ast
import gc
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

import unveil
from unveil.errors import BadInputError, UnveilError

from .harness import check_function

NO_THREADS = sys.platform in ("emscripten", "wasi")  # (no larger stack for deep input)


def _function(source: str, name: str = "f") -> types.FunctionType:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<edge>", "exec", dont_inherit=True), namespace)
    return namespace[name]  # type: ignore[no-any-return]


def _check_or_too_deep(func: types.FunctionType, cases: list[tuple[Any, ...]]) -> None:
    """Behaves the same, or (only where no thread can have a larger stack) says that
    the input is nested too deeply."""
    if NO_THREADS:
        try:
            unveil.decompile(func)
        except UnveilError as exc:
            assert "nested too deeply" in str(exc)
            return
    check_function(func, cases)


LONG = {
    # (CPython compiles each of these; each nests one level per term)
    "sum_1500": ("def f(a, b):\n    return " + " + ".join(["a", "b"] * 750),
                 [(1, 2), ("x", "y"), (1, "y")]),
    "chained_comparison_300": ("def f(a, b):\n    return " + " < ".join(["a", "b"] * 150),
                               [(1, 2), (2, 1), (1, 1)]),
    "and_1000": ("def f(a, b):\n    return " + " and ".join(["a", "b"] * 500),
                 [(1, 2), (0, 1), (1, 0), ("", 1)]),
    "or_1000": ("def f(a, b):\n    return " + " or ".join(["a", "b"] * 500),
                [(0, 0), (0, 1), ("", [])]),
    "attributes_2000": ("def f(a, b):\n    return a" + ".real" * 2000, [(1, 0), (2.5, 0)]),
    "elif_500": ("def f(a, b):\n" + "".join(
        f"    {'el' if i else ''}if a == {i}:\n        return {i} + b\n" for i in range(500))
        + "    return -1\n", [(0, 1), (250, 1), (499, 2), (500, 0)]),
    "nested_calls_90": ("def f(a, b):\n    return " + "a(" * 90 + "b" + ")" * 90,
                        [(abs, -3), (str, 5)]),
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_and_deep_expressions(name: str) -> None:
    if NO_THREADS and name == "attributes_2000":
        pytest.skip("CPython's own compile() of it exhausts Pyodide's stack (a fatal error)")
    source, cases = LONG[name]
    _check_or_too_deep(_function(source + "\n"), cases)


@pytest.mark.skipif(NO_THREADS, reason="needs a thread with a larger stack")
def test_long_chains_read_as_written() -> None:
    """The same style as short code: no temporaries once a chain passes some length."""
    for op in (" and ", " or ", " < "):
        source = "def f(a, b):\n    return " + op.join(["a", "b"] * 400) + "\n"
        text = unveil.decompile(_function(source))
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(source)), text[:300]


def _with_constants(func: types.FunctionType, swap: Callable[[Any], Any]) -> types.FunctionType:
    def fix(code: types.CodeType) -> types.CodeType:
        def one(c: Any) -> Any:
            if isinstance(c, types.CodeType):
                return fix(c)
            if isinstance(c, tuple):
                return tuple(one(x) for x in c)
            return swap(c)
        return code.replace(co_consts=tuple(one(c) for c in code.co_consts))
    defaults = tuple(swap(d) for d in func.__defaults__ or ()) or None
    return types.FunctionType(fix(func.__code__), func.__globals__, func.__name__, defaults)


def _huge() -> int:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return 7 ** (limit * 2 or 12_000)  # (more digits than may be printed in decimal)


HUGE_INT = {
    "return": ("def f(x):\n    return x + 12345, (7, -12345)\n", [(1,), (-1,)]),
    "if": ("def f(x):\n    if x == 12345:\n        return 1\n    return 2\n", [(1,), (2,)]),
    "while": ("def f(x):\n    n = 0\n    while x < 12345 and n < 3:\n        x += 1\n"
              "        n += 1\n    return x, n\n", [(1,), (5,)]),
    "default": ("def f(x=12345):\n    return x % 1000\n", [(), (5,)]),
    "dict": ("def f(x):\n    return {12345: x, 'k': 12345}\n", [(1,)]),
}


@pytest.mark.parametrize("name", sorted(HUGE_INT))
def test_integers_too_long_for_decimal(name: str) -> None:
    source, cases = HUGE_INT[name]
    huge = _huge()
    func = _with_constants(_function(source),
                           lambda c: {12345: huge, -12345: -huge}.get(c, c)
                           if type(c) is int else c)
    check_function(func, cases)


def _sample() -> types.CodeType:
    return _function("def f(a, b):\n    for x in a:\n        if x:\n            b += x\n"
                     "    try:\n        return g(b, k=1)\n    except E as e:\n"
                     "        return e\n").__code__


def _set_arg(code: types.CodeType, opname: str, arg: int) -> types.CodeType:
    """``code`` with the first ``opname`` instruction's argument byte set to ``arg``."""
    raw = bytearray(code.co_code)
    offset = next(i.offset for i in __import__("dis").get_instructions(code)
                  if i.opname == opname)
    raw[offset + 1] = arg
    return code.replace(co_code=bytes(raw))


def _malformed() -> dict[str, types.CodeType]:
    code = _sample()
    out = {
        "constant index past co_consts": _set_arg(code, "LOAD_CONST", 200),
        "name index past co_names": _set_arg(code, "LOAD_GLOBAL", 250),
        "local index past co_varnames": _set_arg(code, "STORE_FAST", 90),
        "jump into no instruction": _set_arg(code, "FOR_ITER", 0x7F),
    }
    if sys.version_info >= (3, 11):
        out["exception table cut short"] = code.replace(
            co_exceptiontable=code.co_exceptiontable[:-1])
        out["handler in no instruction"] = code.replace(
            co_exceptiontable=code.co_exceptiontable[:2] + bytes([0x3F])
            + code.co_exceptiontable[3:])
    return out


@pytest.mark.parametrize("what", sorted(_malformed()))
def test_malformed_bytecode_gets_one_sentence(what: str) -> None:
    code = _malformed()[what]
    for run in (unveil.decompile, unveil.recompile):
        try:
            run(code)
        except UnveilError as exc:
            message = str(exc)
            assert "\n" not in message and "f" in message, message
            if isinstance(exc, BadInputError):
                assert "malformed" in message
        # (source that compiles is fine too: the argument may still name something)


def test_collector_paused_inside_and_set_back() -> None:
    """A decompile pauses the cyclic collector and leaves it as it found it: on after
    success and after an error, off where it was off."""
    from unveil.decompiler import deep

    seen: list[bool] = []

    def work() -> int:
        seen.append(gc.isenabled())
        return 1

    assert gc.isenabled()
    try:
        assert deep.with_room(work, "w") == 1
        assert seen == [False] and gc.isenabled()
        with pytest.raises(ZeroDivisionError):
            deep.with_room(lambda: 1 // 0, "w")
        assert gc.isenabled()
        gc.disable()
        deep.with_room(work, "w")
        assert not gc.isenabled()
    finally:
        gc.enable()


PEP_646 = [
    "from typing import TypeVarTuple\nTs = TypeVarTuple('Ts')\n"
    "def f(*rest: *Ts) -> tuple[int, *Ts]:\n    return rest\n",
] if sys.version_info >= (3, 11) else []
if sys.version_info >= (3, 12):
    PEP_646.append("def f[*Ts, T](x: T, *rest: *Ts) -> tuple[T, *Ts]:\n    return (x, *rest)\n"
                   "class C[*Ts]:\n    def m(self, *a: *Ts) -> tuple[*Ts]:\n        return a\n")


@pytest.mark.parametrize("source", PEP_646)
def test_star_annotations(source: str) -> None:
    """``*args: *Ts`` (PEP 646): the module comes back with the same annotations."""
    text = unveil.decompile(compile(source, "<pep646>", "exec", dont_inherit=True))
    original: dict[str, Any] = {}
    exec(compile(source, "<pep646>", "exec", dont_inherit=True), original)
    again: dict[str, Any] = {}
    exec(compile(text, "<decompiled>", "exec", dont_inherit=True), again)
    assert repr(again["f"].__annotations__) == repr(original["f"].__annotations__), text
    assert again["f"](1, 2, 3) == original["f"](1, 2, 3)
    if "C" in original:
        assert repr(again["C"].m.__annotations__) == repr(original["C"].m.__annotations__)


def test_walrus_in_a_chained_comparison_reading_the_same_name() -> None:
    """``a <= (a := b) != c``: the comparison reads ``a`` before the walrus stores it (the
    store was written as a statement before the comparison, which then read the new
    value; at module level a temporary before it was bound)."""
    func = _function("def f(a, b, c):\n    return a <= (a := b) != (a := c)\n")
    check_function(func, [(3, 2, 5), (1, 2, 3), (1, 1, 1)])
    module = compile("x = (a <= (a := b) != (a := c))\n", "<m>", "exec", dont_inherit=True)
    text = unveil.decompile(module)
    for values in ((3, 2, 5), (1, 2, 3), (1, 1, 1), (2, 2, 2)):
        runs = []
        for code in (module, unveil.recompile(module), compile(text, "<d>", "exec")):
            namespace = dict(zip("abc", values, strict=True))
            exec(code, namespace)
            runs.append((namespace["x"], namespace["a"]))
        assert runs[0] == runs[1] == runs[2], (values, runs, text)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 is 3.12+")
def test_generic_class_whose_body_falls_back() -> None:
    """A generic class body written as the state machine: the store of the hidden
    ``.type_params`` is left to the ``class`` statement (it is no source)."""
    source = ("class C[**P]:\n    try:\n        a\n    except* NameError:\n        pass\n"
              "    x = 1\n")
    code = compile(source, "<edge>", "exec", dont_inherit=True)
    text = unveil.decompile(code)
    namespace: dict[str, Any] = {}
    exec(compile(text, "<decompiled>", "exec", dont_inherit=True), namespace)
    cls = namespace["C"]
    assert cls.x == 1 and [p.__name__ for p in cls.__type_params__] == ["P"], text


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 is 3.12+")
def test_alias_value_reading_its_own_name_beside_a_comprehension_binding_it() -> None:
    """Recompiled alone, the alias's value keeps reading its own name as a global even
    where an inlined comprehension also binds that name as a local."""
    from unveil.codeobj import iter_code_objects
    from unveil.verify.batch import check_code

    code = compile("type B[*T] = (a for a in T if [a for B in B])\n", "<edge>", "exec",
                   dont_inherit=True)
    statuses = {q: check_code(c, qualname=q).status for q, c in iter_code_objects(code)}
    assert set(statuses.values()) == {"identical"}, statuses


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 is 3.12+")
@pytest.mark.parametrize("c", [True, False])
@pytest.mark.parametrize("keywords", ["", ", metaclass=type"])
def test_generic_class_with_a_conditional_base_holding_and(c: bool, keywords: str) -> None:
    """``class C[T](a and b if c else d)``: the compiler copies the class creation into
    each arm; it comes back as one ``class`` statement."""
    source = ("class A: pass\nclass B: pass\nclass D: pass\n"
              f"class C[T](A and B if c else D{keywords}):\n    x = 1\n")
    code = compile(source, "<edge>", "exec", dont_inherit=True)
    text = unveil.decompile(code)
    assert text.count("class C[") == 1, text
    original: dict[str, Any] = {"c": c}
    again: dict[str, Any] = {"c": c}
    exec(code, original)
    exec(compile(text, "<decompiled>", "exec", dont_inherit=True), again)
    assert [b.__name__ for b in again["C"].__bases__] == \
        [b.__name__ for b in original["C"].__bases__]
    assert again["C"].x == 1 and [p.__name__ for p in again["C"].__type_params__] == ["T"]
