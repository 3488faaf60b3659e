"""``benchmarks/pyodide_cpython_tests.py``: a 3.14 module decompiled in Pyodide gives
CPython's tests the same result as its source, and a broken one does not.

It starts Node processes, so it runs under one Python only (the default, 3.11)."""

from __future__ import annotations

import shutil
import sys
from types import ModuleType

import pytest

import benchmark_module


def load_benchmark() -> ModuleType:
    """Import benchmarks/pyodide_cpython_tests.py."""
    return benchmark_module.load_benchmark("pyodide_cpython_tests")


pytestmark = [
    pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                       reason="starts Node processes: run under the default Python only"),
    pytest.mark.skipif(shutil.which("node") is None
                       or not (load_benchmark().PYODIDE / "python_stdlib.zip").exists(),
                       reason="no Pyodide here (scripts/test sets it up)"),
]


def _run(bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         module: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["pyodide_cpython_tests.py", "--modules", module,
                                      "--timeout", "120"])
    code = bench.main()
    return code, capsys.readouterr().out


def test_same_result_as_original(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(load_benchmark(), monkeypatch, capsys, "colorsys")
    assert code == 0 and "1 of 1 modules" in out, out


def test_broken_module_differs(monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """A decompiled textwrap whose dedent does nothing must fail test_textwrap."""
    bench = load_benchmark()
    broken = bench.DECOMPILE.replace(
        "f.write(text)", "f.write(text + '\\ndef dedent(text):\\n    return text\\n')")
    assert broken != bench.DECOMPILE
    monkeypatch.setattr(bench, "DECOMPILE", broken)
    code, out = _run(bench, monkeypatch, capsys, "textwrap")
    assert code == 1 and "DIFFERS" in out and "0 of 1 modules" in out, out
