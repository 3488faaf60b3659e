"""Run every corpus function through the decompiler oracle (see ``harness.py``).

One test per corpus function (``module::function``), one per exercised class and
one per module whose whole code object is decompiled and re-executed.
"""

from __future__ import annotations

from pathlib import Path
from types import FunctionType

import pytest

import unveil
from unveil.codeobj import iter_code_objects

from . import corpus
from .harness import (
    check_class,
    check_function,
    check_module,
    first_difference,
    run_case,
    show,
    take_snapshot,
)

MODULE_NAMES = corpus.module_names()
MODULES = {name: corpus.load_module(name) for name in MODULE_NAMES}

FUNCTIONS = [
    pytest.param(func, f"{module.__name__}::{fname}", id=f"{name}::{fname}")
    for name, module in MODULES.items()
    for fname, func in corpus.functions_of(module)
]
CLASSES = [
    pytest.param(cls, module, id=f"{name}::{cname}")
    for name, module in MODULES.items()
    for cname, cls in corpus.classes_of(module)
]


@pytest.mark.parametrize(("func", "title"), FUNCTIONS)
def test_function(func: FunctionType, title: str) -> None:
    check_function(func, title=title)


@pytest.mark.parametrize(("cls", "module"), CLASSES)
def test_class(cls: type, module: object) -> None:
    check_class(cls, module)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_whole_module(name: str) -> None:
    check_module(MODULES[name])


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_every_code_object_recompiles(name: str) -> None:
    """Each code object of a corpus module recompiles on its own, hidden ones included
    (3.12+ type-parameter scopes and lazy bounds, 3.14 ``__annotate__`` functions)."""
    path = MODULES[name].__file__
    assert path is not None
    top = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
    failures = []
    for entry in iter_code_objects(top):
        try:
            unveil.recompile(entry.code)
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            failures.append(f"{entry.qualname}: {type(exc).__name__}: {exc}")
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_corpus_is_deterministic(name: str) -> None:
    """Each corpus function behaves the same when run twice (no decompiler involved)."""
    module = MODULES[name]
    snapshot = take_snapshot(vars(module))
    for fname, func in corpus.functions_of(module):
        for case in func.__cases__:
            first = run_case(func, case, vars(module), snapshot)
            second = run_case(func, case, vars(module), snapshot)
            diff = first_difference(first, second)
            assert diff is None, (
                f"{name}::{fname} is not deterministic on {case!r} at {diff[0]}: "
                f"{show(diff[1])} then {show(diff[2])}"
            )
            assert first["outcome"][0] != "did not finish", f"{fname} on {case!r} never ends"


def test_corpus_size() -> None:
    """The corpus stays broad: 400+ functions on every supported Python."""
    assert len(FUNCTIONS) >= 400, len(FUNCTIONS)


def test_versioned_modules_are_gated() -> None:
    """Modules named ``vXYY_*`` are only loaded on Python X.YY and later."""
    everything = corpus.module_names(all_versions=True)
    skipped = set(everything) - set(MODULE_NAMES)
    assert all(name.startswith("v") for name in skipped), skipped
