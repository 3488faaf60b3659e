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
KNOWN: dict[str, tuple[tuple[tuple[int, int], ...], str]] = {
    "46e7912a0596": (((3, 10),),
                     "a class's base after *args whose test the compiler folded ('0 if (0 if "
                     "u else v) else 0'): 3.10 has no columns to tell the jump over the known "
                     "value from a statement's, the class creation is not found"),
    "4f8cfb22c906": (((3, 12), (3, 13), (3, 14)),
                     "a generic class whose bases hold a chained comparison in a conditional "
                     "expression before '**k': the type parameters cross a block boundary "
                     "as a stack slot and the generic scope is not recognised"),
    "122344c7dd61": (((3, 10), (3, 11), (3, 12)),
                     "a class base the compiler folded ('0 if (0 if u else 0) else (genexpr)'): "
                     "the test read only for its effect comes back as a conditional around the "
                     "class name, and the class creation is not found"),
    "4967fde4b20d": (((3, 10),),
                     "a class base after *args whose test the compiler folded ('0 if (0 if u "
                     "else v) else 0', as 46e7912a0596, on 3.10): the class creation is not "
                     "found"),
}


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
