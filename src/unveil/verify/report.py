"""The results of a check: one per code object, counted per file and in total, with a
progress line while it runs."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

# --------------------------------------------------------------------------- one function each

STATUSES = ("identical", "differs", "failed")
REASONS = ("decompile-error", "crash", "imports-unveil", "compile-error", "recompile-error",
           "timeout", "worker-died")


@dataclass
class FunctionResult:
    """The outcome for one code object."""

    file: str
    qualname: str
    kind: str
    line: int
    status: str  # identical | differs | failed
    reason: str | None = None  # one of REASONS when failed
    message: str | None = None  # the exception or the first difference
    detail: str | None = None  # diff of the listings (when asked for)
    decompiled: bool = False
    compiled: bool = False
    decompile_ms: float | None = None
    recompile_ms: float | None = None
    lowered: bool = False  # its own body came back as the state machine (``while True:``)

    @property
    def total_ms(self) -> float | None:
        """Decompile plus recompile time, when both ran."""
        if self.decompile_ms is None or self.recompile_ms is None:
            return self.decompile_ms
        return self.decompile_ms + self.recompile_ms

    def where(self) -> str:
        """``file:line qualname``."""
        return f"{self.file}:{self.line} {self.qualname}"



def exception_message(exc: BaseException) -> str:
    """``Type: first line of the message``."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


# --------------------------------------------------------------------------- reports


@dataclass
class FileReport:
    """Counts for one file; ``error`` is set when the file was skipped."""

    path: str
    functions: int = 0
    identical: int = 0
    differs: int = 0
    failed: int = 0
    error: str | None = None
    #: a ``.pyc`` checked by its own version: whether the whole file compiled back the same
    whole_file_identical: bool | None = None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[min(len(ordered), int(rank)) - 1]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class CheckReport:
    """Everything :func:`check_targets` found."""

    results: list[FunctionResult] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)
    wall_s: float = 0.0
    jobs: int = 1
    timeout: float | None = None
    python: str = field(default_factory=lambda: sys.version.split()[0])
    interrupted: bool = False

    def count(self, status: str) -> int:
        """How many functions have this status."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> int:
        """Number of functions that failed."""
        return self.count("failed")

    @property
    def differs(self) -> int:
        """Number of functions that recompiled to different bytecode."""
        return self.count("differs")

    def totals(self) -> dict[str, Any]:
        """Aggregate numbers (counts, percentages, timings)."""
        n = len(self.results)
        times = [t for r in self.results if (t := r.total_ms) is not None]
        decompile_times = [r.decompile_ms for r in self.results
                           if r.decompiled and r.decompile_ms is not None]

        def pct(k: int) -> float:
            return round(100.0 * k / n, 2) if n else 0.0

        decompiled = sum(r.decompiled for r in self.results)
        compiled = sum(r.compiled for r in self.results)
        identical = self.count("identical")
        return {
            "python": self.python,
            "files": len(self.files),
            "files_skipped": sum(1 for f in self.files if f.error),
            "whole_files_identical": None if all(f.whole_file_identical is None
                                                 for f in self.files)
            else sum(f.whole_file_identical is True for f in self.files),
            "functions": n,
            "identical": identical,
            "differs": self.differs,
            "failed": self.failed,
            "decompiled": decompiled,
            "compiled": compiled,
            "pct_decompiled": pct(decompiled),
            "pct_compiled": pct(compiled),
            "pct_identical": pct(identical),
            "lowered": sum(r.lowered for r in self.results),
            "pct_lowered": pct(sum(r.lowered for r in self.results)),
            "failures_by_reason": dict(Counter(r.reason for r in self.results if r.reason)),
            "functions_by_kind": dict(Counter(r.kind for r in self.results)),
            "p50_ms": _round(percentile(times, 50)),
            "p99_ms": _round(percentile(times, 99)),
            "p50_decompile_ms": _round(percentile(decompile_times, 50)),
            "p99_decompile_ms": _round(percentile(decompile_times, 99)),
            "wall_s": round(self.wall_s, 3),
            "functions_per_s": round(n / self.wall_s, 1) if self.wall_s else None,
            "jobs": self.jobs,
            "timeout_s": self.timeout,
            "interrupted": self.interrupted,
        }

    def to_dict(self, *, include_identical: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: totals, per-file counts and per-function results."""
        results = [dataclasses.asdict(r) for r in self.results
                   if include_identical or r.status != "identical"]
        return {
            "totals": self.totals(),
            "files": [dataclasses.asdict(f) for f in self.files],
            "results": results,
        }

    def write_json(self, path: str | os.PathLike[str], **kwargs: bool) -> None:
        """Write :meth:`to_dict` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(**kwargs), fh, indent=1)
            fh.write("\n")

    def summary(self) -> str:
        """One line of totals."""
        t = self.totals()
        n = t["functions"]
        line = (f"{n} functions in {t['files']} files: {t['identical']} identical "
                f"({t['pct_identical']}%), {t['differs']} differ, {t['failed']} failed")
        if t["failures_by_reason"]:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(t["failures_by_reason"].items()))
            line += f" ({reasons})"
        if t["files_skipped"]:
            line += f"; {t['files_skipped']} files skipped"
        return line + f"; {t['wall_s']:.1f}s"


# --------------------------------------------------------------------------- progress


class Progress:
    """A one-line bar on a tty, periodic plain lines otherwise."""

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None,
                 interval: float = 10.0, unit: str = "fn") -> None:
        self.total = total
        self.unit = unit  # (what is counted: functions, or files)
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = 0.1 if self.tty else interval
        self.start = self.last = time.monotonic()
        self.done = 0
        self.counts: Counter[str] = Counter()

    def update(self, status: str) -> None:
        self.done += 1
        self.counts[status] += 1
        now = time.monotonic()
        if self.enabled and (now - self.last >= self.interval or self.done == self.total):
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate else 0.0
        c = self.counts
        text = (f"{self.done}/{self.total} {frac:4.0%} | identical {c['identical']} "
                f"differs {c['differs']} failed {c['failed']} | {rate:.{1 if rate < 10 else 0}f} "
                f"{self.unit}/s "
                f"ETA {int(eta) // 60}:{int(eta) % 60:02d}")
        if self.tty:
            width = 24
            filled = int(width * frac)
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r[{bar}] {text}\x1b[K")
        else:
            self.stream.write(f"check: {text}\n")
        self.stream.flush()

    def clear(self) -> None:
        """Take the bar off its line (on a tty), so that a line can be printed there."""
        if self.enabled and self.tty and self.done:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def redraw(self) -> None:
        if self.enabled and self.tty and self.done:
            self._draw(time.monotonic())

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

