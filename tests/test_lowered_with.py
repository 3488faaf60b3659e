"""The state machine's own ``with`` set-up (plain Python, no helper) behaves like the
interpreter's: the look-up order, the errors, binding and calling."""
# pyodide-compatible

from __future__ import annotations

import asyncio
import sys
import types
from typing import Any

import pytest

import unveil


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


def _lowered(func: Any) -> Any:
    """``func`` as the state machine writes it (``with`` set up without any helper)."""
    code = unveil.recompile(func.__code__, force_fallback=True)
    return types.FunctionType(code, func.__globals__, func.__name__)


@pytest.mark.parametrize("mgr", [Manager(), OnlyEnter(), OnlyExit(), 3, None],
                         ids=["manager", "only-enter", "only-exit", "int", "none"])
def test_lowered_with_fails_like_the_interpreter(mgr: Any) -> None:
    assert _lowered(real_with)(mgr) == real_with(mgr)


def test_lowered_with_binds_and_calls_in_order() -> None:
    m = Manager()

    def use(mgr: Any) -> Any:
        with mgr as value:
            raise ValueError(value)

    assert _lowered(use)(m) is None
    assert m.log == ["enter", ("exit", ValueError)]
    assert "__import__" not in unveil.decompile(use, force_fallback=True)


async def real_async_with(mgr: Any) -> tuple[str, Any]:
    try:
        async with mgr as value:
            return "ok", value
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc).__name__, str(exc)


@pytest.mark.skipif(sys.platform == "emscripten", reason="no event loop in Pyodide under Node")
def test_lowered_async_with() -> None:
    class AsyncManager:
        async def __aenter__(self) -> int:
            return 1

        async def __aexit__(self, *exc: Any) -> None:
            return None

    lowered = _lowered(real_async_with)
    for mgr in (AsyncManager(), Manager(), 3):
        assert asyncio.run(lowered(mgr)) == asyncio.run(real_async_with(mgr))
