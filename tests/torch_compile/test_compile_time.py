"""Where the compile time went and whether the caches hit, on real runs: each frame's
phases (Dynamo, AOTAutograd, Inductor's lowering and code, unveil) sum to Dynamo's own
compile time for it; a second process hits Inductor's FX graph cache and AOTAutograd's
cache and the dump says so; the report draws the run's compilation as static SVG."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from unveil.report.html import render  # noqa: E402
from unveil.report.load import load_run  # noqa: E402
from unveil.report.summary import summary  # noqa: E402

PROGRAM = textwrap.dedent("""\
    import contextlib, json, sys, warnings
    warnings.filterwarnings("ignore")
    import torch, unveil
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    plain = len(sys.argv) > 3
    with contextlib.nullcontext() if plain else unveil.prepare_debug(sys.argv[1]):
        step = torch.compile(model, backend=sys.argv[2])
        step(torch.randn(4, 8)).sum().backward()
    print(json.dumps({k: dict(v) for k, v in counters.items()}))
    """)
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(tmp_path: Path, dump: str, backend: str, plain: bool = False) -> dict:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": SRC,
           "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor_cache")}
    proc = subprocess.run([sys.executable, str(prog), str(tmp_path / dump), backend,
                           *(["plain"] if plain else [])],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    if plain:  # (Dynamo's counters: the caches' hits and misses)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    return json.loads((tmp_path / dump / "manifest.json").read_text())


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_phases_sum_to_dynamos_compile_time(tmp_path: Path, backend: str) -> None:
    frames = _run(tmp_path, "dump", backend)["frames"]
    assert frames
    for frame in frames:
        phases = frame["compile_phases"]
        total = frame["compile_time_s"]
        assert abs(sum(phases.values()) - total) <= 0.1 * total, (phases, total)
        assert phases["Dynamo"] > 0 and phases["unveil"] > 0, phases
        assert "AOTAutograd" in phases, phases  # (both backends run it)
        assert ("Inductor code and kernels" in phases) == (backend == "inductor"), phases
        assert frame["compile_started_s"] > 0
    run = load_run(tmp_path / "dump")
    assert "compile time by phase: " in summary(run)
    page = render(run)
    assert "<h2>Compile time</h2>" in page and "<svg" in page and "<title>compile time" in page


def test_a_warm_second_run_hits_the_caches_and_says_so(tmp_path: Path) -> None:
    cold = [c for f in _run(tmp_path, "cold", "inductor")["frames"] for c in f["caches"]]
    warm = [c for f in _run(tmp_path, "warm", "inductor")["frames"] for c in f["caches"]]
    assert {(c["cache"], c["state"]) for c in cold} == {("FX graph", "miss"),
                                                        ("AOTAutograd", "miss")}, cold
    assert {(c["cache"], c["state"]) for c in warm} == {("FX graph", "hit"),
                                                        ("AOTAutograd", "hit")}, warm
    assert all(c["graph"] == "__compiled_fn_1" for c in warm), warm
    text = summary(load_run(tmp_path / "warm"))
    assert "caches: " in text and "AOTAutograd: 1 hit" in text, text


def test_unveil_does_not_change_the_cache_outcome(tmp_path: Path) -> None:
    """After a plain process filled the caches, prepare_debug hits them as a plain run
    does (it used to compile the Dynamo graph early, which changed AOTAutograd's key)."""
    first = _run(tmp_path, "-", "inductor", plain=True)
    assert first["aot_autograd"].get("autograd_cache_miss") == 1, first
    again = _run(tmp_path, "-", "inductor", plain=True)
    assert again["aot_autograd"].get("autograd_cache_hit") == 1, again
    warm = [c for f in _run(tmp_path, "dump", "inductor")["frames"] for c in f["caches"]]
    assert {(c["cache"], c["state"]) for c in warm} == {("FX graph", "hit"),
                                                        ("AOTAutograd", "hit")}, warm
