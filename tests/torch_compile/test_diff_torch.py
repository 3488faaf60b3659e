"""``unveil diff`` on real ``torch.compile`` dumps: the same program run twice in fresh
processes gives dumps that are the same once normalised (other graph uuids, object ids in
guards), and a changed program (an extra operation in the graph, a new graph break) is
reported as the changed graph line and the new graph break."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

from unveil.cli import main  # noqa: E402 (after the skip)

SRC = Path(__file__).resolve().parents[2] / "src"
TIMEOUT = 120

PROGRAM = """\
    import torch

    def f(x, n):
        y = torch.sin(x) * n
        print("between graphs")
        z = y.cos(){extra}{brk}
        return z + 1

    cf = torch.compile(f, backend="eager")
    for n in (2, 3):
        print("result", cf(torch.ones(3), n).sum().item())
"""


def run_dump(tmp_path: Path, version: str, dump: str, extra: str = "", brk: str = "") -> Path:
    """Run PROGRAM (``extra`` appended to one line, ``brk`` a line after it) as
    ``version/prog.py`` under ``unveil run`` in a fresh process; return the dump."""
    script = tmp_path / version / "prog.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(textwrap.dedent(PROGRAM.format(extra=extra, brk=brk)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]), PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, "-m", "unveil", "run", "--dump", dump,
                           "--no-report", str(script.relative_to(tmp_path))],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / dump


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same program twice, once with an extra operation, once with a graph break."""
    tmp = tmp_path_factory.mktemp("diff")
    return {"first": run_dump(tmp, "v1", "first"),
            "again": run_dump(tmp, "v1", "again"),
            "extra": run_dump(tmp, "v2", "extra", extra=" * 4"),
            "break": run_dump(tmp, "v3", "break",
                              brk="\n        torch._dynamo.graph_break()")}


def test_same_program_twice_is_the_same(dumps: dict[str, Path]) -> None:
    first, again = dumps["first"], dumps["again"]
    # the raw files do differ: graph uuids in the code, object ids in the guards
    code = first / "__transformed_code_0_for_f.py"
    assert code.read_text() != (again / code.name).read_text()
    proc = subprocess.run([sys.executable, "-m", "unveil", "diff", str(first), str(again)],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"unveil diff: {first} and {again} are the same ("), \
        proc.stdout
    assert proc.stderr == ""


def test_an_extra_operation_shows_the_changed_graph_line(
        dumps: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "diff.html"
    status = main(["diff", str(dumps["first"]), str(dumps["extra"]), "--html", str(page)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert out.splitlines()[0].endswith(" differ: 1 graph"), out  # nothing else
    # the new operation, a multiplication by 4 after the cos, in the graph of the resume
    # function after the print
    assert "  torch_dynamo_resume_in_f_at_5 (prog.py) compile 1/0: dynamo_output_graph:\n" in out
    assert "\n    -    z = l_y_.cos();  l_y_ = None\n" in out, out
    assert "\n    +    z = cos * 4;  cos = None\n" in out, out
    assert "+    z = cos * 4;  cos = None</span>" in page.read_text()
    status = main(["diff", "-q", str(dumps["first"]), str(dumps["extra"])])
    assert status == 1 and len(capsys.readouterr().out.splitlines()) == 1


def test_a_new_graph_break_is_reported(dumps: dict[str, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["diff", str(dumps["first"]), str(dumps["break"])])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "graph break" in out.splitlines()[0], out
    section = out.split("\ngraph breaks:\n", 1)[1]
    new = [line for line in section.splitlines() if line.startswith("  + ")]
    assert new == ["  + prog.py:7 in f: Call to `torch._dynamo.graph_break()`"], out
    # the new resume function after the break; the graph before it lost its last line
    assert "frames:\n  + torch_dynamo_resume_in_f_at_7 (prog.py) compile 2/0\n" in out
    assert "\n    -    add = z + 1;  z = None\n" in out
    # the frames before the break are the same once Dynamo's counters are left out
    assert "  f (prog.py) compile" not in out, out
    status = main(["diff", str(dumps["break"]), str(dumps["first"])])  # and back: removed
    assert status == 1 and "  - prog.py:7 in f: " in capsys.readouterr().out
