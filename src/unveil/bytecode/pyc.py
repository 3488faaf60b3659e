"""Reading ``.pyc`` files and marshalled code of CPython 3.8-3.14, from any Python.

Nothing here but :func:`load_pyc` uses the running interpreter's :mod:`marshal`; code
objects come back as :class:`~unveil.bytecode.portable.PortableCode` (:func:`load_pyc`: a live
code object for a file of the running version). What is read:

- the ``.pyc`` header of PEP 552 (:class:`PycHeader`): the magic number, which names the CPython
  version (:data:`MAGIC_NUMBERS`), the flags, and the source mtime and size or the source hash;
- the marshal format, versions 0-5 as CPython 3.8-3.14 reads them (:func:`loads`): None, True,
  False, Ellipsis, StopIteration, ints (32-bit, 64-bit and 15-bit-digit longs), binary and text
  floats and complex numbers, bytes, str (UTF-8, ASCII, short ASCII, interned or not), tuples,
  lists, dicts, sets, frozensets, slices (3.14, marshal version 5), code objects (the 3.8-3.10
  field order and the 3.11+ one) and back-references (FLAG_REF), with the reference table kept
  as ``Python/marshal.c``'s ``r_object`` keeps it.

Every truncated or corrupt input raises :class:`~unveil.errors.BadInputError`, one sentence
naming the input and the byte offset.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any, NoReturn

from ..errors import BadInputError
from .portable import PortableCode

#: Magic number -> (major, minor), from the magic-number history of
#: ``Lib/importlib/_bootstrap_external.py`` (3.8-3.13) and
#: ``Include/internal/pycore_magic_number.h`` (3.14). Every number a version's alphas, betas and
#: release candidates used is accepted as that version (their code is read with the final
#: release's layout, so early-alpha files may not read); :data:`FINAL_MAGIC` has the releases'.
MAGIC_NUMBERS: dict[int, tuple[int, int]] = {
    **dict.fromkeys((3400, 3401, 3410, 3411, 3412, 3413), (3, 8)),
    **dict.fromkeys(range(3420, 3426), (3, 9)),
    **dict.fromkeys(range(3430, 3440), (3, 10)),
    **dict.fromkeys(range(3450, 3496), (3, 11)),
    **dict.fromkeys(range(3500, 3532), (3, 12)),
    **dict.fromkeys(range(3550, 3572), (3, 13)),
    **dict.fromkeys(range(3600, 3628), (3, 14)),
}

#: The magic number of each final release (3.8.0 ... 3.14.x).
FINAL_MAGIC: dict[tuple[int, int], int] = {
    (3, 8): 3413, (3, 9): 3425, (3, 10): 3439, (3, 11): 3495, (3, 12): 3531, (3, 13): 3571,
    (3, 14): 3627,
}

SUPPORTED_VERSIONS = tuple(FINAL_MAGIC)

HEADER_SIZE = 16
FLAG_HASH_BASED = 0b01
FLAG_CHECK_SOURCE = 0b10

FLAG_REF = 0x80


@dataclass(frozen=True, slots=True)
class PycHeader:
    """The 16-byte header of a ``.pyc`` file (PEP 552).

    A timestamp-based pyc has ``mtime`` and ``source_size`` (each the low 32 bits); a hash-based
    one has the 8-byte ``source_hash`` instead.
    """

    version: tuple[int, int]
    magic: int
    flags: int
    mtime: int | None
    source_size: int | None
    source_hash: bytes | None

    @property
    def hash_based(self) -> bool:
        """Whether the pyc is validated by a hash of its source rather than its mtime."""
        return bool(self.flags & FLAG_HASH_BASED)

    @property
    def check_source(self) -> bool:
        """Whether a hash-based pyc asks the importer to check the hash (CHECKED_HASH)."""
        return bool(self.flags & FLAG_CHECK_SOURCE)


#: Magic numbers of the CPython versions whose files unveil does not read, to name them
#: (each range a version's, its pre-releases included).
OTHER_MAGIC_RANGES: tuple[tuple[int, int, str], ...] = (
    (3000, 3131, "3.0"), (3141, 3151, "3.1"), (3160, 3180, "3.2"), (3190, 3230, "3.3"),
    (3250, 3310, "3.4"), (3320, 3351, "3.5"), (3360, 3379, "3.6"), (3390, 3399, "3.7"),
    (3650, 3699, "3.15"), (20121, 62161, "2.6 or older"), (62171, 62211, "2.7"),
)


def python_of_magic(magic: int) -> str | None:
    """The CPython version (``"3.12"``, ``"2.7"``...) whose files start with ``magic``;
    None for a number no version used (another implementation, a modified file)."""
    version = MAGIC_NUMBERS.get(magic)
    if version is not None:
        return f"{version[0]}.{version[1]}"
    return next((name for low, high, name in OTHER_MAGIC_RANGES if low <= magic <= high), None)


def version_of_magic(magic: int, name: str = "<pyc>") -> tuple[int, int]:
    """The CPython version of a pyc magic number, or BadInputError naming it."""
    try:
        return MAGIC_NUMBERS[magic]
    except KeyError:
        other = python_of_magic(magic)
        if other is not None:
            raise BadInputError(f"{name}: magic number {magic} is CPython {other}'s; unveil "
                                "reads the bytecode of CPython 3.8-3.14") from None
        raise BadInputError(
            f"{name}: magic number {magic} is no known CPython 3.8-3.14 version "
            "(an older or newer CPython, a pre-release outside those, or another "
            "implementation such as PyPy)") from None


def read_header(data: bytes, name: str = "<pyc>") -> PycHeader:
    """The :class:`PycHeader` at the start of ``data``."""
    if len(data) < 4:
        raise BadInputError(f"{name}: truncated at byte {len(data)} (reading the pyc magic "
                            "number, 4 bytes at byte 0)")
    magic = int.from_bytes(data[:2], "little")
    if data[2:4] != b"\r\n":
        raise BadInputError(f"{name}: not a pyc file (its first 4 bytes, {data[:4]!r}, are not "
                            "a magic number followed by \\r\\n)")
    version = version_of_magic(magic, name)
    if len(data) < HEADER_SIZE:
        raise BadInputError(f"{name}: truncated at byte {len(data)} (reading the "
                            f"{HEADER_SIZE}-byte pyc header)")
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~(FLAG_HASH_BASED | FLAG_CHECK_SOURCE):
        raise BadInputError(f"{name}: invalid pyc flags {flags:#x} at byte 4")
    if flags & FLAG_HASH_BASED:
        return PycHeader(version, magic, flags, None, None, bytes(data[8:16]))
    return PycHeader(version, magic, flags, int.from_bytes(data[8:12], "little"),
                     int.from_bytes(data[12:16], "little"), None)


def read_pyc(data: bytes, name: str = "<pyc>") -> tuple[PycHeader, PortableCode]:
    """The header and the module code object of a ``.pyc`` file's bytes.

    Byte offsets in error messages count from the start of the file.
    """
    header = read_header(data, name)
    code = _Reader(data, header.version, name, HEADER_SIZE).top()
    if not isinstance(code, PortableCode):
        raise BadInputError(f"{name}: holds a {type(code).__name__} after its header, not a "
                            "code object")
    return header, code


def loads(data: bytes, version: tuple[int, int], *, name: str = "<marshal>") -> object:
    """One object of marshal data written by CPython ``version`` (3.8-3.14).

    Like ``marshal.loads``: bytes after the object are ignored; code objects are
    :class:`PortableCode`.
    """
    return _Reader(data, version, name, 0).top()


def _check_version(version: tuple[int, int]) -> tuple[int, int]:
    if tuple(version) not in FINAL_MAGIC:
        raise ValueError(f"unsupported CPython version {version}: unveil reads 3.8-3.14 marshal")
    return (version[0], version[1])


_NULL: Any = object()  # TYPE_NULL: ends a dict; anywhere else an error
_RESERVED: Any = object()  # a ref slot reserved for an object still being read
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_C128 = struct.Struct("<dd")
_SINGLETONS: dict[int, Any] = {ord("N"): None, ord("T"): True, ord("F"): False,
                               ord("."): Ellipsis, ord("S"): StopIteration}

_CODE_INTS_38 = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
                 "co_stacksize", "co_flags")
_CODE_INTS_311 = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_stacksize",
                  "co_flags")
_CODE_FIELDS_38 = ("co_code", "co_consts", "co_names", "co_varnames", "co_freevars",
                   "co_cellvars", "co_filename", "co_name")
_CODE_FIELDS_311 = ("co_code", "co_consts", "co_names", "co_localsplusnames",
                    "co_localspluskinds", "co_filename", "co_name", "co_qualname")
_FIELD_TYPES: dict[str, type] = {
    "co_code": bytes, "co_consts": tuple, "co_names": tuple, "co_varnames": tuple,
    "co_freevars": tuple, "co_cellvars": tuple, "co_localsplusnames": tuple,
    "co_localspluskinds": bytes, "co_filename": str, "co_name": str, "co_qualname": str,
    "co_linetable": bytes, "co_exceptiontable": bytes,
}
_NAME_TUPLES = frozenset({"co_names", "co_varnames", "co_freevars", "co_cellvars",
                          "co_localsplusnames"})


class _Reader:
    """One pass of ``r_object`` over ``data`` from ``pos``, with its reference list."""

    def __init__(self, data: bytes, version: tuple[int, int], name: str, pos: int) -> None:
        self.data = bytes(data)
        self.version = _check_version(version)
        self.name = name
        self.pos = pos
        self.refs: list[Any] = []
        self.slices = self.version >= (3, 14)
        #: (field, byte) of the code-object field being read, for error messages
        self.where: tuple[str, int] | None = None

    def top(self) -> object:
        try:
            return self.obj("the marshalled object")
        except RecursionError:
            raise BadInputError(f"{self.name}: bad marshal data: nested too deeply to read "
                                f"(near byte {self.pos})") from None

    # -- errors ---------------------------------------------------------------------------

    def _context(self) -> str:
        if self.where is None:
            return ""
        return f", in the {self.where[0]} of the code object at byte {self.where[1]}"

    def truncated(self, what: str, start: int) -> BadInputError:
        return BadInputError(f"{self.name}: truncated at byte {len(self.data)} (reading {what} "
                             f"at byte {start}{self._context()})")

    def bad(self, at: int, problem: str) -> NoReturn:
        raise BadInputError(f"{self.name}: bad marshal data at byte {at}: {problem}"
                            f"{self._context()}")

    # -- primitive reads ------------------------------------------------------------------

    def take(self, n: int, what: str) -> bytes:
        pos = self.pos
        end = pos + n
        if end > len(self.data):
            raise self.truncated(what, pos)
        self.pos = end
        return self.data[pos:end]

    def byte(self, what: str) -> int:
        pos = self.pos
        if pos >= len(self.data):
            raise self.truncated(what, pos)
        self.pos = pos + 1
        return self.data[pos]

    def int32(self, what: str) -> int:
        pos = self.pos
        if pos + 4 > len(self.data):
            raise self.truncated(what, pos)
        self.pos = pos + 4
        return int(_I32.unpack_from(self.data, pos)[0])

    def size(self, what: str) -> int:
        pos = self.pos
        if pos + 4 > len(self.data):
            raise self.truncated(f"the size of {what}", pos)
        self.pos = pos + 4
        n = int(_I32.unpack_from(self.data, pos)[0])
        if n < 0:
            self.bad(pos, f"{what} of negative size {n}")
        return n

    def text_float(self, what: str) -> float:
        at = self.pos
        raw = self.take(self.byte(what), what)
        try:
            return float(raw.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            self.bad(at, f"{raw!r} is not a float ({what})")

    # -- objects --------------------------------------------------------------------------

    def obj(self, what: str, null: bool = False) -> Any:
        """``r_object``: the next object (``what``, for messages); _NULL only if ``null``."""
        data = self.data
        start = pos = self.pos
        if pos >= len(data):
            raise self.truncated(what, pos)
        code = data[pos]
        self.pos = pos = pos + 1
        flag = code & FLAG_REF
        t = code & 0x7F
        value: Any
        if t == 0x72:  # 'r' ref
            n = self.int32("a reference")
            refs = self.refs
            if n < 0 or n >= len(refs) or refs[n] is _RESERVED:
                self.bad(start, f"invalid reference {n} ({len(refs)} objects so far)")
            return refs[n]
        if t == 0x7A or t == 0x5A:  # 'z' 'Z' short ascii
            if pos >= len(data):
                raise self.truncated(what, start)
            end = pos + 1 + data[pos]
            if end > len(data):
                raise self.truncated(what, start)
            value = data[pos + 1:end].decode("latin-1")
            self.pos = end
        elif t in _SINGLETONS:
            return _SINGLETONS[t]
        elif t == 0x29 or t == 0x28:  # ')' '(' tuple
            n = self.byte("a tuple") if t == 0x29 else self.size("a tuple")
            obj = self.obj
            if not flag:
                return tuple([obj("a tuple item") for _ in range(n)])
            idx = len(self.refs)
            self.refs.append(_RESERVED)
            value = self.refs[idx] = tuple([obj("a tuple item") for _ in range(n)])
            return value
        elif t == 0x69:  # 'i'
            value = self.int32(what)
        elif t == 0x63:  # 'c'
            if not flag:
                return self.code(start)
            idx = len(self.refs)
            self.refs.append(_RESERVED)
            value = self.refs[idx] = self.code(start)
            return value
        elif t == 0x30:  # '0' NULL
            if null:
                return _NULL
            self.bad(start, f"a NULL object where {what} should be")
        else:
            handler = _HANDLERS.get(t)
            if handler is None or (t == 0x3A and not self.slices):
                self.bad(start, f"unknown type code {bytes([code])!r} ({code:#04x}) "
                         f"for CPython {self.version[0]}.{self.version[1]}")
            value = handler(self, what, start, flag)
            if t in _SELF_REFERENCING:
                return value
        if flag:
            self.refs.append(value)
        return value

    def code(self, start: int) -> PortableCode:
        """The fields of a code object whose type byte is at ``start``, then the object."""
        outer = self.where
        late = self.version >= (3, 11)
        ints = _CODE_INTS_311 if late else _CODE_INTS_38
        fields: dict[str, Any] = {}
        for f in ints:
            self.where = (f, start)
            fields[f] = self.int32("an int")
        for f in _CODE_FIELDS_311 if late else _CODE_FIELDS_38:
            fields[f] = self.field(f, start)
        self.where = ("co_firstlineno", start)
        fields["co_firstlineno"] = self.int32("an int")
        fields["co_linetable"] = self.field("co_linetable", start)
        if late:
            fields["co_exceptiontable"] = self.field("co_exceptiontable", start)
        self.where = outer
        for f in ints:
            if fields[f] < 0 and f != "co_flags":
                self.bad(start, f"a code object with {f}={fields[f]}")
        if fields["co_posonlyargcount"] > fields["co_argcount"]:
            self.bad(start, "a code object with more positional-only arguments than "
                     "positional ones")
        if late:
            if len(fields["co_localsplusnames"]) != len(fields["co_localspluskinds"]):
                self.bad(start, "a code object whose co_localsplusnames and "
                         "co_localspluskinds differ in length")
            return PortableCode.from_localsplus(version=self.version, **fields)
        fields["co_qualname"] = fields["co_name"]
        return PortableCode(co_exceptiontable=b"", version=self.version, **fields)

    def field(self, f: str, start: int) -> Any:
        """A code object's object field ``f``, checked to have the type CPython requires."""
        self.where = (f, start)
        at = self.pos
        value = self.obj("the field")
        kind = _FIELD_TYPES[f]
        names = f in _NAME_TUPLES
        wrong = type(value) is not kind
        if not wrong and names:
            wrong = not all(type(n) is str for n in value)
        if wrong:
            self.bad(at, f"a {type(value).__name__} where a "
                     f"{kind.__name__}{' of str' if names else ''} should be")
        return value


# -- the less frequent types (each returns the value; FLAG_REF handled by obj) -------------

def _int64(r: _Reader, what: str, start: int, flag: int) -> int:
    return int(_I64.unpack(r.take(8, "a 64-bit int"))[0])


def _long(r: _Reader, what: str, start: int, flag: int) -> int:
    n = r.int32("the size of an int")
    if n == 0:
        return 0
    count = abs(n)
    raw = r.take(2 * count, f"the {count} digits of an int")
    digits = struct.unpack(f"<{count}h", raw)
    if min(digits) < 0:
        r.bad(start, "a digit out of range in an int")
    if digits[-1] == 0:
        r.bad(start, "unnormalized int data")
    value = 0
    for d in reversed(digits):
        value = (value << 15) | d
    return -value if n < 0 else value


def _float(r: _Reader, what: str, start: int, flag: int) -> float:
    return float(_F64.unpack(r.take(8, "a float"))[0])


def _complex(r: _Reader, what: str, start: int, flag: int) -> complex:
    real, imag = _C128.unpack(r.take(16, "a complex"))
    return complex(real, imag)


def _text_float(r: _Reader, what: str, start: int, flag: int) -> float:
    return r.text_float("a float")


def _text_complex(r: _Reader, what: str, start: int, flag: int) -> complex:
    real = r.text_float("a complex")
    return complex(real, r.text_float("a complex"))


def _bytes(r: _Reader, what: str, start: int, flag: int) -> bytes:
    return r.take(r.size("a bytes object"), "a bytes object")


def _ascii(r: _Reader, what: str, start: int, flag: int) -> str:
    return r.take(r.size("a str"), "a str").decode("latin-1")


def _unicode(r: _Reader, what: str, start: int, flag: int) -> str:
    raw = r.take(r.size("a str"), "a str")
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        r.bad(start, f"a str that is not UTF-8 ({exc.reason} at its byte {exc.start})")


def _list(r: _Reader, what: str, start: int, flag: int) -> list[Any]:
    n = r.size("a list")
    value: list[Any] = []
    if flag:
        r.refs.append(value)
    for _ in range(n):
        value.append(r.obj("a list item"))
    return value


def _dict(r: _Reader, what: str, start: int, flag: int) -> dict[Any, Any]:
    value: dict[Any, Any] = {}
    if flag:
        r.refs.append(value)
    while True:
        at = r.pos
        key = r.obj("a dict key", True)
        if key is _NULL:
            return value
        item = r.obj("a dict value", True)
        if item is _NULL:
            return value
        try:
            value[key] = item
        except TypeError:
            r.bad(at, f"an unhashable {type(key).__name__} as a dict key")


def _set(r: _Reader, what: str, start: int, flag: int) -> set[Any] | frozenset[Any]:
    frozen = r.data[start] & ~FLAG_REF == 0x3E
    n = r.size("a set")
    idx = len(r.refs)
    value: set[Any] = set()
    if flag:
        r.refs.append(_RESERVED if frozen and n else value)
    for _ in range(n):
        at = r.pos
        item = r.obj("a set item")
        try:
            value.add(item)
        except TypeError:
            r.bad(at, f"an unhashable {type(item).__name__} in a set")
    if not frozen:
        return value
    result = frozenset(value)
    if flag:
        r.refs[idx] = result
    return result


def _slice(r: _Reader, what: str, start: int, flag: int) -> slice:
    idx = len(r.refs)
    if flag:
        r.refs.append(_RESERVED)
    parts = [r.obj("a slice part") for _ in range(3)]
    value = slice(*parts)
    if flag:
        r.refs[idx] = value
    return value


_HANDLERS: dict[int, Callable[[_Reader, str, int, int], Any]] = {
    ord("I"): _int64, ord("l"): _long, ord("g"): _float, ord("y"): _complex,
    ord("f"): _text_float, ord("x"): _text_complex, ord("s"): _bytes, ord("a"): _ascii,
    ord("A"): _ascii, ord("u"): _unicode, ord("t"): _unicode, ord("["): _list,
    ord("{"): _dict, ord("<"): _set, ord(">"): _set, ord(":"): _slice,
}
#: The types whose handler registers the object in the reference list itself.
_SELF_REFERENCING = frozenset({ord("["), ord("{"), ord("<"), ord(">"), ord(":")})


def load_pyc(path: str | os.PathLike[str]) -> CodeType:
    """Read a .pyc: of the running Python version with its marshal, of another version
    unveil reads (:func:`unveil.bytecode.readable`) with ``unveil.bytecode.pyc``;
    BadInputError (one sentence) otherwise. The header's checks are
    :func:`unveil.bytecode.pyc.read_header`'s."""
    from .instructions import readable

    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadInputError(f"cannot read {name}: {exc.strerror or exc}") from None
    header = read_header(data, name)
    here = "{}.{}".format(*sys.version_info[:2])
    if data[:4] != importlib.util.MAGIC_NUMBER:
        version = f"{header.version[0]}.{header.version[1]}"
        if version == here:
            raise BadInputError(
                f"{name} was compiled by another build of Python {here} (magic "
                f"{header.magic}) but this Python {here} uses magic "
                f"{int.from_bytes(importlib.util.MAGIC_NUMBER[:2], 'little')}; recompile it "
                f"with this Python")
        if not readable(header.version):
            reads = [f"3.{m}" for m in range(20) if readable((3, m))]
            raise BadInputError(
                f"{name} was compiled by Python {version} (magic {header.magic}) but this is "
                f"Python {here}, and unveil only reads bytecode of Python {reads[0]} to "
                f"{reads[-1]}")
        return read_pyc(data, name)[1]  # type: ignore[return-value]  # a code read from a file
    try:
        code = marshal.loads(data[HEADER_SIZE:])
    except (EOFError, ValueError, TypeError):
        read_pyc(data, name)  # (names where the marshal data is bad)
        raise BadInputError(f"{name}: bad marshal data after its header") from None
    if not isinstance(code, CodeType):
        raise BadInputError(f"{name}: holds a {type(code).__name__} after its header, not a "
                            "code object")
    return code
