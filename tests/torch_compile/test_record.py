"""``unveil.record``: Dynamo's own code runs, nothing is written while the program compiles,
and the files written later (at exit, in a separate process, or by ``unveil report``) are
those ``prepare_debug`` writes for the same program."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:
    pytest.skip("torch is not installed", allow_module_level=True)

SRC = str(Path(__file__).resolve().parents[2] / "src")
RECORDED = "recorded (Dynamo's code ran; the file shows it)"

PROGRAM = """\
    import sys
    import torch

    def f(x, n):
        y = torch.sin(x) * n
        print("between graphs")
        if y.sum() > 0:
            return y.cos()
        return y + 1

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            h = torch.relu(self.lin(x))
            return h.mean(dim=-1)

    class Box:
        pass

    box = Box()

    def g(x):  # Dynamo replays the stores with constants marshal cannot write
        box.dtype = x.dtype
        box.device = x.device
        return x * 2

    print("g", torch.compile(g, backend=sys.argv[1])(torch.ones(2)).sum().item(), box.dtype)
    cf = torch.compile(f, backend=sys.argv[1])
    for n in (2, 3):
        print("result", round(cf(torch.ones(3), n).sum().item(), 4))
    torch.manual_seed(0)
    net = torch.compile(Net(), backend=sys.argv[1])
    loss = net(torch.ones(2, 4)).sum()
    loss.backward()
    print("grad", round(net.lin.weight.grad.sum().item(), 4))
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # each run with a cold Inductor cache of its own: a cache hit replays what an earlier
    # program compiled (its file names in the graph prints)
    cache = tempfile.mkdtemp(prefix="inductor_cache", dir=cwd)
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONUNBUFFERED="1", TORCHINDUCTOR_CACHE_DIR=cache)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def normalised(text: str) -> str:
    """What differs between two runs of one program and says nothing: graph-name uuids,
    object ids and addresses, and the first line of a graph file (which says whether it
    ran)."""
    text = re.sub(r"(__compiled_fn_\d+)_[0-9a-f_]{36}", r"\1", text)
    text = re.sub(r"(___check_(?:obj|type)_id\([^,]+, )\d+", r"\1ID", text)
    text = re.sub(r"\bat 0x[0-9a-f]+\b", "at ADDRESS", text)  # (in reprs some guards show)
    lines = text.splitlines()
    if lines and re.match(r"# \w+ of __compiled_fn_\d+ \(compile ", lines[0]):
        lines[0] = "# (graph title)"
    return "\n".join(lines)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_record_writes_what_prepare_debug_writes(backend: str, tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    plain = run(str(prog), backend, cwd=tmp_path)
    debug = run("-m", "unveil", "run", "--dump", "A", "--no-report", str(prog), backend,
                cwd=tmp_path)
    rec = run("-m", "unveil", "run", "--record", "--dump", "B", "--no-report", str(prog),
              backend, cwd=tmp_path)
    assert plain.returncode == debug.returncode == rec.returncode == 0, rec.stderr
    assert plain.stdout == debug.stdout == rec.stdout  # (Dynamo's code runs under record)
    a, b = tmp_path / "A", tmp_path / "B"
    files_a = sorted(p.name for p in a.glob("*.py"))
    assert files_a == sorted(p.name for p in b.glob("*.py"))
    assert any("aot" in n for n in files_a) == (backend != "eager")
    for name in files_a:
        text_a, text_b = (a / name).read_text(), (b / name).read_text()
        if ".aot_" in name:  # AOT's graph code as FX had it when the trace printed it (the
            # boxed calling convention may apply already); the print is the same
            text_a, text_b = (t.split("# As Dynamo's trace prints it:")[-1]
                              for t in (text_a, text_b))
        assert normalised(text_a) == normalised(text_b), name
    ma = json.loads((a / "manifest.json").read_text())
    mb = json.loads((b / "manifest.json").read_text())
    assert len(ma["frames"]) == len(mb["frames"]) >= 5
    assert not mb["errors"], mb["errors"]
    for fa, fb in zip(ma["frames"], mb["frames"], strict=True):
        for key in ("compile_id", "function", "transformed_code", "graph_breaks",
                    "recompile_reasons", "line_map", "equivalent"):
            assert fa[key] == fb[key], key
        assert [g["file"] for g in fa["graphs"]] == [g["file"] for g in fb["graphs"]]
        assert fa["status"] == "running unveil's code" and fb["status"] == RECORDED
    assert [f["file"] for f in ma["files"]] == [f["file"] for f in mb["files"]]
    assert not list(b.glob("recording_*")), "the recording is gone once written out"
    assert "recorded (Dynamo's code ran" in rec.stderr  # the summary says so


RECORD_LATER = """\
    import os, sys, time, torch, unveil

    def g(x):
        return torch.cos(x) + 1

    with unveil.record(sys.argv[1], finish=sys.argv[2]):
        print(torch.compile(g, backend="eager")(torch.ones(2)).sum().item())
        # nothing written while recording: the markers only
        print("while recording:", sorted(os.listdir(sys.argv[1])))
        time.sleep(float(os.environ.get("HOLD", "0")))  # (so that two processes overlap)
"""


def record_later(tmp_path: Path) -> tuple[Path, Path]:
    """The program of :data:`RECORD_LATER`, written out, and the dump directory it takes."""
    prog = tmp_path / "later.py"
    prog.write_text(textwrap.dedent(RECORD_LATER))
    return prog, tmp_path / "d"


def test_record_writes_nothing_while_recording_and_report_finishes(tmp_path: Path) -> None:
    prog, dump = record_later(tmp_path)
    out = run(str(prog), str(dump), "later", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    listed = re.search(r"while recording: (\[.*\])", out.stdout)
    assert listed is not None
    assert all(n.startswith(".") for n in eval(listed.group(1))), listed.group(1)  # noqa: S307
    assert [p.name for p in dump.glob("recording_*.marshal")], "a recording is left"
    assert not list(dump.glob("*.py"))
    report = run("-m", "unveil", "report", str(dump), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "1 frame(s) compiled" in report.stdout
    manifest = json.loads((dump / "manifest.json").read_text())
    (frame,) = manifest["frames"]
    assert frame["status"] == RECORDED and frame["equivalent"]
    assert "torch.cos" in (dump / frame["graphs"][0]["file"]).read_text()
    assert "def g(x):" in (dump / frame["transformed_code"]).read_text()
    assert not list(dump.glob("recording_*")) and (dump / "report.html").exists()


def test_a_recording_is_reported_by_another_python_version(tmp_path: Path) -> None:
    """``unveil report`` of a recording by another Python version (no torch there): the
    same files as this Python writes for it, each frame said not checked against the
    recorded code."""
    import shutil

    from unveil.verify.foreign import find_interpreter

    others = [p for v in ((3, 13), (3, 12), (3, 10)) if v != sys.version_info[:2]
              and (p := find_interpreter(v)) is not None]
    if not others:
        pytest.skip("no other CPython 3.10-3.13 installed through pyenv")
    prog, dump = record_later(tmp_path)
    assert run(str(prog), str(dump), "later", cwd=tmp_path).returncode == 0
    there = tmp_path / "there"
    shutil.copytree(dump, there)
    assert run("-m", "unveil", "report", str(dump), "--no-html", cwd=tmp_path).returncode == 0
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run([others[0], "-m", "unveil", "report", str(there), "--no-html"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in dump.glob("*.py"))
    assert written == sorted(p.name for p in there.glob("*.py")) and written
    for name in written:
        assert (dump / name).read_text() == (there / name).read_text(), name
    (frame,) = json.loads((there / "manifest.json").read_text())["frames"]
    assert frame["status"] == RECORDED
    assert frame["equivalence"].startswith("not checked against Dynamo's code: it was "
                                           "recorded by Python 3."), frame["equivalence"]


def test_record_finishes_in_a_separate_process(tmp_path: Path) -> None:
    prog, dump = record_later(tmp_path)
    out = run(str(prog), str(dump), "process", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    deadline = time.time() + 120
    while not (dump / "manifest.json").exists():
        assert time.time() < deadline, sorted(os.listdir(dump))
        time.sleep(0.2)
    manifest = json.loads((dump / "manifest.json").read_text())
    assert [f["status"] for f in manifest["frames"]] == [RECORDED]
    assert manifest["pid"] != os.getpid()


def test_two_finishers_write_each_recording_once(tmp_path: Path) -> None:
    prog, dump = record_later(tmp_path)
    env = dict(os.environ, PYTHONPATH=SRC, HOLD="4")
    recorders = [subprocess.Popen([sys.executable, str(prog), str(dump), "later"], env=env,
                                  cwd=tmp_path) for _ in range(2)]  # at once, one directory
    assert [p.wait(timeout=300) for p in recorders] == [0, 0]
    assert len(list(dump.glob("recording_*.marshal"))) == 2
    # a later run into the directory replaces what was not written out, as a finished dump
    assert run(str(prog), str(tmp_path / "again"), "later", cwd=tmp_path).returncode == 0
    assert run(str(prog), str(tmp_path / "again"), "later", cwd=tmp_path).returncode == 0
    assert len(list((tmp_path / "again").glob("recording_*.marshal"))) == 1
    finishers = [subprocess.Popen([sys.executable, "-m", "unveil", "report", str(dump),
                                   "--quiet", "--no-html"], env=env) for _ in range(2)]
    assert [p.wait(timeout=120) for p in finishers] == [0, 0]
    manifests = list(dump.glob("manifest*.json"))
    assert len(manifests) == 2
    names = [json.loads(m.read_text())["frames"][0]["transformed_code"] for m in manifests]
    assert sorted(names) == ["__transformed_code_0_for_g.py", "__transformed_code_1_for_g.py"]


def test_constants_marshal_cannot_write_travel_as_their_repr() -> None:
    """A recording keeps code whose constants marshal cannot write (alone, in a tuple, in
    nested code): they come back as objects with the same repr, decompiled alike."""
    import marshal

    import unveil
    from unveil.torch.record import RecordedConstant, _portable, restored

    def f(box):
        box.dtype = None
        box.pair = (1, None)

        def g():
            return None
        return g

    dtype, device = torch.float32, torch.device("cpu")
    code = f.__code__
    inner = next(c for c in code.co_consts if isinstance(c, type(code)))
    inner = inner.replace(co_consts=tuple(device if c is None else c for c in inner.co_consts))
    consts = [dtype if c is None else (1, device) if c == (1, None) else inner
              if isinstance(c, type(code)) else c for c in code.co_consts]
    code = code.replace(co_consts=tuple(consts))
    table: list[object] = []
    portable = _portable(code, table)
    assert table == [dtype, device]  # (each object once: the decompiler names it once)
    reprs: list[object] = [repr(c) for c in table]
    back = restored(marshal.loads(marshal.dumps(portable)), reprs)
    assert unveil.decompile(back) == unveil.decompile(code)
    flat = [c for c in back.co_consts if not isinstance(c, type(code))]
    assert any(isinstance(c, RecordedConstant) and repr(c) == repr(dtype) for c in flat)
    assert any(type(c) is tuple and isinstance(c[1], RecordedConstant) for c in flat)
