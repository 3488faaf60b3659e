"""The graph algorithms the structurer stands on (``decompiler.regions``) and the blocks
they run on (``decompiler.cfg``), tested directly on small graphs and functions."""
# pyodide-compatible

from __future__ import annotations

from unveil.bytecode import read
from unveil.decompiler.graph import cfg
from unveil.decompiler.graph.regions import (
    EXIT,
    dominates,
    dominator_intervals,
    dominators,
    natural_loops,
    postdominators,
    reverse_postorder,
)

# 0 -> 1 -> 2 -> 4, 1 -> 3 -> 4 (a diamond), 4 -> 1 (a loop back to the test), 5 unreachable
GRAPH = {0: [1], 1: [2, 3], 2: [4], 3: [4], 4: [1, 6], 5: [4], 6: []}


def succs(n: int) -> list[int]:
    return GRAPH[n]


def preds(n: int) -> list[int]:
    return [m for m, out in GRAPH.items() if n in out]


def test_reverse_postorder_puts_each_node_before_its_successors_but_back_edges() -> None:
    order = reverse_postorder(0, succs)
    assert sorted(order) == [0, 1, 2, 3, 4, 6]  # 5 is not reachable
    at = {n: i for i, n in enumerate(order)}
    for n in order:
        for s in succs(n):
            if (n, s) != (4, 1):  # the back edge
                assert at[n] < at[s], (n, s, order)
    assert order[0] == 0


def test_dominators_of_a_diamond_in_a_loop() -> None:
    idom = dominators(0, succs)
    assert idom == {0: 0, 1: 0, 2: 1, 3: 1, 4: 1, 6: 4}
    assert dominates(idom, 1, 6) and dominates(idom, 0, 4) and dominates(idom, 4, 4)
    assert not dominates(idom, 2, 4) and not dominates(idom, 3, 4)
    assert not dominates(idom, 0, 5)  # unreachable: dominated by nothing


def test_dominator_intervals_answer_as_dominates_does() -> None:
    idom = dominators(0, succs)
    intervals = dominator_intervals(idom)
    for a in idom:
        for b in idom:
            inside = intervals[a][0] <= intervals[b][0] and intervals[b][1] <= intervals[a][1]
            assert inside == dominates(idom, a, b), (a, b)


def test_natural_loop_of_the_back_edge() -> None:
    idom = dominators(0, succs)
    assert natural_loops(0, succs, preds, idom) == {1: {1, 2, 3, 4}}


def test_postdominators_inside_a_region() -> None:
    # inside {1, 2, 3, 4}: both branches meet at 4; 4 leaves (to 6) or loops back
    pdom = postdominators({1, 2, 3, 4}, succs)
    assert pdom[2] == 4 and pdom[3] == 4 and pdom[1] == 4
    assert pdom[4] == EXIT


def _blocks_of(source: str) -> cfg.CFG:
    namespace: dict[str, object] = {}
    exec(compile(source, "<regions>", "exec"), namespace)
    return cfg.build(read(namespace["f"].__code__))  # type: ignore[attr-defined]


def test_cfg_of_an_if_has_a_branch_and_a_join() -> None:
    # (a tail long enough that no CPython copies it into both branches)
    graph = _blocks_of("def f(a):\n    if a:\n        a = 1\n    else:\n        a = 2\n"
                       "    a = a * 3\n    a = a + 4\n    a = a - 5\n    return a\n")
    entry = graph.blocks[graph.entry]
    assert len(entry.succs) == 2  # fallthrough first, then the jump target
    joins = [b for b in graph.blocks.values() if len(b.preds) == 2]
    assert len(joins) == 1 and joins[0].last(graph.bc).op == "RETURN_VALUE"
    for block in graph.blocks.values():  # preds and succs mirror each other
        for s in block.succs:
            assert block.id in graph.blocks[s].preds


def test_cfg_of_a_loop_has_a_back_edge_the_regions_find() -> None:
    graph = _blocks_of("def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n")
    order = reverse_postorder(graph.entry, lambda b: graph.blocks[b].succs)
    idom = dominators(graph.entry, lambda b: graph.blocks[b].succs)
    loops = natural_loops(graph.entry, lambda b: graph.blocks[b].succs,
                          lambda b: graph.blocks[b].preds, idom)
    assert len(loops) == 1
    (header, body), = loops.items()
    assert graph.blocks[header].last(graph.bc).op == "FOR_ITER"
    assert header in body and len(body) >= 2 and set(body) <= set(order)


def test_cfg_gives_each_block_one_handler() -> None:
    graph = _blocks_of("def f(a):\n    try:\n        a = a + 1\n    except ValueError:\n"
                       "        a = 0\n    return a\n")
    handled = [b for b in graph.blocks.values() if b.handler_block is not None]
    assert handled, graph.blocks
    for block in handled:
        assert block.id in graph.blocks[block.handler_block].handles
