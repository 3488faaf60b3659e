"""What a dump directory holds, as ``unveil.torch`` writes it and ``unveil.report`` reads it:
the records of ``manifest.json`` (and the layout version they are in), the status a frame's
entry has, and the names Dynamo gives what is in it; and :func:`checked`, which reads one
entry of a manifest someone else wrote (another version, a damaged file) field by field.

It imports only the standard library, so that the report can read a dump without importing
the torch side.
"""

from __future__ import annotations

import os
import re
import sys
import typing
from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from . import __version__

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

FORMAT = 2  # the manifest's layout; raised when a reader of the old one would misread it

# a frame's ``status`` in the manifest
RUNS_OURS = "running unveil's code"
RUNS_DYNAMO = "running Dynamo's code"
RECORDED = "recorded (Dynamo's code ran; the file shows it)"  # unveil.record

COMPILED_FN = re.compile(r"__compiled_fn_\d+")  # a compiled graph's name, without the uuid
RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")  # a resume function's code name


def short_name(compiled_fn: str) -> str:
    """``__compiled_fn_7_0d3c...`` -> ``__compiled_fn_7`` (the uuid only makes it unique)."""
    match = COMPILED_FN.match(compiled_fn)
    return match.group(0) if match else compiled_fn


def owner_name(co_name: str) -> str:
    """The user function a resume function continues (``torch_dynamo_resume_in_f_at_12``
    -> ``f``); other names are their own owner."""
    while (match := RESUME.match(co_name)) is not None:
        co_name = match.group(1)
    return co_name


@dataclass
class GraphFile:
    """One graph of one compiled function, dumped to a file."""

    compiled_fn: str  # the global the transformed code calls, e.g. "__compiled_fn_1"
    kind: str  # the trace event: "dynamo_output_graph", "aot_forward_graph", ...
    file: str  # relative to the dump directory
    compiled_from_file: bool  # FX compiled the graph's code from this file (eager, aot_eager run it)
    # a higher-order op's subgraph of that graph (torch.cond's branches, while_loop's
    # cond_fn and body_fn): its attribute name on the graph; None for the graph itself
    subgraph: str | None = None
    # Inductor's output code it did not write in this run (an FX graph or AOTAutograd
    # cache hit gave it)
    from_cache: bool = False


class KernelLink(str, Enum):
    """How a kernel was linked to the user lines it computes (unveil.torch.kernels)."""

    WRITTEN = "seen written"  # the FX nodes Inductor gave it as it wrote the kernel
    COMMENTS = "Inductor's comments"  # its output code's "Source Nodes" (a cache's code)


@dataclass
class Kernel:
    """One kernel of Inductor's output code (C++, Triton, or an extern call such as
    ``extern_kernels.addmm``) and the user lines it computes."""

    name: str  # as the output code calls it: "cpp_fused_relu_0", "extern_kernels.addmm"
    graph: str  # the compiled function: "__compiled_fn_1"
    file: str  # the output-code file it is in, relative to the dump directory
    defined_at: int | None  # the line of that file defining it (None: not defined there)
    called_at: int | None  # the line calling it
    nodes: list[str]  # the post-grad graph's nodes it computes
    source_nodes: list[str]  # the nodes of Dynamo's graph they come from
    # the user lines: {"file", "line", "name", "code"}, the innermost frame of each node
    lines: list[dict[str, Any]]
    from_cache: bool  # Inductor did not write it in this run: the code came from a cache
    link: KernelLink


@dataclass
class GraphBreak:
    reason: str  # Dynamo's whole explanation, hints included
    user_file: str | None
    user_line: int | None
    summary: str = ""  # its one-line gist, e.g. "Data-dependent branching"
    # the user code that led there, outermost first: {"file", "line", "name", "code"}
    user_stack: list[dict[str, Any]] = field(default_factory=list)
    gb_id: str | None = None  # PyTorch's graph-break registry id ("GB0170"), when known
    doc_url: str | None = None  # its explanation on PyTorch's graph-break site


@dataclass
class FrameRecord:
    """One frame Dynamo transformed (one compile), as the manifest lists it."""

    compile_id: str | None
    function: str
    qualname: str
    source_file: str
    first_line: int
    transformed_code: str | None  # the dumped file, relative to dump_dir
    status: str  # RUNS_OURS | RUNS_DYNAMO
    identical: bool | None = None  # recompiled bytecode equals Dynamo's (normalised)
    # whether the recompiled code was shown to do what Dynamo's does, and how (or why not)
    equivalent: bool | None = None
    equivalence: str | None = None
    error: str | None = None
    compiled_fns: list[str] = field(default_factory=list)  # graphs its code calls
    resume_fns: list[str] = field(default_factory=list)  # resume functions it calls
    graphs: list[dict[str, Any]] = field(default_factory=list)
    graph_breaks: list[dict[str, Any]] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)
    compile_time_s: float | None = None
    guards: list[str] = field(default_factory=list)  # its cache entry's, as Dynamo prints
    stack: list[dict[str, Any]] = field(default_factory=list)  # the calls that led here
    # Dynamo's attempts at this compile: each restart (e.g. after a graph break, to trace
    # up to it) and why
    restart_reasons: list[str] = field(default_factory=list)
    # [line of the transformed-code file, line of the user's source it comes from]
    line_map: list[list[int]] = field(default_factory=list)
    # how often its cache entry ran (its graph's calls) and for how long: calls, time_s,
    # first_call_s, timed_calls (unveil.torch.hits); None: not counted
    hits: dict[str, Any] | None = None
    # each failed check of recompile_reasons, read (unveil.recompiles.Cause's fields,
    # "words": what changed, "fix": what to do); the value now where the frame being
    # compiled showed it
    recompiles: list[dict[str, Any]] = field(default_factory=list)
    # where compile_time_s went: phase -> seconds ("Dynamo", "AOTAutograd", "Inductor
    # lowering", "Inductor code and kernels", "backend, other", "unveil"), and when the
    # compile started (seconds, the process's clock)
    compile_phases: dict[str, float] = field(default_factory=dict)
    compile_started_s: float | None = None
    # each graph's cache outcomes: {"cache": "FX graph" | "AOTAutograd", "state": "hit" |
    # "miss" | "bypass", "reason": PyTorch's, "graph": "__compiled_fn_<n>"}
    caches: list[dict[str, Any]] = field(default_factory=list)
    # Inductor's kernels of its graphs, each with its user lines (Kernel's fields)
    kernels: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FunctionRecord:
    """One user function: its full-code file and its (and its resume functions') cache."""

    function: str
    source_file: str
    first_line: int
    full_code: str | None
    cache_entries: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Manifest:
    """What ``manifest.json`` holds: which unveil wrote it, in which layout, and the
    frames, functions and files of one process."""

    torch_version: str | None
    pid: int = field(default_factory=os.getpid)  # the process that wrote it
    frames: list[FrameRecord] = field(default_factory=list)
    functions: list[FunctionRecord] = field(default_factory=list)
    files: list[dict[str, str]] = field(default_factory=list)
    # frames Dynamo started on but ran without compiling (e.g. a graph break it cannot
    # resume from, in a try block or a loop): no transformed code, the reason why
    skipped_frames: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # seconds the program ran inside prepare_debug (all its entries); the share of it in
    # compiled graphs is the frames' hits' time_s over this
    wall_time_s: float | None = None
    format: int = FORMAT
    unveil_version: str = __version__
    python_version: str = field(default_factory=lambda: "{}.{}".format(*sys.version_info[:2]))


_NESTED: dict[tuple[type, str], type[DataclassInstance]] = {}  # (record, field) -> the record its list holds
R = TypeVar("R", bound="DataclassInstance")


def checked(entry: object, record: type[R], what: str) -> tuple[dict[str, Any] | None,
                                                                  list[str]]:
    """``entry`` (one item of a manifest's list of ``record``) as a dict with every field
    of ``record``, each of its type; and one sentence per part that was not (missing, of
    another type), each replaced by the field's default. ``None`` (and a sentence) when
    ``entry`` is not a mapping at all or lacks a field without a default. ``what`` names
    the entry in those sentences ("manifest.json: frames[3]")."""
    if not isinstance(entry, dict):
        return None, [f"{what} is {_kind(entry)}, not a record: left out"]
    hints = typing.get_type_hints(record)
    out: dict[str, Any] = {k: v for k, v in entry.items() if isinstance(k, str)}
    problems: list[str] = []
    for f in fields(record):
        value = entry.get(f.name, MISSING)
        default = (f.default if f.default is not MISSING else
                   f.default_factory() if f.default_factory is not MISSING else MISSING)
        if value is not MISSING and _is(value, hints[f.name]):
            nested = _NESTED.get((record, f.name))
            if nested is not None:
                kept = []
                for i, item in enumerate(value):
                    one, more = checked(item, nested, f"{what}.{f.name}[{i}]")
                    problems.extend(more)
                    if one is not None:
                        kept.append(one)
                value = kept
            out[f.name] = value
            continue
        if value is not MISSING:
            problems.append(f"{what}: {f.name!r} is {_kind(value)}, not "
                            f"{_type_name(hints[f.name])}: ignored")
        elif default is MISSING and not _optional(hints[f.name]):
            problems.append(f"{what} has no {f.name!r}")
        out[f.name] = None if default is MISSING else default
    return out, problems


def _is(value: object, hint: Any) -> bool:
    """Whether ``value`` is of the type ``hint`` says (lists and dicts checked one level
    down: a ``list[str]`` holds strings)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_is(value, a) for a in args)
    if hint is type(None):
        return value is None
    if origin is list:
        return isinstance(value, list) and (
            not args or args[0] is Any or all(_is(v, args[0]) for v in value)
            or typing.get_origin(args[0]) is dict)  # (records: checked one by one)
    if origin is dict:
        return isinstance(value, dict)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return any(value == member.value for member in hint)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _optional(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


def _kind(value: object) -> str:
    """``null``, ``a str``, ``a list``, as one reads a JSON value."""
    if value is None:
        return "null"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _type_name(hint: Any) -> str:
    return str(hint).replace("typing.", "")


_NESTED.update({(FrameRecord, "graphs"): GraphFile,
                (FrameRecord, "graph_breaks"): GraphBreak,
                (FrameRecord, "kernels"): Kernel})
