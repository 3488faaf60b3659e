"""Recompiles in words, on real torch.compile runs: for a shape, a dtype, a global flag and
a module attribute that change, the manifest, the summary and the report say which value
changed, where it enters the user's code, its old and new value, and what to do."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import unveil  # noqa: E402
from unveil.report.html import render  # noqa: E402
from unveil.report.load import load_run  # noqa: E402
from unveil.report.summary import summary  # noqa: E402

SCALE = 1.0
HERE = Path(__file__).name


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.use_relu = True

    def forward(self, x):
        y = self.lin(x)
        if self.use_relu:  # line of the attribute's check
            y = torch.relu(y)
        return y


def scaled(x):
    return x * SCALE + 1  # line of the global's check


def _line(fn: Any, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _causes(directory: Path) -> dict[str, list[dict[str, Any]]]:
    frames = json.loads((directory / "manifest.json").read_text())["frames"]
    return {f["compile_id"]: f["recompiles"] for f in frames}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_four_recompiles_each_explained(tmp_path: Path, backend: str) -> None:
    global SCALE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unveil.prepare_debug(tmp_path):
            net = torch.compile(Net(), backend=backend)
            net(torch.randn(2, 4))
            net(torch.randn(3, 4))  # a shape: recompiles
            net._orig_mod.use_relu = False
            net(torch.randn(3, 4))  # a module attribute
            f = torch.compile(scaled, backend=backend)
            f(torch.randn(3))
            f(torch.randn(3, dtype=torch.float64))  # a dtype
            SCALE = 2.0
            try:
                f(torch.randn(3, dtype=torch.float64))  # a global flag
            finally:
                SCALE = 1.0
    causes = _causes(tmp_path)
    shape, attribute = causes["0/1"][0], causes["0/2"][0]
    dtype, flag = causes["1/1"][0], causes["1/2"][0]
    assert (shape["kind"], shape["source"], shape["dim"], shape["old"], shape["new"]) == (
        "size", "x", 0, "2", "3")
    assert shape["words"].startswith(f"`x` (argument of forward, {HERE}:"), shape
    assert "torch._dynamo.mark_dynamic(x, 0)" in shape["fix"]
    assert (attribute["kind"], attribute["source"], attribute["old"], attribute["new"]) == (
        "value", "self.use_relu", "True", "False")
    assert f"{HERE}:{_line(Net.forward, 'if self.use_relu')}" in attribute["line"]
    assert "it was True, now False" in attribute["words"]
    assert "attribute self.use_relu" in attribute["fix"]
    assert (dtype["kind"], dtype["old"], dtype["new"]) == ("dtype", "torch.float32",
                                                           "torch.float64")
    assert "cast x to one dtype" in dtype["fix"]
    assert (flag["kind"], flag["source"], flag["scope"], flag["old"], flag["new"]) == (
        "value", "SCALE", "global", "1.0", "2.0")
    assert f"{HERE}:{_line(scaled, 'x * SCALE')}" in flag["line"]
    assert flag["words"].startswith("the global `SCALE`, read at ")
    assert "global SCALE" in flag["fix"]
    run = load_run(tmp_path)
    text = summary(run)
    # coverage: the time in compiled graphs (counted calls) against the run inside
    # prepare_debug
    wall = json.loads((tmp_path / "manifest.json").read_text())["wall_time_s"]
    assert wall > 0 and run.ranks[0].wall_time_s == wall
    assert re.search(r"time in compiled graphs: \d+\.\d\d s of the \d+\.\d\d s inside "
                     r"prepare_debug \(\d+%\)", text), text
    assert "distinct recompile cause(s)" in text
    assert "recompiled: the global `SCALE`" in text and "it was 1.0, now 2.0" in text
    page = render(run)
    assert "<h2>Recompiles</h2>" in page
    assert "what to do: " in page and "<code>self.use_relu</code>" in page


def test_identical_causes_are_one_group(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unveil.prepare_debug(tmp_path):
            f = torch.compile(scaled, backend="eager", dynamic=False)
            for n in (2, 3, 4, 5):  # (dynamic=False: each size its own version)
                f(torch.randn(n))
    text = summary(load_run(tmp_path))
    assert "1 distinct recompile cause(s):" in text, text
    assert "3x in scaled: `x` (argument of scaled" in text, text
