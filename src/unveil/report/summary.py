"""The terminal summary ``unveil run`` prints: compiled frames, graphs, graph breaks with
the user's ``file:line``, recompiles with the guard that failed, compile times."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .facts import (
    caches_text,
    distinct_breaks,
    divergences,
    function_of,
    hits_text,
    kernels_text,
    phase_totals,
    phases_text,
    recompile_causes,
    recompile_groups,
    short_path,
    totals,
    where,
)
from .load import RankDump, Run


def summary(run: Run, report: str | None = None) -> str:
    """The summary of ``run`` as text (``report``: where the HTML report is)."""
    lines: list[str] = []
    ranked = bool(run.rank_numbers)
    for index, dump in enumerate(run.ranks):  # ranks: the first in full, then totals
        rank_lines = _rank_summary(dump)
        lines.extend(rank_lines if index == 0 or not ranked else rank_lines[:1])
    diverging = divergences(run)
    if len(run.rank_numbers) > 1:
        if diverging:
            lines.append(f"ranks DIVERGE ({len(diverging)} way(s)), a classic cause of "
                         f"hangs in collectives:")
            for d in diverging:
                lines.append(f"  {d.what}:")
                for rank, value in d.per_rank.items():
                    lines.append(f"    rank {rank}: {value or '(none)'}")
        else:
            lines.append(f"all {len(run.ranks)} ranks compiled the same frames, graphs, "
                         f"guards, graph breaks and recompiles")
    lines.append(f"dump: {run.directory}")
    if report:
        lines.append(f"report: {report}")
    return "\n".join(lines) + "\n"


def _break_line(brk: dict[str, Any]) -> str:
    """A graph break: where, its gist, its registry id."""
    gist = brk.get("summary") or brk.get("reason") or "?"
    ident = f" [{brk['gb_id']}]" if brk.get("gb_id") else ""
    return (f"      graph break at {short_path(brk.get('user_file'))}:{brk.get('user_line')}: "
            f"{gist}{ident}")


def _rank_summary(dump: RankDump) -> list[str]:
    t = totals(dump)
    head = f"{dump.label}: " if dump.label else ""
    lines = [f"unveil: {head}{t.frames} frame(s) compiled in {t.functions} function(s), "
             f"{t.graphs} graph(s), {t.graph_breaks} graph break(s), {t.recompiles} "
             f"recompile(s), {t.skipped} frame(s) run without compiling; compile time "
             f"{t.compile_time_s:.2f} s"]
    phases = phase_totals(dump)
    if phases:
        lines.append(f"  compile time by phase: {phases_text(phases, 4)}")
    if t.coverage:
        lines.append(f"  time in compiled graphs: {t.coverage}; the rest: Python outside "
                     f"them, and compiling")
    if t.dynamo_code:
        lines.append(f"  {t.dynamo_code} of {t.frames} compiled frame(s) run Dynamo's own "
                     f"code, not their dumped file (breakpoints there are not hit); the "
                     f"file and the 'error' below say why")
    if t.recorded:
        lines.append(f"  {t.recorded} frame(s) recorded (unveil.record): Dynamo's own code ran; "
                     f"each file shows it, written after the run (breakpoints there are not "
                     f"hit)")
    lines.extend(f"  note: {n}" for n in dump.notes)
    by_function: dict[tuple[Any, str], list[dict[str, Any]]] = defaultdict(list)
    for frame in dump.frames:
        by_function[(frame.get("source_file"), function_of(frame))].append(frame)
    for (_, name), frames in by_function.items():
        first = next((f for f in frames if f.get("function") == name), frames[0])
        lines.append(f"  {name} ({where(first)})")
        for frame in frames:
            time = frame.get("compile_time_s")
            graphs = len(frame.get("compiled_fns") or [])
            fn = frame.get("function")
            label = "" if fn == name else f" {fn}"
            attempts = len(frame.get("restart_reasons") or []) + 1
            lines.append(f"    compile {frame.get('compile_id') or '?'}{label}: "
                         f"{graphs} graph(s), {attempts} attempt(s), "
                         f"{f'{time:.2f} s' if time is not None else '? s'}, "
                         f"{frame.get('status')} -> {frame.get('transformed_code')}")
            if frame.get("hits"):
                lines.append(f"      ran {hits_text(frame['hits'])}")
            if frame.get("caches"):
                lines.append(f"      caches: {caches_text(frame['caches'])}")
            if frame.get("kernels"):
                lines.append(f"      Inductor: {kernels_text(frame['kernels'])}")
            lines.extend(_break_line(brk) for brk in frame.get("graph_breaks") or [])
            causes = recompile_causes(frame)
            if causes:
                more = len(causes) - 1
                lines.append(f"      recompiled: {causes[0].get('words')} (the check of "
                             f"{causes[0].get('guard_of')}"
                             + (f"; {more} older version(s) failed too" if more else "")
                             + ")")
            if frame.get("error"):
                lines.append(f"      error: {frame['error'][:200]}")
    for skipped in dump.skipped_frames:
        reason = (skipped.get("reason") or "").splitlines()
        lines.append(f"  {skipped.get('function')} ({short_path(skipped.get('source_file'))}:"
                     f"{skipped.get('first_line')}): run without compiling: "
                     f"{reason[0] if reason else '?'}")
        lines.extend(_break_line(brk) for brk in skipped.get("graph_breaks") or [])
    breaks = distinct_breaks(dump)
    if breaks:
        lines.append(f"  {len(breaks)} distinct graph break(s):")
        for b in breaks:
            ident = f"{b.gb_id} " if b.gb_id else ""
            lines.append(f"    {b.count}x {ident}{b.summary} at {b.where}"
                         + (f" ({b.doc_url})" if b.doc_url else ""))
    groups = recompile_groups(dump)
    if groups:
        lines.append(f"  {len(groups)} distinct recompile cause(s):")
        for g in groups:
            lines.append(f"    {len(g.compile_ids)}x in {g.function}: {g.words}")
            lines.append(f"       fix: {g.fix}")
    for error in dump.errors:
        lines.append(f"  dump error: {error}")
    return lines
