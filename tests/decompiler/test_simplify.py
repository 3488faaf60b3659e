"""unveil.decompiler.tidy.simplify: lists a body builds and shuffles, written where they go.

Each case is compiled by CPython, recompiled with ``simplify=True``, run side by side with
the original (results, the calls made, in order) and shown equivalent by the check."""
# pyodide-compatible

from __future__ import annotations

import ast
import sys
import textwrap
from types import CodeType, FunctionType
from typing import Any

import pytest

from unveil.decompiler.api import recompile
from unveil.decompiler.tidy.simplify import simplify
from unveil.decompiler.tidy.temporaries import Known
from unveil.verify.equivalence import prove_equivalent

needs_check = pytest.mark.skipif(sys.version_info < (3, 11),
                                 reason="the equivalence check covers 3.11+")

# shapes of Dynamo's code: a list of live values kept, sliced, extended, emptied, and
# unpacked into one resume call
CASES = {
    "resume_call": """
        def f(module, args):
            _t0 = [[]]
            _t0[0][0:0] = [show('entering', (tmp_2 := kind)(module))]
            _t1 = [_t0[0]]
            _t2 = [[()][0]]
            _t1[0][1:] = []
            _t3 = resume
            _t4 = _t1[-1]
            del _t1[-1]
            return _t3([], _t1, *_t4)
    """,
    "branches": """
        def f(a, b):
            graph_out_0 = compiled(a, b)
            x = graph_out_0[0]
            _t3 = (_t4 := [graph_out_0[1]])[0:1]
            _t3.extend([b])
            del graph_out_0
            _t5 = [_t3]
            if _t5[0][0]:
                _t6 = _t5[0]
                _t6[0:0] = []
                return resume(1, [], *_t6[1:], x)
            return resume(2, [], _t5[0][1], x)
    """,
    "call_kept_in_place": """
        def f(a):
            l = [show(a)]
            show(a + 1)
            return resume(*l)
    """,
    "name_stored_again": """
        def f(a):
            x = a
            l = [x]
            x = 5
            return resume(*l, x)
    """,
    # a parameter stored again, and a cell a call changes: read where they were read
    "parameter_stored_again": """
        def f(a):
            _t2 = a
            show(a)
            a = 5
            return resume(_t2, a)
    """,
    "cell_changed_by_a_call": """
        def f(a):
            def bump():
                nonlocal a
                a = a + 1
            _t2 = a
            bump()
            return resume(_t2, a)
    """,
    # a temporary chosen by an ``if`` (``_t1 = b if a else 0``) after a value that is None
    # unless a test holds: the folded ``if`` is an assignment, not a gate for that value
    "choice_after_a_conditional_value": """
        def f(a, b):
            y = show(a) if b else None
            _t1 = 0
            if a:
                _t1 = b
            return resume(_t1, y)
    """,
    "aliases": """
        def f(a, b):
            l = [[a]]
            m = l[0]
            m.append(b)
            m[0:0] = [b]
            del l[0][-1]
            return resume(*l[0])
    """,
}


def _function(source: str) -> FunctionType:
    namespace: dict[str, Any] = {}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    return namespace["f"]


def _run(fn: FunctionType, *args: Any) -> tuple[Any, list[Any]]:
    log: list[Any] = []
    env = {"show": lambda *a: log.append(("show", a)) or len(log),
           "kind": lambda m: log.append(("kind", m)) or type(m),
           "resume": lambda *a: log.append(("resume", a)) or a,
           "compiled": lambda a, b: (log.append(("compiled", a, b)), (a * 2, a > 0))[1]}
    fn.__globals__.update(env)
    return fn(*args), log


@pytest.mark.parametrize("name", sorted(CASES))
def test_simplified_code_does_what_the_original_does(name: str) -> None:
    original = _function(CASES[name])
    simpler = FunctionType(recompile(original.__code__, simplify=True), original.__globals__)
    for args in ((1, 2), (-1, 3)) if original.__code__.co_argcount == 2 else ((1,), (7,)):
        assert _run(simpler, *args) == _run(original, *args)


@needs_check
@pytest.mark.parametrize("name", sorted(CASES))
def test_simplified_code_is_shown_equivalent(name: str) -> None:
    code = _function(CASES[name]).__code__
    verdict = prove_equivalent(code, recompile(code, simplify=True))
    assert verdict.equivalent, verdict.reason


def _simplified(source: str) -> str | None:
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    body = simplify(fn.body, {a.arg for a in fn.args.args})
    if body is None:
        return None
    fn.body = body
    return ast.unparse(fn)


def test_lists_are_written_where_they_go() -> None:
    text = _simplified(CASES["resume_call"])
    assert text is not None
    tree = ast.parse(text)
    body = tree.body[0].body  # type: ignore[attr-defined]
    assert len(body) == 2, text  # the call that is kept in place, and the resume call
    assert "resume([], [], show_out)" in text, text
    assert not any(isinstance(n, ast.Delete | ast.NamedExpr) or isinstance(n, ast.Subscript)
                   and isinstance(n.slice, ast.Slice) for n in ast.walk(tree)), text


def test_branches_keep_their_own_lists() -> None:
    text = _simplified(CASES["branches"])
    assert text is not None
    assert "return resume(1, [], b, x)" in text and "return resume(2, [], b, x)" in text, text
    assert "_t" not in text, text


def test_a_call_in_a_list_is_evaluated_where_the_list_was_built() -> None:
    text = _simplified(CASES["call_kept_in_place"])
    assert text is not None
    lines = [line.strip() for line in text.splitlines()[1:]]
    assert lines == ["show_out = show(a)", "show(a + 1)", "return resume(show_out)"], text


@pytest.mark.parametrize("source", [
    # changed after it was passed on
    "def f(a):\n    l = [a]\n    g(l)\n    l.append(1)\n    return l",
    # used twice as an object
    "def f(a):\n    l = [a]\n    g(l)\n    return l",
    # in a loop
    "def f(a):\n    l = [a]\n    for x in a:\n        l.append(x)\n    return l",
])
def test_a_list_used_in_a_way_not_modelled_is_left_alone(source: str) -> None:
    assert _simplified(source) is None


def test_code_objects_simplified_by_recompile_keep_their_layout() -> None:
    code: CodeType = _function(CASES["branches"]).__code__
    simpler = recompile(code, simplify=True)
    assert simpler.co_argcount == code.co_argcount and simpler.co_freevars == code.co_freevars
    assert simpler.co_varnames[:2] == code.co_varnames[:2]


# Dynamo's graph call on torch 2.13: a profiler hook, the graph's inputs loaded (shared
# prefixes kept in its ``tmp_N`` locals), the other hook, the graph, its temporaries deleted
GRAPH_CALL = """
    def f(self, kwargs):
        _t9 = __compiled_fn_1_ab12
        tmp_1 = utils.enter()
        _s0 = (tmp_2 := kwargs)['x']
        _s1 = (tmp_3 := self.mods)['a'].w
        _s2 = tmp_3['b'].w
        utils.exit(tmp_1)
        _t3 = _t9(_s0, _s1, _s2, tmp_2['y'])
        del tmp_2
        del tmp_3
        out = _t3
        tmp_4 = _t5 = utils.setattr_raw
        tmp_4(out, 'a', 1)
        _t5(out, 'b', 2)
        return out
"""


def _fixed(name: str, attr: str | None) -> bool:
    return name in ("utils", "__compiled_fn_1_ab12") if attr is None else \
        name == "utils" and attr in ("enter", "exit", "setattr_raw")


def _graph_env(log: list[Any]) -> dict[str, Any]:
    class Utils:
        @staticmethod
        def enter() -> str:
            log.append("enter")
            return "token"

        @staticmethod
        def exit(token: str) -> None:
            log.append(("exit", token))

        @staticmethod
        def setattr_raw(obj: Any, name: str, value: Any) -> None:
            log.append(("setattr", name, value))

    return {"utils": Utils,
            "__compiled_fn_1_ab12": lambda *a: log.append(("graph", a)) or ["result", a]}


class _Logged(dict):  # type: ignore[type-arg]
    """A dict that logs its reads (the order of loads is part of what is compared)."""

    def __init__(self, log: list[Any], items: dict[str, Any]) -> None:
        super().__init__(items)
        self.log = log

    def __getitem__(self, key: str) -> Any:
        self.log.append(("getitem", key))
        return super().__getitem__(key)


def _graph_run(fn: FunctionType, missing: str = "") -> tuple[Any, list[Any]]:
    log: list[Any] = []
    fn.__globals__.update(_graph_env(log))
    module = type("M", (), {})()
    module.mods = _Logged(log, {k: type("P", (), {"w": k * 2})() for k in ("a", "b")})
    kwargs = _Logged(log, {"x": 1, "y": 2})
    if missing:
        del kwargs[missing]
    try:
        return fn(module, kwargs), log
    except KeyError as exc:
        return ("KeyError", exc.args), log


def _graph_simplified(fixed: Any) -> tuple[FunctionType, FunctionType, str]:
    original = _function(GRAPH_CALL)
    code = recompile(original.__code__, simplify=True, fixed=fixed)
    tree = ast.parse(textwrap.dedent(GRAPH_CALL))
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    body = simplify(fn.body, {"self", "kwargs"}, fixed)
    assert body is not None
    fn.body = body
    return original, FunctionType(code, original.__globals__), ast.unparse(fn)


@pytest.mark.parametrize("fixed", [_fixed, None], ids=["fixed", "not-fixed"])
def test_a_graph_call_reads_as_one_call_and_does_the_same(fixed: Any) -> None:
    original, simpler, text = _graph_simplified(fixed)
    for missing in ("", "x", "y"):
        assert _graph_run(simpler, missing) == _graph_run(original, missing)
    if sys.version_info >= (3, 11):
        verdict = prove_equivalent(original.__code__, simpler.__code__, fixed=fixed)
        assert verdict.equivalent, verdict.reason
    lines = [line.strip() for line in text.splitlines()[1:]]
    # the inputs loaded before the hook: one tuple, unpacked into the graph call (named
    # for the graph when the call reads the graph's global)
    inputs = "args" if fixed is None else "graph_inputs"
    assert f"{inputs} = (kwargs['x'], (mods := self.mods)['a'].w, mods['b'].w)" in lines, text
    assert "del mods" in lines, text  # (the deletions joined; kwargs is read for tmp_2)
    assert not any(re_temporary(line) for line in lines), text
    # one name for the helper (``tmp_4 = _t5 = ...``), the graph's output named once
    assert lines[-3:] == ["utils_setattr_raw(out, 'a', 1)", "utils_setattr_raw(out, 'b', 2)",
                          "return out"], text
    if fixed is None:  # the graph's global is read where Dynamo read it
        assert lines[0] == "graph = __compiled_fn_1_ab12", text
        assert f"out = graph(*{inputs}, kwargs['y'])" in lines, text
    else:  # a global that holds one value is read where it is used
        assert f"out = __compiled_fn_1_ab12(*{inputs}, kwargs['y'])" in lines, text


def re_temporary(line: str) -> bool:
    import re

    return re.search(r"\b(_[ts]\d+|tmp_\d+)\b", line) is not None


def test_fixed_hooks_called_back_to_back_read_as_one_call() -> None:
    source = """
        def f(a):
            tmp_1 = utils.enter()
            utils.exit(tmp_1)
            return __compiled_fn_1_ab12(a)
    """
    text = _simplified_with(source, _fixed)
    assert "utils.exit(utils.enter())" in text, text
    # without ``fixed``, ``utils.exit`` is read after ``utils.enter()`` runs, as written
    lines = [line.strip() for line in _simplified_with(source, None).splitlines()[1:]]
    assert lines[:2] == ["enter_out = utils.enter()", "utils.exit(enter_out)"], lines


def _simplified_with(source: str, fixed: Any) -> str:
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    body = simplify(fn.body, {a.arg for a in fn.args.args}, fixed)
    if body is not None:
        fn.body = body
    return ast.unparse(fn)


# Dynamo 2.15's profiler region as its bytecode decompiles statement for statement: the
# flag read once, a local set to a constant and tested again after the join, and the
# template's ``return None`` left on the stack at each join (the ``_sN`` slots)
PROFILER_GATE = """
def f(a, b):
    tmp_3 = profiler._is_profiler_enabled
    tmp_2 = utils
    tmp_1 = None
    if tmp_3:
        tmp_1 = tmp_2.enter()
        _s2 = None
    else:
        _s2 = None
    if tmp_1 is not None:
        tmp_2.exit(tmp_1)
        _s4 = None
    else:
        _s4 = None
    return __compiled_fn_1_ab12(a, b)
"""


def _gated_run(source: str, enabled: bool, token: Any) -> tuple[Any, list[Any]]:
    """``f(1, 2)`` of ``source`` and what it logged, with the profiler ``enabled`` or not
    and ``utils.enter()`` giving ``token``."""
    log: list[Any] = []
    namespace = _graph_env(log)
    namespace["utils"].enter = staticmethod(lambda: log.append("enter") or token)
    namespace["profiler"] = type("P", (), {"_is_profiler_enabled": enabled})
    exec(compile(textwrap.dedent(source), "<test>", "exec"), namespace)
    return namespace["f"](1, 2), log


@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize("token", [None, "token"])
def test_a_runtime_gated_profiler_region_reads_as_written_and_does_the_same(
        enabled: bool, token: Any) -> None:
    text = _simplified_with(PROFILER_GATE, _fixed)
    lines = [line.strip() for line in text.splitlines()[1:]]
    assert lines == ["enter_out = utils.enter() if profiler._is_profiler_enabled else None",
                     "if enter_out is not None:", "utils.exit(enter_out)",
                     "return __compiled_fn_1_ab12(a, b)"], text

    assert _gated_run(text, enabled, token) == _gated_run(PROFILER_GATE, enabled, token)
    original, simpler = _function(PROFILER_GATE), _function(text)
    if sys.version_info >= (3, 11):
        verdict = prove_equivalent(original.__code__, simpler.__code__, fixed=_fixed)
        assert verdict.equivalent, verdict.reason


_KNOWN = Known(_fixed, lambda name, attr: (name, attr) == ("utils", "enter"))


@pytest.mark.parametrize("enabled", [False, True])
def test_a_gated_empty_profiler_region_is_one_test_where_enter_never_gives_none(
        enabled: bool) -> None:
    """Knowing that ``utils.enter()`` never returns None, the gate around an empty region
    reads as Dynamo's codegen describes it (``if enabled: exit(enter())``), and the check
    shows it the same, with that knowledge only."""
    text = _simplified_with(PROFILER_GATE, _KNOWN)
    lines = [line.strip() for line in text.splitlines()[1:]]
    assert lines == ["if profiler._is_profiler_enabled:", "utils.exit(utils.enter())",
                     "return __compiled_fn_1_ab12(a, b)"], text

    assert _gated_run(text, enabled, "cm") == _gated_run(PROFILER_GATE, enabled, "cm")
    original, simpler = _function(PROFILER_GATE), _function(text)
    if sys.version_info >= (3, 11):
        assert prove_equivalent(original.__code__, simpler.__code__, fixed=_KNOWN).equivalent
        # without it, enter() might give None (and exit not run): not shown the same
        verdict = prove_equivalent(original.__code__, simpler.__code__, fixed=_fixed)
        assert not verdict.equivalent, verdict.reason
    # a region that loads something between enter and exit keeps its two tests
    loaded = PROFILER_GATE.replace("    if tmp_1 is not None:", "    y = a.b\n    if tmp_1 is not None:")
    assert "if enter_out is not None:" in _simplified_with(loaded, _KNOWN)


def test_a_stack_value_only_dropped_after_a_join_is_not_kept() -> None:
    source = """
        def f(c):
            if c:
                g()
                _s0 = None
            else:
                _s0 = None
            return h()
    """
    lines = [line.strip() for line in _simplified_with(source, None).splitlines()[1:]]
    assert lines == ["if c:", "g()", "return h()"], lines


def test_a_dropped_stack_value_goes_where_its_slot_is_used_again_later() -> None:
    # (a stack slot's variable is one name for every value that slot holds)
    source = """
        def f(c, x):
            if c:
                g()
                _s0 = None
            else:
                _s0 = None
            _s0 = x.y
            if _s0:
                _s1 = None
            else:
                _s1 = None
            return h(_s0, _s1)
    """
    lines = [line.strip() for line in _simplified_with(source, None).splitlines()[1:]]
    assert lines == ["if c:", "g()", "y = x.y", "if y:", "_s1 = None", "else:", "_s1 = None",
                     "return h(y, _s1)"], lines


WALRUS = """
def f(self, k):
    tmp_1 = (tmp_2 := (tmp_3 := self.mods).get).__call__(k), (tmp_4 := self.b).c, tmp_4.d
    return tmp_1, tmp_2, tmp_3, (k(), (tmp_5 := self.e).f, tmp_5.g)
"""


def test_a_walrus_evaluated_first_is_a_statement_of_its_own() -> None:
    text = _simplified_with(WALRUS, None)
    lines = [line.strip() for line in text.splitlines()[1:]]
    # the walruses evaluated first are named first; one after a call stays where it is
    assert lines[:2] == ["mods = self.mods", "mods_get = mods.get"], text
    assert "(b := self.b).c" in lines[2] and ":=" in lines[-1], text
    original, simpler = _function(WALRUS), _function(text)
    if sys.version_info >= (3, 11):
        verdict = prove_equivalent(original.__code__, simpler.__code__)
        assert verdict.equivalent, verdict.reason


MODULE_DICTS = """
def f(x):
    tmp_1 = utils.enter()
    graph_inputs = (tmp_3 := (tmp_2 := model._modules)['0']._parameters)['weight'], tmp_3['bias'], x, (tmp_4 := tmp_2['2']._parameters)['weight']
    utils.exit(tmp_1)
    out = g(*graph_inputs)
    del tmp_3, tmp_2, tmp_4
    return out
"""


def test_module_dict_prefixes_read_first_are_named_and_deleted_as_before() -> None:
    text = _simplified_with(MODULE_DICTS, None)
    lines = [line.strip() for line in text.splitlines()[1:]]
    assert lines[1:3] == ["model_modules = model._modules",
                          "model_0_parameters = model_modules['0']._parameters"], text
    assert "del model_0_parameters, model_modules" in lines and ":=" not in text, text

    def run(source: str) -> Any:
        log: list[Any] = []
        layer = type("L", (), {"_parameters": {"weight": "w", "bias": "b"}})
        namespace: dict[str, Any] = {
            "utils": type("U", (), {"enter": staticmethod(lambda: log.append("enter")),
                                    "exit": staticmethod(lambda t: log.append("exit"))}),
            "model": type("M", (), {"_modules": {"0": layer, "2": layer}}),
            "g": lambda *a: log.append(a) or len(a)}
        exec(compile(textwrap.dedent(source), "<test>", "exec"), namespace)
        return namespace["f"]("x"), log  # (a ``del`` of a name never bound would raise)

    assert run(text) == run(MODULE_DICTS)
