"""``unveil.prepare_debug`` on real model code nobody here wrote: `transformers` models built
from tiny configs with seeded random weights (nothing downloaded), the workloads of
``benchmarks/real_models.py``: forward passes of 18 architectures, two with graph breaks
inside transformers (hidden states and attentions asked for; a printing forward hook),
``generate()`` on two causal LMs (several frames, recompiles) and two training steps
(forward, loss, backward, optimizer); and five of timm's image models and a training step,
where timm (with a torchvision built for this torch) is installed.

Each workload runs compiled without and with unveil: the results are equal (bit for bit,
but for Inductor), every frame Dynamo transformed has its file and runs the code compiled
from it (but the frames of a workload's ``known_gap``, counted, with their reason), and a
breakpoint (set as pdb sets them, through :mod:`bdb`) on the graph call in a
transformed file is hit when the workload runs again. All workloads run with ``aot_eager``,
a subset with ``eager`` and ``inductor`` (CI time)."""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)
pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from breakpoints import Breakpoints  # noqa: E402

import real_models  # noqa: E402
from unveil.torch.dump import RUNS_OURS  # noqa: E402

EAGER = ["bert", "gpt2", "llama", "t5", "vit", "gpt2-generate", "bert-train"]
INDUCTOR = ["llama", "bert-train"]
CASES = ([(w.name, "aot_eager") for w in real_models.WORKLOADS]
         + [(name, "eager") for name in EAGER] + [(name, "inductor") for name in INDUCTOR]
         # timm's image models, where timm and a torchvision for this torch are installed
         + [(w.name, "aot_eager") for w in real_models.TIMM] + [("timm-resnet18", "inductor")])


def _graph_call_line(path: Path) -> int | None:
    """The line of a transformed file that looks up a compiled graph to call it."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if re.search(r"\b__compiled_fn_\w+", line) and not line.lstrip().startswith("#"):
            return number
    return None


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.slow
@pytest.mark.parametrize(("name", "backend"), CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_real_model(name: str, backend: str, tmp_path: Path) -> None:
    workload = real_models.BY_NAME[name]
    if name.startswith("timm-") and not real_models.has_timm():
        pytest.skip("timm (with a torchvision built for this torch) is not installed")
    expected = real_models.run_plain(workload, backend, calls=2)
    with real_models.under_unveil(tmp_path):
        once = workload.run(workload.build(), backend)
        got = [once()]
        manifest_frames = None
        debugger = Breakpoints()
        targets = []
        for path in tmp_path.glob("__transformed_code_*.py"):
            line = _graph_call_line(path)
            if line is not None:
                assert debugger.set_break(str(path), line) is None
                targets.append(str(path))
        assert targets, sorted(p.name for p in tmp_path.iterdir())
        got.append(debugger.runcall(once))
        sys.settrace(None)
    assert real_models.same(expected, got, exact=backend != "inductor")
    manifest_frames = json.loads((tmp_path / "manifest.json").read_text())["frames"]
    assert manifest_frames, "Dynamo transformed no frame"
    theirs = []
    for frame in manifest_frames:
        if frame["status"] != RUNS_OURS:
            theirs.append(frame)
        source = (tmp_path / frame["transformed_code"]).read_text()
        compile(source, frame["transformed_code"], "exec")
    # a known gap is a count and a reason, checked: it fails once fixed, or if it grows
    count, reason = workload.known_gap or (0, "")
    assert len(theirs) == count, [(f["transformed_code"], f["error"]) for f in theirs]
    assert all(reason in f["error"] for f in theirs), [f["error"] for f in theirs]
    hit_files = {debugger.canonic(f) for f, _ in debugger.hits}
    assert hit_files & {debugger.canonic(t) for t in targets}, (debugger.hits, targets)
