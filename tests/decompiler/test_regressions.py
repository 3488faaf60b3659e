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
    "40c001aa0e0b": (((3, 12), (3, 13), (3, 14)),
                     "a cell only dead code binds, in an inlined comprehension, comes "
                     "first in co_cellvars; the dead code that keeps it a cell sorts it "
                     "by name"),
    "8658e2d9b0d9": (((3, 10), (3, 11), (3, 12), (3, 13), (3, 14)),
                     "a class body that reads its own name before a with binds it: the "
                     "recompiled function keeps the name as a cell of its own"),
    "3b74cb9a30b8": (((3, 12), (3, 13), (3, 14)),
                     "a type alias whose generator expression is cut short by a false test: "
                     "the kept part reads the alias's own name as a free variable"),
    "46e7912a0596": (((3, 10),),
                     "a class's base after *args whose test the compiler folded ('0 if (0 if "
                     "u else v) else 0'): 3.10 has no columns to tell the jump over the known "
                     "value from a statement's, the class creation is not found"),
    "223a0b9f7316": (((3, 12), (3, 13)),
                     "a type alias's dict comprehension cut short by a false test ('if ()'): "
                     "the kept part reads a type parameter the dead loops rebind, so the "
                     "recompiled scope's free variables differ (not on 3.14)"),
    "9370b2e9eeab": (((3, 12), (3, 13), (3, 14)),
                     "a generic class whose name is also its ParamSpec, rebound by an "
                     "except* in a finally: the nested class's free variables differ"),
    "43b3f752e29c": (((3, 13), (3, 14)),
                     "a type alias's generator that loops over its own name in dead code "
                     "('for () in 0'): the alias's own name is lost from the free variables"),
    "c4423a10be76": (((3, 12), (3, 13)),
                     "a type alias's generator cut short by a false test ('if ()') whose "
                     "dead loops rebind the alias's name: one free variable too many"),
    "4f8cfb22c906": (((3, 12), (3, 13), (3, 14)),
                     "a generic class whose bases hold a chained comparison in a conditional "
                     "expression before '**k': the type parameters cross a block boundary "
                     "as a stack slot and the generic scope is not recognised"),
    "4cecf460b904": (((3, 13), (3, 14)),
                     "a generic class's base: a generator cut short by a false test "
                     "(\"if f''\") whose dead part reads the TypeVarTuple: it is lost from "
                     "the generator's free variables (the same at 2b77c9d)"),
    "e9a7fb682fae": (((3, 11), (3, 12), (3, 13), (3, 14)),
                     "a class body that raises before a dead 'except* ... as' rebinding the "
                     "enclosing function's parameter: the parameter becomes a cell again"),
    "122344c7dd61": (((3, 10), (3, 11), (3, 12)),
                     "a class base the compiler folded ('0 if (0 if u else 0) else (genexpr)'): "
                     "the test read only for its effect comes back as a conditional around the "
                     "class name, and the class creation is not found"),
    "7125e9093cbc": (((3, 12), (3, 13)),
                     "a type alias's list comprehension cut short by a false test ('if ()') whose "
                     "dead loop rebinds the type parameter: the kept generator's free variables "
                     "differ"),
    "e6d35060e90a": (((3, 10), (3, 11), (3, 12), (3, 13), (3, 14)),
                     "as 93472b74b844, with a 'with ... as' after the raise: the class "
                     "reads its own name, which only that dropped code binds"),
    "93472b74b844": (((3, 10), (3, 11), (3, 12), (3, 13), (3, 14)),
                     "a class body whose only binding of a name is in code after a raise "
                     "(an except clause's 'as'): the compiler drops that code but reads the "
                     "name as the class's own; without it the name is the enclosing "
                     "function's parameter, a cell"),
    "6b9d12ccc0fc": (((3, 14),),
                     "3.14 folds a type alias's '1 or P' to 1 but keeps the ParamSpec a free "
                     "variable of the value's function: an expression has no dead code to "
                     "keep it"),
    "4c7887e66bbd": (((3, 14),),
                     "3.14 folds a type alias's comprehension test 'f'' if P' to False but "
                     "keeps the ParamSpec a free variable of the value's function"),
    "ca3d74c73c20": (((3, 12), (3, 13), (3, 14)),
                     "a type alias '0 if (u if v else w) else x or y': the compiler copies "
                     "the 'return 0' into both arms of the inner test, and the value's "
                     "function is not read back as one conditional expression"),
    "31eb465da32c": (((3, 12), (3, 13)),
                     "a type alias's inlined list comprehension whose generator reads the type "
                     "parameter and whose dict comprehension rebinds it: the value's function "
                     "both takes the parameter from its scope and makes a cell of it; the "
                     "decompiled one makes it local (one free variable too few)"),
    "ed089d7f23e3": (((3, 12), (3, 13), (3, 14)),
                     "a type alias's generator whose dead loops rebind the alias's own name: one "
                     "free variable too many"),
    "4967fde4b20d": (((3, 10),),
                     "a class base after *args whose test the compiler folded ('0 if (0 if u "
                     "else v) else 0', as 46e7912a0596, on 3.10): the class creation is not "
                     "found"),
    "4c3c3695856b": (((3, 12), (3, 13), (3, 14)),
                     "a generic class whose name is also its TypeVarTuple, read by a type alias "
                     "in its body: the alias's scope loses the class's name as a free variable"),
    "672bcc869686": (((3, 12), (3, 13), (3, 14)),
                     "code after a return (dropped by the compiler) was the only reader of a "
                     "type parameter that a nested type alias shadows"),
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
