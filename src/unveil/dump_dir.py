"""A dump directory that several processes may share (DataLoader workers, multiprocessing,
two ``unveil run`` at once): a lock for what must not interleave, which processes are
writing into it now, and which manifest file is whose.

A process writing into the directory holds a marker ``.active_<pid>`` from entering to
leaving; a new run clears the files of a finished dump only when no other process is
active there. Each process writes its own manifest: ``manifest.json`` for the first, then
``manifest_<pid>.json``; the report reads them all. It imports nothing of unveil, so both
the writer (:mod:`unveil.torch.dump`) and the reader (:mod:`unveil.report.load`) use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import BadInputError

LOCK = ".unveil.lock"
_ACTIVE = ".active_"


def make(directory: Path) -> None:
    """Make ``directory`` (and its parents) and check it can be written; one sentence
    (:class:`BadInputError`) when not."""
    if directory.exists() and not directory.is_dir():
        raise BadInputError(f"cannot write the dump directory {str(directory)!r}: it is a "
                            f"file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.NamedTemporaryFile(dir=directory, delete=True).close()
    except NotADirectoryError:
        raise BadInputError(f"cannot write the dump directory {str(directory)!r}: a part of "
                            f"that path is a file") from None
    except OSError as exc:
        raise BadInputError(f"cannot write the dump directory {str(directory)!r}: "
                            f"{exc.strerror or exc}") from None


def begin(directory: Path, *, clear: bool) -> None:
    """Start writing into ``directory``: make it (one sentence when it cannot be
    written), clear a finished dump there (``clear``) and mark this process active."""
    make(directory)
    with locked(directory):
        if clear:
            clear_finished(directory)
        mark_active(directory)


@contextlib.contextmanager
def locked(directory: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the directory's lock (an advisory ``flock`` where the platform has one, else a
    lock file created exclusively). After ``timeout`` seconds without it, go on without:
    a lock left by a killed process must not stop the program."""
    path = directory / LOCK
    try:
        import fcntl
    except ImportError:  # Windows: a lock file, created exclusively
        deadline = time.monotonic() + timeout
        held = False
        while not held and time.monotonic() < deadline:
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                held = True
            except FileExistsError:
                time.sleep(0.01)
        try:
            yield
        finally:
            if held:
                with contextlib.suppress(OSError):
                    path.unlink()
        return
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # (releases the lock)


def alive(pid: object) -> bool:
    """Whether process ``pid`` (an int) is running."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but is not ours to signal
        return True
    return True


def mark_active(directory: Path, pid: int | None = None) -> None:
    """Say that process ``pid`` (this one) writes into ``directory`` now."""
    (directory / f"{_ACTIVE}{pid or os.getpid()}").touch()


def mark_done(directory: Path, pid: int | None = None) -> None:
    with contextlib.suppress(OSError):
        (directory / f"{_ACTIVE}{pid or os.getpid()}").unlink()


def active_processes(directory: Path) -> list[int]:
    """The other processes writing into ``directory`` now; markers of dead ones go."""
    out = []
    for marker in directory.glob(f"{_ACTIVE}*"):
        try:
            pid = int(marker.name[len(_ACTIVE):])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        if alive(pid):
            out.append(pid)
        else:
            with contextlib.suppress(OSError):
                marker.unlink()
    return sorted(out)


def read_manifest(path: Path) -> dict[str, Any] | None:
    """A manifest's data, or None when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def manifests(directory: Path) -> list[Path]:
    """The manifests in ``directory``: ``manifest.json`` first, then the others by name."""
    return sorted(directory.glob("manifest*.json"), key=lambda p: (p.name != "manifest.json",
                                                                   p.name))


def manifest_path(directory: Path, pid: int) -> Path:
    """Where process ``pid`` writes its manifest (call with the lock held): the manifest
    it wrote before, else ``manifest.json`` when that is free, else ``manifest_<pid>.json``."""
    own = directory / f"manifest_{pid}.json"
    if own.exists():
        return own
    first = directory / "manifest.json"
    data = read_manifest(first) if first.exists() else None
    if not first.exists() or (data is not None and data.get("pid") == pid):
        return first
    return own


def clear_finished(directory: Path) -> None:
    """Remove the files of earlier, finished dumps in ``directory`` (their manifests list
    them) and those manifests, and recordings of ``unveil.record`` nobody wrote out, so
    that a new run writes the same names and breakpoints set in them still apply. While
    another process writes into the directory, nothing goes. Call with the directory's
    lock held."""
    if active_processes(directory):
        return
    for recording in directory.glob("recording_*.marshal"):
        with contextlib.suppress(OSError):
            recording.unlink()
    for path in manifests(directory):
        old = read_manifest(path)
        if old is None:
            continue
        for entry in old.get("files") or []:
            name = entry.get("file") if isinstance(entry, dict) else None
            if isinstance(name, str) and "/" not in name and os.sep not in name:
                with contextlib.suppress(OSError):
                    (directory / name).unlink()
        with contextlib.suppress(OSError):
            path.unlink()
