"""unveil.decompiler.simplify: lists a body builds and shuffles, written where they go.

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
from unveil.decompiler.simplify import simplify
from unveil.equivalence import prove_equivalent

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
