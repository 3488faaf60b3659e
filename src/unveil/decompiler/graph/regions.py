"""Graph facts the structurer needs: dominators, loops, post-dominators, handler regions.

Dominators use the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple,
Fast Dominance Algorithm"); post-dominators are dominators of the reversed graph,
computed per region with a virtual exit so that ``break``, ``continue`` and jumps
out of a region count as leaving it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

EXIT = -1


def reverse_postorder(entry: int, succs: Callable[[int], Iterable[int]]) -> list[int]:
    """The nodes reachable from ``entry``, each before its successors (but along back
    edges): depth first, successors in the order ``succs`` gives them."""
    seen = {entry}
    order: list[int] = []
    stack: list[tuple[int, list[int], int]] = [(entry, list(succs(entry)), 0)]
    while stack:
        node, children, i = stack.pop()
        if i < len(children):
            stack.append((node, children, i + 1))
            child = children[i]
            if child not in seen:
                seen.add(child)
                stack.append((child, list(succs(child)), 0))
        else:
            order.append(node)
    order.reverse()
    return order


def dominators(entry: int, succs: Callable[[int], Iterable[int]]) -> dict[int, int]:
    """Immediate dominator of every node reachable from ``entry`` (entry maps to itself)."""
    known: dict[int, list[int]] = {}

    def listed(n: int) -> list[int]:  # (each node's successors asked for once)
        out = known.get(n)
        if out is None:
            out = known[n] = list(succs(n))
        return out

    order = reverse_postorder(entry, listed)
    index = {n: i for i, n in enumerate(order)}
    preds: dict[int, list[int]] = {n: [] for n in order}
    for n in order:
        for s in known[n]:
            if s in preds:
                preds[s].append(n)
    idom: dict[int, int] = {entry: entry}

    def intersect(a: int, b: int) -> int:
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            new: int | None = None
            for p in preds[n]:
                if p in idom:
                    new = p if new is None else intersect(p, new)
            if new is not None and idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


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
    """Blocks of each natural loop, by header. Retreating edges to non-dominators are ignored."""
    loops: dict[int, set[int]] = {}
    span = dominator_intervals(idom)
    for n in idom:
        low, high = span[n]
        for s in succs(n):
            if s in span and span[s][0] <= low and high <= span[s][1]:  # s dominates n
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
    def rsuccs(n: int) -> list[int]:
        if n == EXIT:
            return [m for m in nodes if _leaves(m, nodes, succs)]
        return [p for p in rpreds.get(n, ())]

    rpreds: dict[int, list[int]] = {n: [] for n in nodes}
    for n in nodes:
        for s in succs(n):
            if s in nodes:
                rpreds[s].append(n)
    # nodes that cannot reach any exit (infinite loops) get an edge to EXIT too
    reach = _can_reach_exit(nodes, succs)
    stuck = [n for n in nodes if n not in reach]
    exits = [m for m in nodes if _leaves(m, nodes, succs)] + stuck

    def reverse(n: int) -> list[int]:
        if n == EXIT:
            return exits
        return rpreds.get(n, [])

    del rsuccs
    return dominators(EXIT, reverse)


def _leaves(n: int, nodes: set[int], succs: Callable[[int], Iterable[int]]) -> bool:
    out = list(succs(n))
    return not out or any(s not in nodes for s in out)


def _can_reach_exit(nodes: set[int], succs: Callable[[int], Iterable[int]]) -> set[int]:
    rpreds: dict[int, list[int]] = {n: [] for n in nodes}
    for n in nodes:
        for s in succs(n):
            if s in nodes:
                rpreds[s].append(n)
    todo = [n for n in nodes if _leaves(n, nodes, succs)]
    seen = set(todo)
    while todo:
        n = todo.pop()
        for p in rpreds[n]:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen
