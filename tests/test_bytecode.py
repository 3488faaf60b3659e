"""unveil.bytecode.instructions: listing code without running its constants' code."""
# pyodide-compatible

from __future__ import annotations

import dis
import gc
import sys
import weakref
from collections.abc import Iterator
from types import CodeType

from unveil.bytecode import instructions, listing


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


def _all_codes(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _all_codes(const)


def _same(mine: listing.Raw, theirs: listing.Raw) -> bool:
    if mine.opname == "KW_NAMES" and theirs.argval is dis.UNKNOWN:  # 3.11's dis leaves it
        return mine[:3] == theirs[:3] and mine[4:] == theirs[4:]
    return mine[:3] == theirs[:3] and mine[4:] == theirs[4:] and (
        mine.argval is theirs.argval
        or type(mine.argval) is type(theirs.argval) and mine.argval == theirs.argval)


# every kind of instruction: jumps both ways, EXTENDED_ARG (many names, a long jump),
# cells, f-strings, comparisons, operators, imports, with, async, comprehensions
_SOURCE = "\n".join([
    "import os.path as p",
    "from json import loads",
    *(f"v{k} = {k} * 1.5" for k in range(300)),
    "def f(a, *b, c=1, **d):",
    "    x = [i for i in b if i > a]",
    "    def g(): return x, a",
    "    while a and not b or c is None:",
    "        a -= 1",
    *("        c = c + a" for _ in range(80)),
    "    try:",
    "        with open(a) as fh: y = f'{fh!r:>10} {a}'",
    "    except (OSError, ValueError) as e:",
    "        raise RuntimeError(e) from None",
    "    finally:",
    "        del x",
    "    return a in b, a not in d, a @ c, -a, ~a, b[1:2], {**d}, g",
    "async def h(xs):",
    "    async for x in xs:",
    "        await x",
    "    async with xs as y: return [z async for z in y]",
])


def test_listing_is_what_dis_gives_on_every_kind_of_instruction() -> None:
    import inspect
    import json.decoder

    sources = [_SOURCE, inspect.getsource(json.decoder), inspect.getsource(dis)]
    checked = 0
    for source in sources:
        for code in _all_codes(compile(source, "<listing>", "exec")):
            mine, theirs = listing._decode(code), listing._from_dis(code)
            assert mine is not None
            assert len(mine) == len(theirs), code.co_name
            for a, b in zip(mine, theirs, strict=True):
                assert _same(a, b), (code.co_name, a, b)
            checked += len(mine)
    assert checked > 4000
    ops = {i.opname for s in sources for c in _all_codes(compile(s, "<l>", "exec"))
           for i in listing._decode(c) or ()}
    assert {"EXTENDED_ARG", "BINARY_OP" if sys.version_info >= (3, 11) else "BINARY_ADD",
            "COMPARE_OP", "LOAD_DEREF"} <= ops


def test_listing_names_operators_and_comparisons() -> None:
    def f(a: int, b: int) -> object:
        return a + b if a < b else a is b

    shown = {(i.opname, i.argrepr) for i in instructions(f.__code__) if i.argrepr}
    assert ("COMPARE_OP", "<") in shown or ("COMPARE_OP", "bool(<)") in shown
    if sys.version_info >= (3, 11):
        assert ("BINARY_OP", "+") in shown


def test_code_with_an_opcode_the_reader_does_not_know_is_listed_by_dis(monkeypatch) -> None:
    def f(a: int) -> int:
        return a * 2

    code = f.__code__.replace(co_consts=f.__code__.co_consts)  # (not remembered yet)
    monkeypatch.setattr(listing.tables(sys.version_info[:2]), "known", frozenset())
    assert listing._decode(code) is None
    listed = instructions(code)
    assert [(i.opname, i.offset) for i in listed] == \
        [(i.opname, i.offset) for i in dis.get_instructions(code)]


def test_layout_facts_follow_the_version_of_the_code_not_the_host() -> None:
    """The decompiler reads how code is laid out from the version that compiled it: a
    code object that says it comes from another version gets that version's layout."""
    from types import SimpleNamespace

    from unveil.bytecode import HOST, Bytecode, Layout, layout_of

    assert layout_of(compile("x = 1", "<t>", "exec")) is HOST
    assert HOST.version == sys.version_info[:2]
    old, new, newest = Layout.of((3, 10)), Layout.of((3, 12)), Layout.of((3, 14))
    assert (old.cold_handlers, old.else_after_body, old.copied_break_returns,
            old.inlined_comprehensions) == (False, False, True, False)
    assert (new.cold_handlers, new.else_after_body, new.copied_break_returns,
            new.inlined_comprehensions, new.copied_loop_tests) == (True, True, False, True, True)
    assert (newest.copied_loop_tests, newest.folded_not_tests) == (False, False)
    foreign = (3, 10) if sys.version_info >= (3, 12) else (3, 12)
    fake = SimpleNamespace(version=foreign)
    assert layout_of(fake) is Layout.of(foreign)  # type: ignore[arg-type]  # (a stand-in)
    bc = Bytecode(fake, [], [])
    assert bc.layout.version == foreign


def test_line_tables_read_from_their_bytes_as_the_interpreter_reads_them() -> None:
    """bytecode.lines reads a code object's own line table (what a code object read from
    another version's file has): the same lines, and on 3.11+ positions, as the live code
    object gives."""
    import inspect
    import json.decoder

    from unveil.bytecode.lines import co_lines, co_positions

    version = sys.version_info[:2]
    checked = 0
    for source in (_SOURCE, inspect.getsource(json.decoder), inspect.getsource(dis)):
        for code in _all_codes(compile(source, "<lines>", "exec")):
            if version >= (3, 11):
                assert co_positions(code) == list(code.co_positions()), code.co_name
            ours = {off: line for start, end, line in co_lines(code, version)
                    for off in range(start, end, 2)}
            theirs = {off: line for start, end, line in code.co_lines()
                      for off in range(start, end, 2)}
            assert ours == theirs, code.co_name
            checked += 1
    assert checked > 40
