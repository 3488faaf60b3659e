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

from ..errors import BadInputError

_DUMP_FILE = re.compile(r"^(__transformed_code_\d+_for_.+|__compiled_fn_.+|full_code_for_.+)\.py$")
_TRANSFORMED = re.compile(r"^__transformed_code_(\d+)_for_(.+)\.py$")


@dataclass
class RankDump:
    """The dump of one rank (or of the only process)."""

    rank: int | None
    directory: Path
    frames: list[dict[str, Any]] = field(default_factory=list)
    functions: list[dict[str, Any]] = field(default_factory=list)
    skipped_frames: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is missing, for a partial dump
    torch_version: str | None = None

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
        ranks = [_load_rank(p, int(p.name.split("_")[1])) for p in rank_dirs]
    else:
        ranks = [_load_rank(root, None)]
    ranks = [r for r in ranks if r is not None]
    if not ranks:
        entries = sorted(p.name for p in root.iterdir())
        if not entries:
            raise BadInputError(f"{str(root)!r} is empty: no unveil dump there (run the "
                                f"program with `unveil run` or under unveil.prepare_debug)")
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise BadInputError(f"{str(root)!r} is not an unveil dump: it has no manifest.json "
                            f"and no dumped code, only {len(entries)} other entries ({shown})")
    return Run(root, ranks)


def _load_rank(directory: Path, rank: int | None) -> RankDump | None:
    manifests = sorted(directory.glob("manifest*.json"))
    dumped = sorted(p.name for p in directory.iterdir() if _DUMP_FILE.match(p.name))
    if not manifests and not dumped:
        return None
    dump = RankDump(rank, directory)
    for path in manifests:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            dump.notes.append(f"{path.name} could not be read ({exc}); the files are shown "
                              f"without it")
            continue
        if not isinstance(data, dict) or "frames" not in data:
            dump.notes.append(f"{path.name} is not an unveil manifest; ignored")
            continue
        dump.torch_version = dump.torch_version or data.get("torch_version")
        dump.frames.extend(data.get("frames") or [])
        dump.functions.extend(data.get("functions") or [])
        dump.skipped_frames.extend(data.get("skipped_frames") or [])
        dump.files.extend(data.get("files") or [])
        dump.errors.extend(data.get("errors") or [])
    listed = {f.get("transformed_code") for f in dump.frames}
    orphans = [n for n in dumped if _TRANSFORMED.match(n) and n not in listed]
    if orphans:  # no manifest (a crash), or files of a process that never wrote one
        if not manifests:
            dump.notes.append("no manifest.json: the run did not finish (a crash or a kill "
                              "before prepare_debug's exit); the transformed code files are "
                              "shown without compile ids, graphs, guards or graph breaks")
        else:
            dump.notes.append(f"{len(orphans)} transformed-code file(s) are in no manifest "
                              f"(a process that did not finish)")
        for name in orphans:
            match = _TRANSFORMED.match(name)
            assert match is not None
            dump.frames.append({
                "compile_id": None, "function": match.group(2), "qualname": match.group(2),
                "source_file": None, "first_line": None, "transformed_code": name,
                "status": "unknown (no manifest)", "identical": None, "error": None,
                "compiled_fns": [], "resume_fns": [], "graphs": [], "graph_breaks": [],
                "recompile_reasons": [], "compile_time_s": None, "guards": [], "stack": []})
    missing = [f["file"] for f in dump.files if not (directory / f["file"]).exists()]
    if missing:
        dump.notes.append(f"{len(missing)} file(s) the manifest lists are missing: "
                          + ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else ""))
    dump.frames.sort(key=_frame_order)
    return dump


def _frame_order(frame: dict[str, Any]) -> tuple[int, int, str]:
    cid = frame.get("compile_id") or ""
    match = re.fullmatch(r"(?:!\d+/)?(\d+)/(\d+)", cid)
    if match is None:
        return (1 << 30, 0, frame.get("transformed_code") or "")
    return (int(match.group(1)), int(match.group(2)), "")
