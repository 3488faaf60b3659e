"""The printer writes source that parses back to the same tree."""
# pyodide-compatible

from __future__ import annotations

import ast

import pytest

from unveil.decompiler.render.emit import unparse

SOURCES = [
    # from a random program: 3.10's unparser writes a backslash before the brace
    'f\'\'\'b\'\\\\\'"\\\\\'\\\\\'\\\\\'"""{{}}\\\\\\\\\\\'\\\'"\\\'\\\'\\\'"""{{}}\\\\{name_4!a}b\'\\\\xef\\\\xbb\\\\xbf\\\'\'\'\'',
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
    if ast.dump(ast.parse(text, mode="eval")) == ast.dump(tree):
        return
    # spelled out differently: it must evaluate to the same
    names = {"a": 1, "b": 2, "x": "q", "y": [1], "w": 4, "z": 2, "name_4": "é"}
    assert eval(compile(text, "<t>", "eval"), dict(names)) == \
        eval(compile(tree, "<t>", "eval"), dict(names))  # noqa: S307
