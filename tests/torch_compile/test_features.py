"""``unveil.prepare_debug`` on what people compile in 2026 (``benchmarks/features.py``):
compiled autograd, regional compilation, unbacked symints, ``cond``/``while_loop``/``scan``,
FlexAttention, checkpointing, hooks, compiler stances, compiled optimizers, autocast, DDP,
``nonstrict_trace``, tensor subclasses, custom ops, a KV-cache decode loop and side effects
on dicts, lists, sets and objects.

Each program runs compiled without and with unveil: it computes the same (or raises the
same), and every frame Dynamo transformed has a file that compiles and runs the code
compiled from it, except the frames listed in ``KNOWN`` (a count and the reason their
files give, checked: a known gap fails once it is mended, or if it grows). A file whose
frame keeps Dynamo's code says so, and why, in its first line."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import features  # noqa: E402
from unveil.torch.dump import DYNAMO_RUNS, RUNS_OURS  # noqa: E402

# feature -> (frames keeping Dynamo's code, the reason their files give); none today
KNOWN: dict[str, tuple[int, str]] = {}
BACKENDS = {"aot_eager": [f.name for f in features.FEATURES],
            "eager": ["side_effects", "set_replay", "kv_cache_decode", "nested_graph_break",
                      "module_hooks"],
            "inductor": ["regional_compilation", "kv_cache_decode"]}
CASES = [(name, backend) for backend, names in BACKENDS.items() for name in names]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize(("name", "backend"), CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_feature(name: str, backend: str, tmp_path: Path) -> None:
    feature = features.BY_NAME[name]
    if not feature.needs():
        pytest.skip(f"torch {torch.__version__} has no {name}")
    expected = features.run_feature(feature, backend)
    assert not (isinstance(expected, tuple) and expected[:1] == ("raised",)), expected
    got = features.run_feature(feature, backend, tmp_path)
    assert features.same(expected, got, feature.exact and backend != "inductor"), (expected, got)
    frames = json.loads((tmp_path / "manifest.json").read_text())["frames"]
    theirs = []
    for frame in frames:
        text = (tmp_path / frame["transformed_code"]).read_text()
        compile(text, frame["transformed_code"], "exec")
        if frame["status"] != RUNS_OURS:
            theirs.append(frame)
            first = text.splitlines()[0]
            assert first.startswith(f"# {DYNAMO_RUNS}") and first.endswith("."), first
    count, reason = KNOWN.get(name, (0, ""))
    assert len(theirs) == count, [(f["transformed_code"], f["error"]) for f in theirs]
    assert all(reason in f["error"] for f in theirs), [f["error"] for f in theirs]
