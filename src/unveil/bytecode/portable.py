"""A code object of any CPython 3.8-3.14, readable from whatever Python runs unveil.

:class:`PortableCode` has the attribute names of :class:`types.CodeType` (``co_code``,
``co_consts``, ``co_varnames``, ...), so code written against ``CodeType`` can read it, but
nothing in it depends on the running interpreter: its bytes are the originating version's own
bytecode, line table and exception table, and :attr:`PortableCode.version` says which version
that is. :mod:`unveil.bytecode.pyc` makes them from ``.pyc`` files and marshalled code.

For 3.11 and later the locals are stored as CPython stores them, ``co_localsplusnames`` and
``co_localspluskinds``; ``co_varnames``, ``co_cellvars``, ``co_freevars`` and ``co_nlocals`` are
derived from those exactly as ``Objects/codeobject.c`` derives them (:func:`split_localsplus`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

#: Bits of a ``co_localspluskinds`` byte (``Include/internal/pycore_code.h``, 3.11+).
CO_FAST_HIDDEN = 0x10  # 3.12+: a name bound only by an inlined comprehension (PEP 709)
CO_FAST_LOCAL = 0x20
CO_FAST_CELL = 0x40
CO_FAST_FREE = 0x80

#: The fields derived from the localsplus pair on 3.11+ code.
_DERIVED = frozenset({"co_varnames", "co_cellvars", "co_freevars", "co_nlocals"})
_LOCALSPLUS = frozenset({"co_localsplusnames", "co_localspluskinds"})


def split_localsplus(names: tuple[str, ...], kinds: bytes
                     ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], int]:
    """``(co_varnames, co_cellvars, co_freevars, co_nlocals)`` of 3.11+ localsplus info.

    As CPython's ``get_localsplus_names``: the names whose kind has the LOCAL, the CELL and the
    FREE bit, each in localsplus order (an argument that is also a cell is in both of the first
    two); ``co_nlocals`` counts the LOCAL ones (hidden comprehension locals included).
    """
    varnames = tuple(n for n, k in zip(names, kinds, strict=True) if k & CO_FAST_LOCAL)
    cellvars = tuple(n for n, k in zip(names, kinds, strict=True) if k & CO_FAST_CELL)
    freevars = tuple(n for n, k in zip(names, kinds, strict=True) if k & CO_FAST_FREE)
    return varnames, cellvars, freevars, len(varnames)


def join_localsplus(varnames: tuple[str, ...], cellvars: tuple[str, ...],
                    freevars: tuple[str, ...]) -> tuple[tuple[str, ...], bytes]:
    """3.11+ ``(co_localsplusnames, co_localspluskinds)`` of separate name tuples.

    As ``code.__new__`` and ``code.replace`` build them: the locals, then the cells that are not
    also locals (a cell that is a local only sets the CELL bit of that local), then the free
    variables. Hidden bits, which those tuples do not carry, are lost, as in CPython.
    """
    names = list(varnames)
    kinds = bytearray([CO_FAST_LOCAL] * len(varnames))
    for name in cellvars:
        if name in varnames:
            kinds[varnames.index(name)] |= CO_FAST_CELL
        else:
            names.append(name)
            kinds.append(CO_FAST_CELL)
    names.extend(freevars)
    kinds.extend([CO_FAST_FREE] * len(freevars))
    return tuple(names), bytes(kinds)


@dataclass(frozen=True)  # (no slots: the listing remembers code objects by weak reference)
class PortableCode:
    """One code object of CPython :attr:`version`, with ``types.CodeType``'s field names.

    ``co_linetable`` is that version's own line table: 3.8/3.9 ``co_lnotab`` bytes (also
    readable as :attr:`co_lnotab`), the 3.10 PEP 626 table, or the 3.11+ PEP 657 location table.
    ``co_qualname`` is ``co_name`` before 3.11, ``co_exceptiontable`` is ``b""`` before 3.11, and
    ``co_localsplusnames``/``co_localspluskinds`` are empty before 3.11. Constants are ints,
    floats, complex numbers, str, bytes, None, True, False, Ellipsis, tuples, frozensets, slices
    (3.14) and nested :class:`PortableCode` objects.

    Make 3.11+ code with :meth:`from_localsplus`, which derives the local-name fields; change
    fields with :meth:`replace`.
    """

    co_argcount: int
    co_posonlyargcount: int
    co_kwonlyargcount: int
    co_nlocals: int
    co_stacksize: int
    co_flags: int
    co_code: bytes
    co_consts: tuple[Any, ...]
    co_names: tuple[str, ...]
    co_varnames: tuple[str, ...]
    co_freevars: tuple[str, ...]
    co_cellvars: tuple[str, ...]
    co_filename: str
    co_name: str
    co_qualname: str
    co_firstlineno: int
    co_linetable: bytes
    co_exceptiontable: bytes
    version: tuple[int, int]
    co_localsplusnames: tuple[str, ...] = ()
    co_localspluskinds: bytes = b""

    @classmethod
    def from_localsplus(cls, *, version: tuple[int, int], co_argcount: int,
                        co_posonlyargcount: int, co_kwonlyargcount: int, co_stacksize: int,
                        co_flags: int, co_code: bytes, co_consts: tuple[Any, ...],
                        co_names: tuple[str, ...], co_localsplusnames: tuple[str, ...],
                        co_localspluskinds: bytes, co_filename: str, co_name: str,
                        co_qualname: str, co_firstlineno: int, co_linetable: bytes,
                        co_exceptiontable: bytes) -> PortableCode:
        """3.11+ code as marshal stores it: the local-name fields derived from localsplus."""
        if len(co_localsplusnames) != len(co_localspluskinds):
            raise ValueError(f"{len(co_localsplusnames)} localsplus names but "
                             f"{len(co_localspluskinds)} kinds")
        varnames, cellvars, freevars, nlocals = split_localsplus(co_localsplusnames,
                                                                 co_localspluskinds)
        return cls(co_argcount=co_argcount, co_posonlyargcount=co_posonlyargcount,
                   co_kwonlyargcount=co_kwonlyargcount, co_nlocals=nlocals,
                   co_stacksize=co_stacksize, co_flags=co_flags, co_code=co_code,
                   co_consts=co_consts, co_names=co_names, co_varnames=varnames,
                   co_freevars=freevars, co_cellvars=cellvars, co_filename=co_filename,
                   co_name=co_name, co_qualname=co_qualname, co_firstlineno=co_firstlineno,
                   co_linetable=co_linetable, co_exceptiontable=co_exceptiontable,
                   version=version, co_localsplusnames=co_localsplusnames,
                   co_localspluskinds=co_localspluskinds)

    @property
    def co_lnotab(self) -> bytes:
        """The 3.8/3.9 line-number table (the same bytes as :attr:`co_linetable`).

        Raises AttributeError for 3.10+ code, whose ``co_linetable`` has another format.
        """
        if self.version >= (3, 10):
            raise AttributeError(f"co_lnotab: {self!r} has a {self._version_text} line table "
                                 "in co_linetable, not an lnotab")
        return self.co_linetable

    @property
    def _version_text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def replace(self, **changes: Any) -> PortableCode:
        """A copy with the given fields changed, like ``CodeType.replace``.

        On 3.11+ code, changing ``co_localsplusnames``/``co_localspluskinds`` re-derives the
        local-name fields; changing ``co_varnames``, ``co_cellvars`` or ``co_freevars`` rebuilds
        the localsplus pair from them (:func:`join_localsplus`), as CPython does; ``co_nlocals``
        is then derived and may only be given with its derived value.
        Unknown field names raise TypeError.
        """
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"replace() got unexpected field(s): {', '.join(sorted(unknown))}")
        version = changes.get("version", self.version)
        if version >= (3, 11):
            nlocals = changes.pop("co_nlocals", None)
            if _LOCALSPLUS & changes.keys():
                if _DERIVED & changes.keys():
                    raise ValueError("give the localsplus fields or the local-name fields, "
                                     "not both")
                names = changes.get("co_localsplusnames", self.co_localsplusnames)
                kinds = changes.get("co_localspluskinds", self.co_localspluskinds)
            elif _DERIVED & changes.keys():
                names, kinds = join_localsplus(changes.get("co_varnames", self.co_varnames),
                                               changes.get("co_cellvars", self.co_cellvars),
                                               changes.get("co_freevars", self.co_freevars))
            else:
                names, kinds = self.co_localsplusnames, self.co_localspluskinds
            if len(names) != len(kinds):
                raise ValueError(f"{len(names)} localsplus names but {len(kinds)} kinds")
            varnames, cellvars, freevars, derived = split_localsplus(names, kinds)
            if nlocals is not None and nlocals != derived:
                raise ValueError(f"co_nlocals={nlocals} but the code has {derived} locals")
            changes.update(co_localsplusnames=names, co_localspluskinds=kinds,
                           co_varnames=varnames, co_cellvars=cellvars, co_freevars=freevars,
                           co_nlocals=derived)
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (f'<code object {self.co_name}, file "{self.co_filename}", '
                f"line {self.co_firstlineno} ({self._version_text})>")
