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
    "d5cc454922a5": (((3, 12), (3, 13)),
                     "a type alias's set comprehension (inlined) cut short by 'if ()' whose dead "
                     "loop rebinds the type parameter a lambda in the kept part reads: the "
                     "value's function keeps no cell of it"),
    "516e9d621da7": (((3, 12), (3, 13)),
                     "as d5cc454922a5: the kept part reads the type parameter both directly "
                     "and in a lambda; the cell and the free variable share the name"),
    "560b5ec14ddb": (((3, 13), (3, 14)),
                     "a generic class's base generator cut short by \"if f''\": a dict "
                     "comprehension inlined in the kept part binds the ParamSpec, the "
                     "dropped part reads it; the generator loses it as a free variable"),
    "e2a21e8818cc": (((3, 13), (3, 14)),
                     "as 560b5ec14ddb with a set comprehension and a TypeVar named like "
                     "the class"),
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
