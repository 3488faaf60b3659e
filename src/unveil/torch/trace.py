"""What Dynamo's structured trace says about each compile, kept per compile id: its graphs
(written to ``__compiled_fn_<n>.<what>.<k>.py``), graph breaks, recompile reasons, guards
and compile time. Events arrive through :func:`unveil.torch._dynamo.add_trace_handler`."""

from __future__ import annotations

import contextlib
import json
import re
import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._io import write_atomic
from ..dump_format import GraphBreak, GraphFile, short_name
from . import _dynamo, kernels

# Trace events that carry a graph, and the part of the file name that says which graph.
GRAPH_EVENTS = ("dynamo_output_graph", "aot_joint_graph", "aot_forward_graph",
                "aot_backward_graph", "aot_inference_graph", "inductor_output_code")
# Graphs whose code runs as it is printed (eager, aot_eager): compiled from their file.
RUNNABLE = ("dynamo_output_graph", "aot_forward_graph", "aot_backward_graph",
            "aot_inference_graph")
# What TraceRecorder.record reads; Dynamo skips computing the other events (tensor
# descriptions, guard prints, chromium timings, bytecode listings) while it alone listens.
RECORDED_EVENTS = frozenset(("str", "dynamo_start", "compilation_metrics", *GRAPH_EVENTS))
# the caches' outcomes (Inductor's FX graph cache, AOTAutograd's), one artifact per graph
CACHE_ARTIFACTS = {f"{cache}_cache_{state}": (label, state)
                   for cache, label in (("fx_graph", "FX graph"), ("aotautograd", "AOTAutograd"))
                   for state in ("hit", "miss", "bypass")}
RECORDED_ARTIFACTS = frozenset(("dynamo_graph_break_reason", "recompile_reasons",
                                *CACHE_ARTIFACTS))
# compilation_metrics' cumulative timings (microseconds) of the backend's parts
_US = ("aot_autograd_cumulative_compile_time_us", "inductor_cumulative_compile_time_us",
       "inductor_code_gen_cumulative_compile_time_us")


@dataclass
class CompileFacts:
    """Everything the trace said about one compile (one ``frame/compile`` id)."""

    compile_id: str
    compiled_fns: list[str] = field(default_factory=list)
    graphs: list[GraphFile] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)
    compile_time_s: float | None = None
    fail_reason: str | None = None  # why Dynamo gave up, when it did
    function: str | None = None  # from the compile metrics
    source_file: str | None = None
    first_line: int | None = None
    guarded_code: bool | None = None  # False: Dynamo ran the frame without compiling it
    restart_reasons: list[str] = field(default_factory=list)  # why earlier attempts restarted
    stack: list[dict[str, Any]] = field(default_factory=list)  # user frames, outermost first
    # where the compile time went: phase -> seconds (compile_phases), and when it started
    phases: dict[str, float] = field(default_factory=dict)
    started_s: float | None = None  # (the process's clock, as Dynamo gives it)
    # each graph's cache outcomes: {"cache", "state" (hit, miss, bypass), "reason", "graph"}
    caches: list[dict[str, Any]] = field(default_factory=list)
    # Inductor's kernels, linked to user lines (dump_format.Kernel's fields); and, until
    # each output-code file is written, the kernels seen written for it, in order: per
    # output code, [kernel name, [[node, stack trace, node of Dynamo's graph], ...]]
    kernels: list[dict[str, Any]] = field(default_factory=list)
    kernel_writes: list[list[Any]] = field(default_factory=list)
    node_traces: dict[str, str] = field(default_factory=dict)  # Dynamo's graph's nodes'


_UNVEIL = str(Path(__file__).resolve().parent.parent)
_LAUNCHERS = (str(Path(runpy.__file__).resolve()), "<frozen runpy>")


def user_stack(stack: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``stack`` (outermost first) without the frames that started the user's script:
    ``unveil run``'s and runpy's, so that it begins where ``python script.py``'s would."""
    start = 0
    while start < len(stack) - 1 and (str(stack[start].get("file")) in _LAUNCHERS
                                      or str(stack[start].get("file")).startswith(_UNVEIL)):
        start += 1
    return stack[start:]


def compile_id_of(metadata: dict[str, Any]) -> str | None:
    """``"frame/compile"`` from an event's metadata, as Dynamo prints compile ids."""
    frame, compile_ = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or compile_ is None:
        return None
    prefix = metadata.get("compiled_autograd_id")
    return (f"!{prefix}/" if prefix is not None else "") + f"{frame}/{compile_}"


_BREAK_AT = re.compile(r"Graph break in user code at (.+):(\d+)")


def parse_graph_break(text: str) -> GraphBreak:
    """The reason and user location of a ``dynamo_graph_break_reason`` payload."""
    where = _BREAK_AT.search(text)
    reason = text
    match = re.search(r"Graph Break Reason: (.*?)(?:\n\s*User code traceback:|\Z)", text, re.S)
    if match:
        reason = match.group(1).strip()
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    gist = [line for line in lines if not line.startswith(_WRAPPERS)]
    summary = (gist or lines or [""])[0]
    stack: list[dict[str, Any]] = []
    traceback = text.split("User code traceback:", 1)
    if len(traceback) == 2:
        body = traceback[1].split("\nTraceback (most recent call last)", 1)[0]
        stack = kernels.user_frames(body)
    gb_id, doc_url = _registry_id(text, summary)
    if where is None:
        return GraphBreak(reason, None, None, summary, stack, gb_id, doc_url)
    return GraphBreak(reason, where.group(1), int(where.group(2)), summary, stack, gb_id,
                      doc_url)


_GB_LINK = re.compile(r"https?://\S+/gb/gb(\d+)\.html")


def _registry_id(text: str, gb_type: str) -> tuple[str | None, str | None]:
    """A graph break's registry id and explanation page: from the link PyTorch puts in
    the message, else by its type (the message's first line) in PyTorch's registry."""
    link = _GB_LINK.search(text)
    if link is not None:
        return f"GB{link.group(1)}", link.group(0)
    gb_id = _dynamo.graph_break_id(gb_type)
    if gb_id is None:
        return None, None
    return gb_id, f"{GRAPH_BREAK_SITE}gb{gb_id.removeprefix('GB')}.html"


GRAPH_BREAK_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"


# Lines of a graph-break reason that wrap the cause rather than say it.
_WRAPPERS = ("Encountered graph break when", "Failed to handle graph break gracefully",
             "Graph break encountered", "Graph break under ")


class TraceRecorder:
    """Receives structured-trace events; writes graph files and keeps the facts."""

    def __init__(self, claim: Callable[[str], Path],
                 defer: Callable[[str, str, str, str | None, Any], None] | None = None) -> None:
        self.claim = claim  # file name pattern with {n} -> a new, claimed path
        # (compile id, kind, graph name, payload, GraphModule or None) -> None: keeps a
        # graph to write later (unveil.record) instead of writing it now
        self.defer = defer
        self.compiles: dict[str, CompileFacts] = {}
        self.errors: list[str] = []
        self.strings: dict[int, str] = {}  # the trace's interned file names
        # the kernels Inductor writes, per compile id, until its output code arrives
        self.writing: dict[str | None, list[list[Any]]] = {}

    def kernel(self, name: str, origins: list[_dynamo.KernelOrigin]) -> None:
        """Inductor wrote kernel ``name`` computing ``origins`` (see watch_kernels)."""
        self.writing.setdefault(_dynamo.current_compile_id(), []).append(
            [name, [[o.node, o.stack_trace, o.source_node] for o in origins]])

    def file_name(self, index: Any) -> str | None:
        """A stack entry's file: the trace names files by interned index."""
        if not isinstance(index, int):
            return index if isinstance(index, str) else None
        if index not in self.strings:
            text = _dynamo.interned_string(index)
            if text is None:
                return None
            self.strings[index] = text
        return self.strings[index]

    def facts(self, compile_id: str) -> CompileFacts:
        if compile_id not in self.compiles:
            self.compiles[compile_id] = CompileFacts(compile_id)
        return self.compiles[compile_id]

    @staticmethod
    def wants(event: str, artifact: str | None) -> bool:
        """Whether :meth:`record` uses this trace event (``artifact``: an artifact's name)."""
        return event in RECORDED_EVENTS or artifact in RECORDED_ARTIFACTS

    def __call__(self, metadata: dict[str, Any], payload: str | None, graph_module: Any) -> None:
        try:
            self.record(metadata, payload, graph_module)
        except Exception as exc:  # noqa: BLE001 (a dump problem never breaks compilation)
            event = next(iter(metadata), "?")
            self.errors.append(f"trace event {event} ({compile_id_of(metadata)}): "
                               f"{type(exc).__name__}: {exc}")

    def record(self, metadata: dict[str, Any], payload: str | None, graph_module: Any) -> None:
        if "str" in metadata:  # ["file name", index]: later events name files by index
            text, index = metadata["str"]
            self.strings[int(index)] = str(text)
            return
        cid = compile_id_of(metadata)
        if cid is None:
            return
        if "dynamo_start" in metadata:
            self.facts(cid).stack = user_stack([
                {"name": f.get("name"), "line": f.get("line"),
                 "file": self.file_name(f.get("filename"))}
                for f in metadata["dynamo_start"].get("stack") or []])
            return
        kind = next((k for k in metadata if k in GRAPH_EVENTS), None)
        if kind is not None:
            self.graph(cid, kind, payload, graph_module)
            return
        if "artifact" in metadata:
            name = metadata["artifact"].get("name")
            if name == "dynamo_graph_break_reason" and payload:
                self.facts(cid).graph_breaks.append(parse_graph_break(payload))
            elif name == "recompile_reasons" and payload:
                self.facts(cid).recompile_reasons.extend(_reasons(payload))
            elif name in CACHE_ARTIFACTS:
                self.facts(cid).caches.append(_cache_outcome(name, payload,
                                                             self.facts(cid).compiled_fns))
        elif "compilation_metrics" in metadata:
            metrics = metadata["compilation_metrics"]
            facts = self.facts(cid)
            facts.compile_time_s = metrics.get("entire_frame_compile_time_s")
            if metrics.get("fail_type"):
                facts.fail_reason = f"{metrics['fail_type']}: {metrics.get('fail_reason')}"
            facts.function = metrics.get("co_name")
            facts.source_file = metrics.get("co_filename")
            facts.first_line = metrics.get("co_firstlineno")
            facts.guarded_code = metrics.get("has_guarded_code")
            facts.restart_reasons = [str(r) for r in metrics.get("restart_reasons") or []]
            facts.phases = compile_phases(metrics)
            start = metrics.get("start_time_us")
            facts.started_s = start / 1e6 if isinstance(start, (int, float)) else \
                metrics.get("start_time") if isinstance(metrics.get("start_time"), float) \
                else None

    def graph(self, cid: str, kind: str, payload: str | None, graph_module: Any) -> None:
        facts = self.facts(cid)
        if kind == "dynamo_output_graph":
            _dynamo.watch_kernels_now()  # (Inductor may have been loaded since)
            if graph_module is not None:
                facts.node_traces.update(_dynamo.node_stack_traces(graph_module))
        elif kind == "inductor_output_code":
            # (cast: mypy reads pop's default against the context of append)
            facts.kernel_writes.append(cast("list[list[Any]]", self.writing.pop(cid, None)
                                       or self.writing.pop(None, None) or []))
        name = _dynamo.compiled_fn_name_now()
        if name is not None and short_name(name) not in facts.compiled_fns:
            facts.compiled_fns.append(short_name(name))
        fn = short_name(name) if name else (facts.compiled_fns[-1] if facts.compiled_fns
                                            else f"__compiled_fn_unknown_{cid.replace('/', '_')}")
        if self.defer is not None:  # unveil.record: written later, off the compile path
            self.defer(cid, kind, fn, payload, graph_module if kind in RUNNABLE else None)
            return
        path, title = self.graph_file(cid, kind, fn)
        graph = GraphFile(fn, kind, path.name, False)
        facts.graphs.append(graph)
        if kind in RUNNABLE and graph_module is not None:
            self.from_file(graph, graph_module, path, title, payload)
            for name, sub in _dynamo.subgraphs(graph_module):
                sub_path = self.claim(f"{fn}.{kind}.{name}.{{n}}.py")
                sub_title = f"subgraph {name} of {title}"
                sub_graph = GraphFile(fn, kind, sub_path.name, False, name)
                facts.graphs.append(sub_graph)
                self.from_file(sub_graph, sub, sub_path, sub_title, None)
                if not sub_graph.compiled_from_file:
                    write_atomic(sub_path, f"# {sub_title}: its code is written here when "
                                           f"FX compiles it (it was not, in this run)\n")
        # (until FX compiles its code, which a lazy GraphModule does when first needed,
        # the graph as printed: then the file holds that code, and says it runs)
        if not graph.compiled_from_file:
            text = printed_file(title, payload)
            write_atomic(path, text)
            if kind == "inductor_output_code":
                self.link_kernels(facts, graph, text)

    @staticmethod
    def link_kernels(facts: CompileFacts, graph: GraphFile, text: str) -> None:
        """The kernels of output-code file ``graph`` (``text``), each with its user
        lines: as Inductor was seen writing them, else (it did not write them in this
        run: a cache's code) through its comments."""
        writes = facts.kernel_writes.pop(0) if facts.kernel_writes else []
        if writes:
            seen = [(str(name), [_dynamo.KernelOrigin(*o) for o in origins])
                    for name, origins in writes]
            facts.kernels.extend(kernels.written(text, seen, graph.compiled_fn, graph.file))
        else:
            found = kernels.from_comments(text, graph.compiled_fn, graph.file,
                                          facts.node_traces)
            graph.from_cache = bool(found)
            facts.kernels.extend(found)

    def from_file(self, graph: GraphFile, graph_module: Any, path: Path, title: str,
                  payload: str | None) -> None:
        """Have ``graph_module`` compile its code from ``path`` (see
        :func:`_dynamo.compile_graph_from_file`), ``graph`` saying when it has."""
        def write(src: str) -> None:
            write_atomic(path, runnable_file(src, title, payload))
            graph.compiled_from_file = True

        try:
            _dynamo.compile_graph_from_file(graph_module, str(path), write)
        except Exception as exc:  # noqa: BLE001 (the printed graph is dumped instead)
            self.errors.append(f"{title}: could not compile it from {path.name}, so "
                               f"the file shows the graph as printed: "
                               f"{type(exc).__name__}: {exc}")

    def graph_file(self, cid: str, kind: str, fn: str) -> tuple[Path, str]:
        """A new file for graph ``fn``'s ``kind`` and its title."""
        return self.claim(f"{fn}.{kind}.{{n}}.py"), f"{kind} of {fn} (compile {cid})"

    def recorded_graph(self, cid: str, kind: str, fn: str, payload: str | None,
                       src: str | None) -> None:
        """Write a graph :class:`unveil.torch.record.record` kept: its code ``src`` (FX's,
        when the graph was still there at the end) or its print."""
        path, title = self.graph_file(cid, kind, fn)
        text = (runnable_file(src, title, payload, ran=False) if src is not None
                else printed_file(title, payload))
        write_atomic(path, text)
        graph = GraphFile(fn, kind, path.name, False)
        self.facts(cid).graphs.append(graph)
        if kind == "inductor_output_code":
            self.link_kernels(self.facts(cid), graph, text)


def printed_file(title: str, payload: str | None) -> str:
    """The file of a graph shown as the trace prints it."""
    return (f"# {title}, as Dynamo's structured trace prints it; written by unveil.\n"
            + (payload or "# (empty)\n"))


def runnable_file(src: str, title: str, readable: str | None, ran: bool = True) -> str:
    """The file a graph's code is compiled from: exactly FX's ``src`` (line numbers must
    match what runs), a title in its leading blank lines, and the readable print (shapes,
    the user line of each node) as comments after the code. ``ran=False``: the code as
    recorded (FX's own copy of it ran)."""
    lines = src.split("\n")
    blank = 0
    while blank < len(lines) - 1 and not lines[blank].strip():
        blank += 1
    heading = [f"# {title}: the code that runs, compiled from this file by unveil" if ran
               else f"# {title}: its code, recorded (FX's own copy ran, not this file)",
               "# (the readable print with shapes and source lines is at the end)"]
    lines[:min(blank, len(heading))] = heading[:blank]
    text = "\n".join(lines)
    if readable:
        text = (text.rstrip() + "\n\n\n# " + "-" * 70 + "\n# As Dynamo's trace prints it:\n"
                + "\n".join("# " + line if line else "#" for line in readable.splitlines())
                + "\n")
    return text


def compile_phases(metrics: dict[str, Any]) -> dict[str, float]:
    """Where one frame's compile time went, from Dynamo's compilation_metrics: Dynamo
    (tracing, guards, bytecode: the rest), AOTAutograd, Inductor's lowering and its code
    generation with kernel compiling, and the backend's other work; in seconds, summing
    to ``entire_frame_compile_time_s`` (unveil's own time is taken from Dynamo's share
    by the caller, who measured it)."""
    total = metrics.get("entire_frame_compile_time_s")
    if not isinstance(total, (int, float)):
        return {}
    backend = float(metrics.get("backend_compile_time_s") or 0.0)
    aot, inductor, codegen = (float(metrics.get(k) or 0) / 1e6 for k in _US)
    phases = {"Dynamo": max(float(total) - backend, 0.0)}
    if aot:
        phases["AOTAutograd"] = max(aot - inductor, 0.0)
    if inductor:
        phases["Inductor lowering"] = max(inductor - codegen, 0.0)
        phases["Inductor code and kernels"] = codegen
    other = backend - (aot or inductor)
    if other > 0:
        phases["backend, other"] = other
    return {k: round(v, 6) for k, v in phases.items()}


def _cache_outcome(name: str, payload: str | None, graphs: list[str]) -> dict[str, Any]:
    """A cache artifact as the manifest keeps it: which cache, hit/miss/bypass, PyTorch's
    reason for a bypass, and the graph (the compile's latest, where known)."""
    cache, state = CACHE_ARTIFACTS[name]
    info: dict[str, Any] = {}
    with contextlib.suppress(ValueError, TypeError):
        found = json.loads(payload or "{}")
        info = found if isinstance(found, dict) else {}
    reason = info.get("cache_bypass_reason") or info.get("reason")
    return {"cache": cache, "state": state, "reason": str(reason) if reason else None,
            "graph": graphs[-1] if graphs else None}


def _reasons(payload: str) -> list[str]:
    """A ``recompile_reasons`` payload (JSON list, or plain text) as a list of strings."""
    try:
        data = json.loads(payload)
    except ValueError:
        return [payload.strip()]
    if isinstance(data, list):
        return [str(item).strip() for item in data]
    return [str(data).strip()]
