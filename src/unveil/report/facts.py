"""Facts about a run that the summary and the HTML report both show: frames by user
function, graph breaks, recompiles and the guard that failed, guards grouped by what they
check, Inductor's kernels by user line, and where ranks diverge."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..dump_format import RECORDED, RUNS_OURS, owner_name
from ..recompiles import explained
from .load import RankDump, Run

_REASON = re.compile(r"^\s*(?P<cid>(?:!\d+/)?\d+/\d+): (?P<expr>.*?)\s*(?:#.*)?$")
_SOURCE = re.compile(r"""\b([LG]\[['"][^'"]+['"]\])""")


@dataclass
class FailedGuard:
    """One line of a recompile reason: the cache entry whose guard failed, and the check."""

    compile_id: str
    expression: str


def failed_guards(reason: str) -> list[FailedGuard]:
    """The ``<compile id>: <check>`` lines of a recompile reason."""
    out = []
    for line in reason.splitlines():
        match = _REASON.match(line)
        if match:
            out.append(FailedGuard(match.group("cid"), match.group("expr").strip()))
    return out


def recompile_causes(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """Why ``frame`` was compiled again, each failed check read (the manifest's
    ``recompiles``; for a dump without them, read from its ``recompile_reasons`` now,
    without the values now)."""
    found = [c for c in frame.get("recompiles") or [] if isinstance(c, dict)]
    if found or not frame.get("recompile_reasons"):
        return found
    return explained([r for r in frame["recompile_reasons"] if isinstance(r, str)], (),
                     str(frame.get("function") or "?"), where(frame))


@dataclass
class RecompileGroup:
    """Recompiles for the same cause (the same kind of check on the same value)."""

    words: str  # what changed, as the first of them says it
    fix: str
    compile_ids: list[str]  # the compiles it made (each frame once)
    function: str


def recompile_groups(dump: RankDump) -> list[RecompileGroup]:
    """Each distinct recompile cause once, with the compiles it made, most first. A
    recompile's first check (of the newest version) is its cause; the older versions'
    checks that failed too are shown with the frame."""
    found: dict[tuple[Any, ...], RecompileGroup] = {}
    for frame in dump.frames:
        causes = recompile_causes(frame)
        if not causes:
            continue
        first = causes[0]
        key = (function_of(frame), first.get("kind"), first.get("source"), first.get("dim"))
        group = found.setdefault(key, RecompileGroup(str(first.get("words")),
                                                     str(first.get("fix")), [],
                                                     function_of(frame)))
        group.compile_ids.append(str(frame.get("compile_id")))
    return sorted(found.values(), key=lambda g: -len(g.compile_ids))


def phase_totals(dump: RankDump) -> list[tuple[str, float]]:
    """The compile time of all frames by phase, most first."""
    found: Counter[str] = Counter()
    for frame in dump.frames:
        phases = frame.get("compile_phases")
        if isinstance(phases, dict):
            for phase, seconds in phases.items():
                if isinstance(seconds, (int, float)):
                    found[str(phase)] += float(seconds)  # type: ignore[assignment]  # float seconds
    return sorted(found.items(), key=lambda kv: -kv[1])


def phases_text(phases: dict[str, Any] | list[tuple[str, float]], top: int = 6) -> str:
    """``Dynamo 0.41 s, AOTAutograd 0.99 s``: phases (a frame's or the totals) in order,
    each once."""
    items = list(phases.items()) if isinstance(phases, dict) else list(phases)
    return ", ".join(f"{k} {float(v):.2f} s" for k, v in items[:top]
                     if isinstance(v, (int, float)))


def caches_text(caches: object) -> str:
    """``FX graph: 2 hit; AOTAutograd: 1 miss``: cache outcomes counted by cache, with
    PyTorch's reason for each bypass."""
    counts: dict[str, Counter[str]] = {}
    reasons: list[str] = []
    for c in caches if isinstance(caches, list) else []:
        if not isinstance(c, dict):
            continue
        counts.setdefault(str(c.get("cache")), Counter())[str(c.get("state"))] += 1
        if c.get("state") == "bypass" and c.get("reason"):
            reasons.append(f"{c.get('cache')} bypassed: {c.get('reason')}")
    text = "; ".join(f"{cache}: " + ", ".join(f"{n} {state}" for state, n in sorted(n.items()))
                     for cache, n in counts.items())
    return "; ".join([text, *dict.fromkeys(reasons)]) if text else ""


def kernels_text(kernels: object) -> str:
    """``11 kernel(s), 11 linked to user lines``, and how many came from a cache."""
    found = [k for k in kernels if isinstance(k, dict)] if isinstance(kernels, list) else []
    if not found:
        return ""
    linked = sum(bool(k.get("lines")) for k in found)
    cached = sum(bool(k.get("from_cache")) for k in found)
    return (f"{len(found)} kernel(s), {linked} linked to user lines"
            + (f" ({cached} from a cache, linked through Inductor's comments)" if cached
               else ""))


def kernels_by_line(kernels: object) -> dict[tuple[str, int], list[int]]:
    """Each user line (file, line) with the indices of the kernels computing it."""
    out: dict[tuple[str, int], list[int]] = {}
    for index, kernel in enumerate(kernels if isinstance(kernels, list) else []):
        for line in (kernel.get("lines") if isinstance(kernel, dict) else None) or []:
            if isinstance(line, dict) and isinstance(line.get("line"), int):
                out.setdefault((str(line.get("file")), line["line"]), []).append(index)
    return out


def _plain(expression: str) -> str:
    """``L['x'].size()[0] == 3`` -> ``x.size()[0] == 3``, as recompile reasons print it."""
    return re.sub(r"""\b[LG]\[['"]([^'"]+)['"]\]""", r"\1", expression).replace(" ", "")


def guard_failed(guard: str, failed: list[FailedGuard]) -> bool:
    """Whether ``guard`` (as the cache entry lists it) is one of the ``failed`` checks."""
    plain = _plain(guard.split("  #")[0])
    return any(f.expression and (_plain(f.expression) == plain
                                 or _plain(f.expression) in plain) for f in failed)


def guard_groups(guards: list[str]) -> list[tuple[str, list[str]]]:
    """Guards grouped by the value they check (``L['x']``, ``G['torch']``); the global
    state, device and mode checks come first as one group."""
    groups: dict[str, list[str]] = {}
    for guard in guards:
        match = _SOURCE.search(guard)
        key = match.group(1) if match else "global state"
        groups.setdefault(key, []).append(guard)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] != "global state",
                                                     not kv[0].startswith("L["), kv[0]))
    return ordered


def function_of(frame: dict[str, Any]) -> str:
    """The user function a frame belongs to (a resume function's owner)."""
    return owner_name(frame.get("function") or "?")


def hits_text(hits: dict[str, Any]) -> str:
    """``2,000 times, 41.2 ms (first call 3.1 ms)``: a cache entry's hits, as the manifest
    has them (``time_s`` estimated past the timed calls)."""
    calls = int(hits.get("calls") or 0)
    text = f"{calls:,} time{'s' if calls != 1 else ''}"
    if calls:
        text += f", {1000 * float(hits.get('time_s') or 0):.1f} ms"
        if calls > 1:
            text += f" (first call {1000 * float(hits.get('first_call_s') or 0):.1f} ms)"
    return text


def short_path(path: object) -> str:
    """``path`` relative to the working directory when it is under it."""
    if not isinstance(path, str) or not path:
        return "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def where(frame: dict[str, Any]) -> str:
    return f"{short_path(frame.get('source_file'))}:{frame.get('first_line') or '?'}"


def is_recompile(frame: dict[str, Any]) -> bool:
    cid = frame.get("compile_id") or ""
    return bool(re.search(r"/([1-9]\d*)$", cid))


@dataclass
class Totals:
    frames: int
    functions: int
    graphs: int
    graph_breaks: int
    recompiles: int
    skipped: int
    compile_time_s: float
    dynamo_code: int  # compiled frames that run Dynamo's code, not their dumped file
    recorded: int  # frames unveil.record kept: Dynamo's code ran, the file shows it
    graph_time_s: float | None  # time in compiled graphs (the hits' time_s); None: not counted
    wall_time_s: float | None  # the program's time inside prepare_debug

    @property
    def coverage(self) -> str | None:
        """``0.41 s of the 2.30 s inside prepare_debug (18%)``: the share of the run in
        compiled graphs."""
        if self.graph_time_s is None or not self.wall_time_s:
            return None
        return (f"{self.graph_time_s:.2f} s of the {self.wall_time_s:.2f} s inside "
                f"prepare_debug ({100 * self.graph_time_s / self.wall_time_s:.0f}%)")


def totals(dump: RankDump) -> Totals:
    frames = dump.frames
    return Totals(
        frames=len(frames),
        functions=len({(f.get("source_file"), function_of(f)) for f in frames}),
        graphs=sum(len(f.get("compiled_fns") or []) for f in frames),
        graph_breaks=sum(len(f.get("graph_breaks") or []) for f in frames)
        + sum(len(s.get("graph_breaks") or []) for s in dump.skipped_frames),
        recompiles=sum(1 for f in frames if is_recompile(f)),
        skipped=len(dump.skipped_frames),
        compile_time_s=sum(f.get("compile_time_s") or 0.0 for f in frames),
        dynamo_code=sum(1 for f in frames if f.get("status") not in (RUNS_OURS, RECORDED)),
        recorded=sum(1 for f in frames if f.get("status") == RECORDED),
        graph_time_s=sum(float(f["hits"].get("time_s") or 0.0) for f in frames
                         if isinstance(f.get("hits"), dict))
        if any(isinstance(f.get("hits"), dict) for f in frames) else None,
        wall_time_s=dump.wall_time_s)


@dataclass
class DistinctBreak:
    """One graph break, however often it happened (in compiles and skipped frames)."""

    gb_id: str | None
    summary: str
    where: str  # file:line of the user's code
    doc_url: str | None
    count: int


def distinct_breaks(dump: RankDump) -> list[DistinctBreak]:
    """Each distinct graph break (registry id or gist, and place) once, most frequent
    first."""
    found: dict[tuple[str, str], DistinctBreak] = {}
    for frame in [*dump.frames, *dump.skipped_frames]:
        for brk in frame.get("graph_breaks") or []:
            where = f"{short_path(brk.get('user_file'))}:{brk.get('user_line')}"
            summary = brk.get("summary") or (brk.get("reason") or "").split("\n")[0]
            key = (brk.get("gb_id") or summary, where)
            if key in found:
                found[key].count += 1
            else:
                found[key] = DistinctBreak(brk.get("gb_id"), summary, where,
                                           brk.get("doc_url"), 1)
    return sorted(found.values(), key=lambda b: (-b.count, b.where))


# ---------------------------------------------------------------- ranks


@dataclass
class Divergence:
    """One way the ranks differ: what, and for each rank what only some ranks have."""

    what: str
    per_rank: dict[int | None, str]  # rank -> its items that not every rank has


def _signature(dump: RankDump) -> dict[str, Counter[str]]:
    """What should be the same on every rank, by name."""
    return {
        "frames compiled": Counter(f"{f.get('function')} ({where(f)})" for f in dump.frames),
        "graphs": Counter(str(g.get("kind")) for f in dump.frames
                          for g in f.get("graphs") or []),
        "graph breaks": Counter(f"{short_path(b.get('user_file'))}:{b.get('user_line')} "
                                f"{b.get('summary') or ''}".strip()
                                for f in dump.frames for b in f.get("graph_breaks") or []),
        "recompiles": Counter(str(f.get("function")) for f in dump.frames
                              if is_recompile(f)),
        # object ids differ between processes and say nothing: left out
        "guards": Counter(_plain(g) for f in dump.frames for g in f.get("guards") or []
                          if "___check_obj_id" not in g and "___check_type_id" not in g),
    }


def _describe(counter: Counter[str]) -> str:
    return "; ".join(f"{k} (x{v})" if v > 1 else k for k, v in sorted(counter.items()))


def divergences(run: Run) -> list[Divergence]:
    """Where the ranks of a multi-rank run differ (empty for one process): for each kind
    of fact, what each rank has that not every rank has."""
    first: dict[int, RankDump] = {}  # (a rank's other processes: its DataLoader workers...)
    for dump in run.ranks:
        if dump.rank is not None:
            first.setdefault(dump.rank, dump)
    if len(first) < 2:
        return []
    signatures: dict[int | None, dict[str, Counter[str]]] = {
        rank: _signature(dump) for rank, dump in first.items()}
    out = []
    for what in next(iter(signatures.values())):
        counters = [sig[what] for sig in signatures.values()]
        common = counters[0].copy()
        for counter in counters[1:]:
            common &= counter
        extra = {rank: sig[what] - common for rank, sig in signatures.items()}
        if any(extra.values()):
            out.append(Divergence(what, {rank: _describe(c) or "(nothing more)"
                                         for rank, c in extra.items()}))
    return out
