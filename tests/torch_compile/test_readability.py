"""Dynamo's frames, read (``prepare_debug``, simplified by default): the depyf paper's toy
example comes out as the paper shows it, each file says what Dynamo's plumbing is,
simplified code still runs (unveil's, checked equivalent) and stops at breakpoints."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from breakpoints import Breakpoints  # noqa: E402

import unveil  # noqa: E402
from unveil.torch import _dynamo  # noqa: E402
from unveil.torch.dump import RUNS_OURS  # noqa: E402


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def _frame_function(dump: Path, frame: dict) -> ast.FunctionDef:
    tree = ast.parse((dump / frame["transformed_code"]).read_text(encoding="utf-8"))
    found = [n for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef) and n.name == frame["function"]]
    assert found, frame["transformed_code"]
    return found[0]


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_toy_example_reads_as_the_paper_shows_it(tmp_path: Path) -> None:
    a, b = torch.randn(10), torch.randn(10)
    with unveil.prepare_debug(tmp_path):  # (simplified: the default)
        compiled = torch.compile(toy_example, backend="eager")
        for args in ((a, b), (a, -b.abs() - 1)):
            assert torch.allclose(compiled(*args), toy_example(*args))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    first = next(f for f in manifest["frames"] if f["function"] == "toy_example")
    assert first["status"] == RUNS_OURS, first
    fn = _frame_function(tmp_path, first)
    source = ast.unparse(fn)
    # Dynamo's profiler region, as Dynamo writes it: one call on torch 2.13/2.14
    # (``exit(enter())``); from 2.15 gated at run time, which, the region being empty and
    # enter() never giving None, reads as Dynamo's codegen describes it in two statements:
    # ``if _is_profiler_enabled: exit(enter())`` (the facts ``profiler_region``,
    # ``profiler_gate``, ``profiler_enter_value`` of ``unveil.torch._dynamo``)
    region = [s for s in fn.body if "record_pregraph_bytecode_" in ast.unparse(s)]
    assert fn.body[:len(region)] == region, source
    gated = _dynamo.holds("profiler_gate")
    assert gated == ("_is_profiler_enabled" in source), source
    assert sum(isinstance(n, ast.stmt) for s in region for n in ast.walk(s)) == \
        (0 if not _dynamo.holds("profiler_region") else 2 if gated else 1), source
    rest = fn.body[len(region):]
    statements = [n for s in rest for n in ast.walk(s) if isinstance(n, ast.stmt)]
    # the paper: the graph's outputs named, one test, a resume call in each branch (torch
    # 2.13 adds the deletion of the graph's outputs): 8 statements with 2.13's region
    assert len(statements) <= 7, source
    calls = [n.func.id for n in ast.walk(fn)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert sum(isinstance(n, ast.Name) and n.id.startswith("__compiled_fn")
               for n in ast.walk(fn)) == 1, source  # (the graph, read once and called)
    assert sum(c.startswith("__resume_at") for c in calls) == 2, source
    # (before 2.8 Dynamo returns from the test itself: a conditional expression)
    assert sum(isinstance(n, ast.If | ast.IfExp) for s in rest for n in ast.walk(s)) == 1, source
    # no list juggling, no walrus, no made-up names
    assert not any(isinstance(n, ast.NamedExpr) or isinstance(n, ast.Delete)
                   and any(isinstance(t, ast.Subscript) for t in n.targets)
                   for n in ast.walk(fn)), source
    assert not any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice)
                   for n in ast.walk(fn)), source
    assert not re.search(r"\b_[ts]\d+\b", source), source


def test_the_file_says_what_the_plumbing_is(tmp_path: Path) -> None:
    with unveil.prepare_debug(tmp_path):
        torch.compile(toy_example, backend="eager")(torch.randn(10), torch.randn(10))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    first = next(f for f in manifest["frames"] if f["function"] == "toy_example")
    text = (tmp_path / first["transformed_code"]).read_text(encoding="utf-8")
    header = text.split("\ndef ", 1)[0]
    # which function, where, which compile, and the file with its guards (which exists)
    assert f"toy_example ({__file__}:{toy_example.__code__.co_firstlineno})" in header, header
    assert f"compile {first['compile_id']}" in header, header
    assert "full_code_for_toy_example_*.py" in header and list(
        tmp_path.glob("full_code_for_toy_example_*.py")), header
    lines = text.splitlines()
    graph = [line for line in lines if "__compiled_fn_" in line and "=" in line]
    assert len(graph) == 1 and "# the graph in __compiled_fn_" in graph[0], text
    named = re.search(r"# the graph in (\S+?\.py)", graph[0])
    assert named and (tmp_path / named.group(1)).exists(), graph[0]
    resumes = [line for line in lines if "__resume_at_" in line]
    # where the rest of the function starts, and why (before 2.8, both on one line)
    assert sum(line.count("__resume_at_") for line in resumes) == 2, text
    assert all(f"graph break at line {toy_example.__code__.co_firstlineno + 2}" in line
               for line in resumes), resumes
    hooks = [line for line in lines if "record_pregraph_bytecode_enter(" in line]
    assert bool(hooks) == _dynamo.holds("profiler_region"), text
    assert all("profiler region" in line for line in hooks), text
    compile(text, "transformed", "exec")  # (comments only: still Python)


def test_simplify_false_writes_the_frame_faithfully(tmp_path: Path) -> None:
    with unveil.prepare_debug(tmp_path, simplify=False):
        compiled = torch.compile(toy_example, backend="eager")
        compiled(torch.randn(10), torch.randn(10))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    first = next(f for f in manifest["frames"] if f["function"] == "toy_example")
    assert first["status"] == RUNS_OURS, first
    fn = _frame_function(tmp_path, first)
    statements = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n is not fn]
    # Dynamo's list juggling, as it is (from 2.9: its lists of resume functions and frames)
    assert len(statements) > (15 if _dynamo.holds("nested_resume") else 1), ast.unparse(fn)


def test_a_breakpoint_in_a_simplified_frame_is_hit(tmp_path: Path) -> None:
    with unveil.prepare_debug(tmp_path):
        compiled = torch.compile(toy_example, backend="eager")
        compiled(torch.randn(10), torch.randn(10))
        files = sorted(tmp_path.glob("__transformed_code_*_for_toy_example.py"))
        assert files
        path = files[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        fn = next(n for n in ast.walk(tree)
                  if isinstance(n, ast.FunctionDef) and n.name == "toy_example")
        line = fn.body[-1].lineno  # the resume call the false branch ends in
        debugger = Breakpoints()
        assert debugger.set_break(str(path), line) is None
        debugger.runcall(compiled, torch.randn(10), torch.ones(10))
        sys.settrace(None)
    assert (str(path), line) in debugger.hits, (debugger.hits, line)
