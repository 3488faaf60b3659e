"""Graph facts the structurer needs: dominators, loops, post-dominators, handler regions.

Dominators use the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple,
Fast Dominance Algorithm"); post-dominators are dominators of the reversed graph,
computed per region with a virtual exit so that ``break``, ``continue`` and jumps
out of a region count as leaving it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

EXIT = -1


def reverse_postorder(entry: int, succs: Callable[[int], Iterable[int]]) -> list[int]:
    """The nodes reachable from ``entry``, each before its successors (but along back
    edges): depth first, successors in the order ``succs`` gives them."""
    seen = {entry}
    order: list[int] = []
    # (each node's successors read once, as the walk goes: not changed meanwhile)
    stack: list[tuple[int, Iterator[int]]] = [(entry, iter(succs(entry)))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child not in seen:
                seen.add(child)
                stack.append((child, iter(succs(child))))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def dominators(entry: int, succs: Callable[[int], Iterable[int]]) -> dict[int, int]:
    """Immediate dominator of every node reachable from ``entry`` (entry maps to itself),
    in reverse postorder."""
    known: dict[int, list[int]] = {}

    def listed(n: int) -> list[int]:  # (each node's successors asked for once)
        out = known.get(n)
        if out is None:
            out = known[n] = list(succs(n))
        return out

    return _dominators(reverse_postorder(entry, listed), known)


def _dominators(order: list[int], known: dict[int, list[int]]) -> dict[int, int]:
    """Immediate dominator of every node of ``order`` (a reverse postorder from its first
    node), the successors of each node listed in ``known``."""
    # (by index in ``order``: a node's dominators come before it)
    index = {n: i for i, n in enumerate(order)}
    preds: list[list[int]] = [[] for _ in order]
    back = False  # (an edge to a node not after its source in ``order``)
    for i, n in enumerate(order):
        for s in known[n]:
            j = index.get(s)
            if j is not None:
                preds[j].append(i)
                back = back or j <= i
    idom = [-1] * len(order)
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for i in range(1, len(order)):
            new = -1
            for p in preds[i]:
                if idom[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                while p != new:  # (the two fingers of the paper's ``intersect``)
                    while p > new:
                        p = idom[p]
                    while new > p:
                        new = idom[new]
            if new >= 0 and idom[i] != new:
                idom[i] = new
                changed = True
        if not back:
            break  # (each node's predecessors came before it, with their final dominators)
    # (every node has its dominator after the first pass, in this order)
    return {order[i]: order[d] for i, d in enumerate(idom)}


def dominates(idom: dict[int, int], a: int, b: int) -> bool:
    """Does ``a`` dominate ``b``?"""
    if b not in idom:
        return False
    while True:
        if a == b:
            return True
        parent = idom[b]
        if parent == b:
            return False
        b = parent


def dominator_intervals(idom: dict[int, int]) -> dict[int, tuple[int, int]]:
    """Each node's (entry, exit) numbers in a depth-first walk of the dominator tree:
    ``a`` dominates ``b`` exactly when ``a``'s interval holds ``b``'s (a constant-time
    test, where :func:`dominates` walks up the tree)."""
    children: dict[int, list[int]] = {}
    root = None
    for n, parent in idom.items():
        if parent == n:
            root = n
        else:
            children.setdefault(parent, []).append(n)
    out: dict[int, tuple[int, int]] = {}
    if root is None:
        return out
    clock = 0
    enter: dict[int, int] = {}
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            out[n] = (enter[n], clock)
        else:
            enter[n] = clock
            stack.append((n, True))
            stack.extend((c, False) for c in children.get(n, ()))
        clock += 1
    return out


def natural_loops(entry: int, succs: Callable[[int], Iterable[int]],
                  preds: Callable[[int], Iterable[int]],
                  idom: dict[int, int]) -> dict[int, set[int]]:
    """Blocks of each natural loop, by header (``idom``: as :func:`dominators` gives it).
    Retreating edges to non-dominators are ignored."""
    loops: dict[int, set[int]] = {}
    # (a node that dominates another comes first in reverse postorder, ``idom``'s order:
    # only the edges to a node not after their source may be back edges)
    rank = {n: i for i, n in enumerate(idom)}
    back = [(n, s) for n, i in rank.items() for s in succs(n) if rank.get(s, i + 1) <= i]
    if not back:
        return loops
    span = dominator_intervals(idom)
    for n, s in back:
        low, high = span[n]
        if span[s][0] <= low and high <= span[s][1]:  # s dominates n
            body = loops.setdefault(s, {s})
            todo = [n]
            while todo:
                m = todo.pop()
                if m in body:
                    continue
                body.add(m)
                todo.extend(p for p in preds(m) if p in idom)
    return loops


def postdominators(nodes: set[int], succs: Callable[[int], Iterable[int]]) -> dict[int, int]:
    """Immediate post-dominators inside ``nodes``; edges leaving ``nodes`` go to ``EXIT``."""
    rpreds: dict[int, list[int]] = {n: [] for n in nodes}
    exits: list[int] = []  # (the nodes with an edge that leaves, or none at all)
    for n in nodes:
        out = list(succs(n))
        leaves = not out
        for s in out:
            if s in rpreds:
                rpreds[s].append(n)
            else:
                leaves = True
        if leaves:
            exits.append(n)
    # nodes that cannot reach any exit (infinite loops) get an edge to EXIT too
    reach = set(exits)
    todo = list(exits)
    while todo:
        for p in rpreds[todo.pop()]:
            if p not in reach:
                reach.add(p)
                todo.append(p)
    exits += [n for n in nodes if n not in reach]
    # (the reversed graph, whole: dominators of it without asking for successors node by node)
    rpreds[EXIT] = exits
    return _dominators(reverse_postorder(EXIT, rpreds.__getitem__), rpreds)
