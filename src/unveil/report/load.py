"""Reading a dump directory written by ``prepare_debug`` (one process, several processes
sharing it, or one ``rank_<r>/`` directory per rank) into plain data for the summary and
the HTML report. A directory that is not a dump, or a dump a crashed run left without its
manifest, is explained in one sentence or shown with what could be recovered."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import dump_dir
from ..dump_format import FORMAT, FrameRecord, FunctionRecord, checked
from ..errors import BadInputError

_DUMP_FILE = re.compile(r"^(__transformed_code_\d+_for_.+|__compiled_fn_.+|full_code_for_.+)\.py$")
_TRANSFORMED = re.compile(r"^__transformed_code_(\d+)_for_(.+)\.py$")


@dataclass
class RankDump:
    """The dump of one rank (or of the only process)."""

    rank: int | None
    directory: Path
    pid: int | None = None  # the process, where several dumped into one directory
    frames: list[dict[str, Any]] = field(default_factory=list)
    functions: list[dict[str, Any]] = field(default_factory=list)
    skipped_frames: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is missing, for a partial dump
    torch_version: str | None = None
    wall_time_s: float | None = None  # the program's time inside prepare_debug

    @property
    def label(self) -> str:
        """``rank 1``, ``process 4242``, both, or "" for the only process."""
        parts = [] if self.rank is None else [f"rank {self.rank}"]
        if self.pid is not None:
            parts.append(f"process {self.pid}")
        return " ".join(parts)

    def read(self, name: str) -> str | None:
        """The text of a dumped file, or None if it is not there."""
        try:
            return (self.directory / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


@dataclass
class Run:
    """Everything in a dump directory."""

    directory: Path
    ranks: list[RankDump]

    @property
    def frames(self) -> list[dict[str, Any]]:
        return [f for r in self.ranks for f in r.frames]

    @property
    def rank_numbers(self) -> set[int]:
        """The ranks the dumps belong to (none without ``torch.distributed``)."""
        return {r.rank for r in self.ranks if r.rank is not None}


def load_run(directory: str | Path) -> Run:
    """Read the dump in ``directory``. Raises :class:`BadInputError` (one sentence) for a
    directory that does not exist or holds no dump."""
    root = Path(directory)
    if not root.exists():
        raise BadInputError(f"{str(root)!r} does not exist: give the directory that "
                            f"unveil run or unveil.prepare_debug dumped into")
    if not root.is_dir():
        raise BadInputError(f"{str(root)!r} is a file, not a dump directory")
    rank_dirs = sorted((p for p in root.glob("rank_*") if p.is_dir()
                        and re.fullmatch(r"rank_\d+", p.name)),
                       key=lambda p: int(p.name.split("_")[1]))
    if rank_dirs:
        ranks = [d for p in rank_dirs for d in _load_rank(p, int(p.name.split("_")[1]))]
    else:
        ranks = _load_rank(root, None)
    if not ranks:
        entries = sorted(p.name for p in root.iterdir())
        if not entries:
            raise BadInputError(f"{str(root)!r} is empty: no unveil dump there (run the "
                                f"program with `unveil run` or under unveil.prepare_debug)")
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise BadInputError(f"{str(root)!r} is not an unveil dump: it has no manifest.json "
                            f"and no dumped code, only {len(entries)} other entries ({shown})")
    return Run(root, ranks)


def _load_rank(directory: Path, rank: int | None) -> list[RankDump]:
    """The dumps in one directory: one per process that wrote a manifest there (processes
    sharing the directory), the files no manifest lists with the first."""
    paths = dump_dir.manifests(directory)
    dumped = sorted(p.name for p in directory.iterdir() if _DUMP_FILE.match(p.name))
    if not paths and not dumped:
        return []
    dumps: dict[object, RankDump] = {}
    notes = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            notes.append(f"{path.name} could not be read ({exc}); the files are shown "
                         f"without it")
            continue
        if not isinstance(data, dict) or "frames" not in data:
            notes.append(f"{path.name} is not an unveil manifest; ignored")
            continue
        pid = data.get("pid") if isinstance(data.get("pid"), int) else None
        dump = dumps.setdefault(pid if pid is not None else path.name,
                                RankDump(rank, directory, pid))
        version = data.get("torch_version")
        dump.torch_version = dump.torch_version or (version if isinstance(version, str)
                                                    else None)
        wall = data.get("wall_time_s")
        if isinstance(wall, (int, float)) and not isinstance(wall, bool):
            dump.wall_time_s = (dump.wall_time_s or 0.0) + float(wall)
        written = data.get("format", 1)
        if not isinstance(written, int) or written > FORMAT:
            notes.append(f"{path.name} was written by unveil "
                         f"{data.get('unveil_version', '?')} in layout {written!r}, newer "
                         f"than this unveil reads ({FORMAT}): shown as far as it reads")
        found = _entries(data, path.name, notes)
        dump.frames.extend(found["frames"])
        dump.functions.extend(found["functions"])
        dump.skipped_frames.extend(found["skipped_frames"])
        dump.files.extend(found["files"])
        dump.errors.extend(found["errors"])
    if len(dumps) == 1:
        next(iter(dumps.values())).pid = None  # the only process: no need to name it
    first = next(iter(dumps.values()), None) or RankDump(rank, directory)
    dumps.setdefault("", first)
    first.notes.extend(notes)
    listed = {f.get("transformed_code") for d in dumps.values() for f in d.frames}
    orphans = [n for n in dumped if _TRANSFORMED.match(n) and n not in listed]
    if orphans:  # no manifest (a crash), or files of a process that never wrote one
        running = dump_dir.active_processes(directory)
        if running:
            first.notes.append(
                f"{len(orphans)} transformed-code file(s) are in no manifest yet: process"
                f"{'es' if len(running) > 1 else ''} {', '.join(map(str, running))} still "
                f"dump{'' if len(running) > 1 else 's'} into this directory (report again "
                f"when {'they have' if len(running) > 1 else 'it has'} finished)")
        elif not paths:
            first.notes.append("no manifest.json: the run did not finish (a crash or a kill "
                               "before prepare_debug's exit); the transformed code files are "
                               "shown without compile ids, graphs, guards or graph breaks")
        else:
            first.notes.append(f"{len(orphans)} transformed-code file(s) are in no manifest "
                               f"(a process that did not finish)")
        for name in orphans:
            match = _TRANSFORMED.match(name)
            assert match is not None
            first.frames.append({
                "compile_id": None, "function": match.group(2), "qualname": match.group(2),
                "source_file": None, "first_line": None, "transformed_code": name,
                "status": "unknown (no manifest)", "identical": None, "error": None,
                "compiled_fns": [], "resume_fns": [], "graphs": [], "graph_breaks": [],
                "recompile_reasons": [], "compile_time_s": None, "guards": [], "stack": []})
    out = []
    for dump in {id(d): d for d in dumps.values()}.values():
        missing = [f["file"] for f in dump.files if not (directory / f["file"]).exists()]
        if missing:
            dump.notes.append(f"{len(missing)} file(s) the manifest lists are missing: "
                              + ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else ""))
        dump.frames.sort(key=_frame_order)
        out.append(dump)
    return out


_SHOWN_PROBLEMS = 10  # sentences about a damaged manifest, before "and N more"


def _entries(data: dict[str, Any], name: str, notes: list[str]) -> dict[str, list[Any]]:
    """The lists of one manifest, each entry checked (:func:`dump_format.checked`): what
    is not what unveil writes is left out or left empty, with one sentence each (the
    first few) in ``notes``."""
    problems: list[str] = []
    out: dict[str, list[Any]] = {}
    for key in ("frames", "functions", "skipped_frames", "files", "errors"):
        value = data.get(key)
        if value is None:
            value = []
        if not isinstance(value, list):
            problems.append(f"{name}: {key!r} is not a list: ignored")
            value = []
        kept: list[Any] = []
        one: dict[str, Any] | str | None
        for i, entry in enumerate(value):
            where = f"{name}: {key}[{i}]"
            if key in ("frames", "functions"):
                one, more = checked(entry, FrameRecord if key == "frames" else
                                    FunctionRecord, where)
                problems.extend(more)
            elif key == "errors":
                one = entry if isinstance(entry, str) else None
                if one is None:
                    problems.append(f"{where} is not a sentence: left out")
            else:  # files and skipped frames: plain mappings, a file with its name
                one = entry if isinstance(entry, dict) and (
                    key != "files" or isinstance(entry.get("file"), str)) else None
                if one is None:
                    problems.append(f"{where} is not a {key[:-1].replace('_', ' ')}: "
                                    f"left out")
            if one is not None:
                kept.append(one)
        out[key] = kept
    notes.extend(problems[:_SHOWN_PROBLEMS])
    if len(problems) > _SHOWN_PROBLEMS:
        notes.append(f"{name}: and {len(problems) - _SHOWN_PROBLEMS} more parts that are "
                     f"not what unveil writes")
    return out


def _frame_order(frame: dict[str, Any]) -> tuple[int, int, str]:
    cid = frame.get("compile_id") or ""
    match = re.fullmatch(r"(?:!\d+/)?(\d+)/(\d+)", cid)
    if match is None:
        return (1 << 30, 0, frame.get("transformed_code") or "")
    return (int(match.group(1)), int(match.group(2)), "")
