"""``prepare_debug(dump_dir)``: while active, every frame TorchDynamo transforms is
decompiled to ``<dump_dir>/__transformed_code_<n>_for_<fn>.py`` and Dynamo runs the code
compiled from that file (so breakpoints there are hit). Its graphs go to
``__compiled_fn_<n>.<what>.<k>.py`` (with the eager and aot_eager backends the graph code
runs from those files too). At exit, ``full_code_for_<fn>_<n>.py`` shows each function's
whole dispatch and ``manifest.json`` lists everything. A frame that cannot be decompiled
(or, with ``strict=True``, whose recompiled code is not bytecode-identical to Dynamo's)
keeps Dynamo's own code; its file and the manifest say why. So does a frame whose
recompiled code cannot be shown to do what Dynamo's code does (:mod:`unveil.verify.equivalence`
runs both symbolically and compares every path)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from .. import dump_dir
from .._io import write_atomic
from ..codeobj import code_version
from ..dump_format import (
    COMPILED_FN,
    RECORDED,
    RUNS_DYNAMO,
    RUNS_OURS,
    FrameRecord,
    FunctionRecord,
    Manifest,
    owner_name,
    short_name,
)
from ..errors import UnveilError
from . import _dynamo
from .full_code import CodeView, code_views, full_code, identifier, one_line
from .hits import HitCounter
from .trace import CompileFacts, TraceRecorder

if TYPE_CHECKING:
    from ..verify.equivalence import Verdict

_GRAPH_NAME = re.compile(r"\b__compiled_fn_\w+")  # a graph's global, where the line reads it

# the first words of a file whose frame runs Dynamo's code
DYNAMO_RUNS = ("Dynamo's own code runs, not the code in this file (breakpoints here are not "
               "hit)")

__all__ = ["prepare_debug", "identifier", "last_dump"]


_last: prepare_debug | None = None


_WARM_UP = """
def dynamo_like(x, n, fn, resume):
    _t0 = fn
    tmp_2 = (tmp_1 := fn.enter)()
    _t1 = _t0(x, n)
    graph_out_0 = _t1
    _t3 = (_t4 := [graph_out_0[0]])[0:1]
    _t3.extend([x])
    del graph_out_0
    _t5 = [_t3]
    if _t1[1]:
        _t5[0][0:0] = [n]
        _t6 = _t5[-1]
        del _t5[-1]
        return resume([], _t5, *_t6)
    for k, v in x.items():
        fn.__setitem__(k, v)
    return {'a': x, 'b': [n, *_t3], 0: n}, (lambda y: y + n)
"""
_warmed = False


def _warm_up() -> None:
    """Import the decompiler and the equivalence check and run them once on Dynamo-shaped
    code, so the first compile under ``prepare_debug`` does not pay for imports and
    first-use set-up."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    from ..decompiler.api import recompile
    from ..verify.equivalence import prove_equivalent
    from ..verify.oracle import compare

    code = next(c for c in compile(_WARM_UP, "<unveil warm-up>", "exec").co_consts
                if isinstance(c, CodeType))
    with contextlib.suppress(Exception):
        replacement = recompile(code)
        compare(code, replacement)
        prove_equivalent(code, replacement)


def last_dump() -> prepare_debug | None:
    """The most recent ``prepare_debug`` of this process, or None."""
    return _last


class prepare_debug:  # noqa: N801 (a context manager named like the function its users call)
    """Dump and run the source of every frame TorchDynamo transforms while active.

    Use ``with unveil.prepare_debug("dump"):`` or call ``__enter__``/``__exit__`` by hand.
    Entering the same object again (``unveil.debug()`` does) adds to the same dump.

    Each frame's decompiled code is compiled back and checked against Dynamo's: run
    symbolically along every path, both must make the same calls, attribute and item
    accesses, branches, returns and raises, in the same order, on the same values
    (:func:`unveil.verify.equivalence.prove_equivalent`). Where that cannot be shown, Dynamo's
    own code runs and the file and manifest say why. Dynamo's style (values juggled on
    the stack) is rarely what CPython's compiler writes, so the bytecode itself is
    seldom identical; the manifest says whether it is, and ``strict=True`` keeps
    Dynamo's own code for every frame that is not bytecode-identical.

    Each frame is written in its simplest form where that is shown to do what Dynamo's
    code does (lists the frame builds and shuffles written where they go, the graph's
    inputs as one tuple, temporaries inlined and named: :mod:`unveil.decompiler.tidy.simplify`),
    else faithfully; ``simplify=False`` writes every frame faithfully.
    """

    def __init__(self, dump_dir: str | os.PathLike[str], *, strict: bool = False,
                 simplify: bool = True, count_calls: bool = True) -> None:
        self.dump_dir = Path(dump_dir)
        self.hits = HitCounter() if count_calls else None  # each graph's calls
        # the frames were recorded (unveil.record): Dynamo's code ran; the files show it
        self.recorded = False
        self.cache_entries: Callable[[CodeType], list[_dynamo.CacheEntry]] = \
            _dynamo.cache_entries  # a code object's cache entries, newest first
        # (global, attribute or None) -> whether it holds one value while a frame runs
        self.fixed: Callable[[str, str | None], bool] = _dynamo.known_globals()
        self.strict = strict  # run unveil's code only where it is bytecode-identical
        self.simplify = simplify and not strict  # (a simplified frame is never identical)
        self._removers: list[Any] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._codes: dict[int, CodeType] = {}  # id -> every original code Dynamo compiled
        self._ours: dict[int, tuple[str, CodeType]] = {}  # id(code that runs) -> file, code
        self._trace = TraceRecorder(self._claim)
        self._entered = False
        self._entered_at: float | None = None  # (perf_counter) while active
        self._frames_seen: int | None = None  # Dynamo's frame count when entered
        self._unveil_s: dict[int, float] = {}  # id(frame record) -> unveil's time in it
        self._pending: list[tuple[FrameRecord, CodeType, CodeType]] = []  # compared at exit
        self.manifest = Manifest(_dynamo.torch_version())

    def __enter__(self) -> prepare_debug:
        global _last
        self.dump_dir = _dynamo.rank_directory(self.dump_dir)
        dump_dir.begin(self.dump_dir, clear=not self._entered)  # (again: the same dump)
        self._entered = True
        _warm_up()
        self._removers = [_dynamo.add_bytecode_hook(self._hook),
                          _dynamo.add_trace_handler(self._trace),
                          _dynamo.watch_kernels(self._trace.kernel)]
        _last = self
        self._entered_at = time.perf_counter()
        self._frames_seen = _dynamo.frames_seen()
        return self

    def __exit__(self, *exc_info: object) -> None:
        for remove in self._removers:
            remove()
        self._removers = []
        if self._entered_at is not None:
            self.manifest.wall_time_s = round((self.manifest.wall_time_s or 0.0)
                                              + time.perf_counter() - self._entered_at, 6)
            self._entered_at = None
        try:
            self.write_full_code()
            self.write_manifest()
        except Exception as exc:  # noqa: BLE001 (the program's own exit stays as it is)
            warnings.warn(f"unveil.prepare_debug: could not finish the dump in "
                          f"{str(self.dump_dir)!r}: {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=2)
        dump_dir.mark_done(self.dump_dir)
        if self.manifest.frames or exc_info[0] is not None:
            return
        if self.manifest.skipped_frames:
            first = self.manifest.skipped_frames[0]
            warnings.warn(
                f"unveil.prepare_debug: Dynamo compiled no frame while it was active: it ran "
                f"{len(self.manifest.skipped_frames)} frame(s) without compiling them, e.g. "
                f"{first['function']} ({first['source_file']}:{first['first_line']}): "
                f"{one_line(first['reason'] or '', 200)}; see skipped_frames in "
                f"{str(self.dump_dir / 'manifest.json')!r}", UserWarning, stacklevel=2)
        elif self._frames_seen is not None and (_dynamo.frames_seen() or 0) > self._frames_seen:
            seen = (_dynamo.frames_seen() or 0) - self._frames_seen
            warnings.warn(
                f"unveil.prepare_debug: Dynamo was given {seen} frame(s) while it was active "
                f"and transformed none of them (it found nothing to put in a graph there, or "
                f"skipped them), so {str(self.dump_dir)!r} holds no code",
                UserWarning, stacklevel=2)
        else:
            warnings.warn(
                f"unveil.prepare_debug: Dynamo compiled no frame while it was active, so "
                f"{str(self.dump_dir)!r} holds no code: no compiled function ran in it, or "
                f"each reused what it compiled before prepare_debug (then call "
                f"torch._dynamo.reset() before entering it, or enter it before the first "
                f"call)", UserWarning, stacklevel=2)

    @property
    def active(self) -> bool:
        return bool(self._removers)

    def _repr_html_(self) -> str:
        """In a notebook: the report of this dump (as far as it goes while active)."""
        from ..report.load import load_run
        from ..report.notebook import report_iframe

        if self.active:
            self.write_full_code()
            self.write_manifest()
        return report_iframe(load_run(self.dump_dir))

    # ------------------------------------------------------------ files

    def _claim(self, pattern: str) -> Path:
        """A new file ``pattern.format(n=...)`` with the smallest free n, created on disk
        so that processes sharing the directory (DataLoader workers, multiprocessing)
        never write the same one."""
        with self._lock:
            n = self._counts.get(pattern, 0)
            while True:
                path = self.dump_dir / pattern.format(n=n)
                try:
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                except FileExistsError:
                    n += 1
                    continue
                self._counts[pattern] = n + 1
                return path

    # ------------------------------------------------------------ the hook

    def _hook(self, code: CodeType, new_code: CodeType, *_: Any, **__: Any) -> CodeType | None:
        """Decompile Dynamo's ``new_code`` for ``code`` to a file and return the code
        compiled from it; None (Dynamo's own code) when that is not possible. Never
        raises: a dump problem must not break the user's program."""
        if self.hits is not None:
            self.hits.wrap(new_code)
        return self.dump_frame(code, new_code, _dynamo.current_compile_id())

    def dump_frame(self, code: CodeType, new_code: CodeType,
                   compile_id: str | None) -> CodeType | None:
        """Write the file of one transformed frame; the code compiled from it if that is
        to run, else None. Never raises."""
        record = FrameRecord(
            compile_id=compile_id, function=code.co_name,
            qualname=getattr(code, "co_qualname", code.co_name),
            source_file=code.co_filename, first_line=code.co_firstlineno,
            transformed_code=None, status=RUNS_DYNAMO,
            compiled_fns=sorted({n for n in new_code.co_names
                                 if n.startswith("__compiled_fn")}),
            resume_fns=sorted({n for n in new_code.co_names if n.startswith("__resume_at")}))
        self._codes[id(code)] = code
        self.manifest.frames.append(record)
        try:
            record.recompiles = self._recompiles(code, compile_id)
        except Exception as exc:  # noqa: BLE001 (informative only)
            self.manifest.errors.append(f"recompile reasons of {compile_id}: "
                                        f"{type(exc).__name__}: {exc}")
        # no garbage collection while unveil works: a full collection of the program's
        # (Dynamo's) heap, which a few of unveil's allocations may start, costs far more
        # than unveil's own work, and runs anyway, later
        collecting = gc.isenabled()
        gc.disable()
        started = time.perf_counter()
        try:
            path = self._claim(f"__transformed_code_{{n}}_for_{identifier(code.co_name)}.py")
            record.transformed_code = path.name
            replacement = self._replace(record, path, new_code)
        except Exception as exc:  # noqa: BLE001 (keep Dynamo's code, say why)
            record.error = f"{type(exc).__name__}: {exc}"
            return None
        finally:
            if collecting:
                gc.enable()
            self._unveil_s[id(record)] = time.perf_counter() - started
        if self.recorded and replacement is not None:  # (Dynamo's code ran: shown as its)
            record.status = RECORDED
            self._ours[id(new_code)] = (self._ours.pop(id(replacement))[0], new_code)
            return None
        return replacement

    def _recompiles(self, code: CodeType, compile_id: str | None) -> list[dict[str, Any]]:
        """Why ``code`` is compiled again (its recompile reasons, read), with the value now
        of what each failed check read, from the frame Dynamo compiles."""
        from .. import recompiles

        facts = self._trace.compiles.get(compile_id or "")
        if facts is None or not facts.recompile_reasons:
            return []
        frame = _dynamo.compiling_frame()

        def now(source: str) -> str | None:
            if frame is None:
                return None
            try:
                return _dynamo.describe_value(recompiles.read_value(source, frame[1],
                                                                    frame[0]))
            except LookupError:
                return None

        arguments = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        where = f"{Path(code.co_filename).name}:{code.co_firstlineno}"
        return recompiles.explained(list(facts.recompile_reasons), arguments, code.co_name,
                                    where, now)

    def _replace(self, record: FrameRecord, path: Path, new_code: CodeType) -> CodeType | None:
        from ..decompiler.api import layout_difference
        from ..verify.equivalence import prove_equivalent
        from ..verify.oracle import compare

        where = f"{record.qualname} ({record.source_file}:{record.first_line})"
        lines: dict[int, int] = {}
        if code_version(new_code) != sys.version_info[:2]:
            return self._foreign(record, path, new_code, lines)
        try:
            replacement, verdict = self._simplest(record, new_code, path, lines)
        except (UnveilError, SyntaxError, ValueError, RecursionError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            self._note(path, f"# {DYNAMO_RUNS}: unveil could not decompile Dynamo's code for "
                             f"{where}.\n# {one_line(record.error, 500)}\n")
            return None
        record.line_map = sorted([k, v] for k, v in lines.items())
        # the last gate: Dynamo installs only code whose frame layout is its own
        problem = layout_difference(new_code, replacement)
        if problem is not None:
            self._keep_dynamo(record, path, f"recompiled code has {problem}",
                              f"the code compiled from it has {problem}")
            return None
        if verdict is None:
            verdict = prove_equivalent(new_code, replacement)
        record.equivalent, record.equivalence = verdict.equivalent, verdict.reason
        if not self.strict:  # informative only: compared at exit, off the compile path
            if not verdict.equivalent and verdict.reason.startswith("undecided") \
                    and compare(new_code, replacement) is None:
                # what the check cannot follow is the same bytecode: a proof too
                record.equivalent, record.identical = True, True
                record.equivalence = f"bytecode-identical ({verdict.reason})"
            else:
                self._pending.append((record, new_code, replacement))
            if not record.equivalent:
                undecided = verdict.reason.startswith("undecided")
                self._keep_dynamo(
                    record, path, f"not shown to do what Dynamo's code does: "
                    f"{_in_words(verdict, record.source_file, _HEADER_LINES)}",
                    f"unveil could not {'check' if undecided else 'show'} that the code "
                    f"compiled from it does what Dynamo's code does"
                    + (" (the check does not follow all of it)" if undecided else ""))
                return None
        else:
            difference = compare(new_code, replacement)
            record.identical = difference is None
            if difference is not None:
                self._keep_dynamo(
                    record, path, f"not bytecode-identical to Dynamo's code: {difference}",
                    "the code compiled from it is not bytecode-identical to Dynamo's, which "
                    "prepare_debug(strict=True) asks for")
                return None
        record.status = RUNS_OURS
        self._ours[id(replacement)] = (path.name, replacement)
        return replacement

    def _foreign(self, record: FrameRecord, path: Path, new_code: CodeType,
                 lines: dict[int, int]) -> CodeType | None:
        """Another Python version's recorded code (``unveil report`` of its recording):
        its file is written as for this version's, but what it says is checked only as far
        as this Python can: the simplified form against the faithful one compiled here, the
        faithful one not against the recording's code (only that version's compiler can)."""
        from ..decompiler.api import recompile

        version = "{}.{}".format(*code_version(new_code))
        header, comments = self._explanations(record)
        try:
            faithful = recompile(new_code, None, header=header, comments=comments)
            replacement, _ = self._simplest(record, new_code, path, lines, reference=faithful)
        except (UnveilError, SyntaxError, ValueError, RecursionError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            self._note(path, f"# {DYNAMO_RUNS}: unveil could not decompile Dynamo's code for "
                             f"{record.qualname}.\n# {one_line(record.error, 500)}\n")
            return None
        record.line_map = sorted([k, v] for k, v in lines.items())
        record.equivalence = (f"not checked against Dynamo's code: it was recorded by "
                              f"Python {version}, whose compiler alone can check it "
                              f"(python{version} -m unveil report)")
        self._ours[id(replacement)] = (path.name, replacement)
        return replacement

    def _simplest(self, record: FrameRecord, new_code: CodeType, path: Path,
                  lines: dict[int, int], reference: CodeType | None = None
                  ) -> tuple[CodeType, Verdict | None]:
        """The code compiled from the file written for ``new_code``, and its verdict if it
        was checked already: the simplified form (:mod:`unveil.decompiler.tidy.simplify`) where
        it is shown to do what Dynamo's code does (``reference``, when given, stands for
        that code), else the faithful one (only the faithful one when ``simplify`` is off).
        Raises what ``recompile`` does."""
        reference = new_code if reference is None else reference
        from ..decompiler.api import layout_difference, recompile
        from ..verify.equivalence import prove_equivalent

        header, comments = self._explanations(record)
        if self.simplify:
            facts: dict[str, object] = {}
            try:
                simpler = recompile(new_code, str(path), lines, simplify=True, facts=facts,
                                    header=header, comments=comments, fixed=self.fixed)
            except (UnveilError, SyntaxError, ValueError, RecursionError):
                simpler, facts["simplified"] = None, True  # (then as the faithful form fails)
            if not facts.get("simplified"):
                assert simpler is not None
                return simpler, None  # (the faithful form: nothing to simplify)
            if simpler is not None and layout_difference(reference, simpler) is None:
                verdict = prove_equivalent(reference, simpler, fixed=self.fixed)
                if verdict.equivalent:
                    return simpler, verdict
            lines.clear()
        return recompile(new_code, str(path), lines, header=header, comments=comments), None

    def _explanations(self, record: FrameRecord) -> tuple[str, Callable[[str], str | None]]:
        """The header of a transformed file (which function, which compile, where its
        guards are) and the comment that ends a line calling a compiled graph (its files),
        opening Dynamo's profiler region (what it is) or calling a resume function (where
        the graph broke, and why)."""
        facts = self._trace.compiles.get(record.compile_id or "")
        where = f"{record.qualname} ({record.source_file}:{record.first_line})"
        header = (f"# Dynamo's code for {where}, compile {record.compile_id or '?'}: what "
                  f"runs when it is called\n# and its guards hold (guards: "
                  f"full_code_for_{identifier(record.function)}_*.py).\n")
        graphs: dict[str, list[str]] = {}
        for graph in facts.graphs if facts else []:
            graphs.setdefault(graph.compiled_fn, []).append(graph.file)
        broke = facts.graph_breaks[-1] if facts and facts.graph_breaks else None

        def comment(line: str) -> str | None:
            graph = _GRAPH_NAME.search(line)
            if graph is not None:
                files = graphs.get(short_name(graph.group(0))) or []
                return f"the graph{' in ' + ', '.join(files[:3]) if files else ''}"
            if f"{_dynamo.PROFILER_HELPERS[0]}(" in line:
                return ("Dynamo's profiler region 'Pregraph bytecode': loading the graph's "
                        "inputs")
            if broke is not None and "__resume_at_" in line:
                at = f" at line {broke.user_line}" if broke.user_line else ""
                return one_line(f"the rest of {record.function} after the graph "
                                f"break{at}: {broke.summary or broke.reason}", 160)
            return None

        return header, comment

    def _keep_dynamo(self, record: FrameRecord, path: Path, error: str, why: str) -> None:
        """Record why Dynamo's own code keeps running and say so in one sentence at the
        top of the file (its line map moves down with the text)."""
        record.error = error
        where = f"{record.qualname} ({record.source_file}:{record.first_line})"
        header = (f"# {DYNAMO_RUNS} for {where}: {why}.\n"
                  f"# Why: {one_line(error, 500)}\n\n")
        assert header.count("\n") == _HEADER_LINES
        if self._note(path, header, prepend=True):
            shift = header.count("\n")
            record.line_map = [[line + shift, origin] for line, origin in record.line_map]

    def _note(self, path: Path, text: str, *, prepend: bool = False) -> bool:
        """Write ``text`` to the file (before what it holds, with ``prepend``)."""
        try:
            old = path.read_text(encoding="utf-8") if prepend else ""
            write_atomic(path, text + old)
        except OSError as exc:
            self.manifest.errors.append(f"cannot write {str(path)!r}: {exc}")
            return False
        return True

    # ------------------------------------------------------------ at exit

    def write_full_code(self) -> None:
        """One ``full_code_for_<fn>_<n>.py`` per user function Dynamo compiled."""
        transformed = {}
        for key, (name, _code) in self._ours.items():
            try:
                transformed[key] = (name, (self.dump_dir / name).read_text(encoding="utf-8"))
            except OSError:
                continue
        groups: dict[tuple[str, str], list[CodeType]] = {}
        for code in self._codes.values():
            groups.setdefault((code.co_filename, owner_name(code.co_name)), []).append(code)
        graph_files = self._graph_files()
        known = {(f.source_file, f.function): f for f in self.manifest.functions}
        self.manifest.functions = []
        for (filename, fn), codes in groups.items():
            codes.sort(key=lambda c: (c.co_name != fn, c.co_firstlineno, c.co_name))
            record = known.get((filename, fn)) or FunctionRecord(
                fn, filename, codes[0].co_firstlineno, None)
            views: list[CodeView] = []
            try:
                views = [code_views(c, transformed, self.cache_entries) for c in codes]
                calls = {g for v in views for e in v.entries for g in _calls(e.source)}
                text = full_code(fn, views, {g: graph_files[g] for g in sorted(calls)
                                             if g in graph_files})
                if record.full_code is None:
                    record.full_code = self._claim(
                        f"full_code_for_{identifier(fn)}_{{n}}.py").name
                write_atomic(self.dump_dir / record.full_code, text)
            except Exception as exc:  # noqa: BLE001 (a dump problem never breaks the program)
                self.manifest.errors.append(f"full code for {fn} ({filename}): "
                                            f"{type(exc).__name__}: {exc}")
            record.cache_entries = [
                {"code": v.code.co_name, "compile_id": e.compile_id, "guards": e.guards,
                 "transformed_code": e.transformed_file}
                for v in views for e in v.entries]
            self.manifest.functions.append(record)
        guards = {e["compile_id"]: e["guards"] for f in self.manifest.functions
                  for e in f.cache_entries}
        for frame in self.manifest.frames:
            frame.guards = guards.get(frame.compile_id, frame.guards)

    def _graph_files(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for facts in self._trace.compiles.values():
            for graph in facts.graphs:
                out.setdefault(graph.compiled_fn, []).append(graph.file)
        return out

    def write_manifest(self) -> Path:
        """Write ``manifest.json`` (atomically) and return its path."""
        from ..verify.oracle import compare

        for record, new_code, replacement in self._pending:
            try:
                record.identical = compare(new_code, replacement) is None
            except Exception:  # noqa: BLE001 (informative only)
                record.identical = None
        self._pending.clear()
        for record in self.manifest.frames:
            facts = self._trace.compiles.get(record.compile_id or "")
            if facts is not None:
                _merge(record, facts)
                mine = self._unveil_s.get(id(record))
                if mine is not None and record.compile_phases and not self.recorded:
                    record.compile_phases["unveil"] = round(mine, 6)
                    record.compile_phases["Dynamo"] = round(
                        max(record.compile_phases.get("Dynamo", 0.0) - mine, 0.0), 6)
            if self.hits is not None:
                record.hits = self.hits.facts(record.compiled_fns) or record.hits
        hits = {r.compile_id: r.hits for r in self.manifest.frames}
        for function in self.manifest.functions:
            for entry in function.cache_entries:
                entry["hits"] = hits.get(entry["compile_id"])
        files: list[dict[str, str]] = []
        for record in self.manifest.frames:
            if record.transformed_code:
                files.append({"file": record.transformed_code, "kind": "transformed_code",
                              "compile_id": record.compile_id or ""})
            for graph in record.graphs:
                files.append({"file": graph["file"], "kind": graph["kind"],
                              "compile_id": record.compile_id or ""})
        for function in self.manifest.functions:
            if function.full_code:
                files.append({"file": function.full_code, "kind": "full_code",
                              "compile_id": ""})
        self.manifest.files = files
        seen = {r.compile_id for r in self.manifest.frames}
        self.manifest.skipped_frames = [
            {"compile_id": f.compile_id, "function": f.function, "source_file": f.source_file,
             "first_line": f.first_line, "reason": f.fail_reason,
             "graph_breaks": [asdict(b) for b in f.graph_breaks], "stack": f.stack}
            for f in self._trace.compiles.values()
            if f.compile_id not in seen and f.function is not None
            and (f.fail_reason or f.guarded_code is False)]
        self.manifest.errors = sorted(set(self.manifest.errors + self._trace.errors))
        text = json.dumps(asdict(self.manifest), indent=2) + "\n"
        with dump_dir.locked(self.dump_dir):
            path = dump_dir.manifest_path(self.dump_dir, self.manifest.pid)
            write_atomic(path, text)
        return path


_HEADER_LINES = 3  # the lines _keep_dynamo puts before a file's code


def _in_words(verdict: Verdict, source_file: str | None, shift: int) -> str:
    """Why the check did not show the two the same, as a person reads it: at which line
    of the user's source Dynamo's code does what, and what the file's line does there
    instead (``shift``: lines put before the file's code since it was compiled); the
    checker's own terms where it has no such place."""
    part = verdict.parting
    if part is None:
        return verdict.reason
    here = "" if part.candidate_line is None else f" (line {part.candidate_line + shift})"
    there = "" if part.original_line is None else \
        f" (at {Path(source_file or '?').name}:{part.original_line})"
    undecided = "undecided: " if verdict.reason.startswith("undecided") else ""
    inside = "".join(f" in its nested function {name}" for name in part.inside)
    return (f"{undecided}on one way through the frame{inside}, at its step {part.step}, Dynamo's "
            f"code{there} {part.original}, where this file{here} {part.candidate}; until "
            f"that is resolved Dynamo's code runs")


def _merge(record: FrameRecord, facts: CompileFacts) -> None:
    record.graphs = [asdict(g) for g in facts.graphs]
    record.graph_breaks = [asdict(b) for b in facts.graph_breaks]
    record.recompile_reasons = list(facts.recompile_reasons)
    record.compile_time_s = facts.compile_time_s
    record.stack = list(facts.stack)
    record.restart_reasons = list(facts.restart_reasons)
    record.compile_phases = dict(facts.phases)
    record.compile_started_s = facts.started_s
    record.caches = [dict(c) for c in facts.caches]
    record.kernels = [dict(k) for k in facts.kernels]


def _calls(source: str | None) -> set[str]:
    """The compiled graphs (``__compiled_fn_<n>``) a transformed source calls."""
    return set(COMPILED_FN.findall(source or ""))

