"""Helpers that decompiled code calls where an instruction has no source form of its own.

Structured output never needs them. They appear when the decompiler has to fall back
to a lower-level form: the primitive tests of a ``match`` statement it could not
rebuild, or the exception-group splitting of an ``except*``. Each helper does exactly
what its instruction does (``MATCH_CLASS``, ``MATCH_KEYS``...), in plain Python.
"""

from __future__ import annotations

import collections.abc
from typing import Any

_MISSING = object()
# builtins whose single positional sub-pattern matches the subject itself
_SELF_MATCHING = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def match_sequence(subject: Any) -> bool:
    """``MATCH_SEQUENCE``: could ``subject`` match a sequence pattern?"""
    if isinstance(subject, str | bytes | bytearray):
        return False
    return isinstance(subject, collections.abc.Sequence)


def match_mapping(subject: Any) -> bool:
    """``MATCH_MAPPING``: could ``subject`` match a mapping pattern?"""
    return isinstance(subject, collections.abc.Mapping)


def match_keys(subject: Any, keys: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``MATCH_KEYS``: the values of ``keys`` in ``subject``, or None if one is missing."""
    if len(set(keys)) != len(keys):
        raise ValueError(f"mapping pattern checks duplicate key ({keys!r})")
    values = []
    get = subject.get
    for key in keys:
        value = get(key, _MISSING)
        if value is _MISSING:
            return None
        values.append(value)
    return tuple(values)


def match_class(subject: Any, cls: Any, count: int,
                names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """``MATCH_CLASS``: the attributes a class pattern binds, or None when it fails."""
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    if not isinstance(subject, cls):
        return None
    values: list[Any] = []
    seen: set[str] = set()
    if count:
        match_args = getattr(cls, "__match_args__", _MISSING)
        if match_args is _MISSING:
            if cls in _SELF_MATCHING or any(issubclass(cls, b) and cls.__mro__ and
                                            b in cls.__mro__ for b in _SELF_MATCHING) \
                    and count == 1 and cls.__dict__.get("__match_args__") is None \
                    and _is_builtin_self_match(cls):
                values.append(subject)
                count = 0
            else:
                match_args = ()
        if count:
            if not isinstance(match_args, tuple):
                raise TypeError(f"{cls.__name__}.__match_args__ must be a tuple "
                                f"(got {type(match_args).__name__})")
            if count > len(match_args):
                raise TypeError(f"{cls.__name__}() accepts {len(match_args)} positional "
                                f"sub-pattern{'s' if len(match_args) != 1 else ''} "
                                f"({count} given)")
            for attr in match_args[:count]:
                if not isinstance(attr, str):
                    raise TypeError("__match_args__ elements must be strings")
                seen.add(attr)
                value = getattr(subject, attr, _MISSING)
                if value is _MISSING:
                    return None
                values.append(value)
    for attr in names:
        if attr in seen:
            raise TypeError(f"{cls.__name__}() got multiple sub-patterns for "
                            f"attribute {attr!r}")
        seen.add(attr)
        value = getattr(subject, attr, _MISSING)
        if value is _MISSING:
            return None
        values.append(value)
    return tuple(values)


def _is_builtin_self_match(cls: type) -> bool:
    return any(b in _SELF_MATCHING for b in cls.__mro__)


def dict_without_keys(subject: Any, keys: tuple[Any, ...]) -> dict[Any, Any]:
    """``COPY_DICT_WITHOUT_KEYS`` (3.10): the ``**rest`` of a mapping pattern."""
    rest = dict(subject)
    for key in keys:
        del rest[key]
    return rest


def exception_group_split(exc: BaseException, types: Any) -> tuple[Any, Any]:
    """``CHECK_EG_MATCH``: (rest, match) of an ``except*`` clause."""
    if isinstance(exc, BaseExceptionGroup):  # noqa: F821 - 3.11+
        match, rest = exc.split(types)
        return rest, match
    if isinstance(exc, types):
        group = (ExceptionGroup if isinstance(exc, Exception)  # noqa: F821
                 else BaseExceptionGroup)("", [exc])  # noqa: F821
        return None, group
    return exc, None


def prep_reraise_star(original: BaseException, raised: list[Any]) -> Any:
    """``PREP_RERAISE_STAR``: what an ``except*`` statement re-raises, if anything."""
    excs = [e for e in raised if e is not None]
    if not excs:
        return None
    if len(excs) == 1 and excs[0] is original:
        return original
    kept = [e for e in excs if e is not original]
    if isinstance(original, BaseExceptionGroup):  # noqa: F821
        reraised = [e for e in excs if _is_part(e, original)]
        new = [e for e in excs if not _is_part(e, original)]
        parts: list[Any] = []
        if reraised:
            ids = {id(x) for r in reraised for x in _leaves(r)}
            sub = original.subgroup(lambda e: id(e) in ids)
            if sub is not None:
                parts.append(sub)
        parts.extend(new)
        if len(parts) == 1:
            return parts[0]
        return BaseExceptionGroup("", parts)  # noqa: F821
    if len(kept) == 1:
        return kept[0]
    return BaseExceptionGroup("", kept)  # noqa: F821


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):  # noqa: F821
        return [x for e in exc.exceptions for x in _leaves(e)]
    return [exc]


def _is_part(exc: BaseException, original: BaseException) -> bool:
    ids = {id(x) for x in _leaves(original)}
    return all(id(x) in ids for x in _leaves(exc))
