"""unveil.bytecode.instructions: listing code without running its constants' code."""
# pyodide-compatible

from __future__ import annotations

import dis
import gc
import weakref

from unveil.bytecode import instructions


class _Opaque:
    """A constant whose repr must not be taken (a tensor's costs, a config dict's runs code)."""

    def __repr__(self) -> str:
        raise AssertionError("repr of a constant was taken")


def _code_with(constant: object) -> object:
    def f() -> object:
        return "MARK"

    return f.__code__.replace(co_consts=tuple(constant if c == "MARK" else c
                                              for c in f.__code__.co_consts))


def test_listing_matches_dis_but_for_object_constants() -> None:
    opaque = _Opaque()
    code = _code_with(opaque)
    listed = instructions(code)  # type: ignore[arg-type]
    plain = _code_with("MARK")
    expected = list(dis.get_instructions(plain))  # type: ignore[arg-type]
    assert [(i.opname, i.offset) for i in listed] == [(i.opname, i.offset) for i in expected]
    assert any(i.argval is opaque for i in listed)
    assert instructions(code) == listed  # type: ignore[arg-type]  (remembered: the same)


def test_remembered_listing_does_not_keep_constants_alive() -> None:
    opaque = _Opaque()
    alive = weakref.ref(opaque)
    code = _code_with(opaque)
    instructions(code)  # type: ignore[arg-type]
    del opaque, code
    gc.collect()
    assert alive() is None
