"""unveil.runtime helpers behave like the instructions they stand for."""
# pyodide-compatible

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from unveil import runtime


class Manager:
    def __init__(self) -> None:
        self.log: list[Any] = []

    def __enter__(self) -> str:
        self.log.append("enter")
        return "value"

    def __exit__(self, *exc: Any) -> bool:
        self.log.append(("exit", exc[0]))
        return True


class OnlyEnter:
    def __enter__(self) -> None:
        return None


class OnlyExit:
    def __exit__(self, *exc: Any) -> None:
        return None


def real_with(mgr: Any) -> tuple[str, str]:
    try:
        with mgr:
            pass
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc).__name__, str(exc)
    return "ok", ""


def helper_with(mgr: Any) -> tuple[str, str]:
    try:
        exit_, enter = runtime.with_methods(mgr)
        runtime.bind(enter, mgr)()
        runtime.bind(exit_, mgr)(None, None, None)
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc).__name__, str(exc)
    return "ok", ""


@pytest.mark.parametrize("mgr", [Manager(), OnlyEnter(), OnlyExit(), 3, None],
                         ids=["manager", "only-enter", "only-exit", "int", "none"])
def test_with_methods_fails_like_the_interpreter(mgr: Any) -> None:
    assert helper_with(mgr) == real_with(mgr)


def test_with_methods_binds_and_calls_in_order() -> None:
    m = Manager()
    exit_, enter = runtime.with_methods(m)
    assert runtime.bind(enter, m)() == "value"
    assert runtime.bind(exit_, m)(ValueError, ValueError(), None) is True
    assert m.log == ["enter", ("exit", ValueError)]


@pytest.mark.skipif(sys.platform == "emscripten", reason="no event loop in Pyodide under Node")
def test_async_with_methods() -> None:
    class AsyncManager:
        async def __aenter__(self) -> int:
            return 1

        async def __aexit__(self, *exc: Any) -> None:
            return None

    mgr = AsyncManager()
    exit_, enter = runtime.with_methods(mgr, True)
    assert asyncio.run(runtime.bind(enter, mgr)()) == 1
    with pytest.raises((TypeError, AttributeError)):
        runtime.with_methods(Manager(), True)
