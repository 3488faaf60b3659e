"""``unveil diff DIR_A DIR_B``: what changed between the compile artifacts of two runs
(after a code change or a PyTorch upgrade): frames added or removed, graphs and
transformed code compared as code, guards, graph breaks and recompiles added or removed.

What differs between two runs of the same program and says nothing is normalised away
first: the uuid of ``__compiled_fn_<n>_<uuid>`` (and of ``__resume_at_<offset>_<n>_<uuid>``,
torch 2.8), the compile id in a file's header
comment, the absolute path of the dump directory, the directory of a source file whose
name is the same in both, and the object ids in ``___check_obj_id``/``___check_type_id``
(``ID_MATCH``/``TYPE_MATCH``) guards. So are the numbers Dynamo counts through a whole
process (``__compiled_fn_N``, ``__builtins_dict___N``, ``__resume_at_<offset>_N``): one
more function compiled first renumbers every later one, which says nothing about them.
Pure data in, text or HTML out: no torch import."""

from __future__ import annotations

import difflib
import html
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .facts import failed_guards, function_of, is_recompile
from .load import RankDump, Run

# (category, singular, plural), in the order they are shown
CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("frames", "frame", "frames"),
    ("graphs", "graph", "graphs"),
    ("transformed code", "transformed code file", "transformed code files"),
    ("guards", "guard", "guards"),
    ("graph breaks", "graph break", "graph breaks"),
    ("recompiles", "recompile", "recompiles"),
)

_UUID = re.compile(r"(__compiled_fn_\d+|__resume_at_\d+_\d+)(?:_[0-9a-f]+)+(?!\w)")
# Dynamo's names numbered by a counter of the whole process: compiling anything else first
# renumbers them (the resume function's offset, its first number, stays)
_COUNTER = re.compile(r"\b(__compiled_fn_|__builtins_dict___|__resume_at_\d+_)\d+\b")
_OBJ_ID = re.compile(r"(___check_(?:obj|type)_id\(.*?,\s*)\d+(?=\s*\))")
_BIG_NUMBER = re.compile(r"\b\d{5,}\b")
_ID_MATCH = re.compile(r"\b(?:ID_MATCH|TYPE_MATCH)\b")
# an object's address in a repr Dynamo adds to a guard (torch 2.11: ``..., type=<built-in
# method sin of type object at 0x7f12ddce9fa0>``)
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+\b")
_HEADER_COMPILE = re.compile(r"\bcompile (?:!\d+/)?\d+/\d+\b")
_COMPILE_ID = re.compile(r"^(?:(!\d+)/)?(\d+)/(\d+)$")
# how unveil's graph files say where the trace's print of the graph is (torch/trace.py)
PRINTED_ONLY = "as Dynamo's structured trace prints it; written by unveil."
PRINTED_AT_END = "# As Dynamo's trace prints it:"
DUMP = "<dump>"  # what the dump directory's absolute path reads as, once normalised


@dataclass
class Difference:
    """One thing that differs: where (``title``), and either the lines only the new dump
    has and those only the old one has (frames, guards, graph breaks, recompiles) or a
    unified diff of two files (graphs, transformed code)."""

    category: str
    title: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """How many of its category it counts for: one file, or each line."""
        return 1 if self.diff else len(self.added) + len(self.removed)


@dataclass
class DumpDiff:
    """Two dumps compared: their names as given, their sizes, and what differs."""

    old_name: str
    new_name: str
    frames: int  # compiled frames in the old dump
    graphs: int  # graph files of those frames
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # not differences: partial dumps, torch

    @property
    def same(self) -> bool:
        return not self.differences

    def counts(self) -> dict[str, int]:
        """For each category (all of them, in order), how many things differ."""
        out = {name: 0 for name, _, _ in CATEGORIES}
        for d in self.differences:
            out[d.category] += d.count
        return out

    def verdict(self) -> str:
        """The one-line verdict."""
        if self.same:
            return (f"unveil diff: {self.old_name} and {self.new_name} are the same "
                    f"({_plural(self.frames, 'frame', 'frames')}, "
                    f"{_plural(self.graphs, 'graph', 'graphs')})")
        counts = self.counts()
        parts = [_plural(counts[name], one, many) for name, one, many in CATEGORIES
                 if counts[name]]
        return f"unveil diff: {self.old_name} and {self.new_name} differ: {', '.join(parts)}"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# ---------------------------------------------------------------- normalising


def normalise_names(text: str) -> str:
    """``text`` with Dynamo's per-process names counted out: uuids of graphs and resume
    functions dropped, their numbers (and those of builtins dicts) as ``N``."""
    return _COUNTER.sub(r"\1N", _UUID.sub(r"\1", text))


def normalise_guard(guard: str) -> str:
    """A guard without the object ids that differ from one process to the next."""
    guard = _ADDRESS.sub("at <address>", _OBJ_ID.sub(r"\1<id>", guard))
    if _ID_MATCH.search(guard):
        guard = _BIG_NUMBER.sub("<id>", guard)
    return guard


class _Normaliser:
    """Rewrites a dump's texts so that what says nothing about the compile is gone."""

    def __init__(self, run: Run, other: Run) -> None:
        paths: set[str] = set()
        for dump in run.ranks:
            for where in (dump.directory, run.directory):
                for path in {os.path.abspath(where), str(Path(where).resolve())}:
                    if len(path) > 1:
                        paths.add(path)
        mine, theirs = _source_paths(run), _source_paths(other)
        bases = {os.path.basename(p) for p in theirs}
        # a source file with the same name but another directory in the other dump
        self.sources = {p: os.path.basename(p) for p in mine - theirs
                        if os.path.basename(p) in bases and p != os.path.basename(p)}
        self._dump = [re.compile(re.escape(p) + r"(?![\w.-])")
                      for p in sorted(paths, key=len, reverse=True)]
        self._sources = [(re.compile(re.escape(p) + r"(?![\w.-])"), base)
                         for p, base in sorted(self.sources.items(),
                                               key=lambda kv: len(kv[0]), reverse=True)]

    def line(self, text: str) -> str:
        for pattern in self._dump:
            text = pattern.sub(DUMP, text)
        for pattern, base in self._sources:
            text = pattern.sub(base, text)
        return normalise_guard(normalise_names(text))

    def text(self, text: str) -> list[str]:
        """A dumped file's lines, normalised. A leading comment that names the compile
        (the file's title) ends there: the compile id is left out (frames are matched by
        function, not by id), and so is what follows, which says how unveil wrote the
        file (whether the graph ran from it), not what Dynamo compiled."""
        out = []
        header = True
        for raw in text.splitlines():
            line = self.line(raw)
            if header and line.startswith("#"):
                match = _HEADER_COMPILE.search(line)
                if match is not None:
                    line = line[:match.start()] + "compile <id>" + (
                        ")" if line[match.end():].startswith(")") else "")
            elif line.strip():
                header = False
            out.append(line)
        return out


def _printed(lines: list[str]) -> list[str] | None:
    """A graph file's print as Dynamo's trace has it: the whole of a file that holds only
    that (where FX's code was not at hand, e.g. Inductor's cache was hit), or the comments
    at the end of one that holds the code; None if neither."""
    if lines and lines[0].endswith(PRINTED_ONLY):
        return lines[1:]
    if PRINTED_AT_END in lines:
        rest = lines[lines.index(PRINTED_AT_END) + 1:]
        return [line[2:] if line.startswith("# ") else line.lstrip("#") for line in rest]
    return None


def _source_paths(run: Run) -> set[str]:
    out: set[str] = set()
    for dump in run.ranks:
        for frame in dump.frames + dump.skipped_frames:
            if isinstance(frame.get("source_file"), str):
                out.add(frame["source_file"])
            for brk in frame.get("graph_breaks") or []:
                if isinstance(brk.get("user_file"), str):
                    out.add(brk["user_file"])
    return out


def _base(path: Any) -> str:
    return os.path.basename(path) if isinstance(path, str) and path else "?"


# ---------------------------------------------------------------- matching


def _frame_keys(frames: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Each frame by (function, source file name, which frame of that function in order,
    which recompile): compile ids shift when another function is compiled first."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for frame in frames:
        groups.setdefault((str(frame.get("function")), _base(frame.get("source_file"))),
                          []).append(frame)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for (function, base), members in groups.items():
        parsed = []
        for index, frame in enumerate(members):
            match = _COMPILE_ID.match(frame.get("compile_id") or "")
            if match is None:  # no compile id (a dump without its manifest): by order
                parsed.append(((1, "", 0, index), 0, frame))
            else:
                prefix, frame_id, attempt = match.groups()
                parsed.append(((0, prefix or "", int(frame_id), 0), int(attempt), frame))
        order = sorted({p[0] for p in parsed})
        seen: Counter[tuple[int, int]] = Counter()  # (processes merged into one dump)
        for ident, attempt, frame in parsed:
            place = (order.index(ident), attempt)
            key = (function, base, *place, seen[place])  # (mypy for 3.10 rejects it in a[...])
            out[key] = frame
            seen[place] += 1
    return out


def _match(old: dict[tuple[Any, ...], dict[str, Any]], new: dict[tuple[Any, ...], dict[str, Any]]
           ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[dict[str, Any]],
                      list[dict[str, Any]]]:
    """The frames of both dumps in pairs, and those only the old or the new one has. A
    frame of a dump without its manifest (no source file, no compile id) is matched by
    function, in order."""
    pairs = [(old[k], new[k]) for k in old if k in new]
    only_old = sorted(k for k in old if k not in new)
    only_new = sorted(k for k in new if k not in old)
    for k in list(only_old):
        other = next((j for j in only_new if j[0] == k[0] and "?" in (j[1], k[1])), None)
        if other is not None:
            pairs.append((old[k], new[other]))
            only_old.remove(k)
            only_new.remove(other)
    return pairs, [old[k] for k in only_old], [new[k] for k in only_new]


def _has_manifest(dump: RankDump) -> bool:
    """Whether the dump's frames come from a manifest (not only from its files)."""
    return not dump.frames or any(f.get("compile_id") for f in dump.frames)


def _label(frame: dict[str, Any], prefix: str = "") -> str:
    cid = frame.get("compile_id")
    what = f"compile {cid}" if cid else str(frame.get("transformed_code") or "?")
    return f"{prefix}{frame.get('function')} ({_base(frame.get('source_file'))}) {what}"


def _pair_label(old: dict[str, Any], new: dict[str, Any], prefix: str) -> str:
    label = _label(old, prefix)
    if (new.get("compile_id") or "") != (old.get("compile_id") or ""):
        label += f" -> {new.get('compile_id') or new.get('transformed_code') or '?'}"
    elif _base(old.get("source_file")) != _base(new.get("source_file")):
        label += f" -> {_base(new.get('source_file'))}"
    return label


def _slots(run: Run) -> dict[tuple[int, int], RankDump]:
    """A run's dumps by (rank, -1 without ranks; which process of that rank, in the order
    loaded: process ids differ from run to run)."""
    seen: Counter[int] = Counter()
    out: dict[tuple[int, int], RankDump] = {}
    for dump in run.ranks:
        rank = -1 if dump.rank is None else dump.rank
        out[(rank, seen[rank])] = dump
        seen[rank] += 1
    return out


def _pair_ranks(old: Run, new: Run) -> list[tuple[str, RankDump, RankDump]]:
    """The dumps of both runs side by side, rank by rank (and process by process where
    several shared a directory), each with its label; one a run lacks is empty."""
    if len(old.ranks) == 1 and len(new.ranks) == 1:
        return [("", old.ranks[0], new.ranks[0])]
    a, b = _slots(old), _slots(new)
    several = any(index for _, index in set(a) | set(b))
    out = []
    for rank, index in sorted(set(a) | set(b)):
        parts = [] if rank < 0 else [f"rank {rank}"]
        if several:
            parts.append(f"process #{index + 1}")
        empty = None if rank < 0 else rank
        out.append((" ".join(parts) + ": ",
                    a.get((rank, index)) or RankDump(empty, old.directory),
                    b.get((rank, index)) or RankDump(empty, new.directory)))
    return out


# ---------------------------------------------------------------- comparing


def _added_removed(old: Counter[str], new: Counter[str]) -> tuple[list[str], list[str]]:
    return sorted((new - old).elements()), sorted((old - new).elements())


class _Comparer:
    """Compares two runs (rank by rank) and collects the differences."""

    def __init__(self, old: Run, new: Run, old_name: str, new_name: str) -> None:
        self.old, self.new = old, new
        self.old_name, self.new_name = old_name, new_name
        self.norm_old = _Normaliser(old, new)
        self.norm_new = _Normaliser(new, old)
        self.out: list[Difference] = []

    def add(self, category: str, title: str, old: Counter[str], new: Counter[str]) -> None:
        added, removed = _added_removed(old, new)
        if added or removed:
            self.out.append(Difference(category, title, added=added, removed=removed))

    def run(self) -> list[Difference]:
        by_category: dict[str, list[Difference]] = {}
        for prefix, a, b in _pair_ranks(self.old, self.new):
            self.out = []
            self.ranks(prefix, a, b)
            for d in self.out:
                by_category.setdefault(d.category, []).append(d)
        return [d for name, _, _ in CATEGORIES for d in by_category.get(name, [])]

    def ranks(self, prefix: str, a: RankDump, b: RankDump) -> None:
        """Compare one rank of each run (or the only process of each)."""
        pairs, only_old, only_new = _match(_frame_keys(a.frames), _frame_keys(b.frames))
        self.add("frames", prefix.rstrip(": "),
                 Counter([_label(f) for f in only_old]
                         + [self._skipped(s) for s in a.skipped_frames]),
                 Counter([_label(f) for f in only_new]
                         + [self._skipped(s) for s in b.skipped_frames]))
        # a frame of a dump without its manifest has only its transformed code: its graphs,
        # guards and graph breaks are unknown, not gone (the dump's note says so)
        known = [(fa, fb) for fa, fb in pairs if fa.get("compile_id") and fb.get("compile_id")]
        for fa, fb in known:
            self.graphs(a, b, fa, fb, _pair_label(fa, fb, prefix))
        for fa, fb in pairs:
            self.file("transformed code", _pair_label(fa, fb, prefix), a, b,
                      fa.get("transformed_code"), fb.get("transformed_code"))
        for fa, fb in known:
            self.add("guards", _pair_label(fa, fb, prefix),
                     Counter(self.norm_old.line(g) for g in fa.get("guards") or []),
                     Counter(self.norm_new.line(g) for g in fb.get("guards") or []))
        if _has_manifest(a) and _has_manifest(b):
            self.add("graph breaks", prefix.rstrip(": "), self._breaks(a), self._breaks(b))
            self.add("recompiles", prefix.rstrip(": "), self._recompiles(a, self.norm_old),
                     self._recompiles(b, self.norm_new))

    @staticmethod
    def _skipped(skip: dict[str, Any]) -> str:
        return f"{skip.get('function')} ({_base(skip.get('source_file'))}) run without compiling"

    @staticmethod
    def _breaks(dump: RankDump) -> Counter[str]:
        """Where graphs break (file name, line, function, gist), each place once: a
        recompile breaks at the same place again, which is no new graph break."""
        def key(brk: dict[str, Any], frame: dict[str, Any], suffix: str = "") -> str:
            gist = brk.get("summary") or (brk.get("reason") or "?").strip().splitlines()[0]
            return (f"{_base(brk.get('user_file'))}:{brk.get('user_line') or '?'} in "
                    f"{function_of(frame)}: {gist}{suffix}")

        return Counter({key(b, f) for f in dump.frames for b in f.get("graph_breaks") or []}
                       | {key(b, s, " (frame run without compiling)")
                          for s in dump.skipped_frames for b in s.get("graph_breaks") or []})

    @staticmethod
    def _recompiles(dump: RankDump, norm: _Normaliser) -> Counter[str]:
        out: Counter[str] = Counter()
        for frame in dump.frames:
            if not is_recompile(frame):
                continue
            attempt = (frame.get("compile_id") or "").rsplit("/", 1)[-1]
            checks = [norm.line(c.expression) for r in frame.get("recompile_reasons") or []
                      for c in failed_guards(r)]
            if not checks:
                checks = [norm.line(r.strip().splitlines()[0])
                          for r in frame.get("recompile_reasons") or [] if r.strip()]
            because = f": {'; '.join(checks)} failed" if checks else ""
            out[f"{frame.get('function')} ({_base(frame.get('source_file'))}) recompile "
                f"{attempt}{because}"] += 1
        return out

    def graphs(self, a: RankDump, b: RankDump, fa: dict[str, Any], fb: dict[str, Any],
               label: str) -> None:
        """The graph files of two matched frames, paired by kind (and order within it)."""
        def by_kind(frame: dict[str, Any]) -> dict[tuple[str, int], str]:
            seen: Counter[str] = Counter()
            out: dict[tuple[str, int], str] = {}
            for graph in frame.get("graphs") or []:
                kind = str(graph.get("kind"))
                out[(kind, seen[kind])] = str(graph.get("file"))
                seen[kind] += 1
            return out

        old, new = by_kind(fa), by_kind(fb)
        for key in sorted(set(old) | set(new)):
            kind, index = key
            title = f"{label}: {kind}" + (f" #{index}" if index else "")
            self.file("graphs", title, a, b, old.get(key), new.get(key))

    def file(self, category: str, title: str, a: RankDump, b: RankDump,
             name_a: str | None, name_b: str | None) -> None:
        """Compare one dumped file of each side (None: the side has none) as code."""
        if name_a is None and name_b is None:
            return
        text_a = a.read(name_a) if name_a else None
        text_b = b.read(name_b) if name_b else None
        lines_a = self.norm_old.text(text_a) if text_a is not None else []
        lines_b = self.norm_new.text(text_b) if text_b is not None else []
        if lines_a == lines_b and (text_a is None) == (text_b is None):
            return
        if category == "graphs" and text_a is not None and text_b is not None:
            printed_a = _printed([self.norm_old.line(x) for x in text_a.splitlines()])
            printed_b = _printed([self.norm_new.line(x) for x in text_b.splitlines()])
            only = [t for t in (text_a, text_b) if t.split("\n", 1)[0].endswith(PRINTED_ONLY)]
            if printed_a is not None and printed_b is not None and len(only) == 1:
                # one file has the code, the other only the print: compare the prints
                if printed_a == printed_b:
                    return
                lines_a, lines_b = printed_a, printed_b
                title += " (as the trace prints it: one dump has only that)"
        from_file = _file_name(self.old_name, a, self.old, name_a, text_a is not None)
        to_file = _file_name(self.new_name, b, self.new, name_b, text_b is not None)
        diff = list(difflib.unified_diff(lines_a, lines_b, from_file, to_file, lineterm=""))
        if not diff:  # (one side missing and the other empty)
            diff = [f"--- {from_file}", f"+++ {to_file}"]
        if name_a is None:
            title += " (added)"
        elif name_b is None:
            title += " (removed)"
        self.out.append(Difference(category, title, diff=diff))


def _file_name(label: str, dump: RankDump, run: Run, name: str | None, there: bool) -> str:
    """How a diff's header names one side's file: ``A/rank_1/x.py``, ``A: (none)`` or
    ``A: x.py (missing)``."""
    if name is None:
        return f"{label}: (none)"
    if not there:
        return f"{label}: {name} (missing)"
    if dump.directory == run.directory:
        return f"{label}/{name}"
    return f"{label}/{dump.directory.name}/{name}"


def compare(old: Run, new: Run, old_name: str | None = None,
            new_name: str | None = None) -> DumpDiff:
    """Compare two loaded dumps (``old_name``/``new_name``: how to call them)."""
    old_name = old_name or str(old.directory)
    new_name = new_name or str(new.directory)
    result = DumpDiff(old_name, new_name, frames=len(old.frames),
                      graphs=sum(len(f.get("graphs") or []) for f in old.frames))
    result.differences = _Comparer(old, new, old_name, new_name).run()
    versions = [next((r.torch_version for r in run.ranks if r.torch_version), None)
                for run in (old, new)]
    if None not in versions and versions[0] != versions[1]:
        result.notes.append(f"torch {versions[0] or '?'} in {old_name}, "
                            f"{versions[1] or '?'} in {new_name}")
    for name, run in ((old_name, old), (new_name, new)):
        for dump in run.ranks:
            where = f"{name} rank {dump.rank}" if dump.rank is not None else name
            result.notes.extend(f"{where}: {n}" for n in dump.notes)
    return result


# ---------------------------------------------------------------- the terminal


def text_report(result: DumpDiff, limit: int = 40, quiet: bool = False,
                html_path: str | None = None) -> str:
    """The verdict, then (unless ``quiet``) each category's differences, each diff cut
    to ``limit`` lines."""
    lines = [result.verdict()]
    if quiet:
        return lines[0] + "\n"
    lines.extend(f"  note: {n}" for n in result.notes)
    for name, _, _ in CATEGORIES:
        items = [d for d in result.differences if d.category == name]
        if not items:
            continue
        lines.append(f"{name}:")
        for d in items:
            indent = "  "
            if d.title:
                lines.append(f"  {d.title}:")
                indent = "    "
            lines.extend(f"{indent}+ {x}" for x in d.added)
            lines.extend(f"{indent}- {x}" for x in d.removed)
            shown = d.diff if limit <= 0 else d.diff[:limit]
            lines.extend(f"{indent}{x}" for x in shown)
            if len(shown) < len(d.diff):
                more = len(d.diff) - len(shown)
                where = f"in {html_path}" if html_path else "with --html PATH"
                lines.append(f"{indent}... {_plural(more, 'more line', 'more lines')} "
                             f"(all of them {where})")
    if html_path:
        lines.append(f"html: {html_path}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- HTML

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1280px;padding:0 16px 32px;
 color:#1b1f24;background:#fff}
h1{font-size:20px;margin:16px 0 4px}
h2{font-size:16px;margin:20px 0 6px;border-bottom:1px solid #d0d7de}
h3{font-size:14px;margin:10px 0 4px;font-weight:600}
.same{color:#1a7f37}.differ{color:#cf222e}
.muted{color:#57606a}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #eaeef2;
 text-align:left}td.n{text-align:right}
pre.diff,ul.lines{background:#f6f8fa;border-radius:4px;font:12px/1.4 ui-monospace,monospace;
 overflow:auto;padding:4px 0;margin:4px 0}
pre.diff span{display:block;padding:0 8px;white-space:pre}
ul.lines{list-style:none}ul.lines li{padding:0 8px;white-space:pre-wrap}
.add{background:#dafbe1}.del{background:#ffebe9}
.hunk{color:#8250df}.head{color:#57606a;font-weight:bold}
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _diff_html(lines: list[str]) -> str:
    out = []
    for index, line in enumerate(lines):
        if index < 2 and line.startswith(("--- ", "+++ ")):
            css = "head"
        elif line.startswith("@@"):
            css = "hunk"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        else:
            css = "ctx"
        out.append(f'<span class="{css}">{_esc(line) or " "}</span>')
    return f'<pre class="diff">{"".join(out)}</pre>'


def html_report(result: DumpDiff) -> str:
    """The comparison as one self-contained HTML page (styles inline, no script, no
    network): the verdict, a table of counts per category, then every difference whole."""
    counts = result.counts()
    rows = "".join(
        f'<tr><td><a href="#{_esc(name.replace(" ", "-"))}">{_esc(name)}</a></td>'
        f'<td class="n">{counts[name]}</td></tr>' if counts[name] else
        f'<tr><td class="muted">{_esc(name)}</td><td class="n muted">0</td></tr>'
        for name, _, _ in CATEGORIES)
    css = "same" if result.same else "differ"
    parts = [f'<h1>unveil diff: {_esc(result.old_name)} &rarr; {_esc(result.new_name)}</h1>',
             f'<p class="{css}"><b>{_esc(result.verdict())}</b></p>',
             f'<p class="muted">{_esc(result.old_name)}: {result.frames} frames, '
             f'{result.graphs} graphs. Lines marked + are only in {_esc(result.new_name)}, '
             f'lines marked &minus; only in {_esc(result.old_name)}; uuids of graph names, '
             f'object ids in guards, compile ids in file headers, the dump directory and '
             f'the numbers Dynamo counts through a process (<code>__compiled_fn_N</code>, '
             f'<code>__resume_at_&lt;offset&gt;_N</code>) are left out.</p>']
    if result.notes:
        parts.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in result.notes) + "</ul>")
    parts.append(f"<table><tr><th>what</th><th>differences</th></tr>{rows}</table>")
    for name, _, _ in CATEGORIES:
        items = [d for d in result.differences if d.category == name]
        if not items:
            continue
        parts.append(f'<h2 id="{_esc(name.replace(" ", "-"))}">{_esc(name)} '
                     f'<span class="muted">({counts[name]})</span></h2>')
        for d in items:
            if d.title:
                parts.append(f"<h3>{_esc(d.title)}</h3>")
            if d.added or d.removed:
                parts.append('<ul class="lines">'
                             + "".join(f'<li class="add">+ {_esc(x)}</li>' for x in d.added)
                             + "".join(f'<li class="del">- {_esc(x)}</li>' for x in d.removed)
                             + "</ul>")
            if d.diff:
                parts.append(_diff_html(d.diff))
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<title>unveil diff: {_esc(result.old_name)} &rarr; {_esc(result.new_name)}'
            f'</title><style>{CSS}</style></head><body>{"".join(parts)}</body></html>\n')


__all__ = ["CATEGORIES", "Difference", "DumpDiff", "compare", "html_report",
           "normalise_guard", "text_report"]
