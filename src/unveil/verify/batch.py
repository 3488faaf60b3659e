"""Checking many code objects: one at a time (:func:`check_code`), or whole files and
modules in worker processes with a time limit each (:func:`check_targets`)."""

from __future__ import annotations

import ast
import dataclasses
import marshal
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import CodeType
from typing import Any, cast

from ..codeobj import CodeEntry, CodeKind, code_kind, iter_code_objects
from ..decompiler import api
from ..errors import BadInputError, DecompilationError
from .oracle import compare
from .report import CheckReport, FileReport, FunctionResult, Progress, exception_message
from .targets import compile_file, resolve_targets


def _caused_by_syntax_error(exc: BaseException) -> bool:
    seen = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, SyntaxError):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def check_code(code: CodeType, *, qualname: str | None = None, file: str = "",
               details: bool = False) -> FunctionResult:
    """Decompile, recompile and compare one code object, in this process (no timeout).

    Decompilation and recompilation are separate steps so that the result tells
    "could not decompile" from "decompiled to source that does not compile".
    """
    result = FunctionResult(
        file=file, qualname=qualname or cast(str, getattr(code, "co_qualname", code.co_name)),
        kind=code_kind(code), line=code.co_firstlineno, status="failed")
    t0 = time.perf_counter()
    try:
        source = api.decompile(code)
        if not isinstance(source, str):
            raise TypeError(f"decompile returned {type(source).__name__}, not str")
    except DecompilationError as exc:
        result.reason, result.message = "decompile-error", exception_message(exc)
        return result
    except Exception as exc:  # noqa: BLE001 - every other exception is a crash
        result.reason, result.message = "crash", exception_message(exc)
        return result
    finally:
        result.decompile_ms = (time.perf_counter() - t0) * 1000
    result.decompiled = True
    result.lowered = written_as_state_machine(source)
    if imports_unveil(source):
        result.reason = "imports-unveil"
        result.message = "the decompiled source imports unveil"
        return result
    t1 = time.perf_counter()
    try:
        new = api.recompile(code)
        if not isinstance(new, CodeType):
            raise TypeError(f"recompile returned {type(new).__name__}, not a code object")
    except Exception as exc:  # noqa: BLE001
        syntax = _caused_by_syntax_error(exc)
        result.reason = "compile-error" if syntax else "recompile-error"
        result.message = exception_message(exc)
        return result
    finally:
        result.recompile_ms = (time.perf_counter() - t1) * 1000
    result.compiled = True
    diff = compare(code, new, nested=False)
    if diff is None:
        result.status = "identical"
    else:
        result.status, result.message = "differs", str(diff)
        result.detail = diff.detail if details else None
    return result


def written_as_state_machine(source: str) -> bool:
    """Is the body of the code object ``source`` was decompiled from (the last ``def``
    or ``class`` in it, else the module) written as the state machine: ``_stateN = 0``
    then ``while True:`` dispatching on it?"""
    tree = ast.parse(source)
    body = tree.body
    if body and isinstance(body[-1], ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        body = body[-1].body
    states = {t.id for s in body if isinstance(s, ast.Assign) for t in s.targets
              if isinstance(t, ast.Name) and t.id.startswith("_state")
              and t.id[6:].isdigit()}
    return any(isinstance(s, ast.While) and isinstance(s.test, ast.Constant)
               and s.test.value is True and s.body and isinstance(s.body[0], ast.If)
               and isinstance(s.body[0].test, ast.Compare)
               and isinstance(s.body[0].test.left, ast.Name)
               and s.body[0].test.left.id in states for s in body)


def imports_unveil(source: str) -> bool:
    """Does decompiled ``source`` import unveil (it must be plain Python)?"""
    if "unveil" not in source:
        return False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "unveil"
                                                for a in node.names) \
                or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] \
                == "unveil" \
                or isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "__import__" and node.args \
                and isinstance(node.args[0], ast.Constant) \
                and str(node.args[0].value).split(".")[0] == "unveil":
            return True
    return False


# --------------------------------------------------------------------------- workers

_NO_PROCESSES = ("emscripten", "wasi")  # Pyodide & co: no subprocesses, no timeout
CHUNK = 64  # functions sent to a worker at a time (all from one file)


def _worker_main(conn: Any, details: bool) -> None:
    """Worker loop: load a file's code, check a range of its code objects."""
    warnings.simplefilter("ignore")
    entries: list[CodeEntry] = []
    path = ""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if msg is None:
            return
        if msg[0] == "load":
            _, path, data = msg
            entries = list(iter_code_objects(marshal.loads(data)))
            continue
        _, start, stop = msg
        for i in range(start, stop):
            qualname, code = entries[i]
            try:
                res = check_code(code, qualname=qualname, file=path, details=details)
            except Exception as exc:  # noqa: BLE001 - e.g. the oracle itself failed
                res = FunctionResult(path, qualname, code_kind(code), code.co_firstlineno,
                                     "failed", "crash", exception_message(exc))
            conn.send((i, dataclasses.asdict(res)))


@dataclass
class _File:
    path: str
    data: bytes
    entries: list[tuple[str, CodeKind, int]]  # qualname, kind, line
    report: FileReport


class _Worker:
    def __init__(self, ctx: Any, details: bool) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, details), daemon=True)
        self.proc.start()
        child.close()
        self.loaded: int | None = None
        self.task: tuple[int, int, int] | None = None  # file index, next index, stop
        self.deadline = 0.0

    def assign(self, file_index: int, files: list[_File], start: int, stop: int,
               timeout: float | None) -> None:
        if self.loaded != file_index:
            self.conn.send(("load", files[file_index].path, files[file_index].data))
            self.loaded = file_index
        self.conn.send(("check", start, stop))
        self.task = (file_index, start, stop)
        self.deadline = time.monotonic() + timeout if timeout else float("inf")

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _mp_context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    # fork keeps monkeypatched or in-memory state (stand-ins, tests) in the workers
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _prepare(targets: Iterable[str | os.PathLike[str]], exclude: Iterable[str],
             limit: int | None) -> list[_File]:

    files: list[_File] = []
    budget = limit if limit is not None else -1
    for path, explicit in resolve_targets(targets, exclude=exclude):
        if budget == 0:
            break
        report = FileReport(str(path))
        try:
            code = compile_file(path)
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError) as exc:
            if explicit:
                raise BadInputError(f"{path} does not compile: {exception_message(exc)}") \
                    from None
            report.error = f"does not compile: {exception_message(exc)}"
            files.append(_File(str(path), b"", [], report))
            continue
        entries = [(q, code_kind(c), c.co_firstlineno) for q, c in iter_code_objects(code)]
        if budget > 0:
            entries = entries[:budget]
            budget -= len(entries)
        report.functions = len(entries)
        files.append(_File(str(path), marshal.dumps(code), entries, report))
    return files


def check_targets(targets: Iterable[str | os.PathLike[str]], *, jobs: int = 1,
                  progress: bool = True, timeout: float | None = 10.0,
                  exclude: Iterable[str] = (), limit: int | None = None,
                  details: bool = False,
                  on_result: Callable[[FunctionResult], None] | None = None) -> CheckReport:
    """Check every code object of every target; see the module docstring.

    Each code object goes through :func:`check_code` (``unveil.decompile`` then
    ``unveil.recompile``, then :func:`compare` of its own instructions) in a worker
    process; one that runs past ``timeout`` seconds is killed and marked
    ``failed: timeout``, and a worker that dies marks its function ``worker-died``.
    With ``timeout=None`` and ``jobs <= 1`` (and always under Pyodide, which has no
    processes) everything runs in this process, without a timeout.
    ``limit`` caps the number of code objects; ``details`` keeps listing diffs.
    Raises BadInputError for a target that does not exist or an explicit file that
    does not compile; files found in directories that do not compile are skipped.
    """
    started = time.monotonic()
    files = _prepare(targets, exclude, limit)
    report = CheckReport(files=[f.report for f in files], jobs=max(1, jobs), timeout=timeout)
    total = sum(len(f.entries) for f in files)
    bar = Progress(total, progress)
    slots: dict[tuple[int, int], FunctionResult] = {}

    def record(file_index: int, index: int, res: FunctionResult) -> None:
        slots[(file_index, index)] = res
        fr = files[file_index].report
        setattr(fr, res.status, getattr(fr, res.status) + 1)
        bar.update(res.status)
        if on_result is not None:
            on_result(res)

    def synthetic(file_index: int, index: int, reason: str, message: str) -> FunctionResult:
        qualname, kind, line = files[file_index].entries[index]
        return FunctionResult(files[file_index].path, qualname, kind, line, "failed",
                              reason, message)

    try:
        if (timeout is None and jobs <= 1) or sys.platform in _NO_PROCESSES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for fi, f in enumerate(files):
                    if not f.entries:
                        continue
                    entries = list(iter_code_objects(marshal.loads(f.data)))
                    for i in range(len(f.entries)):
                        q, code = entries[i]
                        record(fi, i, check_code(code, qualname=q, file=f.path,
                                                 details=details))
        else:
            _run_pool(files, max(1, jobs), timeout, details, record, synthetic)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        bar.close()
    report.results = [slots[k] for k in sorted(slots)]
    report.wall_s = time.monotonic() - started
    if report.interrupted:
        raise KeyboardInterrupt
    return report


def _run_pool(files: list[_File], jobs: int, timeout: float | None, details: bool,
              record: Callable[[int, int, FunctionResult], None],
              synthetic: Callable[[int, int, str, str], FunctionResult]) -> None:
    """Feed chunks of functions to worker processes, enforcing the per-function deadline."""
    queue: list[tuple[int, int, int]] = []
    for fi, f in enumerate(files):
        for start in range(0, len(f.entries), CHUNK):
            queue.append((fi, start, min(start + CHUNK, len(f.entries))))
    queue.reverse()  # pop() from the end keeps file order
    if not queue:
        return
    import multiprocessing.connection

    ctx = _mp_context()
    workers = [_Worker(ctx, details) for _ in range(min(jobs, len(queue)))]
    try:
        while True:
            for w in workers:
                if w.task is None and queue:
                    fi, start, stop = queue.pop()
                    w.assign(fi, files, start, stop, timeout)
            busy = [w for w in workers if w.task is not None]
            if not busy:
                break
            wait_s = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = multiprocessing.connection.wait(
                [w.conn for w in busy], timeout=None if wait_s == float("inf") else wait_s)
            now = time.monotonic()
            for i, w in enumerate(workers):
                if w.task is None:
                    continue
                fi, nxt, stop = w.task
                if w.conn in ready:
                    try:
                        index, data = w.conn.recv()
                    except (EOFError, OSError):
                        record(fi, nxt, synthetic(fi, nxt, "worker-died", _death(w.proc)))
                        workers[i] = _restart(w, ctx, details, queue, fi, nxt + 1, stop)
                        continue
                    record(fi, index, FunctionResult(**data))
                    if index + 1 >= stop:
                        w.task = None
                    else:
                        w.task = (fi, index + 1, stop)
                        w.deadline = now + timeout if timeout else float("inf")
                elif now >= w.deadline:
                    record(fi, nxt, synthetic(fi, nxt, "timeout",
                                              f"no result within {timeout:g}s"))
                    workers[i] = _restart(w, ctx, details, queue, fi, nxt + 1, stop)
    finally:
        for w in workers:
            w.stop(kill=w.task is not None)


def _death(proc: Any) -> str:
    """Why a worker process ended, e.g. "worker process killed by SIGSEGV"."""
    proc.join(timeout=2)
    code = proc.exitcode
    if code is not None and code < 0:
        import signal

        try:
            return f"worker process killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"worker process died (exit code {code})"


def _restart(w: _Worker, ctx: Any, details: bool, queue: list[tuple[int, int, int]],
             fi: int, start: int, stop: int) -> _Worker:
    """Kill a stuck or dead worker, requeue the rest of its chunk, start a fresh one."""
    w.stop(kill=True)
    if start < stop:
        queue.append((fi, start, stop))
    return _Worker(ctx, details)
