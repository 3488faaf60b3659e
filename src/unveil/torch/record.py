"""``unveil.record(dump_dir)``: dumping that costs (almost) nothing on torch.compile's path.

While active, Dynamo's own code runs and unveil only keeps what it needs, O(1) work per
frame: each transformed frame's code objects and compile id, the structured-trace facts
(graph breaks, recompile reasons, compile metrics) and each graph's print and module. At
exit it writes them, marshalled, to ``recording_<pid>.marshal`` (graphs' code taken from
their modules then); decompiling, checking and writing the files happen later, off the
program's path: in a separate process started at exit (``finish="process"``, the
default), in this process at exit (``finish="exit"``), or when ``unveil report DIR`` runs
(``finish="later"``). The result is what :class:`unveil.torch.dump.prepare_debug` writes for
the same program (the same files and manifest), with each frame's status saying that
Dynamo's code ran.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from types import CodeType
from typing import Any

from .. import dump_dir
from ..bytecode import pyc, readable
from ..codeobj import is_code
from ..dump_format import GraphBreak
from ..errors import BadInputError
from . import _dynamo
from .hits import HitCounter
from .trace import RUNNABLE, CompileFacts, TraceRecorder

FORMAT = 2  # the layout of a recording file
# a recording's first line: what wrote it, so that another reader can say so before it
# unmarshals (marshalled code is only readable by the Python version that wrote it)
MAGIC = b"unveil recording"


def _header() -> bytes:
    return MAGIC + b" %d python %d.%d\n" % (FORMAT, *sys.version_info[:2])
PREFIX = "recording_"
FINISH = ("process", "exit", "later")


class record:  # noqa: N801 (a context manager named like the function its users call)
    """Record what TorchDynamo transforms while active; files are written later (see the
    module's docstring). Use ``with unveil.record("dump"):``. ``finish``: ``"process"``
    (a separate process writes the files at exit), ``"exit"`` (this process, at exit) or
    ``"later"`` (``unveil report DIR`` writes them)."""

    def __init__(self, dump_dir: str | os.PathLike[str], *, finish: str = "process",
                 simplify: bool = True, count_calls: bool = True) -> None:
        if finish not in FINISH:
            raise BadInputError(f"unveil.record: finish={finish!r} is not one of "
                                f"{', '.join(map(repr, FINISH))}")
        self.dump_dir = Path(dump_dir)
        self.finish = finish
        self.simplify = simplify
        self._events: list[tuple[Any, ...]] = []
        self._trace = TraceRecorder(self._no_claim, defer=self._graph)
        self._hits = HitCounter() if count_calls else None
        self._removers: list[Any] = []
        self.path: Path | None = None  # the recording, once written

    def __enter__(self) -> record:
        self.dump_dir = _dynamo.rank_directory(self.dump_dir)
        dump_dir.begin(self.dump_dir, clear=True)
        self._removers = [_dynamo.add_bytecode_hook(self._hook),
                          _dynamo.add_trace_handler(self._trace),
                          _dynamo.watch_kernels(self._trace.kernel)]
        return self

    # ------------------------------------------------------------ the compile path

    def _hook(self, code: CodeType, new_code: CodeType, *_: Any, **__: Any) -> None:
        """Keep the frame (Dynamo's own code runs): its codes, compile id, and how many
        graph breaks its compile had so far (the file's comments name the last)."""
        if self._hits is not None:
            self._hits.wrap(new_code)
        cid = _dynamo.current_compile_id()
        facts = self._trace.compiles.get(cid or "")
        self._events.append(("frame", code, new_code, cid,
                             len(facts.graph_breaks) if facts else 0))

    def _graph(self, cid: str, kind: str, fn: str, payload: str | None, module: Any) -> None:
        """Keep a graph: its print, its code as its graph gives it now, and the module with
        the code it has compiled so far (at exit: compiled again since, as after Inductor's
        passes, its newest code is what ran; what ``prepare_debug`` shows too)."""
        code = compiled = None
        if module is not None:
            code = _dynamo.graph_code_now(module)
            compiled = _dynamo.graph_code_compiled(module)
        self._events.append(("graph", cid, kind, fn, payload, (code, module, compiled)))

    @staticmethod
    def _no_claim(pattern: str) -> Path:
        raise AssertionError("unveil.record writes no file while recording")

    # ------------------------------------------------------------ at exit

    def __exit__(self, *exc_info: object) -> None:
        for remove in self._removers:
            remove()
        self._removers = []
        try:
            self.path = self.save()
        except Exception as exc:  # noqa: BLE001 (the program's own exit stays as it is)
            warnings.warn(f"unveil.record: could not save the recording in "
                          f"{str(self.dump_dir)!r}: {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=2)
        finally:
            dump_dir.mark_done(self.dump_dir)
        if self.path is None:
            return
        if self.finish == "exit":
            try:
                for problem in finish_recordings(self.dump_dir)[1]:
                    warnings.warn(f"unveil.record: {problem}", RuntimeWarning, stacklevel=2)
            except Exception as exc:  # noqa: BLE001
                warnings.warn(f"unveil.record: could not write the files in "
                              f"{str(self.dump_dir)!r}: {type(exc).__name__}: {exc} (run "
                              f"`unveil report {self.dump_dir}`)", RuntimeWarning, stacklevel=2)
        elif self.finish == "process":
            start_finisher(self.dump_dir)

    def save(self) -> Path:
        """Write the recording (marshalled) and return its path."""
        frames, graphs, errors = [], [], list(self._trace.errors)
        codes: dict[int, int] = {}  # id(code object) -> its index in `codes_out`
        codes_out: list[CodeType | None] = []
        constants: list[Any] = []  # the constants marshal cannot write

        def index(code: CodeType) -> int:
            if id(code) not in codes:
                codes[id(code)] = len(codes_out)
                try:
                    portable = _portable(code, constants)
                    marshal.dumps(portable)
                    codes_out.append(portable)
                except ValueError as exc:
                    errors.append(f"{code.co_name}: cannot be recorded ({exc})")
                    codes_out.append(None)
            return codes[id(code)]

        order: list[list[Any]] = []
        originals: dict[int, CodeType] = {}
        for event in self._events:
            if event[0] == "frame":
                _, code, new_code, cid, breaks = event
                originals[id(code)] = code
                fixed = _dynamo.fixed_names(new_code)
                frames.append([index(code), index(new_code), cid, breaks,
                               [list(f) for f in fixed]])
                order.append(["frame", len(frames) - 1])
            else:
                _, cid, kind, fn, payload, (src, module, compiled) = event
                if kind in RUNNABLE and module is not None:
                    now = _dynamo.graph_code_compiled(module)
                    if now is not None and (now is not compiled or src is None):
                        src = now  # compiled again since (or the only code there is)
                    elif now is None and compiled is None and _dynamo.is_lazy(module):
                        src = None  # never compiled (AOTAutograd only traced it): its
                        # print, as prepare_debug shows it
                graphs.append([cid, kind, fn, payload, src if kind in RUNNABLE else None])
                order.append(["graph", len(graphs) - 1])
        entries = []  # per original code: its cache entries (newest first)
        for code in originals.values():
            for entry in _dynamo.cache_entries(code):
                if id(entry.code) in codes:
                    entries.append([index(code), entry.compile_id, list(entry.guards),
                                    codes[id(entry.code)]])
        facts = [_plain(asdict(f)) for f in self._trace.compiles.values()]
        data = {"format": FORMAT, "pid": os.getpid(), "torch_version": _dynamo.torch_version(),
                "simplify": self.simplify, "codes": codes_out, "frames": frames,
                "graphs": graphs, "order": order, "entries": entries, "facts": facts,
                "constants": [repr(c) for c in constants],
                "hits": {} if self._hits is None else
                {name: h.facts() for name, h in self._hits.graphs.items()},
                "errors": errors}
        path = self.dump_dir / f"{PREFIX}{os.getpid()}.marshal"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(_header() + marshal.dumps(data))
        os.replace(tmp, path)
        return path


_MARK = "\0unveil: a constant marshal cannot write"


class RecordedConstant:
    """A constant of recorded code that marshal cannot write (``torch.float32``, a
    ``torch.device``): kept as its repr. The recorded code is only decompiled and
    compared, never run, and the decompiler names such constants (``_unveil_const_0``)
    whatever they are."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _portable(code: CodeType, table: list[Any]) -> CodeType:
    """``code`` with each constant marshal cannot write (in nested code and in tuples too)
    replaced by ``(_MARK, its index in table)``, its repr appended to ``table`` once per
    object (the decompiler names one object once)."""
    return _with_consts(code, _portable_value, table)


def _portable_value(const: Any, table: list[Any]) -> Any:
    if isinstance(const, CodeType):
        return _portable(const, table)
    try:
        marshal.dumps(const)
        return const
    except ValueError:
        pass
    if type(const) is tuple:  # (a tuple of constants, one of them not writable)
        return _mapped(const, _portable_value, table)
    for index, seen in enumerate(table):
        if seen is const:
            return (_MARK, index)
    table.append(const)
    return (_MARK, len(table) - 1)


def restored(code: CodeType, table: list[Any]) -> CodeType:
    """Undo :func:`_portable` (``table``: the reprs, or :class:`RecordedConstant` objects
    made from them on first use), each constant a :class:`RecordedConstant`."""
    return _with_consts(code, _restored_value, table)


def _restored_value(const: Any, table: list[Any]) -> Any:
    if is_code(const):
        return restored(const, table)
    if type(const) is tuple:
        if len(const) == 2 and const[0] == _MARK:
            if not isinstance(table[const[1]], RecordedConstant):
                table[const[1]] = RecordedConstant(str(table[const[1]]))
            return table[const[1]]
        return _mapped(const, _restored_value, table)
    return const


def _with_consts(code: CodeType, change: Callable[[Any, list[Any]], Any],
                 table: list[Any]) -> CodeType:
    """``code`` with :func:`_mapped` applied to its constants; ``code`` itself when none
    changed."""
    new = _mapped(code.co_consts, change, table)
    return code if new is code.co_consts else code.replace(co_consts=new)


def _mapped(values: tuple[Any, ...], change: Callable[[Any, list[Any]], Any],
            table: list[Any]) -> tuple[Any, ...]:
    """``values`` with ``change`` applied to each; the same tuple when none changed."""
    new = tuple(change(v, table) for v in values)
    return values if all(a is b for a, b in zip(new, values, strict=True)) else new


def _plain(value: Any) -> Any:
    """``value`` as plain data marshal can write (what JSON can say)."""
    return json.loads(json.dumps(value, default=str))


def start_finisher(directory: Path) -> None:
    """Start ``python -m unveil report DIR --quiet`` on its own, not waited for."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])  # (unveil importable as it is here)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        with open(directory / f".finish_{os.getpid()}.log", "w") as log:
            subprocess.Popen([sys.executable, "-m", "unveil", "report", str(directory),
                              "--quiet", "--no-html"], stdin=subprocess.DEVNULL, stdout=log,
                             stderr=log, env=env, start_new_session=True)
    except OSError as exc:
        warnings.warn(f"unveil.record: could not start the process that writes the files "
                      f"({exc}); run `unveil report {directory}`", RuntimeWarning, stacklevel=3)


def recordings(directory: Path) -> list[Path]:
    """The recordings in ``directory`` that no process has finished yet."""
    return sorted(directory.glob(f"{PREFIX}*.marshal"))


def finish_recordings(directory: Path) -> tuple[int, list[str]]:
    """Write the files and manifest of every recording in ``directory`` (each once, even
    with several processes finishing at once); returns how many were finished and one
    sentence per recording that could not be (left where it is)."""
    done, problems = 0, []
    for path in recordings(directory):
        claimed = path.with_name(f".{path.stem}.{os.getpid()}.finishing")
        with dump_dir.locked(directory):
            try:
                os.replace(path, claimed)
            except FileNotFoundError:
                continue  # another process took it
        try:
            finish(directory, read_recording(claimed, path.name))
        except Exception as exc:  # noqa: BLE001 (one sentence per recording, the rest goes on)
            problems.append(str(exc) if isinstance(exc, BadInputError) else
                            f"{path.name} could not be written out ({type(exc).__name__}: "
                            f"{exc}): its frames are left out of the report")
            with contextlib.suppress(OSError):
                os.replace(claimed, path)  # (kept, for a reader that can read it)
            continue
        finally:
            with contextlib.suppress(OSError):
                claimed.unlink()
        done += 1
    return done, problems


def read_recording(path: Path, name: str) -> dict[str, Any]:
    """The data of the recording at ``path`` (called ``name``); :class:`BadInputError`
    (one sentence) for a file another Python, another unveil or damage made unreadable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"{name} cannot be read ({exc.strerror or exc})") from None
    first, _, body = data.partition(b"\n")
    words = first.split()
    if not first.startswith(MAGIC + b" ") or len(words) != 5 or words[3] != b"python":
        raise BadInputError(f"{name} is not a recording this unveil wrote (an older "
                            f"unveil's, or another file): left out of the report")
    if words[2] != b"%d" % FORMAT:
        layout = words[2].decode(errors="replace")
        raise BadInputError(f"{name} is a recording in layout {layout}, not {FORMAT}: "
                            f"report it with the unveil that made it")
    here = "{}.{}".format(*sys.version_info[:2])
    made = words[4].decode(errors="replace")
    major, _, minor = made.partition(".")
    version = (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None
    if made != here and (version is None or not readable(version)):
        raise BadInputError(f"{name} was recorded by Python {made} and this is Python "
                            f"{here}: report it with Python {made} (python{made} -m "
                            f"unveil report {path.parent}); only that Python reads its code")
    try:
        # (another version's marshal data and code: read by unveil, not by this marshal)
        loaded = pyc.loads(body, version, name=name) if made != here and version is not None \
            else marshal.loads(body)
    except (ValueError, EOFError, TypeError) as exc:
        raise BadInputError(f"{name} is damaged ({exc}): its frames are left out of the "
                            f"report") from None
    if not isinstance(loaded, dict) or not isinstance(loaded.get("frames"), list):
        raise BadInputError(f"{name} is damaged (not a recording's data): its frames are "
                            f"left out of the report")
    return loaded


def complete(directory: Path, wait: float = 300.0) -> tuple[int, list[str]]:
    """Finish the recordings in ``directory`` and its ``rank_<r>/`` directories, and wait
    (up to ``wait`` seconds) for other processes finishing some there; returns how many
    this process finished and one sentence per recording it could not."""
    dirs = [directory, *sorted(p for p in directory.glob("rank_*") if p.is_dir())]
    done, problems = 0, []
    for d in dirs:
        n, found = finish_recordings(d)
        done += n
        problems.extend(found)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(
            dump_dir.alive(_finisher(p)) for d in dirs for p in d.glob(".*.finishing")):
        time.sleep(0.1)
    return done, problems


def _finisher(path: Path) -> int | None:
    """The process finishing a claimed recording (``.recording_<pid>.<finisher>.finishing``)."""
    try:
        return int(path.name.split(".")[-2])
    except (IndexError, ValueError):
        return None


def finish(directory: Path, data: dict[str, Any]) -> None:
    """Replay one recording into a ``prepare_debug`` that writes files only."""
    from .dump import prepare_debug

    dump = prepare_debug(directory, simplify=bool(data.get("simplify", True)),
                         count_calls=False)
    dump.recorded = True
    dump.manifest.pid = int(data["pid"])
    dump.manifest.torch_version = data.get("torch_version")
    dump.manifest.errors.extend(data.get("errors") or [])
    table: list[Any] = list(data.get("constants") or [])
    codes: list[CodeType | None] = [None if c is None else restored(c, table)
                                    for c in data["codes"]]
    trace = dump._trace
    breaks: dict[str, list[GraphBreak]] = {}
    for facts in data["facts"]:
        found = CompileFacts(**{**facts, "graphs": [], "graph_breaks": []})
        breaks[found.compile_id] = [GraphBreak(**b) for b in facts["graph_breaks"]]
        trace.compiles[found.compile_id] = found
    fixed: set[tuple[str, str | None]] = set()
    dump.fixed = _dynamo.known_globals(lambda name, attr: (name, attr) in fixed)
    for kind, index in data["order"]:
        if kind == "graph":
            trace.recorded_graph(*data["graphs"][index])
            continue
        code_i, new_i, cid, n_breaks, names = data["frames"][index]
        code, new_code = codes[code_i], codes[new_i]
        if code is None or new_code is None:
            continue
        fixed.clear()
        fixed.update((n, a) for n, a in names)
        facts = trace.compiles.get(cid or "")
        if facts is not None:  # the graph breaks the compile had then
            facts.graph_breaks = breaks.get(facts.compile_id, [])[:n_breaks]
        dump.dump_frame(code, new_code, cid)
    for cid, graph_breaks in breaks.items():
        trace.compiles[cid].graph_breaks = graph_breaks
    entries: dict[int, list[_dynamo.CacheEntry]] = {}
    for code_i, cid, guards, new_i in data["entries"]:
        code, new_code = codes[code_i], codes[new_i]
        if code is not None and new_code is not None:
            entries.setdefault(id(code), []).append(
                _dynamo.CacheEntry(cid, guards, new_code, {}))
    dump.cache_entries = lambda code: entries.get(id(code), [])
    hits = data.get("hits") or {}
    for frame in dump.manifest.frames:
        frame.hits = next((hits[n] for n in frame.compiled_fns if n in hits), None)
    dump.write_full_code()
    dump.write_manifest()
    with contextlib.suppress(OSError):
        (directory / f".finish_{dump.manifest.pid}.log").unlink()
