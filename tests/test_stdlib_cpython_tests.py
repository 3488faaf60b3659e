"""CPython's own tests pass on decompiled stdlib modules, in a child without unveil.

A small sample of ``benchmarks/stdlib_cpython_tests.py`` (three quick modules), plus
checks that the comparison can fail: a broken module, and a module that needs unveil.
"""

from __future__ import annotations

from types import CodeType, ModuleType

import pytest

import benchmark_module
import unveil

pytest.importorskip("test.test_textwrap", reason="this Python has no CPython test suite")



def load_benchmark() -> ModuleType:
    """Import benchmarks/stdlib_cpython_tests.py."""
    return benchmark_module.load_benchmark("stdlib_cpython_tests")


@pytest.mark.parametrize("module", ["textwrap", "colorsys", "shlex"])
def test_same_result_as_original(module: str) -> None:
    res = load_benchmark().check_module(module, timeout=120)
    assert res.baseline is not None and res.baseline.status == "ok", res.baseline
    assert res.baseline.counts[0] > 0
    assert res.verdict == "same", (res.detail, res.newly_failing())


def test_broken_module_differs() -> None:
    """A decompiled textwrap whose dedent does nothing must fail test_textwrap."""
    def broken(code: CodeType) -> str:
        return unveil.decompile(code) + "\n\ndef dedent(text):\n    return text\n"

    res = load_benchmark().check_module("textwrap", timeout=120, decompile=broken)
    assert res.verdict == "DIFFERS"
    assert any("Dedent" in test for test in res.newly_failing()), res.newly_failing()


def test_child_cannot_import_unveil() -> None:
    """The decompiled module runs where unveil is not importable."""
    def needs_unveil(code: CodeType) -> str:
        return "import unveil\n" + unveil.decompile(code)

    res = load_benchmark().check_module("colorsys", timeout=120, decompile=needs_unveil)
    assert res.verdict == "DIFFERS"
    assert res.decompiled is not None and res.decompiled.status == "import-failed"
    assert "unveil" in res.decompiled.message
