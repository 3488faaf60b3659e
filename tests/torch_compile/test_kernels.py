"""Inductor's kernels linked to the user's lines, on real runs of a small model's training
step: each kernel (C++ and extern calls, forward and backward) names the lines it computes,
as the output code calls it; a warm run's code, from the caches, is dumped and marked so;
``unveil.record`` gives the same links; in Chromium, a source line leads to its kernel, the
kernel to its call in the output code, and that call back to the line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

from test_report_browser import UNRESOLVED, browser, open_report  # noqa: E402,F401

from unveil.report.html import render  # noqa: E402
from unveil.report.load import load_run  # noqa: E402
from unveil.report.summary import summary  # noqa: E402

PROGRAM = textwrap.dedent("""\
    import sys, warnings
    warnings.filterwarnings("ignore")
    import torch, unveil

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            h = torch.relu(self.fc1(x))
            h = h * 2 + 1
            return self.fc2(h).softmax(-1)

    torch.manual_seed(0)
    model = Block()
    tool = unveil.record(sys.argv[1], finish="exit") if sys.argv[2] == "record" \\
        else unveil.prepare_debug(sys.argv[1])
    with tool:
        step = torch.compile(model)
        step(torch.randn(3, 8)).sum().backward()
    """)
# the lines of Block.forward (1-based in PROGRAM) and their code
FORWARD = {i: line.strip() for i, line in enumerate(PROGRAM.splitlines(), 1)
           if i in (12, 13, 14)}
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(tmp_path: Path, dump: str, tool: str, cache: str) -> dict:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": SRC, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / cache)}
    proc = subprocess.run([sys.executable, str(prog), str(tmp_path / dump), tool],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / dump / "manifest.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict, dict]:
    """A cold run, a warm one (the same caches) and a recorded one (cold, its own)."""
    tmp = tmp_path_factory.mktemp("kernels")
    return (tmp, _run(tmp, "cold", "debug", "cache"), _run(tmp, "warm", "debug", "cache"),
            _run(tmp, "recorded", "record", "cache2"))


def _kernels(manifest: dict) -> list[dict]:
    return [k for frame in manifest["frames"] for k in frame["kernels"]]


def _check_written(tmp: Path, dump: str, manifest: dict) -> None:
    kernels = _kernels(manifest)
    files = {k["file"] for k in kernels}
    assert len(files) == 2, files  # the forward's output code and the backward's
    assert len(kernels) >= 6, kernels
    for kernel in kernels:
        assert kernel["link"] == "seen written" and not kernel["from_cache"], kernel
        assert kernel["nodes"], kernel
        # every kernel linked to at least one line of Block.forward, its code as written
        assert kernel["lines"], kernel
        for line in kernel["lines"]:
            assert line["file"].endswith("prog.py"), line
            assert FORWARD.get(line["line"]) == line["code"], line
        text = (tmp / dump / kernel["file"]).read_text().splitlines()
        assert kernel["name"] + "(" in text[kernel["called_at"] - 1], kernel
        if kernel["defined_at"] is not None:
            assert text[kernel["defined_at"] - 1].startswith(kernel["name"] + " = "), kernel
    names = {k["name"] for k in kernels}
    assert any(n.startswith("cpp_fused") for n in names), names
    assert any(n.startswith("extern_kernels.") for n in names), names
    # the fused ReLU, scaling and shift of the forward computes both of their lines
    fused = next(k for k in kernels if "relu" in k["name"] and "add" in k["name"])
    assert {line["line"] for line in fused["lines"]} == {12, 13}, fused


def test_every_kernel_is_linked_to_the_lines_it_computes(runs) -> None:  # type: ignore[no-untyped-def]
    tmp, cold, _, _ = runs
    _check_written(tmp, "cold", cold)
    run = load_run(tmp / "cold")
    assert "Inductor: " in summary(run) and " linked to user lines" in summary(run)
    page = render(run)
    assert "Inductor&#x27;s kernels: " in page or "Inductor's kernels: " in page
    assert page.count('class="kern-link"') == 3  # each line of forward leads to kernels


def test_a_warm_run_dumps_the_cached_code_and_says_so(runs) -> None:  # type: ignore[no-untyped-def]
    tmp, cold, warm, _ = runs
    caches = {(c["cache"], c["state"]) for f in warm["frames"] for c in f["caches"]}
    assert ("AOTAutograd", "hit") in caches, caches
    graphs = [g for f in warm["frames"] for g in f["graphs"]]
    code = [g for g in graphs if g["kind"] == "inductor_output_code"]
    assert len(code) == 2 and all(g["from_cache"] for g in code), graphs
    for graph in code:  # the same code the cold run wrote
        cold_file = next(g["file"] for g in
                         (g for f in cold["frames"] for g in f["graphs"])
                         if g["file"] == graph["file"])
        assert ((tmp / "warm" / graph["file"]).read_text()
                == (tmp / "cold" / cold_file).read_text())
    kernels = _kernels(warm)
    assert len(kernels) == len(_kernels(cold)), kernels
    assert all(k["from_cache"] and k["link"] == "Inductor's comments" for k in kernels)
    assert any(k["lines"] for k in kernels), kernels  # (where the comments say)
    assert "from a cache" in summary(load_run(tmp / "warm"))


def test_a_recorded_run_links_its_kernels_too(runs) -> None:  # type: ignore[no-untyped-def]
    tmp, _, _, recorded = runs
    _check_written(tmp, "recorded", recorded)


def _by_id(page, href: str):  # type: ignore[no-untyped-def]
    """The element an in-page link ``#id`` leads to (ids hold dots: not a CSS selector)."""
    return page.locator(f'[id="{href.removeprefix("#")}"]')


def test_line_to_kernel_to_code_and_back_in_chromium(runs, browser) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    tmp = runs[0]
    report = tmp / "cold" / "report.html"
    from unveil.report.html import write_report

    write_report(load_run(tmp / "cold"), report)
    page, problems, requests = open_report(browser, report)
    assert page.evaluate(UNRESOLVED) == []
    # a line of forward leads to the kernel computing it...
    line_link = page.locator(".code a.kern-link").first
    kernel_row = line_link.get_attribute("href")
    line_link.click()
    assert page.evaluate("() => location.hash") == kernel_row
    row = _by_id(page, kernel_row)
    assert row.is_visible()
    # ... the kernel to where the output code calls it (its file opens) ...
    code_link = row.locator("td").first.locator("a")
    call = code_link.get_attribute("href")
    name = code_link.inner_text()
    code_link.click()
    assert page.evaluate("() => location.hash") == call
    call_line = _by_id(page, call)
    assert call_line.is_visible() and name + "(" in call_line.inner_text()
    # ... and that call back to the line of the source
    back = call_line.locator("a.src-link").first
    source_line = back.get_attribute("href")
    back.click()
    assert page.evaluate("() => location.hash") == source_line
    assert _by_id(page, source_line).is_visible()
    assert any(code in _by_id(page, source_line).inner_text() for code in FORWARD.values())
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    if os.environ.get("UNVEIL_SCREENSHOTS"):  # (the README's picture)
        page.goto(report.as_uri() + kernel_row)
        page.screenshot(path=os.environ["UNVEIL_SCREENSHOTS"] + "/report-kernels.png")
    page.close()
