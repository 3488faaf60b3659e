"""Higher-order ops' subgraphs (``torch.cond``'s branches, ``while_loop``'s ``cond_fn`` and
``body_fn``) are dumped as code, each in its own file next to its graph's, listed in the
manifest with the graph and shown in the report; on eager the subgraph's code runs from
its file (a breakpoint there is hit)."""

from __future__ import annotations

import bdb
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import unveil  # noqa: E402
from unveil.report.html import render  # noqa: E402
from unveil.report.load import load_run  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def with_cond(x):
    return torch.cond(x.sum() > 0, lambda t: t.sin() + 1, lambda t: t.cos() - 1, (x,))


def with_while_loop(x, n):
    from torch._higher_order_ops.while_loop import while_loop

    return while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t * 2 + 1),
                      (torch.zeros((), dtype=torch.int64), x))


def _graphs(directory: Path) -> list[dict[str, Any]]:
    frames = json.loads((directory / "manifest.json").read_text())["frames"]
    return [g for f in frames for g in f["graphs"]]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_cond_branches_are_files_of_code(tmp_path: Path, backend: str) -> None:
    x = torch.randn(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unveil.prepare_debug(tmp_path):
            got = [torch.compile(with_cond, backend=backend)(v) for v in (x.abs(), -x.abs())]
    assert torch.allclose(got[0], x.abs().sin() + 1)
    assert torch.allclose(got[1], (-x.abs()).cos() - 1)
    subs = [g for g in _graphs(tmp_path) if g.get("subgraph")]
    names = {g["subgraph"] for g in subs if g["kind"] == "dynamo_output_graph"}
    assert len(names) == 2, subs  # the true and the false branch
    for g in subs:
        text = (tmp_path / g["file"]).read_text()
        assert f"subgraph {g['subgraph']} of " in text.splitlines()[0], text
        compile(text, g["file"], "exec")
        assert "def forward(self" in text
    branches = "".join((tmp_path / g["file"]).read_text() for g in subs
                       if g["kind"] == "dynamo_output_graph")
    assert "torch.sin" in branches or ".sin()" in branches
    assert "torch.cos" in branches or ".cos()" in branches
    page = render(load_run(tmp_path))
    assert all(g["file"] in page for g in subs)


def test_while_loop_bodies_are_files_and_run_from_them(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with unveil.prepare_debug(tmp_path):
            out = torch.compile(with_while_loop, backend="eager")(torch.ones(3), torch.tensor(3))
    assert int(out[0]) == 3 and torch.equal(out[1], torch.full((3,), 15.0))
    subs = {g["subgraph"]: g for g in _graphs(tmp_path) if g.get("subgraph")}
    assert len(subs) == 2, subs  # cond_fn and body_fn
    ran = [g for g in subs.values() if g["compiled_from_file"]]
    assert ran, subs
    # a breakpoint in a subgraph's file stops there when the graph runs again
    body = ran[0]
    path = str(tmp_path / body["file"])
    line = next(k for k, text in enumerate(Path(path).read_text().splitlines(), 1)
                if text.startswith("    ") and "=" in text and not text.lstrip().startswith("#"))
    stops: list[int] = []

    class Stopper(bdb.Bdb):
        def user_line(self, frame: Any) -> None:
            if frame.f_code.co_filename == path:
                stops.append(frame.f_lineno)
            self.set_continue()

    debugger = Stopper()
    debugger.set_break(path, line)
    compiled = torch.compile(with_while_loop, backend="eager")
    sys.settrace(None)
    debugger.runcall(compiled, torch.ones(3), torch.tensor(3))
    assert line in stops, (line, stops)
