"""``unveil.decompiler.ir.nodes``: the same nodes, in the same order, as ``ast``'s walkers."""
# pyodide-compatible

from __future__ import annotations

import ast

import pytest

from unveil.decompiler.ir import nodes
from unveil.decompiler.ir.exprs import Shared

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


def test_same_is_equal_dumps() -> None:
    tree = ast.parse(SOURCE)
    stmts = list(ast.walk(tree))
    # every pair of nodes of the tree, and each node against a parse of its own text
    for a in stmts[:120]:
        for b in stmts[:120]:
            assert nodes.same(a, b) == (ast.dump(a) == ast.dump(b)), (ast.dump(a), ast.dump(b))
    for s in tree.body:
        assert nodes.same(s, ast.parse(ast.unparse(s)).body[0])
    # constants are told apart as their reprs are (``ast.dump`` prints the repr)
    for x, y, equal in ((1, 1.0, False), (0.0, -0.0, False), (True, 1, False),
                        (float("nan"), float("nan"), True), ((1, 2), (1, 2), True)):
        assert nodes.same(ast.Constant(x), ast.Constant(y)) is equal
    assert nodes.same([ast.Pass()], [ast.Pass()]) and not nodes.same([ast.Pass()], [])


def test_facts_are_declared_and_used() -> None:
    """Every fact the decompiler notes on a node is declared in ``facts.FACTS``, and
    every declared one is noted somewhere: ``attach`` refuses the others at run time,
    and this reads the package's source for the names it passes."""
    import pathlib

    import pytest

    from unveil.decompiler.ir import facts

    with pytest.raises(AssertionError, match="undeclared"):
        facts.attach(ast.Pass(), colour="red")
    assert facts.attach(ast.Pass(), line=3).line == 3  # type: ignore[attr-defined]
    attached: set[str] = set()
    package = pathlib.Path(facts.__file__).parent.parent  # all of decompiler/
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "attach":
                attached.update(k.arg for k in node.keywords if k.arg)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "bump" and isinstance(node.args[1], ast.Constant):
                attached.add(node.args[1].value)  # (counters kept with ``setattr``)
    assert attached <= set(facts.FACTS)
    assert set(facts.FACTS) - attached == set(), "declared but never attached"


def test_the_decompilers_own_nodes_copy_with_their_fields() -> None:
    """``copy.deepcopy`` of a body holding the decompiler's own nodes (3.14's annotation
    marker, a stack slot) keeps them whole, on every Python: ``ast.AST``'s own reduce
    before 3.14 builds them without their required arguments."""
    import copy

    from unveil.decompiler.ir.exprs import Slot
    from unveil.decompiler.ir.markers import ExcMarker

    marker = ExcMarker("annotate", ast.Name(id="f", ctx=ast.Load()), flag=True)
    body = [marker, ast.Expr(value=Slot(3))]
    again = copy.deepcopy(body)
    assert isinstance(again[0], ExcMarker) and again[0] is not marker
    assert (again[0].kind, again[0].flag, again[0].value.id) == ("annotate", True, "f")
    assert again[0].value is not marker.value
    assert isinstance(again[1].value, Slot) and again[1].value.index == 3
    assert copy.copy(marker).kind == "annotate"


@pytest.mark.parametrize(("source", "breaks"), [
    ("break", True),
    ("if a:\n    break", True),
    ("match a:\n    case [b]:\n        break", True),  # (a case's break is the loop's)
    ("try:\n    pass\nexcept E:\n    break", True),
    ("for b in c:\n    break", False),  # (the inner loop's)
    ("for b in c:\n    pass\nelse:\n    break", True),  # (its else's is the outer one's)
    ("def f():\n    for b in c:\n        break", False),
    ("while a:\n    if b:\n        break", False),
])
def test_loop_breaks(source: str, breaks: bool) -> None:
    from unveil.decompiler.ir.nodes import loop_breaks

    assert loop_breaks(ast.parse(source).body) is breaks
