"""Another version's bytecode, decompiled here: the text that version writes itself.

For each other CPython 3.10-3.13 installed through pyenv, that interpreter compiles a
sample of its own standard library and writes what unveil, run by it, makes of each
module; this Python reads the same files (``unveil.bytecode.pyc``, never the other
version's marshal) and must write the same text. (tests/test_cli.py has that interpreter
compile such a text back to the file's bytecode; benchmarks/foreign_pyc.py measures it
on whole standard libraries.) And what makes the text differ by host is written one way:
f-strings as 3.11 writes them, set constants in sorted order, 3.10's code as 3.10's
``ast.unparse`` writes it; 3.12+'s type parameters and aliases are written by a Python
whose ast has no nodes for them.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import unveil
from unveil.bytecode.pyc import read_pyc
from unveil.decompiler.ir import syntax
from unveil.decompiler.ir.nodes import no_arguments
from unveil.decompiler.render.emit import unparse
from unveil.verify.foreign import find_interpreter

HOST = sys.version_info[:2]
ORACLE_HOSTS = ((3, 11), (3, 13))  # (two hosts show the host does not matter; CI time)
SRC = str(Path(unveil.__file__).resolve().parent.parent)
MODULES = ["argparse", "base64", "calendar", "dataclasses", "enum", "fractions", "functools",
           "gettext", "json.decoder", "pathlib", "string", "textwrap", "typing", "zipfile"]

# (run by the other version: its pyc files, and its own unveil's text, which it compiles)
_OTHER = """
import importlib.util, importlib._bootstrap_external as ext, json, sys, warnings
from pathlib import Path
import unveil
warnings.simplefilter("ignore")
out = Path(sys.argv[1])
rows = []
for name in json.loads(sys.argv[2]):
    path = Path(importlib.util.find_spec(name).origin)
    source = path.read_bytes()
    code = compile(source, str(path), "exec", dont_inherit=True)
    pyc = out / (name + ".pyc")
    pyc.write_bytes(ext._code_to_timestamp_pyc(code, 0, len(source)))
    text = unveil.decompile(code)
    compile(text, str(path), "exec", dont_inherit=True)  # (the text compiles there)
    rows.append([name, str(pyc), text])
(out / "rows.json").write_text(json.dumps(rows))
"""


def _interpreters() -> list[tuple[tuple[int, int], str]]:
    if sys.platform == "emscripten":
        return []
    found = [(v, find_interpreter(v)) for v in ((3, 10), (3, 11), (3, 12), (3, 13)) if v != HOST]
    return [(v, path) for v, path in found if path is not None]


@pytest.mark.parametrize("version", [(3, 10), (3, 11), (3, 12), (3, 13)],
                         ids=lambda v: f"{v[0]}.{v[1]}")
def test_another_versions_files_read_as_that_version_writes_them(
        version: tuple[int, int], tmp_path: Path) -> None:
    if HOST not in ORACLE_HOSTS:
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only")
    python = dict(_interpreters()).get(version)
    if python is None:
        pytest.skip(f"CPython {version[0]}.{version[1]} is this Python, or not installed")
    subprocess.run([python, "-c", _OTHER, str(tmp_path), json.dumps(MODULES)], check=True,
                   env={**os.environ, "PYTHONPATH": SRC, "PYTHONHASHSEED": "0"})
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert len(rows) == len(MODULES)
    differ = []
    for name, pyc, theirs in rows:
        _, code = read_pyc(Path(pyc).read_bytes(), pyc)
        assert code.version == version
        text = unveil.decompile(code)  # type: ignore[arg-type]  # a code read from a file
        if text != theirs:
            differ.append(name)
    assert differ == []


def _decompiled(source: str) -> str:
    return unveil.decompile(compile(textwrap.dedent(source), "<t>", "exec"))


def test_f_strings_are_written_as_3_11_writes_them_on_every_python() -> None:
    """Quotes inside an expression part differ from the f-string's own (3.12+'s unparser
    would reuse them, which only 3.12+ can read), and the text means the same."""
    cases = {
        "x = f\"{', '.join(a)}!\"\n": "x = f\"{', '.join(a)}!\"\n",
        "x = f'{d[\"k\"]!r:>{w}}'\n": "x = f\"{d['k']!r:>{w}}\"\n",
        "x = f'''{a}\"{b}'''\n": "x = f'{a}\"{b}'\n",
        "x = f\"{f'{a}'} and {'b'}\"\n": "x = f\"{f'{a}'} and {'b'}\"\n",
    }
    for source, expected in cases.items():
        text = _decompiled(source)
        assert text == expected, (source, text)
        for a, b, d, w in ((["p", "q"], 1, {"k": "v"}, 6), ([], "z", {"k": 0}, 2)):
            mine: dict[str, object] = {"a": a, "b": b, "d": d, "w": w}
            theirs = dict(mine)
            exec(source, mine)  # noqa: S102 - the test's own code
            exec(text, theirs)  # noqa: S102
            assert mine["x"] == theirs["x"]
        ast.parse(text, feature_version=(3, 8))


def test_3_10s_code_is_written_as_3_10_writes_it_on_every_python() -> None:
    """3.10's ``ast.unparse`` puts every tuple in parentheses and writes ``lambda :``; the
    text of 3.10's code is written so on every Python (what 3.10 writes, checked with it
    in the test above), the text of other versions' code as those write it."""
    from unveil.decompiler.render.emit import unparse

    source = textwrap.dedent("""\
        a, b = c
        for k, v in x:
            pass
        f = lambda: ((y := 1), 2)
        z = x[(*a, b)], [q for q, r in s]
        w = f'{[q for q, r in s]!r:>{n}}'
        """)
    assert unparse(ast.parse(source), (3, 10)) == textwrap.dedent("""\
        (a, b) = c
        for (k, v) in x:
            pass
        f = lambda : ((y := 1), 2)
        z = (x[(*a, b)], [q for (q, r) in s])
        w = f'{[q for (q, r) in s]!r:>{n}}'""")
    if HOST >= (3, 11):
        assert unparse(ast.parse(source), (3, 11)).startswith("a, b = c\nfor k, v in x:")


def test_set_constants_are_written_in_one_order_whatever_the_hash_seed() -> None:
    source = "def f(x):\n    return x in {'pear', 'fig', 'apple', 'kiwi'} or {'b', 'a', *x}\n"
    texts = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", "import sys, unveil; print(unveil.decompile("
             "compile(sys.argv[1], '<t>', 'exec')), end='')", source],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC,
                                                 "PYTHONHASHSEED": seed}, check=False)
        if done.returncode != 0 and sys.platform == "emscripten":
            pytest.skip("no subprocesses here")
        assert done.returncode == 0, done.stderr
        texts.add(done.stdout)
    assert len(texts) == 1, texts
    assert "{'apple', 'fig', 'kiwi', 'pear'}" in texts.pop()


# ---------------------------------------------------------------- 3.9: unveil does not run
# on it, so 3.9 compiles (the files, then the text made here) and compares, as
# benchmarks/foreign_pyc.py does on its whole standard library

# (run by 3.9: compile each source to a .pyc; with texts, compare them with the files)
_COMPILE_OLD = """
import importlib._bootstrap_external as ext, json, sys
from pathlib import Path
out = Path(sys.argv[1])
for name, source in json.loads(sys.argv[2]).items():
    code = compile(source, name + ".py", "exec", dont_inherit=True)
    (out / (name + ".pyc")).write_bytes(ext._code_to_timestamp_pyc(code, 0, len(source)))
"""
_COMPARE_OLD = """
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

# each: how 3.9 lays it out differs from 3.10 (no test copied at a loop's end, dead code
# kept: the closing ``return None``, the jump after a ``raise``/``break``/``continue`` in an
# ``if`` arm with an ``else``, an ``except`` clause's clean-up at a loop's end)
OLD_LAYOUTS = {
    "while_loop": """
def bisect(a, x, lo=0, hi=None):
    if hi is None:
        hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo
""",
    "closing_return": """
def private(name, pattern):
    if len(name) >= 5 and name.startswith(pattern):
        return True
    else:
        return False

def flat(name):
    if name:
        return 1
    return 2

def contains(self, key):
    try:
        self[key]
    except KeyError:
        return False
    else:
        return True
""",
    "dead_jumps": """
def check(path):
    if path == '':
        raise ImportError('empty pathname', path='')
    elif os.path.isdir(path):
        raise ImportError('existing directory', path=path)

def encode(s):
    if isinstance(s, str):
        try:
            return s.encode('ascii')
        except UnicodeEncodeError:
            raise ValueError('not ascii')
    if isinstance(s, bytes):
        return s
    return memoryview(s).tobytes()

""",
    "return_labels": """
def getvalue(self, key, default=None):
    if key in self:
        value = self[key]
        if isinstance(value, list):
            return [x.value for x in value]
        else:
            return value.value
    else:
        return default

def getlist(self, key):
    if key in self:
        value = self[key]
        if isinstance(value, list):
            return [x.value for x in value]
        return [value.value]
    return []

def pick(xs):
    for x in xs:
        if x:
            if x > 1:
                return 1
            else:
                return 2
        y = x
    return y
""",
    "flat_after_handler": """
def from_data(s):
    if isinstance(s, str):
        try:
            return s.encode('ascii')
        except UnicodeEncodeError:
            raise ValueError('not ascii')
    if isinstance(s, bytes):
        return s
    try:
        return memoryview(s).tobytes()
    except TypeError:
        raise TypeError('not bytes') from None
""",
    "loop_jump_lines": """
def children(node):
    for name, field in node:
        if isinstance(field, int):
            yield field
        elif isinstance(field, list):
            for item in field:
                if item:
                    yield item

def skip(xs):
    for x in xs:
        if x:
            continue
        print(x)
""",
    "raising_clause_else": """
def truncate(self, pos=None):
    if pos is None:
        pos = self._pos
    else:
        try:
            pos_index = pos.__index__
        except AttributeError:
            raise TypeError(f"{pos!r} is not an integer")
        else:
            pos = pos_index()
        if pos < 0:
            raise ValueError("negative")
    del self._buffer[pos:]
    return pos

def command(packages, name):
    for pkg in packages:
        try:
            module = __import__(pkg)
        except ImportError:
            continue
        try:
            klass = getattr(module, name)
        except AttributeError:
            raise LookupError(name)
        return klass
""",
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
    "raise_else_at_end": """
def add_option(self, name, short=None):
    if name in self.index:
        raise KeyError("option conflict: already an option '%s'" % name)
    else:
        option = (name, short)
        self.table.append(option)

def handle(self, e):
    if self.level > 1:
        raise
    else:
        self.log(1, "tarfile: %s" % e)

def get(self, instance, owner=None):
    if instance is None:
        if self.abstract:
            return self
        raise AttributeError()
    elif self.fget is None:
        raise AttributeError("unreadable attribute")
    return self.fget(instance)
""",
    "raise_else_in_clause": """
def finish(trans, key, ov):
    try:
        return ov.getresult()
    except OSError as exc:
        if exc.winerror in (1, 2):
            raise ConnectionResetError(*exc.args)
        else:
            raise
""",
    "returns_in_clause": """
def dngettext(domain, one, many, n):
    try:
        t = translation(domain)
    except OSError:
        if n == 1:
            return one
        else:
            return many
    return t.ngettext(one, many, n)

def flat(domain, one, many, n):
    try:
        t = translation(domain)
    except OSError:
        if n == 1:
            return one
        return many
    return t.ngettext(one, many, n)
""",
    "else_of_the_outer_if": """
def read_ints(self, n, size):
    data = self.read(size * n)
    if size in FORMATS:
        return unpack(data)
    else:
        if not size or len(data) != size * n:
            raise InvalidFileException()
        return tuple(data)
""",
    "return_in_try_else": """
def create(self, timeout):
    sock = make(timeout)
    try:
        sock = wrap(sock, self.context)
    except:
        sock.close()
        raise
    else:
        return sock
""",
    "falls_to_the_end": """
def file_open(self, req):
    url = req.selector
    if url[:2] == '//' and req.host != 'localhost':
        if not req.host in self.get_names():
            raise URLError("only on localhost")
    else:
        return self.open_local_file(req)
""",
    "return_in_try_else_after_clauses": """
def accept(self):
    try:
        conn, addr = self.socket.accept()
    except TypeError:
        return None
    except OSError as why:
        if why.args[0] in (EWOULDBLOCK, EAGAIN):
            return None
        raise
    else:
        return conn, addr
""",
    "try_else_after_break": """
def enum_types(db):
    i = 0
    while True:
        try:
            ctype = enum_key(db, i)
        except OSError:
            break
        else:
            if '\\0' not in ctype:
                yield ctype
        i += 1
""",
    "loop_else_in_loop": """
def filemode(mode, table):
    perm = []
    for row in table:
        for bit, char in row:
            if mode & bit == bit:
                perm.append(char)
                break
        else:
            perm.append('-')
    return ''.join(perm)
""",
    "else_with_statements": """
def parse(file, parser=None, bufsize=None):
    if parser is None and not bufsize:
        return expat.parse(file)
    else:
        from xml.dom import pulldom
        return pulldom.parse(file, bufsize)

def invocation(action):
    if not action.option_strings:
        return action.metavar
    else:
        parts = []
        if action.nargs == 0:
            parts.extend(action.option_strings)
        else:
            for option in action.option_strings:
                parts.append(option)
        return ', '.join(parts)
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
    # (the dead jump after a ``raise`` goes past the ``else`` arm, whose arms all leave,
    # or to the loop's head; an ``if`` without ``else`` keeps none there)
    "raise_past_else": """
def read_events(self):
    events = self._events_queue
    while events:
        event = events.popleft()
        if isinstance(event, Exception):
            raise event
        else:
            yield event

def resolve_bases(bases):
    for base in bases:
        if not hasattr(base, '__mro_entries__'):
            continue
        if not isinstance(base, tuple):
            raise TypeError('must return a tuple')
        else:
            shift += len(base) - 1

def hash_(self):
    if self._is_special:
        if self.is_snan():
            raise TypeError('signaling NaN')
        elif self.is_nan():
            return NAN
        else:
            return INF
    return 0

def log(level):
    if not isinstance(level, int):
        if raise_exceptions:
            raise TypeError('level must be an integer')
        else:
            return
    do_log(level)

def binding(self, cb_type):
    if self._sslobj is not None:
        return self._sslobj.get_channel_binding(cb_type)
    else:
        if cb_type not in TYPES:
            raise ValueError(cb_type)
        return None
""",
    # (a ``return`` after a loop nothing leaves, or after a ``try`` whose ways out all
    # return, is kept as dead code)
    "dead_final_return": """
def gamma(random):
    while 1:
        u1 = random()
        if u1 > 0.5:
            continue
        u2 = 1.0 - random()
    return 1

def main(dests):
    try:
        for d in dests:
            work(d)
        return True
    except KeyboardInterrupt:
        return False
    return True
""",
    # (an ``if`` arm that ends in a ``try`` whose ways out all return: its handlers'
    # ``RERAISE`` right before the code after the ``if``, no jump over an ``else``)
    "try_ending_an_arm": """
def convert(mo, mapping):
    named = mo.group('named') or mo.group('braced')
    if named is not None:
        try:
            return str(mapping[named])
        except KeyError:
            return mo.group()
    if mo.group('escaped') is not None:
        return self.delimiter
    raise ValueError('Unrecognized named group in pattern')
""",
    # (3.8: an ``assert`` that ends a loop's body, its test's jump threaded to the loop's
    # next turn, loads ``AssertionError`` as a global)
    "assert_ending_a_loop": """
def register(method_to_typeid):
    for key, value in list(method_to_typeid.items()):
        assert type(key) is str, '%r is not a string' % key
        assert type(value) is str, '%r is not a string' % value
    return 1

def exitfunc(cls, pending):
    while pending:
        f = pending.pop()
        f()
        assert f not in cls._registry
""",
    # (an ``if`` arm that ends in ``while True:`` keeps no jump over an ``else`` after it)
    "endless_loop_ending_an_arm": """
def _iter_side_effect(handle, _state):
    if handle.readline.side_effect is not None:
        while True:
            yield handle.readline.return_value
    for line in _state[0]:
        yield line

def serve(self, poll):
    if poll:
        while True:
            self.handle()
    else:
        self.once()
    return 1
""",
    # (an ``if`` arm's jump over its ``else``, threaded past the ``continue`` that the
    # ``else`` falls into)
    "else_falls_into_continue": """
def read(self, fp):
    for lineno, line in enumerate(fp, start=1):
        value = line.strip()
        if not value:
            if self._empty_lines_in_values:
                if (comment_start is None and
                    cursect is not None and
                    optname and
                    cursect[optname] is not None):
                    cursect[optname].append('') # newlines added at join
            else:
                indent_level = sys.maxsize
            continue
        f(value)
""",
    # (a chained comparison's jump to an ``if`` body that only jumps, ``continue`` or the
    # jump after ``pass``, threaded on by the peephole pass)
    "chained_comparison_bodies": """
def gamma(random):
    while 1:
        u1 = random()
        if not 1e-7 < u1 < .9999999:
            continue
        u2 = 1.0 - random()
        if u2 > u1:
            return u2

def frac(numerator, denominator):
    if denominator is None:
        f()
    elif type(numerator) is int is type(denominator):
        pass
    elif isinstance(numerator, Rational):
        g()
    else:
        raise TypeError('x')
    return 1
""",
    # (``else: break``: the ``try`` body's jump to it, threaded out of the loop; the
    # ``break`` kept, dead, after the handlers' ``RERAISE``)
    "try_else_break": """
def all_tasks(loop=None):
    i = 0
    while True:
        try:
            tasks = list(_all_tasks)
        except RuntimeError:
            i += 1
            if i >= 1000:
                raise
        else:
            break
    return tasks

def collect(self):
    while len(self.active) >= self.most:
        try:
            pid = os.waitpid(-1, 0)
            self.active.discard(pid)
        except ChildProcessError:
            self.active.clear()
        except OSError:
            break
    return self.active
""",
    # (the peephole pass keeps a jump after a ``return`` where a test jumped before it
    # threaded the test on: ``if c: return x`` + ``continue``; the loop's own jump back,
    # dead, after a ``continue`` that ends its body)
    "jump_after_return": """
def subset(self, j, n):
    while j < n:
        c = rawdata[j]
        if c == "<":
            if rawdata[j:j+4] == "<!--":
                j = self.parse_comment(j, report=0)
                if j < 0:
                    return j
                continue
            j = meth(j)
        elif c == "%":
            j = j + 1
    return -1

def first(xs):
    for x in xs:
        if x > 1 and x < 5:
            return x
        continue
    return None
def get(alternatives):
    for browser in alternatives:
        if '%s' in browser:
            browser = shlex.split(browser)
            if browser[-1] == '&':
                return BackgroundBrowser(browser[:-1])
            else:
                return GenericBrowser(browser)
        else:
            try:
                command = _browsers[browser.lower()]
            except KeyError:
                command = _synthesize(browser)
            if command[1] is not None:
                return command[1]
            elif command[0] is not None:
                return command[0]()
    raise Error("could not locate runnable browser")
""",
    # (``else: pass`` keeps the ``if`` arm's jump over it, to the next instruction)
    "else_pass": """
def finish_content(self):
    if not self.headers_sent:
        self.headers.setdefault('Content-Length', "0")
        self.send_headers()
    else:
        pass

def chain(a):
    if a == 1:
        f()
    elif a == 2:
        g()
    else:
        pass
    h()

def plain(a):
    if a:
        f()
    h()
""",
    # (a loop's ``else`` clause that returns ends at no jump target: the compiler's closing
    # ``return None`` after it is dropped, so where one is kept the return was in an
    # ``else`` arm of an ``if`` before it)
    "closing_return_after_loops": """
def read(self, size=None):
    if size < 0:
        result = self._get()
        return result
    else:
        eof = False
        while len(result) < size and not eof:
            eof = not self._read_chunk()
        return result

def charref(s):
    if s[0] == '#':
        return chr(num)
    else:
        if s in _html5:
            return _html5[s]
        for x in range(len(s)-1, 1, -1):
            if s[:x] in _html5:
                return _html5[s[:x]] + s[x:]
        else:
            return '&' + s

def loop_else(xs):
    for x in xs:
        if x:
            return x
    else:
        return None
""",
    # (a ``raise`` keeps a dead jump to where its statement ends: past the clean-up of an
    # ``except ... as`` clause, past an ``else`` arm that falls into the code after it)
    "raise_ends_statement": """
def remove(self, key):
    path = os.path.join(self._path, str(key))
    try:
        f = open(path, 'rb+')
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise KeyError('No message with key: %s' % key)
        else:
            raise
    else:
        f.close()
        os.remove(path)
def load(name, import_):
    path = None
    parent = name.rpartition('.')[0]
    if parent:
        parent_module = sys.modules[parent]
        try:
            path = parent_module.__path__
        except AttributeError:
            raise ModuleNotFoundError(msg, name=name) from None
    spec = _find_spec(name, path)
    if spec is None:
        raise ModuleNotFoundError(_ERR_MSG.format(name), name=name)
    else:
        module = _load_unlocked(spec)
    if parent:
        setattr(parent_module, child, module)
    return module

def load2(name, import_):
    spec = _find_spec(name, path)
    if spec is None:
        raise ModuleNotFoundError(_ERR_MSG.format(name), name=name)
    else:
        module = _load_unlocked(spec)
    if parent:
        setattr(parent_module, child, module)
    return module
""",
    # (an ``except`` clause that breaks or continues keeps its end's jump, dead: to the
    # code after the statement, or past its ``else`` clause, back to the loop's head)
    "clause_ends_after_jumps": """
def call(self):
    lineno = 0
    while 1:
        try:
            for i in range(lineno, lineno + self.MAXLINES):
                print(self.lines[i])
        except IndexError:
            break
        else:
            lineno += self.MAXLINES
            key = None
            if key == 'q':
                break

def usage(self, actions, groups):
    for group in groups:
        try:
            start = actions.index(group)
        except ValueError:
            continue
        else:
            end = start + 1
            if actions[start:end] == group:
                g(end)

def flat(self, actions, groups):
    for group in groups:
        try:
            start = actions.index(group)
        except ValueError as e:
            continue
        end = start + 1
        if actions[start:end] == group:
            g(end)
def mk(names, flags):
    for seq in names:
        try:
            fd = _os.open(seq, flags)
        except FileExistsError:
            continue
        except PermissionError:
            if _os.name == 'x' and _os.access(dir):
                continue
            else:
                raise
        return fd
    raise FileExistsError(1)

def mk2(names, flags):
    for seq in names:
        try:
            fd = _os.open(seq, flags)
        except PermissionError:
            if _os.name == 'x':
                continue
            else:
                raise
        g(fd)
""",
    # (3.9's peephole pass threads a test's jump to a ``break``/``continue`` on a line of
    # its own: the ``if`` before it, ``if a or b: break``)
    "threaded_tests": """
def spec(self):
    aslist = []
    while self.pos < len(self.field):
        if self.field[self.pos] == '.':
            self.pos += 1
        elif self.field[self.pos] in self.atomends:
            if aslist and not aslist[-1].strip():
                aslist.pop()
            break
        else:
            aslist.append(self.getatom())
        self.gotonext()
    return aslist

def header(self, flag):
    if flag & NAME:
        while True:
            s = self.read(1)
            if not s or s == b'.':
                break
    return True

def password(read):
    pw = ''
    while 1:
        c = read()
        if c == 'r' or c == 'n':
            break
        if c == 'b':
            pw = pw[:-1]
        else:
            pw = pw + c
    return pw

def member(members, name, skipping):
    for member in members:
        if skipping:
            if name == member.name:
                skipping = False
            continue
        if name == member:
            return member
    return None
""",
    # (an ``if`` arm that breaks or continues right before the code after it had no
    # ``else``, though a ``return`` after an inner ``if``'s ``else`` keeps a dead jump)
    "flat_break_before_else_return": """
def find(langs, domain, every):
    result = []
    for lang in langs:
        if lang == 'C':
            break
        mofile = join(lang, domain)
        if exists(mofile):
            if every:
                result.append(mofile)
            else:
                return mofile
    return result

def scan(items):
    for item in items:
        if item is None:
            continue
        if item.ok:
            if item.first:
                first(item)
            else:
                return item
    return None
""",
    # (an ``if`` arm's ``break``/``continue`` keeps a dead jump to where the statement
    # ends, past its ``elif`` arm that leaves too)
    "break_then_elif": """
def end_of_line(self, last):
    while True:
        if self.blank(last):
            last = min(self.maxx, last + 1)
            break
        elif last == 0:
            break
        last = last - 1
    return last

def join(paths, seps, drive, path):
    for p in paths:
        p_drive, p_path = split(p)
        if p_path and p_path[0] in seps:
            path = p_path
            continue
        elif p_drive and p_drive != drive:
            if p_drive.lower() != drive.lower():
                drive = p_drive
                continue
            drive = p_drive
        path = path + p_path
    return drive + path

def getatom(self, ends):
    atoms = ['']
    while self.pos < len(self.field):
        if self.field[self.pos] in ends:
            break
        else:
            atoms.append(self.field[self.pos])
        self.pos += 1
    return atoms
""",
}


# each: 3.8 runs a ``finally`` body as a subroutine (``BEGIN_FINALLY``, ``CALL_FINALLY``,
# ``END_FINALLY``, ``POP_FINALLY``; ``WITH_CLEANUP_*``) where 3.9 copies it; and builds
# displays from iterables on the stack (``BUILD_*_UNPACK``) where 3.9 extends one
FINALLY_LAYOUTS = {
    "finally_exits": """
def first(xs, log):
    for x in xs:
        try:
            if x > 3:
                break
            if x < 0:
                continue
            if x == 2:
                return x
            log(x)
        finally:
            log('done', x)
    return None

def nested(a, b):
    try:
        a()
    finally:
        try:
            b()
        finally:
            a(b)
""",
    "except_as": """
def load(path, opener):
    try:
        f = opener(path)
    except OSError as e:
        print(e)
        raise ValueError(path) from e
    except (KeyError, TypeError) as e:
        return e.args
    return f
""",
    "with_exits": """
def read(paths, opener):
    for p in paths:
        with opener(p) as f:
            if f.bad:
                break
            log(f)
        with opener(p) as f:
            return f.read()

async def fetch(session, url):
    async with session.get(url) as r:
        return await r.text()
""",
    "module_assert": """
from __future__ import annotations
plat = get()
if __name__ == '__main__':
    assert plat.startswith('linux-'), 'not linux'
""",
    "try_else_leaves_loop": """
def find(path, prefix):
    while True:
        try:
            st = stat(path)
        except (OSError, ValueError):
            path = split(path)
            prefix.append(path)
        else:
            if st.mode != 1:
                raise TypeError('not a file')
            break
    return st

def charset(items):
    tail = []
    while True:
        try:
            for op in items:
                tail.append(op)
        except IndexError:
            if len(tail) == 256:
                return 1
            tail = []
        else:
            break
    return tail
""",
    "break_after_try_in_loop": """
def optimize(charset, fixup):
    tail = []
    for op, av in charset:
        while True:
            try:
                if op is fixup:
                    tail[av] = 1
                else:
                    tail.append((op, av))
            except IndexError:
                if len(tail) == 256:
                    tail += [0]
                    continue
                tail.append((op, av))
            break
    return tail
""",
    "chained_comparisons_in_conditions": """
def checked(s, us):
    assert isinstance(s, int) and 0 <= s < 86400
    return us

def options(macros):
    for macro in macros:
        if not (isinstance(macro, tuple) and 1 <= len(macro) <= 2):
            raise TypeError(macro)
        use(macro)

def unquoted(rest, value):
    if not rest:
        value = None
    elif value[:1] == "'" == value[-1:] or \\
         value[:1] == '"' == value[-1:]:
        value = value[1:-1]
    return value
""",
    "future_annotations": """
from __future__ import annotations
import typing

def pair(x: tuple[None, None] | None, cb: typing.Callable[..., None]) -> tuple[str, bool] | tuple[None, None]:
    return x

class Connection:
    callback: typing.Callable[..., None] | None = None
    exc_info: tuple[type, BaseException] | tuple[None, None, None]
""",
    "unpacked_displays": """
def merge(a, b, f, **kw):
    t = (1, *a)
    s = {*a, *b}
    d = {'k': 1, **kw, **b}
    f(*a, *b, x=1, **kw)
    return [*a, 2, *b], t, s, d, a in b, a is not b, f(1, *a)
""",
}


@pytest.mark.parametrize("version", [(3, 8), (3, 9)], ids=["3.8", "3.9"])
def test_older_versions_files_compile_back_the_same(version: tuple[int, int],
                                                   tmp_path: Path) -> None:
    """3.8's and 3.9's own compilers, given what unveil (which runs on neither) writes of
    their files, make the same code objects: layouts of their own, and stdlib modules."""
    if HOST not in ORACLE_HOSTS:
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only")
    python = None if sys.platform == "emscripten" else find_interpreter(version)
    if python is None:
        pytest.skip(f"CPython {version[0]}.{version[1]} is not installed")
    sources = {**OLD_LAYOUTS, **FINALLY_LAYOUTS}
    for name in ("base64", "bisect", "fractions", "string", "textwrap"):
        path = subprocess.run([python, "-c", f"import {name}; print({name}.__file__)"],
                              capture_output=True, text=True, check=True).stdout.strip()
        sources[name] = Path(path).read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONHASHSEED": "0"}
    subprocess.run([python, "-c", _COMPILE_OLD, str(tmp_path), json.dumps(sources)],
                   check=True, env=env)
    for name in sources:
        pyc = tmp_path / (name + ".pyc")
        _, code = read_pyc(pyc.read_bytes(), str(pyc))
        assert code.version == version
        text = unveil.decompile(code)  # type: ignore[arg-type]  # a code read from a file
        (tmp_path / (name + ".txt")).write_text(text, encoding="utf-8")
    done = subprocess.run([python, "-c", _COMPARE_OLD, str(tmp_path), json.dumps(list(sources))],
                          capture_output=True, text=True, check=True, env=env)
    rows = json.loads(done.stdout)
    # (the layouts exactly; the modules all compile, and most of their code is the same:
    # 97% of 3.9's standard library, benchmarks/foreign_pyc.py)
    layouts = {**OLD_LAYOUTS, **FINALLY_LAYOUTS}
    differ = {name: row for name, row in rows.items() if name in layouts and row[0] != row[1]}
    assert differ == {}
    assert all(row[3] is None for row in rows.values()), rows
    codes = sum(row[0] for name, row in rows.items() if name not in layouts)
    same = sum(row[1] for name, row in rows.items() if name not in layouts)
    assert same >= 0.9 * codes, rows


# PEP 695 type parameters and aliases (3.12), PEP 696 defaults (3.13): written by any
# Python, its ast with the nodes or not (``ir.syntax``)
NEWER_SYNTAX = {
    (3, 12): """
type Alias = list[int]
type Pair[T] = tuple[T, T]

def first[T](xs: list[T]) -> T:
    return xs[0]

class Box[T: int, *Ts, **P](Base):
    def get(self) -> T:
        return self.v

def bounded[S: (int, str)](x: S, /, *rest: S) -> S:
    return x

@decorated
async def fetch[K](key: K) -> K:
    return await key
""",
    (3, 13): """
def f[T = int, *Ts = *tuple[int, ...], **P = [int, str]](x: T) -> T:
    return x

class C[T: str = str]:
    pass

type A[K = bytes] = dict[K, int]
""",
}

# (run by the newer version: its .pyc of the source, and its own unveil's text of it)
_COMPILE_NEWER = """
import importlib._bootstrap_external as ext, sys
from pathlib import Path
import unveil
out, source = Path(sys.argv[1]), sys.argv[2]
code = compile(source, "newer.py", "exec", dont_inherit=True)
(out / "newer.pyc").write_bytes(ext._code_to_timestamp_pyc(code, 0, len(source)))
(out / "theirs.txt").write_text(unveil.decompile(code), encoding="utf-8")
"""


@pytest.mark.parametrize("version", sorted(NEWER_SYNTAX), ids=lambda v: f"{v[0]}.{v[1]}")
def test_newer_syntax_is_written_by_any_python(version: tuple[int, int],
                                               tmp_path: Path) -> None:
    """A generic function, class and alias of 3.12/3.13 decompiled here: the text that
    version's own unveil writes, and compiled by it, the same code objects."""
    if HOST not in ORACLE_HOSTS or HOST == version:
        pytest.skip("the other versions' interpreters are asked on hosts 3.11 and 3.13 only")
    python = None if sys.platform == "emscripten" else find_interpreter(version)
    if python is None:
        pytest.skip(f"CPython {version[0]}.{version[1]} is not installed")
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONHASHSEED": "0"}
    source = textwrap.dedent(NEWER_SYNTAX[version]).lstrip()
    subprocess.run([python, "-c", _COMPILE_NEWER, str(tmp_path), source], check=True, env=env)
    pyc = tmp_path / "newer.pyc"
    _, code = read_pyc(pyc.read_bytes(), str(pyc))
    text = unveil.decompile(code)  # type: ignore[arg-type]  # a code read from a file
    assert text == (tmp_path / "theirs.txt").read_text(encoding="utf-8")
    (tmp_path / "newer.txt").write_text(text, encoding="utf-8")
    done = subprocess.run([python, "-c", _COMPARE_OLD, str(tmp_path), json.dumps(["newer"])],
                          capture_output=True, text=True, check=True, env=env)
    codes, identical, first_different, error = json.loads(done.stdout)["newer"]
    assert (identical, error) == (codes, None), first_different


def test_type_parameters_are_printed_on_every_python() -> None:
    """The stand-in nodes of ``ir.syntax`` (this Python's own where it has them) print
    as 3.13 prints PEP 695 and PEP 696 syntax."""
    def name(n: str) -> ast.Name:
        return ast.Name(id=n, ctx=ast.Load())

    params = [syntax.type_param("TypeVar", "T", bound=name("int"), default=name("bool")),
              syntax.type_param("TypeVarTuple", "Ts"),
              syntax.type_param("ParamSpec", "P", default=ast.List(elts=[], ctx=ast.Load()))]
    alias = syntax.type_alias("A", params, ast.Subscript(value=name("dict"), slice=name("T"),
                                                          ctx=ast.Load()))
    func = ast.FunctionDef(name="f", args=no_arguments(), body=[ast.Pass()],
                           decorator_list=[], returns=None, type_params=params[:1])
    cls = ast.ClassDef(name="C", bases=[name("B")], keywords=[], body=[ast.Pass()],
                       decorator_list=[], type_params=params[1:])
    text = unparse(ast.Module(body=[alias, func, cls], type_ignores=[]))
    assert text == ("type A[T: int = bool, *Ts, **P = []] = dict[T]\n\n"
                    "def f[T: int = bool]():\n    pass\n\n"
                    "class C[*Ts, **P = []](B):\n    pass")


def test_t_strings_are_printed_on_every_python() -> None:
    """3.14's t-strings (``ir.syntax`` stand-ins before 3.14) print as 3.14 prints them:
    quotes chosen over all parts, braces escaped, the interpolation's own text."""
    def name(n: str) -> ast.Name:
        return ast.Name(id=n, ctx=ast.Load())

    spec = ast.JoinedStr(values=[ast.Constant(">10")])
    cases = {
        "t'a {x!r:>10}'": [ast.Constant("a "), syntax.Interpolation(  # type: ignore[call-arg, unused-ignore]  # its fields
            value=name("x"), str="x", conversion=114, format_spec=spec)],
        't"""it\'s "q"\\n{d[\'k\']}"""': [ast.Constant('it\'s "q"\n'), syntax.Interpolation(  # type: ignore[call-arg, unused-ignore]  # its fields
            value=name("d"), str="d['k']", conversion=-1, format_spec=None)],
        "t'{ {1: y}}{{}}'": [syntax.Interpolation(  # type: ignore[call-arg, unused-ignore]  # its fields
            value=name("y"), str="{1: y}", conversion=-1, format_spec=None), ast.Constant("{}")],
        "t''": [],
    }
    for text, values in cases.items():
        assert unparse(syntax.TemplateStr(values=values)) == text  # type: ignore[call-arg, unused-ignore]  # its fields
