"""The lowered form is correct on its own: every corpus function forced through the
``while True:`` state machine (the fallback for control flow with no structured form)
behaves like the original, as :func:`check_function` sees it."""

from __future__ import annotations

import dis
import sys
from types import FunctionType

import pytest

from unveil.decompiler import structure

from .harness import check_function
from .test_corpus import FUNCTIONS

#: Corpus functions whose lowered form is not faithful yet, and why.
_ASYNC_FOR = ("async for, lowered: the awaited next item is read outside its state's try, "
              "so StopAsyncIteration escapes")
_CONTEXT = ("lowered handlers raise from their own except clause: the exception's "
            "__context__ differs")
KNOWN_GAPS: dict[str, str] = {
    "async_code::async_for_loop": _ASYNC_FOR,
    "async_code::async_for_with_try": _ASYNC_FOR,
    "async_code::consume_async_generator": _ASYNC_FOR,
    "exceptions::reraise_with_context": _CONTEXT,
    "v311_except_star::except_star_body_raises_into_group": _CONTEXT,
    "statements::locals_and_vars": "the state machine's variables are locals that "
                                   "locals() and vars() see",
    "assignments::augmented_slices": "an augmented slice assignment lowers to invalid syntax",
}
_INLINED = ("3.12+ inlined comprehensions are not rebuilt inside the lowered form "
            "(DecompilationError, not wrong code)")


def _inlines_comprehension(func: FunctionType) -> bool:
    return sys.version_info >= (3, 12) and any(
        i.opname == "LOAD_FAST_AND_CLEAR" for i in dis.get_instructions(func.__code__))


def _params() -> list[object]:
    out = []
    for param in FUNCTIONS:
        func, title = param.values
        if func.__code__.co_name == "<lambda>":
            continue  # a lambda's body is one expression: it has no lowered form
        key = title.split(".")[-1]  # module::function
        marks = list(param.marks)
        if key in KNOWN_GAPS:
            marks.append(pytest.mark.xfail(reason=KNOWN_GAPS[key], strict=False))
        elif _inlines_comprehension(func):
            marks.append(pytest.mark.xfail(reason=_INLINED, strict=True))
        out.append(pytest.param(func, title, marks=marks, id=param.id))
    return out


@pytest.mark.parametrize(("func", "title"), _params())
def test_forced_fallback(func: FunctionType, title: str,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    original = structure.Structurer.run

    def run(self: structure.Structurer) -> object:
        if self.g.cfg.bc.code is func.__code__:
            raise structure.Unstructurable("forced by the test")
        return original(self)

    monkeypatch.setattr(structure.Structurer, "run", run)
    check_function(func, title=f"{title} (forced fallback)")
