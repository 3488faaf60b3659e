"""Programs that once broke the decompiler, minimized (``random_programs.py
--save-regressions`` writes them to ``regressions/``): every code object in each one
decompiles, compiles back and recompiles on its own, with no failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from unveil.codeobj import iter_code_objects
from unveil.verify.batch import check_code

FILES = sorted((Path(__file__).parent / "regressions").glob("*.py"))

#: Regressions that still fail, on the Pythons where they do, and why (strict xfails).
KNOWN: dict[str, tuple[tuple[tuple[int, int], ...], str]] = {}


def _param(path: Path) -> object:
    known = KNOWN.get(path.stem)
    marks = [pytest.mark.xfail(sys.version_info[:2] in known[0], reason=known[1],
                               strict=True)] if known else []
    return pytest.param(path, id=path.stem, marks=marks)


def test_there_are_regressions() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_regression(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    try:
        top = compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError:
        # a program in the syntax of a newer Python (the header says which) is checked
        # on that Python; this one cannot even compile it
        pytest.skip(f"not valid syntax on this Python: {source.splitlines()[0]}")
    failures = []
    for entry in iter_code_objects(top):
        result = check_code(entry.code, qualname=entry.qualname, file=str(path))
        if result.status == "failed":
            failures.append(f"{entry.qualname}: {result.reason}: {result.message}")
    assert not failures, "\n".join(failures)
