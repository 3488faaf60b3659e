"""Processes sharing one dump directory lose nothing: four ``unveil run`` of two different
programs started at once into one directory; every frame and graph of each process is in
its manifest and its files, and the summary and the report show each process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:
    pytest.skip("torch is not installed", allow_module_level=True)

from unveil.report.load import load_run  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")

ALPHA = """\
    import sys
    import time
    import torch

    def alpha(x):
        y = torch.sin(x) + 1
        print("alpha breaks here")
        return torch.sin(y) * 2

    print(torch.compile(alpha, backend="eager")(torch.ones(4)).sum().item())
    time.sleep(float(sys.argv[1]))  # (so that the processes end one after the other)
"""

BETA = """\
    import sys
    import time
    import torch

    def beta(x):
        return torch.cos(x) - 3

    cb = torch.compile(beta, backend="eager", dynamic=False)
    for n in (2, 3):
        print(cb(torch.ones(n)).sum().item())
    time.sleep(float(sys.argv[1]))
"""


def start(program: Path, dump: Path, delay: float) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "unveil", "run", "--dump", str(dump),
                             "--no-report", str(program), str(delay)], cwd=program.parent, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_four_processes_two_programs_one_dump_dir(tmp_path: Path) -> None:
    programs = {}
    for name, body in (("alpha", ALPHA), ("beta", BETA)):
        programs[name] = tmp_path / f"{name}.py"
        programs[name].write_text(textwrap.dedent(body))
    dump = tmp_path / "dump"
    # an earlier, finished run leaves files: the new runs replace them, losing nothing new
    dump.mkdir()
    (dump / "__transformed_code_0_for_alpha.py").write_text("# old\n")
    (dump / "manifest.json").write_text(json.dumps({
        "torch_version": "old", "pid": 1 << 30, "frames": [], "functions": [],
        "files": [{"file": "__transformed_code_0_for_alpha.py"}]}))
    procs = [(name, start(programs[name], dump, delay))
             for name, delay in (("alpha", 0), ("beta", 2), ("alpha", 4), ("beta", 6))]
    pids = {}
    for name, proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        pids[proc.pid] = name
    manifests = sorted(p.name for p in dump.glob("manifest*.json"))
    assert len(manifests) == 4, manifests
    assert not list(dump.glob(".active_*")), "every process said it finished"
    run = load_run(dump)
    by_pid = {d.pid: d for d in run.ranks}
    assert set(by_pid) == set(pids), (set(by_pid), pids)
    listed: list[str] = []
    for pid, name in pids.items():
        d = by_pid[pid]
        assert not d.notes, d.notes
        functions = sorted(f["function"] for f in d.frames)
        op = "sin" if name == "alpha" else "cos"
        if name == "alpha":  # a graph break: the function and its resume function
            assert functions[0] == "alpha" and len(functions) == 2, functions
            assert "torch_dynamo_resume_in_alpha" in functions[1]
        else:  # a recompile on the new shape
            assert functions == ["beta", "beta"], functions
            assert sorted(f["compile_id"] for f in d.frames) == ["0/0", "0/1"]
        for frame in d.frames:
            code = (dump / frame["transformed_code"]).read_text()
            assert "# old" not in code and name in code, frame["transformed_code"]
            assert frame["graphs"], frame
            for graph in frame["graphs"]:
                text = (dump / graph["file"]).read_text()
                assert f"torch.{op}" in text, (graph["file"], text)
        listed += [f["file"] for f in d.files]
        assert len([f for f in d.files if f["kind"] == "full_code"]) == 1
    assert len(listed) == len(set(listed)), "a file claimed by two processes"
    on_disk = {p.name for p in dump.glob("*.py")}
    assert on_disk == set(listed), on_disk ^ set(listed)
    # the summary names each process; the report has a section per frame of each
    env = dict(os.environ, PYTHONPATH=SRC)
    report = subprocess.run([sys.executable, "-m", "unveil", "report", str(dump)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    for pid in pids:
        assert f"process {pid}: " in report.stdout
    html = (dump / "report.html").read_text()
    ids = re.findall(r'<section class="searchable" id="(frame-[^"]+)"', html)
    assert len(ids) == len(set(ids)) == 8, ids
    hrefs = re.findall(r'href="#([^"]+)"', html)
    assert all(h in set(re.findall(r'id="([^"]+)"', html)) for h in hrefs)
