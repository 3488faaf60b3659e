"""Module and class bodies whose end the compiler copies into a ``break``: they cannot
``return``, so the copy must come back as the ``break`` (or the jump) it was.

Each body runs, original and decompiled, on several inputs given as globals; the names
they leave (a class's attributes too) and the exception they raise must agree.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

import pytest

import unveil

BODIES = {
    "while_else_break": (
        "while a:\n    if b:\n        break\n    a -= 1\nelse:\n    d = 1\n"),
    "for_else_break": (
        "for x in a:\n    if x == b:\n        break\n    c = x\nelse:\n    d = 1\n"),
    "while_break_last": "while a:\n    if b:\n        break\n    a -= 1\n",
    "try_else_break": (
        "while a:\n    try:\n        c = 10 // a\n    except ZeroDivisionError:\n"
        "        pass\n    else:\n        break\n    a -= 1\nelse:\n    d = 2\n"),
    "try_else_break_then_code": (
        "while a:\n    try:\n        c = 10 // b\n    except ZeroDivisionError:\n"
        "        pass\n    else:\n        break\n    a -= 1\nelse:\n    d = 2\ne = 3\n"),
    "with_break": (
        "import contextlib\nfor x in a:\n    with contextlib.suppress(KeyError):\n"
        "        if x == b:\n            break\n        c = {}[x]\nelse:\n    d = 4\n"),
    "nested_loops": (
        "for x in a:\n    for y in a:\n        if y == b:\n            break\n"
        "    else:\n        continue\n    break\nelse:\n    d = 5\n"),
    "if_else_end": "if a:\n    c = 1\nelse:\n    c = 2\n",
    "try_else_end": (
        "try:\n    c = 10 // a\nexcept (ZeroDivisionError, TypeError):\n    try:\n"
        "        c = 1 // b\n    except ZeroDivisionError:\n        c = 'fallback'\n"
        "    else:\n        c = 'b'\nelse:\n    c = 'a'\n"),
}

INPUTS = [dict(a=0, b=0), dict(a=3, b=0), dict(a=3, b=2), dict(a=[1, 2, 3], b=2),
          dict(a=[1, 2], b=7), dict(a=2, b=True), dict(a=None, b=1)]


def _run(code: Any, inputs: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    namespace: dict[str, Any] = {"__builtins__": __builtins__, **inputs}
    try:
        exec(code, namespace)  # noqa: S102 - the test runs the bodies it compiles
        error = None
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        error = f"{type(exc).__name__}: {exc}"
    names = {k: v for k, v in namespace.items()
             if k != "__builtins__" and not isinstance(v, type(sys))}
    return names, error


def _class_attrs(namespace: dict[str, Any]) -> dict[str, Any]:
    cls = namespace.get("K")
    return {k: v for k, v in vars(cls).items() if not k.startswith("__")} if cls else {}


@pytest.mark.parametrize("name", list(BODIES))
def test_module_body(name: str) -> None:
    source = BODIES[name]
    code = compile(source, "<module>", "exec", dont_inherit=True)
    text = unveil.decompile(code)
    assert not any(isinstance(n, ast.Return) for n in ast.walk(ast.parse(text))), text
    again = compile(text, "<decompiled>", "exec", dont_inherit=True)
    for inputs in INPUTS:
        assert _run(again, inputs) == _run(code, inputs), (inputs, text)


@pytest.mark.parametrize("name", list(BODIES))
def test_class_body(name: str) -> None:
    body = "".join(f"    {line}\n" for line in BODIES[name].splitlines())
    source = f"class K:\n{body}"
    code = compile(source, "<module>", "exec", dont_inherit=True)
    text = unveil.decompile(code)
    assert not any(isinstance(n, ast.Return) for n in ast.walk(ast.parse(text))), text
    again = compile(text, "<decompiled>", "exec", dont_inherit=True)
    for inputs in INPUTS:
        (first, first_error), (second, second_error) = _run(code, inputs), _run(again, inputs)
        assert (_class_attrs(second), second_error) == (_class_attrs(first), first_error), \
            (inputs, text)
