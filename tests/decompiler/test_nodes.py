"""``unveil.decompiler.nodes``: the same nodes, in the same order, as ``ast``'s walkers."""
# pyodide-compatible

from __future__ import annotations

import ast

from unveil.decompiler import nodes
from unveil.decompiler.exprs import Shared

SOURCE = '''
import os.path as p
from . import x
@deco(1, k=2)
class C(B, metaclass=M):
    a: int = 1
    def f(self, x, /, y=2, *args, z, w=3, **kw) -> "r":
        global g
        try:
            async def h(): await q; return [i async for i in r if i]
        except (E, F) as e:
            raise G from e
        else:
            pass
        finally:
            del x[1:2:3], y.z
        with a as (b, c), d:
            yield from {k: v for k, v in kw.items()} or {*s} and (lambda *a, **k: -a)
        match z:
            case [1, *rest] | {"k": _, **more} if rest: f"{x!r:>{w}}"
            case P(a, b=c) as d: z += 1
        while not x < y <= z: break
        for i, j in e: continue
        else: assert x, "m"
'''


def _trees() -> list[ast.AST]:
    trees: list[ast.AST] = [ast.parse(SOURCE)]
    shared = Shared(ast.Name(id="v", ctx=ast.Load()))  # a decompiler node among ast's
    trees.append(ast.Expr(value=ast.BinOp(left=shared, op=ast.Add(), right=shared)))
    return trees


def test_walk_is_ast_walk() -> None:
    for tree in _trees():
        ours, theirs = list(nodes.walk(tree)), list(ast.walk(tree))
        assert len(ours) == len(theirs)
        assert all(a is b for a, b in zip(ours, theirs, strict=True))


def test_children_are_iter_child_nodes() -> None:
    for tree in _trees():
        for node in ast.walk(tree):
            assert nodes.children(node) == list(ast.iter_child_nodes(node))


def test_names_in() -> None:
    body = ast.parse("def f(a):\n    b = a + c\n    return lambda: d\n").body
    assert nodes.names_in(body) == {"a", "b", "c", "d"}
    for tree in _trees():
        stmts = tree.body if isinstance(tree, ast.Module) else [tree]
        assert nodes.names_in(stmts) == {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
