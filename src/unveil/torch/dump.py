"""``prepare_debug(dump_dir)``: while active, every frame TorchDynamo transforms is
decompiled to ``<dump_dir>/__transformed_code_<n>_for_<fn>.py`` and Dynamo runs the code
compiled from that file (so breakpoints there are hit). A frame that cannot be decompiled
keeps Dynamo's own code; its file and ``manifest.json`` say why."""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from .._io import write_atomic
from ..errors import BadInputError, UnveilError
from . import _dynamo


@dataclass
class FrameRecord:
    """One frame Dynamo transformed, as the manifest lists it."""

    function: str
    qualname: str
    source_file: str
    first_line: int
    transformed_code: str | None  # the dumped file, relative to dump_dir
    status: str  # "running unveil's code" | "running Dynamo's code"
    identical: bool | None = None  # recompiled bytecode equals Dynamo's (normalised)
    error: str | None = None


@dataclass
class Manifest:
    torch_version: str | None
    frames: list[FrameRecord] = field(default_factory=list)


def identifier(name: str) -> str:
    """``name`` made a safe part of a file name (``<lambda>`` -> ``lambda``)."""
    out = re.sub(r"\W+", "_", name).strip("_")
    return out or "code"


class prepare_debug:  # noqa: N801 (a context manager named like the function its users call)
    """Dump and run the source of every frame TorchDynamo transforms while active.

    Use ``with unveil.prepare_debug("dump"):`` or call ``__enter__``/``__exit__`` by hand.
    """

    def __init__(self, dump_dir: str | os.PathLike[str]) -> None:
        self.dump_dir = Path(dump_dir)
        self._remove: Any = None
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._pending: list[tuple[FrameRecord, CodeType, CodeType]] = []
        self.manifest = Manifest(_dynamo.torch_version())

    def __enter__(self) -> prepare_debug:
        rank = _dynamo.distributed_rank()
        if rank is not None and self.dump_dir.name != f"rank_{rank}":
            self.dump_dir = self.dump_dir / f"rank_{rank}"  # each rank its own directory
        try:
            self.dump_dir.mkdir(parents=True, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=self.dump_dir, delete=True)
            probe.close()
        except OSError as exc:
            raise BadInputError(f"cannot write the dump directory {str(self.dump_dir)!r}: "
                                f"{exc.strerror or exc}") from None
        self._remove = _dynamo.add_bytecode_hook(self._hook)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None
        self.write_manifest()
        if not self.manifest.frames and exc_info[0] is None:
            warnings.warn(
                f"unveil.prepare_debug: Dynamo compiled no frame while it was active, so "
                f"{str(self.dump_dir)!r} holds no code; a function compiled (called) before "
                f"is reused from Dynamo's cache: call torch._dynamo.reset() before entering "
                f"prepare_debug, or enter it before the first call", UserWarning, stacklevel=2)

    # ------------------------------------------------------------ the hook

    def _file_for(self, code: CodeType) -> Path:
        """A new file name, claimed on disk so that processes sharing the directory
        (DataLoader workers, multiprocessing) never write the same one."""
        name = identifier(code.co_name)
        with self._lock:
            n = self._counts.get(name, 0)
            while True:
                path = self.dump_dir / f"__transformed_code_{n}_for_{name}.py"
                try:
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                except FileExistsError:
                    n += 1
                    continue
                self._counts[name] = n + 1
                return path

    def _hook(self, code: CodeType, new_code: CodeType) -> CodeType | None:
        """Decompile Dynamo's ``new_code`` for ``code`` to a file and return the code
        compiled from it; None (Dynamo's own code) when that is not possible."""
        from ..decompiler.api import recompile

        path = self._file_for(code)
        record = FrameRecord(function=code.co_name,
                             qualname=getattr(code, "co_qualname", code.co_name),
                             source_file=code.co_filename, first_line=code.co_firstlineno,
                             transformed_code=path.name, status="running Dynamo's code")
        try:
            replacement = recompile(new_code, str(path))
        except (UnveilError, SyntaxError, ValueError, RecursionError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            write_atomic(path, f"# unveil could not decompile Dynamo's code for "
                               f"{record.qualname} ({record.source_file}:"
                               f"{record.first_line}); Dynamo's own code runs.\n"
                               f"# {record.error}\n")
            self.manifest.frames.append(record)
            return None
        record.status = "running unveil's code"
        self.manifest.frames.append(record)
        self._pending.append((record, new_code, replacement))  # compared at exit
        return replacement

    # ------------------------------------------------------------ the manifest

    def write_manifest(self) -> Path:
        from ..check import compare

        for record, new_code, replacement in self._pending:
            try:
                record.identical = compare(new_code, replacement) is None
            except Exception:  # noqa: BLE001 (the comparison is informative only)
                record.identical = None
        self._pending.clear()
        path = self.dump_dir / "manifest.json"
        data = asdict(self.manifest)
        write_atomic(path, json.dumps(data, indent=2) + "\n")
        return path
