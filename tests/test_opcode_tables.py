"""The committed opcode tables and the listing they drive, against each CPython's own dis.

* Every installed pyenv CPython 3.8-3.13 (and 3.14 in Pyodide, where .cache/pyodide has it) runs
  scripts/gen_opcode_tables.py; its JSON must equal the committed table.
* The decoder oracle: each of those interpreters compiles ~40 of its own stdlib modules and the
  snippets below, in one subprocess per version, and dumps its ``dis.get_instructions`` with the
  code objects' raw fields; here :mod:`unveil.bytecode.listing` lists the same fields (a
  stand-in object: this test does not depend on the .pyc reader) and
  :mod:`unveil.bytecode.lines` reads their line tables; both must agree exactly.
* The same oracles of 3.8-3.10 dump their ``dis.stack_effect`` at every argument up to
  2**16 + 256: the committed tables' stack effects must give the same.
"""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from unveil.bytecode import listing
from unveil.bytecode.lines import line_starts
from unveil.bytecode.opcodes import SUPPORTED, raw_table, table
from unveil.verify.foreign import find_interpreter

ORACLE_HOSTS = ((3, 11), (3, 13))  # the hosts that ask the other interpreters (see oracles)
REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "scripts" / "gen_opcode_tables.py"
PYODIDE_RUNNER = REPO / "scripts" / "pyodide_python.mjs"
PYODIDE = REPO / ".cache" / "pyodide" / "node_modules" / "pyodide" / "pyodide.mjs"

MODULES = [
    "argparse", "ast", "asyncio.base_events", "asyncio.tasks", "base64", "bisect", "calendar",
    "collections", "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime",
    "difflib", "dis", "email.message", "enum", "fractions", "functools", "gettext", "heapq",
    "inspect", "ipaddress", "json.decoder", "logging", "pathlib", "pickle", "pprint", "random",
    "shlex", "statistics", "string", "tarfile", "textwrap", "tokenize", "traceback", "typing",
    "urllib.parse", "zipfile",
]

# (label, oldest version that compiles it, source)
SNIPPETS: list[tuple[str, tuple[int, int], str]] = [
    ("closures", (3, 8), """
def outer(a, b, *args, k=1, **kw):
    c = a + b
    def inner(d):
        nonlocal c
        c += d + k
        return a, c, args, kw
    def other():
        del c
    return inner, other
class C:
    def m(self):
        return super().m(), __class__
def f():
    x = 1
    class K:
        y = x
        def g(self):
            return x
    return K
"""),
    ("comprehensions", (3, 8), """
def f(xs, ys):
    a = [x * y for x in xs for y in ys if x if y]
    b = {x: [y for y in ys if y > x] for x in xs}
    c = {x for x in xs}
    d = (x for x in xs)
    e = [lambda: x for x in xs]
    g = [(x, z) for x in xs if (z := x + 1)]
    return a, b, c, d, e, g
"""),
    ("async", (3, 8), """
async def f(xs, lock):
    async with lock as l, lock:
        await l
    async for x in xs:
        if x:
            break
    else:
        pass
    r = [y async for y in xs if await y]
    return r
async def agen():
    yield 1
    await agen()
"""),
    ("try", (3, 8), """
def f(x):
    for i in x:
        try:
            try:
                g()
            except (ValueError, TypeError) as e:
                raise RuntimeError from e
            except Exception:
                continue
            else:
                break
            finally:
                h()
        except:
            return 1
        finally:
            if i:
                return 2
    while x:
        try:
            x -= 1
        finally:
            pass
"""),
    ("except_star", (3, 11), """
def f():
    try:
        g()
    except* ValueError as e:
        h(e)
    except* TypeError:
        pass
"""),
    ("with", (3, 8), """
def f(a, b):
    with a as x, b as (y, z):
        return x
    with a:
        pass
"""),
    ("match", (3, 10), """
def f(p):
    match p:
        case 0 | 1 | 2 if p:
            return 1
        case [a, *rest]:
            return rest
        case {"k": v, **kw}:
            return v, kw
        case Point(x=0, y=yy) | Point(1, yy):
            return yy
        case str() as s:
            return s
        case None:
            return None
        case _:
            return 2
"""),
    ("fstrings", (3, 8), """
def f(a, b, w):
    return f"{a!r} {b!s:>{w}} {a!a} {a:{w}.{w}} {a=} {b + 1:x}" + f'{"nested"}'
"""),
    ("operators", (3, 8), """
def f(a, b, c, s):
    a += b; a -= b; a *= b; a /= b; a //= b; a %= b; a **= b; a @= b
    a <<= b; a >>= b; a &= b; a |= b; a ^= b
    x = (a + b - c * a / b // c % a ** b @ c << a >> b & c | a ^ b, -a, +b, ~c, not a)
    y = a < b <= c == a != b > c >= a, a is b, a is not b, a in s, a not in s
    z = s[1:2], s[::c], s[a:b:c], s[a], {a: b, **s}, {*s, a}, [*s, *s], (*s,)
    first, *rest = s
    del s[a], s[a:b], a.attr
    assert a, "msg"
    return x if a and b or c else y, z, f(*s, **s), f(a, key=b), g.h(a, k=1)
def g(x, *, y=1, z: int = 2) -> str:
    global G
    G = lambda q=x: q
    return G
"""),
    ("generators", (3, 8), """
def gen(x):
    y = yield x
    yield from y
    return (yield)
def ifs(a):
    if a == 1: return 1
    elif a == 2: return 2
    elif a == 3: return 3
    elif a == 4: return 4
    return [i for i in range(a) if i % 2] or None
"""),
    ("imports", (3, 8), """
import os.path as p
from . import sibling
from .. import parent as q
from os import (sep, getcwd)
from os import *
"""),
    ("type_params", (3, 12), """
type Alias[T] = list[T]
def f[T: int, *Ts, **P](x: T) -> T:
    return x
class K[T]:
    def m(self) -> T: ...
"""),
    ("annotations_314", (3, 14), """
class A:
    x: int
    def f(self, y: "A") -> A: ...
t = t"{1 + 2} {A!r:>3}"
"""),
]


def _many_locals() -> str:
    names = [f"v{i}" for i in range(300)]
    body = "\n".join(f"    {n} = {i}" for i, n in enumerate(names))
    return f"def many():\n{body}\n    return ({', '.join(names)})\n"


def _huge() -> str:
    """A loop body over 65,536 code units: jumps with two EXTENDED_ARGs (names have one)."""
    names = ", ".join(f"n{i}" for i in range(33500))
    return f"while c:\n    if d:\n        del {names}\n    else:\n        e = 1\n"


SNIPPETS += [("many_locals", (3, 8), _many_locals()), ("huge", (3, 8), _huge())]


def _oracle_main():  # untyped: it runs on 3.8+, against that version's dis
    # Runs in the interpreter under test (3.8 and up): no newer syntax here.
    import dis
    import importlib.util
    import json
    import opcode
    import sys
    import types
    import warnings

    inp, outp = sys.argv[1], sys.argv[2]
    with open(inp, encoding="utf-8") as f:
        spec = json.load(f)
    version = tuple(sys.version_info[:2])
    sources = []
    for mod in spec["modules"]:
        sources.append((mod, importlib.util.find_spec(mod).loader.get_source(mod)))
    for label, oldest, src in spec["snippets"]:
        if version >= tuple(oldest):
            sources.append((label, src))

    def walk(co):
        yield co
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                yield from walk(c)

    def show(v):
        return "code:" + v.co_name if isinstance(v, types.CodeType) else repr(v)

    warnings.simplefilter("ignore")  # (3.14: SyntaxWarning for return in finally)
    codes = []
    for label, src in sources:
        for co in walk(compile(src, label, "exec")):
            rows = []
            for ins in dis.get_instructions(co):
                if version >= (3, 13):
                    lines = [ins.starts_line, ins.line_number, ins.start_offset]
                else:
                    lines = [ins.starts_line is not None, ins.starts_line, None]
                argrepr = None if isinstance(ins.argval, types.CodeType) else ins.argrepr
                rows.append([ins.opname, ins.opcode, ins.arg, show(ins.argval), argrepr,
                             ins.offset, ins.is_jump_target] + lines)
            entry = {
                "label": label, "name": co.co_name, "code": co.co_code.hex(),
                "consts": [show(c) for c in co.co_consts], "names": list(co.co_names),
                "varnames": list(co.co_varnames), "cellvars": list(co.co_cellvars),
                "freevars": list(co.co_freevars), "firstlineno": co.co_firstlineno,
                "lnotab": co.co_lnotab.hex() if version < (3, 10) else None,
                "linetable": co.co_linetable.hex() if version >= (3, 10) else None,
                "rows": rows,
            }
            if version >= (3, 11):  # what dis's varname_from_oparg really gives
                n = len(set(co.co_varnames) | set(co.co_cellvars)) + len(co.co_freevars)
                entry["localsplus"] = [co._varname_from_oparg(i) for i in range(n)]
            codes.append(entry)
    # before 3.11: dis.stack_effect of every named opcode, without and with jump, for every
    # argument below 2**16 + 256 (one value for an opcode without argument), as runs of
    # equal steps: [first value, [[step, count], ...]]
    effects = {}
    if version < (3, 11):
        for op in range(256):
            if opcode.opname[op].startswith("<"):
                continue
            runs = []
            for jump in (False, True):
                if op < opcode.HAVE_ARGUMENT:
                    runs.append([dis.stack_effect(op, jump=jump), []])
                    continue
                values = [dis.stack_effect(op, arg, jump=jump) for arg in range(2 ** 16 + 256)]
                steps = []
                for a, b in zip(values, values[1:]):  # noqa: B905 (3.8 has no strict=)
                    if steps and steps[-1][0] == b - a:
                        steps[-1][1] += 1
                    else:
                        steps.append([b - a, 1])
                runs.append([values[0], steps])
            effects[opcode.opname[op]] = runs
    with open(outp, "w", encoding="utf-8") as f:  # (dumps: json.dump would not use the C encoder)
        f.write(json.dumps({"version": list(version), "opmap": opcode.opmap, "codes": codes,
                            "stack_effects": effects}))


class _Const:
    """A constant of another interpreter, known by its repr there."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _command(version: tuple[int, int]) -> list[str] | None:
    if version == (3, 14):
        if not (PYODIDE.exists() and shutil.which("node")):
            return None
        return ["node", str(PYODIDE_RUNNER)]
    python = find_interpreter(version)
    return None if python is None else [python]


def _skip_reason(version: tuple[int, int]) -> str:
    if version == (3, 14):
        return "CPython 3.14 runs here only in Pyodide: no node or .cache/pyodide (scripts/test sets it up)"
    return f"no CPython {version[0]}.{version[1]} found (pyenv's, or python{version[0]}.{version[1]})"


@pytest.fixture(scope="module")
def oracles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[int, int], Any]]:
    """Start every interpreter's generator and oracle at once; values are (procs, out path)."""
    if sys.version_info[:2] not in ORACLE_HOSTS:  # (each suite of scripts/test is a host)
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only "
                    "(two hosts show the host does not matter; more would only cost CI time)")
    tmp = tmp_path_factory.mktemp("oracle")
    script = tmp / "oracle.py"
    script.write_text(textwrap.dedent(inspect.getsource(_oracle_main)) + "\n_oracle_main()\n")
    spec = tmp / "input.json"
    spec.write_text(json.dumps({"modules": MODULES, "snippets": SNIPPETS}))
    started: dict[tuple[int, int], Any] = {}
    for version in sorted(SUPPORTED, reverse=True):  # Pyodide's, the slowest, first
        cmd = _command(version)
        if cmd is None:
            continue
        out = tmp / f"dump{version[0]}{version[1]}.json"
        gen = subprocess.Popen([*cmd, str(GENERATOR)], stdout=subprocess.PIPE, text=True)
        orc = subprocess.Popen([*cmd, str(script), str(spec), str(out)])
        started[version] = (gen, orc, out)
    yield started
    for gen, orc, _ in started.values():
        for proc in (gen, orc):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _started(oracles: dict[tuple[int, int], Any], version: tuple[int, int]) -> Any:
    if version not in oracles:
        pytest.skip(_skip_reason(version))
    return oracles[version]


def _stand_in(entry: dict[str, Any], version: tuple[int, int]) -> SimpleNamespace:
    return SimpleNamespace(
        version=version,
        co_code=bytes.fromhex(entry["code"]),
        co_consts=tuple(_Const(c) for c in entry["consts"]),
        co_names=tuple(entry["names"]), co_varnames=tuple(entry["varnames"]),
        co_cellvars=tuple(entry["cellvars"]), co_freevars=tuple(entry["freevars"]),
        co_firstlineno=entry["firstlineno"],
        **({"co_lnotab": bytes.fromhex(entry["lnotab"])} if entry["lnotab"] is not None else
           {"co_linetable": bytes.fromhex(entry["linetable"])}))


@pytest.mark.parametrize("version", SUPPORTED, ids=lambda v: f"{v[0]}.{v[1]}")
def test_listing_and_lines_match_dis(oracles: dict[tuple[int, int], Any],
                                     version: tuple[int, int]) -> None:
    """The listing of a code object of each version, read with that version's committed
    table, is its own ``dis.get_instructions`` (name, opcode, argument, value, offset), and
    its line starts are its ``dis.findlinestarts``. (3.11's ``KW_NAMES``: dis does not
    give its value; the listing gives the names tuple the call takes.)"""
    _, orc, out = _started(oracles, version)
    assert orc.wait(timeout=300) == 0
    dump = json.loads(out.read_text())
    assert dump["version"] == list(version)
    assert dump["opmap"] == dict(table(version).opmap)
    failures: list[str] = []
    labels = set()
    for entry in dump["codes"]:
        labels.add(entry["label"])
        code = _stand_in(entry, version)
        if "localsplus" in entry:
            expected_names = entry["localsplus"]
            assert list(code.co_varnames) + [c for c in code.co_cellvars if c not in code.co_varnames] \
                + list(code.co_freevars) == expected_names, entry["name"]
        listed = listing._decode(code)  # type: ignore[arg-type]  # (a stand-in)
        assert listed is not None, entry["name"]
        rows = [[r.opname, r.opcode, r.arg, d[3] if r.opname == "KW_NAMES" else repr(r.argval),
                 r.offset] for r, d in zip(listed, entry["rows"], strict=False)]
        theirs = [[d[0], d[1], d[2], d[3], d[5]] for d in entry["rows"]]
        if rows != theirs:
            bad = next((i for i, (a, b) in enumerate(zip(rows, theirs, strict=False)) if a != b),
                       min(len(rows), len(theirs)))
            failures.append(f"{entry['label']}:{entry['name']} instruction {bad}: ours "
                            f"{rows[bad] if bad < len(rows) else None} dis "
                            f"{theirs[bad] if bad < len(theirs) else None}")
            continue
        starts = {d[5]: d[8] for d in entry["rows"] if d[7]}  # (the oracle's: a flag, the line)
        ours = {k: v for k, v in line_starts(code, version).items() if k in starts or any(
            r.offset == k for r in listed)}
        if ours != starts:
            failures.append(f"{entry['label']}:{entry['name']} line starts: ours {ours} dis {starts}")
    assert labels == set(MODULES) | {s[0] for s in SNIPPETS if version >= s[1]}
    assert not failures, f"{len(failures)} code objects differ:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("version", SUPPORTED, ids=lambda v: f"{v[0]}.{v[1]}")
def test_table_matches_interpreter(oracles: dict[tuple[int, int], Any], version: tuple[int, int]) -> None:
    gen, _, _ = _started(oracles, version)
    stdout, _ = gen.communicate(timeout=120)
    assert gen.returncode == 0
    assert json.loads(stdout) == raw_table(version), (
        f"src/unveil/bytecode/opcodes/py{version[0]}{version[1]}.json drifted: regenerate it with "
        f"scripts/gen_opcode_tables.py --out-dir src/unveil/bytecode/opcodes")


@pytest.mark.parametrize("version", [(3, 8), (3, 9), (3, 10)], ids=lambda v: f"{v[0]}.{v[1]}")
def test_stack_effects_are_that_versions_dis(oracles: dict[tuple[int, int], Any],
                                             version: tuple[int, int]) -> None:
    """``OpcodeTable.stack_effect`` of 3.8-3.10 is that version's ``dis.stack_effect``, for
    every opcode, without and with jump, at every argument below 2**16 + 256 (the oracle's
    runs of equal steps); ``jump=None`` is the larger of the two."""
    _, orc, out = _started(oracles, version)
    assert orc.wait(timeout=300) == 0
    theirs = json.loads(out.read_text())["stack_effects"]
    t = table(version)
    assert t.stack_effects is not None
    assert {t.name(op) for op in t.stack_effects} == set(theirs)
    for name, runs in theirs.items():
        op = t.opmap[name]
        for jump, (first, steps) in zip((False, True), runs, strict=True):
            if op not in t.has_arg:
                assert t.stack_effect(op, jump=jump) == first, (name, jump)
                continue
            expected = [first]
            for step, count in steps:
                for _ in range(count):
                    expected.append(expected[-1] + step)
            ours = list(map(t.stack_effects[op][jump], range(len(expected))))
            assert t.stack_effect(op, 7, jump=jump) == expected[7]
            assert ours == expected, (name, jump, next(
                arg for arg, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b))
        arg = None if op not in t.has_arg else 3
        assert t.stack_effect(op, arg) == max(t.stack_effect(op, arg, jump=False),
                                              t.stack_effect(op, arg, jump=True))


def test_stack_effect_formulas() -> None:
    """The formulas of the tables are read as the small language the generator writes,
    and nothing else; tables of 3.11+ have no stack effects (nothing needs them)."""
    from unveil.bytecode.opcodes import _formula

    cases = {"arg - 1": [-1, 0, 9], "1 - 2 * arg": [1, -1, -19], "-arg": [0, -1, -10],
             "(arg & 255) + (arg >> 8)": [0, 1, 10], "-2 if arg == 3 else -1": [-1, -1, -1],
             "-(arg >> 2 & 1)": [0, 0, 0], "-1 - (arg & 1)": [-1, -2, -1]}
    for text, values in cases.items():
        assert [_formula(text)(a) for a in (0, 1, 10)] == values, text
    assert [_formula("(arg & 255) + (arg >> 8)")(a) for a in (255, 256, 513)] == [255, 1, 3]
    for bad in ("__import__('os')", "arg ** 2", "arg / 2", "x + 1", "f(arg)", "1 if arg else 2",
                "'1'", "True"):
        with pytest.raises((ValueError, SyntaxError)):
            _formula(bad)
    t = table((3, 10))
    assert t.stack_effect(t.opmap["BUILD_SLICE"], 3) == -2
    assert t.stack_effect(t.opmap["SETUP_FINALLY"], 0) == 6
    assert t.stack_effect(t.opmap["SETUP_FINALLY"], 0, jump=False) == 0
    with pytest.raises(ValueError):
        t.stack_effect(t.opmap["BUILD_TUPLE"])  # (needs its argument)
    with pytest.raises(ValueError):
        t.stack_effect(0)  # (no opcode 0 in 3.10)
    for version in SUPPORTED:
        assert (table(version).stack_effects is None) == (version >= (3, 11))
    with pytest.raises(ValueError):
        table((3, 11)).stack_effect(1)


def test_supported_tables_load() -> None:
    for version in SUPPORTED:
        t = table(version)
        assert t.version == version and len(t.all_opname) >= 256
        assert t.opmap["EXTENDED_ARG"] == t.extended_arg
    with pytest.raises(ValueError):
        table((3, 7))


def test_host_listing_of_live_code_is_dis() -> None:
    """On the host's own version, the listing of a live code object is the host's dis."""
    import dis

    co = compile(SNIPPETS[0][2], "closures", "exec")
    for c in [co, *(c for c in co.co_consts if hasattr(c, "co_code"))]:
        ours = [(r.opname, r.arg, r.offset) for r in listing.instructions(c)]
        assert ours == [(i.opname, i.arg, i.offset) for i in dis.get_instructions(c)]
        assert line_starts(c, sys.version_info[:2]) == dict(dis.findlinestarts(c))
