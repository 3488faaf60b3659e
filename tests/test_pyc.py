"""unveil.bytecode.pyc and .portable: every CPython 3.8-3.14's pyc files and marshal data, read
without the running interpreter's marshal.

The oracle: each installed interpreter (pyenv's 3.8-3.13; 3.14 in Pyodide where it is set up)
compiles a fixed sample of source and ~30 modules of its own standard library, marshals them,
and describes what its own ``marshal.loads`` makes of those bytes; the host reads the same bytes
with :func:`unveil.bytecode.pyc.loads` and must describe the result identically.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from unveil.bytecode.portable import CO_FAST_CELL, CO_FAST_FREE, CO_FAST_LOCAL, PortableCode
from unveil.bytecode.pyc import FINAL_MAGIC, MAGIC_NUMBERS, loads, read_header, read_pyc
from unveil.errors import BadInputError
from unveil.verify.foreign import find_interpreter

ORACLE_HOSTS = ((3, 11), (3, 13))  # the hosts that ask the other interpreters (see oracle)
REPO = Path(__file__).resolve().parent.parent
HOST = sys.version_info[:2]
NATIVE = ((3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13))

# -- the oracle script: runs under every CPython 3.8-3.14 (so: 3.8 syntax), and its describe()
#    runs on the host too -----------------------------------------------------------------------
ORACLE = r'''
import importlib.util, json, marshal, os, py_compile, struct, sys, tempfile

FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
          "co_stacksize", "co_flags", "co_code", "co_consts", "co_names", "co_varnames",
          "co_freevars", "co_cellvars", "co_filename", "co_name", "co_qualname",
          "co_firstlineno", "co_linetable", "co_exceptiontable")


def describe(v, version):
    """A JSON-able description of a marshal result, exact for every value it can hold."""
    for name, single in (("None", None), ("True", True), ("False", False),
                         ("Ellipsis", Ellipsis), ("StopIteration", StopIteration)):
        if v is single:
            return name
    t = type(v)
    if t is int:
        return ["int", hex(v)]
    if t is float:
        return ["float", struct.pack("<d", v).hex()]
    if t is complex:
        return ["complex", struct.pack("<dd", v.real, v.imag).hex()]
    if t is str:
        return ["str", v.encode("utf-8", "surrogatepass").hex()]
    if t is bytes:
        return ["bytes", v.hex()]
    if t in (tuple, list):
        return [t.__name__, [describe(x, version) for x in v]]
    if t is dict:
        return ["dict", [[describe(k, version), describe(x, version)] for k, x in v.items()]]
    if t in (set, frozenset):
        return [t.__name__, sorted(json.dumps(describe(x, version)) for x in v)]
    if t is slice:
        return ["slice", [describe(x, version) for x in (v.start, v.stop, v.step)]]
    if hasattr(v, "co_code"):
        fields = {}
        for f in FIELDS:
            if f == "co_linetable" and version < (3, 10):
                value = v.co_lnotab
            elif f == "co_qualname":
                value = getattr(v, f, v.co_name)
            elif f == "co_exceptiontable":
                value = getattr(v, f, b"")
            else:
                value = getattr(v, f)
            fields[f] = describe(value, version)
        return ["code", fields]
    return ["unknown", t.__name__, repr(v)]


def values(slices):
    shared = "shared" + str(len(FIELDS))
    out = [None, True, False, Ellipsis, StopIteration, 0, 1, -1, 2**31 - 1, -2**31, 2**31,
           -2**31 - 1, 2**62, 2**63, -2**64, 2**1000, -(2**1000), 1.5, -0.0, float("inf"),
           float("nan"), 1e-310, 1j, complex(-0.0, float("inf")), b"", b"abc" * 100,
           bytearray(b"ba"), "", "a", "\xe9", "\u2713" * 300, "\ud800x", "x" * 300, (), (1,),
           tuple(range(300)), [], [1, [2]], {}, {"a": 1, 2: [3]}, set(), {1, 2}, frozenset(),
           frozenset({"a", (1,)}), [frozenset(), frozenset()], [shared, shared, (shared,)]]
    if slices:
        out.append([slice(1, None, "x"), slice(None, None, None)])
    return out


def main(directory):
    with open(os.path.join(directory, "in.json")) as f:
        spec = json.load(f)
    version = sys.version_info[:2]
    items = []

    def add(name, data):
        items.append([name, data.hex(), describe(marshal.loads(data), version)])

    for name, since, source in spec["snippets"]:
        if version >= tuple(since):
            code = compile(source, name + ".py", "exec", dont_inherit=True)
            add(name, marshal.dumps(code))
            try:
                add(name + "@v1", marshal.dumps(code, 1))
            except ValueError:  # 3.14's slice constants need marshal version 5
                pass
    for name in spec["modules"]:
        try:
            found = importlib.util.find_spec(name)
        except ImportError:
            found = None
        source = found and found.loader and found.loader.get_source(name)
        if source:
            add(name, marshal.dumps(compile(source, found.origin, "exec", dont_inherit=True)))
    for v in range(marshal.version + 1):
        add("values@v%d" % v, marshal.dumps(values(v >= 5), v))
    pycs = []
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "sample.py")
    with open(src, "w") as f:
        f.write(spec["snippets"][0][2])
    for mode in ("TIMESTAMP", "CHECKED_HASH", "UNCHECKED_HASH"):
        cfile = os.path.join(tmp, mode + ".pyc")
        py_compile.compile(src, cfile, doraise=True,
                           invalidation_mode=getattr(py_compile.PycInvalidationMode, mode))
        with open(cfile, "rb") as f:
            data = f.read()
        st = os.stat(src)
        with open(src, "rb") as f:
            source_hash = importlib.util.source_hash(f.read()).hex()
        pycs.append({"mode": mode, "hex": data.hex(), "mtime": int(st.st_mtime) & 0xFFFFFFFF,
                     "size": st.st_size & 0xFFFFFFFF, "hash": source_hash,
                     "code": describe(marshal.loads(data[16:]), version)})
    out = {"version": list(version), "marshal_version": marshal.version,
           "magic": int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little"),
           "items": items, "pycs": pycs}
    with open(os.path.join(directory, "out.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(sys.argv[1])
'''

_ns: dict[str, Any] = {"__name__": "oracle"}
exec(compile(ORACLE, "oracle", "exec"), _ns)
describe = _ns["describe"]

MANY = "def many():\n" + "".join(f"    v{i} = {i}.5\n" for i in range(300)) + "    return v299\n"
SNIPPETS: list[tuple[str, tuple[int, int], str]] = [
    ("closures", (3, 8), '''
def outer(a, *args, b=2, **kw):
    """Doc."""
    x = 1
    def inner(c, /, d):
        nonlocal x
        x += a + c + d
        return x, b, args, kw
    return inner
lam = lambda q, *, r=3: q + r
'''),
    ("comprehensions", (3, 8), '''
def f(xs):
    a = [x * x for x in xs if x % 2]
    b = {x: y for x, y in zip(xs, xs)}
    c = {x for x in xs}
    d = (x for x in xs)
    return [[y for y in x] for x in a], b, c, d, [n := 1 for _ in xs], n
'''),
    ("async", (3, 8), '''
async def g(session):
    async with session as s:
        async for item in s:
            await item
    return [x async for x in session]
async def agen():
    yield 1
    await agen()
def gen():
    x = yield 1
    yield from x
'''),
    ("exceptions", (3, 8), '''
def h(x):
    try:
        with open(x) as f, open(x) as g:
            return f.read() + g.read()
    except (OSError, ValueError) as e:
        raise RuntimeError("no") from e
    except Exception:
        pass
    else:
        return 2
    finally:
        del x
    while x:
        if x: break
    else:
        x = 3
    for i in x:
        continue
    else:
        assert i, "message"
'''),
    ("numbers", (3, 8), '''
BIG = 2**200; NEG = -12345; NEGBIG = -(2**100); X = 2**31; Y = -2**31 - 1; Z = (1 << 64) - 1
F = (0.1, -0.0, 1e308, 5e-324, 1e1000, -1e1000, 1e1000 - 1e1000)
C = (1j, -2.5j, 3+4j, -0j, 1e1000j)
def uses(): return BIG, 255, 256, 65536, -1, 1.0, 2.5j
'''),
    ("strings", (3, 8), '''
B = b"\\x00\\xff" * 3 + b"plain"
U = "h\\xe9llo w\\xf6rld \\u2713 \\U0001d11e"
S = "\\ud800\\udfff lone"
L = "long " * 100
def docs(): "A docstring."; return B, U, S, "interned_name", r"raw\\n"
'''),
    ("frozensets", (3, 8), '''
def member(x):
    if x in {1, 2, 3}: return 1
    for c in {"a", "b"}: print(c)
    return x in {1.5, "s", b"b", (1, 2), frozenset()}, x not in {None, True}
'''),
    ("classes", (3, 8), '''
import os as _os, sys
from collections import OrderedDict as OD
class A(OD, metaclass=type):
    attr: int = 3
    def m(self):
        return super().m() + __class__.attr
    @property
    def p(self): return self._p
    class Inner:
        def deep(self):
            def deeper():
                global G
                G = self
                return self
            return deeper
'''),
    ("fstrings", (3, 8), '''
def fmt(a, b, c, width):
    return f"{a!r:>{width}} {b=} {c:.2f} {{literal}} {a!s}{b!a}", f"{'nested' + f'{c}'}"
'''),
    ("calls_and_slices", (3, 8), '''
def calls(a, *b, **c):
    print(*a, sep="", **c)
    a[1:2] = a[::2]
    x, *y, z = a[-1:], a[1:2:3], a[:]
    del a[0]
    return (lambda: a)() if a else not b, a < b <= c, a @ b, a ** -1
'''),
    ("deep", (3, 8), "T = ((((((1,),),),),),)\nD = {'k': (1, 2.0, 3j)}\n"),
    ("many", (3, 8), MANY),
    ("match", (3, 10), '''
def m(cmd):
    match cmd:
        case ["go", direction] if direction: return direction
        case {"x": x, **rest}: return x, rest
        case Point(x=0, y=yy) | Point(x=yy, y=0): return yy
        case str() as s: return s
        case (1 | 2 | 3) as n, *others: return n, others
        case None | True: return 1
        case _: return None
'''),
    ("except_star", (3, 11), '''
def es():
    try:
        pass
    except* ValueError as eg:
        print(eg)
    except* (TypeError, KeyError):
        raise
'''),
    ("type_params", (3, 12), '''
type Alias[T] = list[T]
def ident[T: int, *Ts, **P](x: T) -> T:
    return x
class Box[T]:
    def get(self) -> T: ...
'''),
]

MODULES = ("abc argparse ast base64 bisect calendar collections colorsys configparser "
           "contextlib copy csv dataclasses datetime difflib enum fnmatch fractions functools "
           "gettext heapq inspect ipaddress json.decoder keyword linecache operator pathlib "
           "pprint random shlex statistics string textwrap tokenize typing uuid").split()


def _pyodide_dir() -> Path | None:
    """Pyodide (CPython 3.14) as scripts/pyodide_python.mjs finds it, or /tmp/py314's."""
    env = os.environ.get("UNVEIL_PYODIDE_DIR")
    candidates = [Path(env)] if env else [REPO / ".cache/pyodide/node_modules/pyodide",
                                          Path("/tmp/py314/node_modules/pyodide")]
    for path in candidates:
        if shutil.which("node") and (path / "python_stdlib.zip").exists():
            return path
    return None


class _Oracle:
    """One oracle run per interpreter, all started at once, each awaited when first needed."""

    def __init__(self, root: Path) -> None:
        self.runs: dict[tuple[int, int], tuple[subprocess.Popen[bytes], Path]] = {}
        self.results: dict[tuple[int, int], dict[str, Any]] = {}
        self.missing: dict[tuple[int, int], str] = {}
        spec = {"snippets": SNIPPETS, "modules": MODULES}
        script = root / "oracle.py"
        script.write_text(ORACLE)
        for version in (*NATIVE, (3, 14)):
            directory = root / f"{version[0]}.{version[1]}"
            directory.mkdir()
            (directory / "in.json").write_text(json.dumps(spec))
            if version == (3, 14):
                pyodide = _pyodide_dir()
                if pyodide is None:
                    self.missing[version] = ("no Pyodide: set UNVEIL_PYODIDE_DIR, or run "
                                             "scripts/test once (.cache/pyodide)")
                    continue
                command = ["node", str(REPO / "scripts/pyodide_python.mjs"), str(script),
                           str(directory)]
                env = {**os.environ, "UNVEIL_PYODIDE_DIR": str(pyodide)}
            else:
                python = find_interpreter(version)
                if python is None:
                    self.missing[version] = (f"no CPython {version[0]}.{version[1]} found "
                                             "(pyenv's, or pythonX.Y on the path)")
                    continue
                command, env = [str(python), "-I", str(script), str(directory)], None
            self.runs[version] = (subprocess.Popen(command, stdout=subprocess.PIPE,
                                                   stderr=subprocess.STDOUT, env=env), directory)

    def get(self, version: tuple[int, int]) -> dict[str, Any]:
        if version in self.missing:
            pytest.skip(self.missing[version])
        if version not in self.results:
            process, directory = self.runs[version]
            output, _ = process.communicate(timeout=300)
            assert process.returncode == 0, output.decode(errors="replace")
            self.results[version] = json.loads((directory / "out.json").read_text())
        return self.results[version]


@pytest.fixture(scope="module")
def oracle() -> Iterator[_Oracle]:
    if sys.version_info[:2] not in ORACLE_HOSTS:  # (each suite of scripts/test is a host)
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only "
                    "(two hosts show the host does not matter; more would only cost CI time)")
    with tempfile.TemporaryDirectory() as root:
        runs = _Oracle(Path(root))
        yield runs
        for process, _ in runs.runs.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _difference(ours: Any, theirs: Any, path: str = "") -> str | None:
    """Where two descriptions first differ, or None."""
    if type(ours) is not type(theirs):
        return f"{path}: {ours!r:.200} != {theirs!r:.200}"
    if isinstance(ours, dict):
        for key in sorted(set(ours) | set(theirs)):
            found = _difference(ours.get(key), theirs.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(ours, list):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            found = _difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None if len(ours) == len(theirs) else f"{path}: lengths {len(ours)} != {len(theirs)}"
    return None if ours == theirs else f"{path}: {ours!r:.200} != {theirs!r:.200}"


ALL = [pytest.param(v, id=f"{v[0]}.{v[1]}") for v in (*NATIVE, (3, 14))]


@pytest.mark.parametrize("version", ALL)
def test_reads_what_that_version_marshals(oracle: _Oracle, version: tuple[int, int]) -> None:
    result = oracle.get(version)
    assert tuple(result["version"]) == version
    names = [name for name, _, _ in result["items"]]
    assert len([n for n in names if n in MODULES]) >= 30, names
    if version >= (3, 14):  # constant slices: in code (a[1:2]) and as values
        assert all('["slice", ' in json.dumps(desc) for name, _, desc in result["items"]
                   if name in ("calls_and_slices", "values@v5")), names
    problems = []
    for name, data, theirs in result["items"]:
        ours = _normal(describe(loads(bytes.fromhex(data), version, name=name), version))
        found = _difference(ours, theirs)
        if found:
            problems.append(f"{name}{found}")
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("version", ALL)
def test_pyc_headers_of_that_version(oracle: _Oracle, version: tuple[int, int]) -> None:
    result = oracle.get(version)
    assert FINAL_MAGIC[version] == result["magic"]
    assert MAGIC_NUMBERS[result["magic"]] == version
    for pyc in result["pycs"]:
        header, code = read_pyc(bytes.fromhex(pyc["hex"]), name=pyc["mode"] + ".pyc")
        assert (header.version, header.magic) == (version, result["magic"])
        if pyc["mode"] == "TIMESTAMP":
            assert (header.flags, header.mtime, header.source_size) == (0, pyc["mtime"],
                                                                         pyc["size"])
            assert header.source_hash is None and not header.hash_based
        else:
            assert header.flags == (3 if pyc["mode"] == "CHECKED_HASH" else 1)
            assert header.hash_based and header.check_source == (header.flags == 3)
            assert header.source_hash is not None and header.source_hash.hex() == pyc["hash"]
            assert header.mtime is None and header.source_size is None
        assert _difference(_normal(describe(code, version)), pyc["code"]) is None
        assert code.version == version and code.co_filename.endswith("sample.py")


def test_magic_table() -> None:
    assert {v: MAGIC_NUMBERS[m] for v, m in FINAL_MAGIC.items()} == {v: v for v in FINAL_MAGIC}
    assert MAGIC_NUMBERS[int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little")] == HOST
    assert 3394 not in MAGIC_NUMBERS and 3650 not in MAGIC_NUMBERS  # 3.7, 3.15a0
    assert all(MAGIC_NUMBERS[m] == (3, 11) for m in range(3450, 3496))


def _small_pyc() -> bytes:
    source = ("def f(a, *, b=1.5):\n    return [a, b, 'x', (1, 2), {3}, 10**20, -1j, b'y']\n"
              "class C:\n    def m(self): return __class__\n")
    code = compile(source, "small.py", "exec")
    return (importlib.util.MAGIC_NUMBER + bytes(4) + (12345).to_bytes(4, "little")
            + len(source).to_bytes(4, "little") + marshal.dumps(code))


def test_reads_the_host_pyc_like_the_host() -> None:
    data = _small_pyc()
    header, code = read_pyc(data, "small.pyc")
    assert (header.version, header.mtime, header.flags) == (HOST, 12345, 0)
    theirs = marshal.loads(data[16:])
    assert _difference(_normal(describe(code, HOST)), _normal(describe(theirs, HOST))) is None
    assert repr(code) == f'<code object <module>, file "small.py", line 1 ({HOST[0]}.{HOST[1]})>'


@pytest.mark.parametrize(("magic", "expected"), [
    (3650, "is CPython 3.15's; unveil reads the bytecode of CPython 3.8-3.14"),
    (3394, "is CPython 3.7's; unveil reads"), (62211, "is CPython 2.7's; unveil reads"),
    (0, "is no known CPython 3.8-3.14 version"), (3599, "is no known CPython 3.8-3.14 version"),
])
def test_unknown_magic_is_named(magic: int, expected: str) -> None:
    data = magic.to_bytes(2, "little") + b"\r\n" + bytes(12) + b"N"
    with pytest.raises(BadInputError, match=f"^x.pyc: magic number {magic} {re.escape(expected)}"):
        read_pyc(data, "x.pyc")


def test_not_a_pyc() -> None:
    with pytest.raises(BadInputError, match=r"app.pyc: not a pyc file"):
        read_pyc(b"#!/usr/bin/env python\n", "app.pyc")
    data = _small_pyc()
    with pytest.raises(BadInputError, match="invalid pyc flags 0x4 at byte 4"):
        read_header(data[:4] + b"\x04\0\0\0" + data[8:], "app.pyc")
    with pytest.raises(BadInputError, match="holds a int after its header, not a code object"):
        read_pyc(data[:16] + marshal.dumps(7), "app.pyc")


def test_every_truncation_is_bad_input() -> None:
    data = _small_pyc()
    for n in range(len(data)):
        with pytest.raises(BadInputError, match=rf"^small\.pyc: truncated at byte {n} \("):
            read_pyc(data[:n], "small.pyc")
    read_pyc(data + b"trailing bytes are ignored", "small.pyc")


def test_byte_flips_read_or_are_bad_input() -> None:
    data = _small_pyc()
    rng = random.Random(46)
    read = bad = 0
    for _ in range(3000):
        corrupt = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            corrupt[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        try:
            read_pyc(bytes(corrupt), "flipped.pyc")
            read += 1
        except BadInputError as exc:
            assert str(exc).startswith("flipped.pyc: "), exc
            bad += 1
    assert read and bad


def test_error_messages_name_offset_and_byte() -> None:
    with pytest.raises(BadInputError, match=r"m: bad marshal data at byte 2: unknown type code "
                                            r"b'W' \(0x57\) for CPython 3.11"):
        loads(b")\x02W", (3, 11), name="m")
    with pytest.raises(BadInputError, match=r"at byte 2: a NULL object where a tuple item"):
        loads(b")\x010", (3, 11))
    with pytest.raises(BadInputError, match="invalid reference 0"):
        loads(b"r\0\0\0\0", (3, 11))
    code = marshal.dumps(compile("x = 1", "f", "exec"))
    with pytest.raises(BadInputError, match=r"the co_\w+ of the code object at byte 0\)$"):
        loads(code[:-3], HOST)
    with pytest.raises(BadInputError, match="nested too deeply"):
        loads(b")\x01" * 100_000 + b"N", (3, 12))
    with pytest.raises(ValueError, match="unsupported CPython version"):
        loads(b"N", (3, 7))


def test_marshal_details() -> None:
    assert loads(b")\x02\xe9\x05\0\0\0r\0\0\0\0", (3, 8)) == (5, 5)  # a flagged int, a ref
    shared = loads(marshal.dumps(["a" * 3] * 3), HOST)
    assert isinstance(shared, list) and shared[0] is shared[1] is shared[2]
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    again = loads(marshal.dumps(cyclic), HOST)
    assert isinstance(again, list) and again[0] is again
    assert loads(b"{i\1\0\0\0N0", (3, 9)) == {1: None}
    assert loads(b"{i\1\0\0\0" + b"0", (3, 9)) == {}  # a NULL value ends the dict too
    assert loads(b"I" + (-5).to_bytes(8, "little", signed=True), (3, 10)) == -5
    assert loads(marshal.dumps((1.5, 2j, "\xe9"), 1), (3, 13)) == (1.5, 2j, "\xe9")
    assert loads(b":NNi\x03\0\0\0", (3, 14)) == slice(None, None, 3)
    with pytest.raises(BadInputError, match="unknown type code b':'"):
        loads(b":NNN", (3, 13))
    with pytest.raises(BadInputError, match="unnormalized int data"):
        loads(b"l\x01\0\0\0\0\0", (3, 11))
    assert loads(b"S", (3, 12)) is StopIteration and loads(b"\xa9\0", (3, 12)) == ()


def test_localsplus_derivation() -> None:
    kinds = bytes([CO_FAST_LOCAL, CO_FAST_LOCAL | CO_FAST_CELL, CO_FAST_CELL, CO_FAST_FREE,
                   CO_FAST_LOCAL | 0x10])
    code = PortableCode.from_localsplus(
        version=(3, 12), co_argcount=2, co_posonlyargcount=0, co_kwonlyargcount=0,
        co_stacksize=1, co_flags=3, co_code=b"", co_consts=(), co_names=(),
        co_localsplusnames=("a", "b", "c", "d", "e"), co_localspluskinds=kinds,
        co_filename="f.py", co_name="g", co_qualname="h.g", co_firstlineno=1,
        co_linetable=b"", co_exceptiontable=b"")
    assert (code.co_varnames, code.co_cellvars, code.co_freevars, code.co_nlocals) == (
        ("a", "b", "e"), ("b", "c"), ("d",), 3)
    renamed = code.replace(co_name="k")
    assert renamed.co_name == "k" and renamed.co_varnames == code.co_varnames
    rebuilt = code.replace(co_varnames=("a", "b"))
    assert rebuilt.co_localsplusnames == ("a", "b", "c", "d") and rebuilt.co_nlocals == 2
    assert rebuilt.co_localspluskinds == bytes([0x20, 0x60, 0x40, 0x80])
    with pytest.raises(TypeError):
        code.replace(co_bogus=1)
    with pytest.raises(AttributeError):
        code.co_lnotab  # noqa: B018
    old = code.replace(version=(3, 8), co_linetable=b"\x02\x01")
    assert old.co_lnotab == b"\x02\x01" and repr(old) == '<code object g, file "f.py", line 1 (3.8)>'


def test_field_names_are_code_type_names() -> None:
    extra = {"version", "co_localsplusnames", "co_localspluskinds", "co_qualname",
             "co_exceptiontable"}
    names = {f for f in PortableCode.__dataclass_fields__ if f not in extra}
    assert names <= set(dir(types.CodeType)), names - set(dir(types.CodeType))
