"""Inductor's kernels and the user lines they compute, read from its output code.

Two ways to the lines, best first (:class:`~unveil.dump_format.KernelLink`):

- **seen written**: while Inductor writes a kernel, :func:`unveil.torch._dynamo.watch_kernels`
  hands over the post-grad FX nodes it computes, each with its ``stack_trace`` (the user
  code it comes from) and the node of Dynamo's graph it was made from;
- **comments**: code Inductor did not write in this run (it came from the FX graph or the
  AOTAutograd cache) names its nodes only in comments (``# Topologically Sorted Source
  Nodes: [linear, relu], ...``): those are nodes of Dynamo's graph, whose stack traces
  give the lines. On CPU Inductor puts such a comment before extern calls only, so a C++
  kernel's comment may be missing or shared with the next call.

Nothing here imports torch: it reads text and what the watcher gave.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

from ..dump_format import Kernel, KernelLink
from ._dynamo import KernelOrigin

# "  File "/x/model.py", line 12, in forward\n    h = self.fc(x)\n": a frame of a stack
# trace (FX's stack_trace, a graph break's user traceback), its code line if given
FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\n(?:(?!\s*File ")(.*)\n)?',
                   re.M)
_DEFINED = re.compile(r"^(\w+) = async_compile\.\w+\(", re.M)
_SOURCE_NODES = re.compile(r"Source Nodes: \[([^\]]*)\]")


def user_frames(stack_trace: str) -> list[dict[str, Any]]:
    """The frames of a stack trace, outermost first: {"file", "line", "name", "code"}."""
    return [{"file": m.group(1), "line": int(m.group(2)), "name": m.group(3),
             "code": (m.group(4) or "").strip()}
            for m in FRAME.finditer(stack_trace if stack_trace.endswith("\n")
                                    else stack_trace + "\n")]


def _lines(traces: Iterable[str | None]) -> list[dict[str, Any]]:
    """The innermost frame of each stack trace (the line that made the node), once each."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for trace in traces:
        frames = user_frames(trace) if trace else []
        if frames:
            out.setdefault((frames[-1]["file"], frames[-1]["line"]), frames[-1])
    return list(out.values())


def _call_at(lines: list[str], name: str, start: int) -> int | None:
    """The index of the first line from ``start`` (else from the top) calling ``name``."""
    call = re.compile(rf"^\s+(?:\w+ = )?{re.escape(name)}(?:\.run)?\(")
    for index in (*range(start, len(lines)), *range(0, start)):
        if call.match(lines[index]):
            return index
    return None


def written(text: str, seen: list[tuple[str, list[KernelOrigin]]], graph: str,
            file: str) -> list[dict[str, Any]]:
    """The kernels of output code ``text`` (the dumped file ``file`` of ``graph``) that
    Inductor was seen writing, in the order it wrote (and so calls) them."""
    lines = text.split("\n")
    defined = {m.group(1): text.count("\n", 0, m.start()) + 1 for m in _DEFINED.finditer(text)}
    out = []
    position = 0
    for name, origins in seen:
        index = _call_at(lines, name, position)
        if index is not None:
            position = index + 1
        sources = list(dict.fromkeys(o.source_node for o in origins if o.source_node))
        out.append(Kernel(name, graph, file, defined.get(name),
                          None if index is None else index + 1, [o.node for o in origins],
                          sources, _lines(o.stack_trace for o in origins), False,
                          KernelLink.WRITTEN))
    return [asdict(k) for k in out]


def from_comments(text: str, graph: str, file: str,
                  node_traces: Mapping[str, str]) -> list[dict[str, Any]]:
    """The kernels of output code ``text`` that Inductor did not write in this run (a
    cache's), each linked through the ``Source Nodes`` comment above its definition or
    its call to the nodes of Dynamo's graph (``node_traces``: node -> stack trace)."""
    lines = text.split("\n")
    defined = {m.group(1): text.count("\n", 0, m.start()) for m in _DEFINED.finditer(text)}
    calls: list[tuple[str, int]] = []
    call = re.compile(r"^\s+(?:\w+ = )?(extern_kernels\.\w+|\w+?)(?:\.run)?\(")
    for index, line in enumerate(lines):
        found = call.match(line)
        if found and (found.group(1) in defined or found.group(1).startswith("extern_")):
            calls.append((found.group(1), index))
    out = []
    for name, index in calls:
        nodes = _comment_nodes(lines, index)
        if not nodes and name in defined:
            nodes = _comment_nodes(lines, defined[name])
        at = defined.get(name)
        out.append(Kernel(name, graph, file, None if at is None else at + 1, index + 1, [],
                          nodes, _lines(node_traces.get(n) for n in nodes), True,
                          KernelLink.COMMENTS))
    return [asdict(k) for k in out]


def _comment_nodes(lines: list[str], index: int) -> list[str]:
    """The nodes a ``Source Nodes`` comment names in the comment lines just above
    ``index``."""
    above = index - 1
    while above >= 0 and lines[above].lstrip().startswith("#"):
        found = _SOURCE_NODES.search(lines[above])
        if found:
            return [n.strip() for n in found.group(1).split(",") if n.strip()]
        above -= 1
    return []

