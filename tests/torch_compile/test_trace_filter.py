"""While only unveil listens to Dynamo's structured trace, Dynamo skips computing the events
unveil does not record (``TraceRecorder.wants``); the dump must be the same as when another
handler (``TORCH_TRACE``'s, say) makes Dynamo compute every event."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import unveil  # noqa: E402
from unveil.torch import _dynamo  # noqa: E402
from unveil.torch.trace import TraceRecorder  # noqa: E402

trace_log = pytest.importorskip("torch._logging._internal").trace_log


def breaks_and_branches(x, n):
    y = torch.sin(x) * n
    print("between graphs")
    if y.sum() > 0:
        return y + 1
    return y - 1


class _Everything(logging.Handler):
    """A handler that is not unveil's: Dynamo computes every event for it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.events: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append(next(iter(getattr(record, "metadata", {}) or {"?": 0})))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _no_other_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the trace's handlers away for this test: TORCH_TRACE's, and those pytest's
    logging plugin attaches to every non-propagating logger as a test's call starts."""
    monkeypatch.setattr(trace_log, "handlers", [])


# Names numbered by process-wide counters, which go on counting from one dump to the next.
_COUNTED = re.compile(r"(__compiled_fn|__resume_at_\d+|__builtins_dict__)_(\d+)(_[0-9a-f_]{36})?")


def _renumbered(text: str, numbers: dict[str, str]) -> str:
    """``text`` with each counted name numbered in the order it first appears (a compiled
    function's uuid left out)."""
    def number(match: re.Match[str]) -> str:
        name = match.group(1) + "_" + match.group(2)
        return numbers.setdefault(name, f"{match.group(1)}_#{len(numbers)}")

    return _COUNTED.sub(number, text)


def _dump(path: Path, *, other_handler: bool, backend: str = "eager") -> dict[str, str]:
    """The dump (file name -> text) of compiling ``breaks_and_branches`` for four inputs
    (recompiles too), compile times left out and counted names renumbered."""
    torch._dynamo.reset()
    other = _Everything()
    if other_handler:
        trace_log.addHandler(other)
    try:
        with unveil.prepare_debug(path), contextlib.redirect_stdout(io.StringIO()):
            compiled = torch.compile(breaks_and_branches, backend=backend)
            for x, n in [(torch.ones(3), 2), (-torch.ones(3), 2), (torch.ones(3), 3),
                         (torch.ones(2, 2, dtype=torch.float64), 2)]:
                compiled(x, n)
            filtering = isinstance(trace_log.handlers, _dynamo._TraceHandlers)
    finally:
        trace_log.removeHandler(other)
    assert filtering
    if other_handler:  # Dynamo computed the events unveil does not record, for it
        assert "describe_tensor" in other.events and "chromium_event" in other.events
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    for frame in manifest["frames"]:
        frame.pop("compile_time_s")
        assert frame.pop("hits")["calls"] >= 1  # (its times differ from run to run)
        frame["compile_phases"] = sorted(frame["compile_phases"])  # (the phases, not times)
        assert frame.pop("compile_started_s") > 0
    assert manifest.pop("wall_time_s") > 0
    for function in manifest["functions"]:
        for entry in function["cache_entries"]:
            entry.pop("hits")
    manifest.pop("pid")
    numbers: dict[str, str] = {}
    text = _renumbered(json.dumps(manifest, indent=1), numbers)
    files = {_renumbered(p.name, numbers): _renumbered(p.read_text(encoding="utf-8"), numbers)
             for p in path.iterdir() if p.name != "manifest.json"}
    for name, content in files.items():
        if name.startswith("full_code_"):  # it lists graph files in the counters' order
            files[name] = "\n".join(sorted(content.splitlines()))
    return {"manifest.json": text, **files}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_same_dump_with_and_without_other_handlers(backend: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _no_other_handlers(monkeypatch)
    # one call site: the manifest's stacks reach up to this test; the first dump fills
    # Inductor's caches, so that the two compared ones both hit them
    _, filtered, everything = (_dump(tmp_path / str(other), other_handler=bool(other),
                                     backend=backend)
                               for other in (None, False, True))
    assert filtered == everything
    frames = json.loads(filtered["manifest.json"])["frames"]
    assert any(f["graph_breaks"] for f in frames) and any(f["recompile_reasons"] for f in frames)
    assert type(trace_log.handlers) is list  # unveil's handler list is gone with its handler


def test_only_wanted_events_are_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_other_handlers(monkeypatch)
    seen: list[dict[str, Any]] = []

    def wants(event: str, artifact: str | None) -> bool:
        return event == "compilation_metrics" or artifact == "dynamo_graph_break_reason"

    remove = _dynamo.add_trace_handler(lambda metadata, payload, gm: seen.append(metadata),
                                       wants)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            torch.compile(breaks_and_branches, backend="eager")(torch.ones(3), 2)
    finally:
        remove()
    kinds = [next(k for k in m if k in ("compilation_metrics", "artifact")) for m in seen]
    assert "compilation_metrics" in kinds and "artifact" in kinds
    assert all(m["artifact"]["name"] == "dynamo_graph_break_reason"
               for m in seen if "artifact" in m)
    assert len(seen) == len(kinds)  # nothing else arrived


def test_recorder_wants_what_it_records() -> None:
    recorder = TraceRecorder(lambda pattern: Path(pattern))
    assert recorder.wants("dynamo_output_graph", None)
    assert recorder.wants("artifact", "recompile_reasons")
    assert not recorder.wants("describe_tensor", None)
    assert not recorder.wants("artifact", "fn_ORIGINAL_BYTECODE")
