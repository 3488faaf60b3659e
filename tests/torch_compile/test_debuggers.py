"""Breakpoints in the files ``unveil.prepare_debug`` dumps are hit by real debuggers: pdb
driven through stdin, and a DAP client (as VS Code) talking to debugpy.

A small script runs in fresh processes: once per backend without a debugger, dumping the
code (where the lines to break on and the output to expect are taken from), then in each
test under a debugger, dumping again to the same (emptied) path. Line numbers are read from
the dump, never hard-coded, and the debugged run's files are checked to hold the same text
on those lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

TIMEOUT = 120  # seconds, for every subprocess

# The graph whose code runs (compiled from its dumped file) with each backend.
GRAPH_KIND = {"eager": "dynamo_output_graph", "aot_eager": "aot_inference_graph"}

SCRIPT = textwrap.dedent('''\
    """Dump f with unveil.prepare_debug, then run it again under unveil.debug().

    argv: DUMP_DIR BACKEND MODE [MARKER_DIR]; MODE is plain (debug(pause=False)), pdb
    (debug(): pauses in pdb), dap (debug() with debugpy attached; between the dump and
    the debug block it touches MARKER_DIR/dumped and waits for MARKER_DIR/go) or ide
    (debug() with debugpy attached, breakpoints set in the previous run's files)."""
    import sys
    import time
    from pathlib import Path

    import torch

    import unveil


    def f(x, n):
        y = torch.sin(x) * n
        print("OUT: between graphs")
        return y + 1


    dump_dir, backend, mode = sys.argv[1:4]
    cf = torch.compile(f, backend=backend)
    with unveil.prepare_debug(dump_dir):
        print("OUT:", cf(torch.ones(3), 2))
    if mode == "dap":
        markers = Path(sys.argv[4])
        (markers / "dumped").touch()
        deadline = time.monotonic() + 100
        while not (markers / "go").exists():
            if time.monotonic() > deadline:
                sys.exit("no go marker")
            time.sleep(0.05)
    with unveil.debug(pause=False if mode in ("plain", "ide") else None):
        print("OUT:", cf(torch.ones(3), 2))
    print("OUT: done")
''')


@dataclass(frozen=True)
class Target:
    """A line to break on in a dumped file."""

    name: str  # the file's name in the dump directory
    line: int  # 1-based
    text: str  # the line itself, to check that a later dump holds the same


def _out_lines(stdout: str) -> list[str]:
    """The script's own output (its lines start with OUT:), whatever a debugger printed."""
    return re.findall(r"OUT:.*", stdout)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONBREAKPOINT", None)  # breakpoint() must start pdb
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "target.py"
    path.write_text(SCRIPT)
    return path


def _line_of(lines: list[str], start: int, pattern: str) -> int:
    """The index of the first line at or after `start` matching `pattern`."""
    for i in range(start, len(lines)):
        if re.search(pattern, lines[i]):
            return i
    raise AssertionError(f"no line matches {pattern!r}:\n" + "\n".join(lines))


def _targets(dump_dir: Path, backend: str) -> tuple[Target, Target]:
    """The call of the compiled graph in f's transformed code, and the first statement of
    the `forward` of the graph that runs."""
    manifest = json.loads((dump_dir / "manifest.json").read_text())
    frame = next(f for f in manifest["frames"] if f["function"] == "f")
    transformed = frame["transformed_code"]
    lines = (dump_dir / transformed).read_text().splitlines()
    graph_fn = re.escape(frame["compiled_fns"][0])
    if any(re.search(rf"\b{graph_fn}\(", line) for line in lines):  # called where it is read
        call = _line_of(lines, 0, rf"\b{graph_fn}\(")
    else:  # read into a name first (``prepare_debug(simplify=False)``: _t0 = __compiled_fn_2_...)
        bound = _line_of(lines, 0, rf"^\s*(\w+) = {graph_fn}\s*(#.*)?$")
        var = re.match(r"\s*(\w+)", lines[bound]).group(1)
        call = _line_of(lines, bound + 1, rf"\b{var}\(")
    graph = next(g for g in frame["graphs"]
                 if g["kind"] == GRAPH_KIND[backend] and g["compiled_from_file"])
    g_lines = (dump_dir / graph["file"]).read_text().splitlines()
    header_end = _line_of(g_lines, _line_of(g_lines, 0, r"^def forward\("), r":\s*$")
    body = header_end + 1
    assert g_lines[body].startswith("    ") and g_lines[body].strip(), g_lines
    return (Target(transformed, call + 1, lines[call]),
            Target(graph["file"], body + 1, g_lines[body]))


def _check_same_lines(dump_dir: Path, targets: tuple[Target, ...]) -> None:
    """The second dump has the files the first had, with the same text on the target lines."""
    for t in targets:
        path = dump_dir / t.name
        assert path.exists(), sorted(p.name for p in dump_dir.iterdir())
        line = path.read_text().splitlines()[t.line - 1]
        assert _no_uuid(line) == _no_uuid(t.text), (t, path.read_text())


def _no_uuid(line: str) -> str:
    """``line`` without the uuid Dynamo gives each compiled graph's global (new per run)."""
    return re.sub(r"(__compiled_fn_\d+)_\w+", r"\1", line)


@dataclass(frozen=True)
class PlainRun:
    """The script run once without a debugger, for one backend."""

    backend: str
    script: Path
    dump_dir: Path  # where every run of the script dumps (emptied before each)
    targets: tuple[Target, Target]  # the transformed-code line, the graph line
    expected: list[str]  # the script's output


@pytest.fixture(scope="module", params=sorted(GRAPH_KIND))
def plain(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> PlainRun:
    """Run the script without a debugger (once per backend, shared by the tests): the lines
    to break on and the output to expect. The tests then dump again to the same path."""
    backend = request.param
    tmp_path = tmp_path_factory.mktemp(f"plain_{backend}")
    script = _script(tmp_path)
    dump_dir = (tmp_path / "dump").resolve()
    proc = subprocess.run([sys.executable, str(script), str(dump_dir), backend, "plain"],
                          capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = _out_lines(proc.stdout)
    assert expected[-1] == "OUT: done" and any("tensor(" in o for o in expected), expected
    return PlainRun(backend, script, dump_dir, _targets(dump_dir, backend), expected)


def _fresh(dump_dir: Path) -> Path:
    """Remove the dump of an earlier run: a fresh directory gets the same file names."""
    shutil.rmtree(dump_dir, ignore_errors=True)
    return dump_dir


def test_pdb_stops_in_transformed_code_and_graph(plain: PlainRun) -> None:
    dump_dir, (code, graph) = _fresh(plain.dump_dir), plain.targets
    commands = [f"b {dump_dir / code.name}:{code.line}", f"b {dump_dir / graph.name}:{graph.line}",
                "c", "p x", "c", "c"]
    proc = subprocess.run([sys.executable, str(plain.script), str(dump_dir), plain.backend,
                           "pdb"], input="\n".join(commands) + "\n", capture_output=True, text=True,
                          timeout=TIMEOUT, env=_env())
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, report
    _check_same_lines(dump_dir, (code, graph))
    out = _no_uuid(proc.stdout)
    code_stop = out.find(f"> {dump_dir / code.name}({code.line})f()\n"
                         f"-> {_no_uuid(code.text.strip())}")
    graph_stop = out.find(f"> {dump_dir / graph.name}({graph.line})forward()\n"
                          f"-> {graph.text.strip()}")
    assert 0 <= code_stop < graph_stop, report
    assert "tensor([1., 1., 1.])" in out[code_stop:graph_stop], report  # p x, in f's frame
    assert "Error" not in out and "***" not in out, report  # every command was accepted
    assert _out_lines(out) == plain.expected, report


# ---------------------------------------------------------------------- debugpy (DAP)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _debuggee(plain: PlainRun, dump_dir: Path, tmp_path: Path, mode: str,
              *extra: str) -> tuple[subprocess.Popen[bytes], int, Path, Path]:
    """The script started under debugpy, waiting for a client: (process, port, stdout
    file, stderr file)."""
    port = _free_port()
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-Xfrozen_modules=off", "-m", "debugpy", "--listen",
             f"127.0.0.1:{port}", "--wait-for-client", str(plain.script), str(dump_dir),
             plain.backend, mode, *extra], stdout=out, stderr=err, env=_env())
    return proc, port, stdout, stderr


def _initialize(client: Any) -> None:  # a dap_client.DAPClient (imported in the tests)
    """The DAP handshake's first request, as VS Code sends it."""
    client.request("initialize", {"clientID": "unveil-tests", "adapterID": "debugpy",
                                  "pathFormat": "path", "linesStartAt1": True,
                                  "columnsStartAt1": True})


def _stop(client: Any, proc: subprocess.Popen[bytes]) -> None:
    """Close the DAP connection and end the debuggee if it still runs."""
    if client is not None:
        client.close()
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)


def _wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, f"the debuggee exited ({proc.returncode}) before {path}"
        assert time.monotonic() < deadline, f"timed out waiting for {path}"
        time.sleep(0.05)


def test_debugpy_stops_in_transformed_code_and_graph(plain: PlainRun, tmp_path: Path) -> None:
    pytest.importorskip("debugpy")
    from dap_client import DAPClient  # (tests/torch_compile is on sys.path: no __init__.py)

    dump_dir, targets = _fresh(plain.dump_dir), plain.targets
    markers = tmp_path / "markers"
    markers.mkdir()
    proc, port, stdout, stderr = _debuggee(plain, dump_dir, tmp_path, "dap", str(markers))
    client = None

    def report() -> str:
        return (f"stdout:\n{stdout.read_text()}\nstderr:\n{stderr.read_text()}\nevents:\n"
                + "\n".join(map(str, client.events if client else [])))

    try:
        client = DAPClient.connect("127.0.0.1", port, timeout=60)
        _initialize(client)
        attach = client.send("attach", {"justMyCode": True})  # VS Code's default
        client.event("initialized")
        # debugpy refuses breakpoints in files that do not exist yet ("Breakpoint in file
        # that does not exist.") and never hits them later, so they are set once the
        # script has dumped its code, as a user sets them in the files opened in the editor.
        client.request("configurationDone")
        client.response(attach)
        _wait_for(markers / "dumped", proc, timeout=TIMEOUT)
        _check_same_lines(dump_dir, targets)
        for t in targets:
            body = client.request("setBreakpoints", {
                "source": {"path": str(dump_dir / t.name)}, "breakpoints": [{"line": t.line}]})
            assert [b["verified"] for b in body["body"]["breakpoints"]] == [True], body
        (markers / "go").touch()

        for i, t in enumerate(targets):
            event = client.event("stopped", "terminated", "exited", timeout=TIMEOUT)
            assert event["event"] == "stopped", f"{t} was not hit\n{report()}"
            stopped = event["body"]
            assert stopped["reason"] == "breakpoint", (stopped, report())
            thread = stopped["threadId"]
            frames = client.request("stackTrace", {"threadId": thread})["body"]["stackFrames"]
            top = frames[0]
            path = top["source"]["path"]
            assert os.path.realpath(path) == os.path.realpath(dump_dir / t.name), (top, t)
            assert top["line"] == t.line, (top, t)
            if i == 0:  # in f's frame, its argument
                value = client.request("evaluate", {"expression": "x", "frameId": top["id"],
                                                    "context": "repl"})["body"]["result"]
                assert value == "tensor([1., 1., 1.])", value
            else:
                assert top["name"] == "forward", top
            client.request("continue", {"threadId": thread})
        client.event("terminated", "exited", timeout=TIMEOUT)
        assert proc.wait(timeout=TIMEOUT) == 0, report()
        stops = [e for e in client.events if e["event"] == "stopped"]
        assert len(stops) == len(targets), stops
        assert _out_lines(stdout.read_text()) == plain.expected, report()
    except BaseException:
        print(report())
        raise
    finally:
        _stop(client, proc)


def test_debugpy_breakpoints_from_the_previous_run_are_hit(plain: PlainRun,
                                                           tmp_path: Path) -> None:
    """The VS Code workflow: open the files of the last run, set breakpoints, run the
    program again under the debugger. The new run writes the same names, so they hit."""
    pytest.importorskip("debugpy")
    from dap_client import DAPClient  # (tests/torch_compile is on sys.path: no __init__.py)

    dump_dir, targets = _fresh(plain.dump_dir), plain.targets
    first = subprocess.run([sys.executable, str(plain.script), str(dump_dir), plain.backend,
                            "plain"], capture_output=True, text=True, timeout=TIMEOUT,
                           env=_env())
    assert first.returncode == 0, first.stderr
    _check_same_lines(dump_dir, targets)  # the files a user opens in the editor
    proc, port, stdout, stderr = _debuggee(plain, dump_dir, tmp_path, "ide")
    client = None
    try:
        client = DAPClient.connect("127.0.0.1", port, timeout=60)
        _initialize(client)
        attach = client.send("attach", {"justMyCode": True})
        client.event("initialized")
        for t in targets:
            body = client.request("setBreakpoints", {
                "source": {"path": str(dump_dir / t.name)}, "breakpoints": [{"line": t.line}]})
            assert [b["verified"] for b in body["body"]["breakpoints"]] == [True], body
        client.request("configurationDone")
        client.response(attach)
        hits = []
        while True:  # stops until the program ends, continuing from each
            event = client.event("stopped", "terminated", "exited", timeout=TIMEOUT)
            if event["event"] != "stopped":
                break
            thread = event["body"]["threadId"]
            top = client.request("stackTrace", {"threadId": thread})["body"]["stackFrames"][0]
            hits.append((os.path.basename(top["source"]["path"]), top["line"]))
            client.request("continue", {"threadId": thread})
        # The code runs from the new dump's files already inside prepare_debug (the first
        # call), and again inside debug().
        assert hits == [(t.name, t.line) for t in targets] * 2, hits
        assert proc.wait(timeout=TIMEOUT) == 0, stderr.read_text()
        assert _out_lines(stdout.read_text()) == plain.expected
    finally:
        _stop(client, proc)
