"""Jupyter: ``unveil.explain(fn, *args)`` and a ``prepare_debug`` dump display as the HTML
report in a notebook, checked by executing a notebook with nbclient and ipykernel."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

import unveil  # noqa: E402


def f(x, n):
    y = torch.sin(x) * n
    print("between graphs")
    if y.sum() > 0:
        return y.cos()
    return y + 1


def test_explain_returns_result_and_facts(tmp_path: Path) -> None:
    compiled_before = torch.compile(f, backend="eager")
    compiled_before(torch.ones(3), 2)  # explain compiles afresh all the same
    e = unveil.explain(f, torch.ones(3), 2, dump_dir=tmp_path)
    assert torch.equal(e.result, f(torch.ones(3), 2))
    assert {fr["function"] for fr in e.frames} >= {"f"}
    assert "graph break at" in str(e) and "Data-dependent branching" in str(e)
    page = e._repr_html_()
    assert page.startswith("<iframe") and "Data-dependent branching" in html.unescape(page)
    with pytest.raises(TypeError, match="needs a function"):
        unveil.explain(42)


def test_notebook_shows_the_report(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "import torch, unveil",
        "def f(x):\n    y = x * 2\n    print('break')\n    return y + 1",
        "e = unveil.explain(f, torch.ones(2))\ne",
        f"with unveil.prepare_debug({str(tmp_path / 'dump')!r}) as d:\n"
        "    torch.compile(f, backend='eager')(torch.ones(3))\nd",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    for index in (2, 3):
        outputs = nb.cells[index].outputs
        rich = [o for o in outputs if o.get("output_type") == "execute_result"]
        assert rich, outputs
        page = html.unescape(rich[0]["data"]["text/html"])
        assert "<iframe" in page and "unveil report" in page, page[:300]
        assert "Failed to trace builtin operator" in page
    assert "unveil.Explanation of" in nb.cells[2].outputs[-1]["data"]["text/plain"]
