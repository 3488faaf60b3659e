"""The HTML report in a real browser: headless Chromium (Debian's) driven by Playwright.
The page loads from disk with no console errors and no network request, every in-page
link has its target, the search box finds a guard, and a screenshot is taken."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

from test_run_report import BREAKS_AND_RECOMPILES, script  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is not installed (scripts/test installs it)")
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


#: The in-page links whose target is not on the page.
UNRESOLVED = """() => [...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href').slice(1))
    .filter(id => !document.getElementById(id))"""


def open_report(browser, report: Path):  # type: ignore[no-untyped-def]
    """The report loaded in a new page, with the console problems and the requests it
    made (both lists keep filling while the page is used)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return page, problems, requests


def test_report_in_chromium(browser, tmp_path: Path) -> None:
    prog = script(tmp_path, BREAKS_AND_RECOMPILES)
    proc = subprocess.run([sys.executable, "-m", "unveil", "run", "--backend", "eager",
                           "--dump", "dump", str(prog), "0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    report = tmp_path / "dump" / "report.html"
    page, problems, requests = open_report(browser, report)
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    unresolved = page.evaluate(UNRESOLVED)
    links = page.evaluate("() => document.querySelectorAll('a[href^=\"#\"]').length")
    assert links > 5 and unresolved == [], unresolved
    # following a link from a compiled-graph name in the code lands on that graph's file
    graph_link = page.locator(".code a[href^='#file-']").first
    target = graph_link.get_attribute("href")
    graph_link.click()
    assert page.evaluate("() => location.hash") == target
    # the recompile in words, its compile linked; the compile-time picture is drawn
    recompiles = page.locator("section[id^='recompiles']")
    assert "it was 2, now 3" in recompiles.inner_text()
    link = recompiles.locator("a[href^='#frame-']").first
    target = link.get_attribute("href")
    link.click()
    assert page.evaluate("() => location.hash") == target
    picture = page.locator("section[id^='compile_time'] svg")
    box = picture.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 40, box
    assert picture.locator("rect").count() >= 4  # (bars and the legend)
    # the search finds a guard: the check that failed and caused the recompile
    page.fill("#search", "L['n'] == 2")
    visible = page.locator("section.searchable:not(.hidden)")
    assert visible.count() >= 1
    assert "L['n'] == 2" in visible.first.inner_text()
    assert "match" in page.inner_text("#hits")
    page.fill("#search", "no such text anywhere 12345")
    assert page.locator("section.searchable:not(.hidden)").count() == 0
    page.fill("#search", "")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    assert problems == []
    page.close()


def test_report_of_processes_sharing_a_dump_in_chromium(browser, tmp_path: Path) -> None:
    """Two processes into one dump: the report shows each (labels, its frames, how often
    each cache entry ran), lists each distinct graph break once with its PyTorch registry
    id linked (opened only when clicked), and every in-page link resolves."""
    prog = script(tmp_path, BREAKS_AND_RECOMPILES)
    procs = [subprocess.Popen([sys.executable, "-m", "unveil", "run", "--backend", "eager",
                               "--no-report", "--dump", "dump", str(prog), "0"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    done = subprocess.run([sys.executable, "-m", "unveil", "report", "dump"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    page, problems, requests = open_report(browser, tmp_path / "dump" / "report.html")
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    unresolved = page.evaluate(UNRESOLVED)
    assert unresolved == []
    nav = page.inner_text("nav")
    for proc in procs:
        assert f"process {proc.pid}" in nav
    # each process's frames: its own sections, with how often each entry ran
    frames = page.locator("section[id^='frame-']")
    assert frames.count() >= 2 * 3
    assert "ran 1 time" in page.inner_text("#content")
    # the distinct graph breaks, with PyTorch's id linked
    breaks = page.locator("section[id^='breaks-']").first
    assert "Graph breaks" in breaks.inner_text()
    link = breaks.locator("a.gb").first
    assert link.inner_text().startswith("GB")
    assert link.get_attribute("href").startswith("https://meta-pytorch.github.io/")
    assert link.get_attribute("target") == "_blank"
    assert problems == []
    page.close()
