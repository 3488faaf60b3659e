"""How often each compiled graph ran, and for how long: each ``__compiled_fn_*`` global
Dynamo installs for a transformed frame is wrapped. Its first calls are timed one by one
(``perf_counter_ns`` around the call: on a GPU, the launch, not the kernels); after
:data:`TIMED` calls the global becomes a counter written in C (``functools.lru_cache``
with no cache only counts its calls), so a long run pays about 0.1 µs a call. The time of
all calls is estimated from the timed ones (the first, which may compile lazily, apart).

One compiled graph belongs to one cache entry (one compile), and its code calls the graph
once a run, so a graph's calls are its entry's hits.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from . import _dynamo

TIMED = 100  # calls timed one by one (after the first), then only counted


@dataclass
class GraphHits:
    """The calls of one compiled graph."""

    first_ns: int = 0  # the first call's time (it may compile lazily)
    timed: int = 0  # calls timed after the first
    timed_ns: int = 0
    counter: Any = None  # the C counter, once timing is done

    @property
    def calls(self) -> int:
        counted = self.counter.cache_info().misses if self.counter is not None else 0
        return self.timed + (self.first_ns > 0) + counted

    def facts(self) -> dict[str, Any]:
        """``calls`` and ``time_s`` (estimated past the timed calls) for the manifest."""
        calls = self.calls
        if calls == 0:
            return {"calls": 0, "time_s": 0.0}
        mean = self.timed_ns / self.timed if self.timed else self.first_ns
        total = self.first_ns + mean * max(calls - 1, 0)
        return {"calls": calls, "time_s": round(total / 1e9, 6),
                "first_call_s": round(self.first_ns / 1e9, 6),
                "timed_calls": self.timed + (self.first_ns > 0)}


def _timed(fn: Callable[..., Any], hits: GraphHits, namespace: dict[str, Any],
           name: str) -> Callable[..., Any]:
    perf = time.perf_counter_ns

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = perf()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = perf() - start
            if not hits.first_ns:
                hits.first_ns = max(spent, 1)
            else:
                hits.timed += 1
                hits.timed_ns += spent
                if hits.timed >= TIMED and namespace.get(name) is timed:
                    hits.counter = functools.lru_cache(maxsize=0)(fn)
                    namespace[name] = hits.counter

    if timed.__code__ not in _skipped:  # (one code object for all wrappers)
        _skipped.add(timed.__code__)
        _dynamo.never_compile(timed.__code__)
    return timed


_skipped: set[CodeType] = set()


class HitCounter:
    """Wraps the compiled graphs of each transformed frame as Dynamo compiles it."""

    def __init__(self) -> None:
        self.graphs: dict[str, GraphHits] = {}  # the graph's global -> its calls

    def wrap(self, new_code: CodeType) -> None:
        """Wrap the graphs ``new_code`` calls (call from a bytecode hook). Never raises."""
        names = [n for n in new_code.co_names if n.startswith("__compiled_fn")]
        if not names:
            return
        try:
            namespace = _dynamo.compiling_globals()
            if namespace is None:
                return
            for name in names:
                fn = namespace.get(name)
                if callable(fn) and name not in self.graphs:
                    hits = self.graphs[name] = GraphHits()
                    namespace[name] = _timed(fn, hits, namespace, name)
        except Exception:  # noqa: BLE001 (no counts, never a broken program)
            return

    def facts(self, compiled_fns: list[str]) -> dict[str, Any] | None:
        """The calls of a frame's graphs (the first; they are called together)."""
        for name in compiled_fns:
            if name in self.graphs:
                return self.graphs[name].facts()
        return None
