"""Faster stand-ins for ``ast.walk`` and ``ast.iter_child_nodes``: the same nodes in the
same order, without the generator-per-node and per-field overhead of the ``ast``
module's versions (the decompiler walks every tree it makes several times)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_AST = ast.AST


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([v for v in value if isinstance(v, _AST)])
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``: breadth first, a node's children taken before it is yielded."""
    todo = [node]
    for n in todo:  # (the list grows while it is read)
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, _AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend([v for v in value if isinstance(v, _AST)])
        yield n


def names_in(stmts: list[ast.stmt]) -> set[str]:
    """The ids of all ``Name`` nodes anywhere in ``stmts`` (nested scopes included)."""
    out: set[str] = set()
    todo: list[ast.AST] = list(stmts)
    for n in todo:  # (the list grows while it is read)
        if isinstance(n, ast.Name):
            out.add(n.id)
            continue  # (its only child is its context)
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, _AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend([v for v in value if isinstance(v, _AST)])
    return out
