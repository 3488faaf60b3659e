"""3.9's layouts of ``break``/``continue`` in an ``if`` arm with an ``else`` (the dead
jump it keeps after them), of an ``except`` clause that ends at a loop's end, and of a
last ``if`` whose ``else`` is ``return None``, read as written: 3.9 compiles what unveil (which does not run on 3.9) writes and compares it
with its own files, as ``tests/test_foreign.py`` does for its other layouts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import unveil
from unveil.bytecode.pyc import read_pyc
from unveil.verify.foreign import find_interpreter

HOST = sys.version_info[:2]
ORACLE_HOSTS = ((3, 11), (3, 13))  # (as tests/test_foreign.py: two hosts, CI time)
SRC = str(Path(unveil.__file__).resolve().parent.parent)

# (run by 3.9: compile each source to a .pyc; compare the texts made here with them)
_COMPILE = """
import importlib._bootstrap_external as ext, json, sys
from pathlib import Path
out = Path(sys.argv[1])
for name, source in json.loads(sys.argv[2]).items():
    code = compile(source, name + ".py", "exec", dont_inherit=True)
    (out / (name + ".pyc")).write_bytes(ext._code_to_timestamp_pyc(code, 0, len(source)))
"""
_COMPARE = """
import json, sys
from pathlib import Path
from unveil.verify.foreign import compare_file
out = Path(sys.argv[1])
rows = {}
for name in json.loads(sys.argv[2]):
    row = compare_file((out / (name + ".pyc")).read_bytes(),
                       (out / (name + ".txt")).read_text(encoding="utf-8"))
    rows[name] = [row["codes"], row["identical"], row["first_different"], row["error"]]
print(json.dumps(rows))
"""

LAYOUTS = {
    "break_else": """
def first(xs):
    for i in xs:
        if i:
            break
        else:
            g()
    return 1

def drain(xs):
    while xs:
        if xs.pop():
            continue
        else:
            g()
        k()

def siftdown(heap, startpos, pos):
    while pos > startpos:
        parent = heap[pos - 1]
        if heap[pos] < parent:
            pos = pos - 1
            continue
        break
    return pos

def prefix(pattern, iscased):
    for op, av in pattern:
        if op is LITERAL:
            if iscased(av):
                break
            g(av)
        elif op is SUBPATTERN:
            if not av:
                break
        else:
            break
    else:
        return True
    return False
""",
    "else_return_none": """
def traceback_of(obj):
    frames = get(obj)
    if frames is not None:
        return Traceback(frames)
    else:
        return None
""",
    "clause_at_loop_end": """
def iter_fields(node):
    for field in node._fields:
        try:
            yield field, getattr(node, field)
        except AttributeError:
            pass

def skip(xs):
    for x in xs:
        try:
            a(x)
        except E:
            continue
    return 1

def named(xs):
    for x in xs:
        try:
            a(x)
        except E as e:
            pass
    for x in xs:
        try:
            a(x)
        except E as e:
            continue
""",
}


def test_py39_layouts_compile_back_the_same(tmp_path: Path) -> None:
    if HOST not in ORACLE_HOSTS:
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only")
    python = None if sys.platform == "emscripten" else find_interpreter((3, 9))
    if python is None:
        pytest.skip("CPython 3.9 is not installed")
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONHASHSEED": "0"}
    subprocess.run([python, "-c", _COMPILE, str(tmp_path), json.dumps(LAYOUTS)],
                   check=True, env=env)
    for name in LAYOUTS:
        pyc = tmp_path / (name + ".pyc")
        _, code = read_pyc(pyc.read_bytes(), str(pyc))
        assert code.version == (3, 9)
        text = unveil.decompile(code)  # type: ignore[arg-type]  # a code read from a file
        (tmp_path / (name + ".txt")).write_text(text, encoding="utf-8")
    done = subprocess.run([python, "-c", _COMPARE, str(tmp_path), json.dumps(list(LAYOUTS))],
                          capture_output=True, text=True, check=True, env=env)
    rows = json.loads(done.stdout)
    assert {name: row for name, row in rows.items() if row[0] != row[1]} == {}
