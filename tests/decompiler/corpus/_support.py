"""Helpers the corpus modules use to attach inputs to their functions.

Every corpus function carries the inputs it is run on::

    @cases((1, 2), (0, 0), kw(1, b=3), kw(5).sending(1, 2))
    def f(a, b=2): ...

An entry is a :class:`Case`, a tuple of positional arguments, or any other single
value (taken as the only positional argument). Classes are exercised through
functions of their module: ``@exercised_by("use_stack")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Case:
    """One call: positional and keyword arguments, and values sent into a generator."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    sends: tuple[Any, ...] | None = None

    def sending(self, *values: Any) -> Case:
        """Drive the returned generator with ``send(value)`` for each value."""
        return Case(self.args, self.kwargs, tuple(values))

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        text = f"kw({', '.join(parts)})"
        if self.sends is not None:
            text += f".sending({', '.join(map(repr, self.sends))})"
        return text


def kw(*args: Any, **kwargs: Any) -> Case:
    """A call with keyword arguments: ``kw(1, 2, key=3)``."""
    return Case(tuple(args), dict(kwargs))


def as_case(entry: Any) -> Case:
    """Turn one ``@cases`` entry into a :class:`Case`."""
    if isinstance(entry, Case):
        return entry
    if type(entry) is tuple:
        return Case(entry)
    return Case((entry,))


def cases(*entries: Any) -> Callable[[T], T]:
    """Attach inputs to a function (or lambda); returns it unchanged."""
    normalized = [as_case(e) for e in entries]
    if not normalized:
        normalized = [Case()]

    def attach(func: T) -> T:
        func.__cases__ = normalized  # type: ignore[attr-defined]
        return func

    return attach


def exercised_by(*driver_names: str) -> Callable[[T], T]:
    """Mark a module-level class as checked by running the named corpus functions."""

    def attach(cls: T) -> T:
        cls.__exercised_by__ = tuple(driver_names)  # type: ignore[attr-defined]
        return cls

    return attach
