"""Facts about code objects that every layer reads: the flags, and the kinds of code the
compiler names by their ``co_name`` (comprehensions, lambdas, the module).

It imports nothing from unveil, so the lowest layer (``unveil.bytecode``) can use it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import CodeType
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

if TYPE_CHECKING:  # (3.8/3.9's typing has neither; the file's own Python imports this)
    from typing import TypeAlias, TypeGuard

#: the version of the running interpreter, (major, minor)
HOST_VERSION: tuple[int, int] = (sys.version_info[0], sys.version_info[1])


class CodeFlag:
    """``co_flags`` bits (``inspect.CO_*``, plus the ones newer Pythons added). Plain
    ints, not an ``IntFlag``: ``co_flags & CodeFlag.X`` then stays one operation in C
    (an ``IntFlag`` on the right runs its own ``__rand__`` in Python, on a hot path)."""

    OPTIMIZED: Final = 0x1
    NEWLOCALS: Final = 0x2
    VARARGS: Final = 0x4
    VARKEYWORDS: Final = 0x8
    NESTED: Final = 0x10
    GENERATOR: Final = 0x20
    NOFREE: Final = 0x40
    COROUTINE: Final = 0x80
    ITERABLE_COROUTINE: Final = 0x100
    ASYNC_GENERATOR: Final = 0x200
    FUTURE_ANNOTATIONS: Final = 0x1000000  # ``from __future__ import annotations``
    HAS_DOCSTRING: Final = 0x4000000  # 3.14: the first constant is the docstring
    METHOD: Final = 0x8000000  # 3.14: a function defined directly in a class body


#: the code objects of comprehensions, by ``co_name``, and what each builds
COMPREHENSIONS = {"<listcomp>": "list", "<setcomp>": "set", "<dictcomp>": "dict",
                  "<genexpr>": "gen"}

#: the ``co_name`` of a PEP 695 type-parameter scope starts so (3.12+)
GENERIC_PREFIX = "<generic parameters of "


#: what a code object is the body of (:func:`code_kind`)
CodeKind: TypeAlias = Literal["module", "lambda", "genexpr", "comprehension", "generic", "class",
                              "function"]


def code_kind(code: CodeType) -> CodeKind:
    """``module``, ``lambda``, ``genexpr``, ``comprehension`` (list, set, dict),
    ``generic`` (a PEP 695 type-parameter scope), ``class`` (a class body) or
    ``function``."""
    name = code.co_name
    if name == "<module>":
        return "module"
    if name == "<lambda>":
        return "lambda"
    if name == "<genexpr>":
        return "genexpr"
    if name in COMPREHENSIONS:
        return "comprehension"
    if name.startswith(GENERIC_PREFIX):
        return "generic"
    if not code.co_flags & CodeFlag.NEWLOCALS:
        return "class"
    return "function"


def is_code(value: object) -> TypeGuard[CodeType]:
    """Is ``value`` a code object: a live one, or one read from a file of any version
    (:class:`unveil.bytecode.portable.PortableCode`: the ``co_*`` fields and a
    ``version``), which everything above ``bytecode/`` reads as it reads a live one?"""
    return isinstance(value, CodeType) or (hasattr(value, "co_code")
                                           and isinstance(getattr(value, "version", None), tuple))


def code_version(code: CodeType) -> tuple[int, int]:
    """The CPython version whose compiler made ``code``: a code object read from another
    version's file says so (its ``version``); a live one is the running interpreter's."""
    version: tuple[int, int] | None = getattr(code, "version", None)
    return version if version is not None else HOST_VERSION


class CodeEntry(NamedTuple):
    """A code object and its qualified name (``<module>`` for the module itself)."""

    qualname: str
    code: CodeType


def iter_code_objects(code: CodeType, qualname: str | None = None) -> Iterator[CodeEntry]:
    """Yield ``code`` and every code object nested in it, depth first, in constant order."""
    if qualname is None:
        qualname = getattr(code, "co_qualname", code.co_name)
    yield CodeEntry(qualname, code)
    kind = code_kind(code)
    for const in code.co_consts:
        if not is_code(const):
            continue
        child = getattr(const, "co_qualname", None)
        if child is None:  # 3.10: rebuild __qualname__ the way the compiler does
            if kind == "module":
                child = const.co_name
            elif kind == "class":
                child = f"{qualname}.{const.co_name}"
            else:
                child = f"{qualname}.<locals>.{const.co_name}"
        yield from iter_code_objects(const, child)
