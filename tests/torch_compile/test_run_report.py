"""``unveil run`` and ``unveil report``: an unmodified script runs under prepare_debug with
its exit status and output kept; the summary names the graph breaks (user file:line),
recompiles (the guard that failed) and frames; the HTML report is one self-contained file
whose links all resolve; bad dump directories are explained in one sentence."""

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
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)

TIMEOUT = 240


def unveil(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "unveil", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


def script(tmp_path: Path, body: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


BREAKS_AND_RECOMPILES = """\
    import sys
    import torch

    def f(x, n):
        y = torch.sin(x) * n
        print("between graphs")
        if y.sum() > 0:
            return y.cos()
        return y + 1

    cf = torch.compile(f)
    for n in (2, 3):
        print("result", cf(torch.ones(3), n).sum().item())
    sys.exit(int(sys.argv[1]))
"""


def plain_output(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path), *args], cwd=path.parent,
                          capture_output=True, text=True, timeout=TIMEOUT)


def check_report(report: Path) -> str:
    """The report exists, needs no network, and every in-page link has its target."""
    text = report.read_text()
    assert text.startswith("<!DOCTYPE html>")
    # nothing is loaded from the network (links to PyTorch's graph-break pages open only
    # when clicked)
    assert not re.search(r"""src=["']https?://|<link[^>]+href=["']https?://""", text)
    assert all(u.startswith("https://meta-pytorch.github.io/compile-graph-break-site/")
               for u in re.findall(r"""href=["'](https?://[^"']+)""", text))
    ids = set(re.findall(r'id="([^"]+)"', text))
    hrefs = re.findall(r'href="#([^"]+)"', text)
    assert hrefs and all(h in ids for h in hrefs), [h for h in hrefs if h not in ids]
    assert 'id="search"' in text
    return text


def test_run_keeps_output_and_exit_status_and_summarises(tmp_path: Path) -> None:
    prog = script(tmp_path, BREAKS_AND_RECOMPILES)
    plain = plain_output(prog, "3")
    proc = unveil("run", "--backend", "eager", "--dump", "dump", str(prog), "3",
                  cwd=tmp_path)
    assert proc.returncode == 3 == plain.returncode, proc.stderr
    assert proc.stdout == plain.stdout
    err = proc.stderr
    assert "4 frame(s) compiled in 1 function(s)" in err, err
    assert "graph break at prog.py:6: Failed to trace builtin operator" in err, err
    assert "graph break at prog.py:7: Data-dependent branching" in err, err
    assert ("recompiled: `n` (argument of f, prog.py:4), read at prog.py:5 (`y = "
            "torch.sin(x) * n`): it was 2, now 3 (the check of 0/0)") in err, err
    assert "fix: Dynamo specialises on n: an int argument becomes dynamic" in err, err
    assert "compile 0/0: 1 graph(s), 2 attempt(s)" in err, err  # restarted at the break
    assert "report: dump/report.html" in err
    text = check_report(tmp_path / "dump" / "report.html")
    assert "Data-dependent branching" in text and "n == 2" in text
    assert 'class="guard failed"' in text  # the failed guard is marked
    assert 'class="src-link"' in text  # transformed lines lead to their source lines
    assert "2 compile attempts: Dynamo restarted 1 time(s)" in text
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert all(f["status"] == "running unveil's code" for f in manifest["frames"])


def test_run_faithful_writes_frames_statement_for_statement(tmp_path: Path) -> None:
    prog = script(tmp_path, BREAKS_AND_RECOMPILES)
    sizes = {}
    for flag in ("--faithful", None):
        dump = f"dump{flag or ''}"
        proc = unveil("run", "--backend", "eager", "--no-report", "--dump", dump,
                      *([flag] if flag else []), str(prog), "0", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        manifest = json.loads((tmp_path / dump / "manifest.json").read_text())
        assert all(f["status"] == "running unveil's code" for f in manifest["frames"])
        first = next(f for f in manifest["frames"] if f["function"] == "f")
        source = (tmp_path / dump / first["transformed_code"]).read_text()
        sizes[flag] = len(source.splitlines())
    assert sizes["--faithful"] > sizes[None], sizes  # (simplified by default)


def test_run_a_script_that_raises_keeps_the_traceback_and_the_dump(tmp_path: Path) -> None:
    prog = script(tmp_path, """\
        import torch

        @torch.compile(backend="eager")
        def f(x):
            y = x + 1
            print("before the error")
            return y * 2

        f(torch.ones(2))
        raise ValueError("the script's own error")
    """)
    proc = unveil("run", "--dump", "dump", str(prog), cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ValueError: the script's own error" in proc.stderr
    assert "frame(s) compiled" in proc.stderr  # what was dumped is still summarised
    check_report(tmp_path / "dump" / "report.html")


def test_run_training_step_and_dynamic_shapes(tmp_path: Path) -> None:
    prog = script(tmp_path, """\
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                    torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        step = torch.compile(model, backend="aot_eager")
        for batch in (2, 3, 5):
            x = torch.randn(batch, 4)
            loss = step(x).pow(2).mean()
            if loss.item() > 100:
                print("diverged")
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("loss", round(loss.item(), 4))
    """)
    plain = plain_output(prog)
    proc = unveil("run", "--dump", "dump", str(prog), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == plain.stdout
    assert "recompiled: `" in proc.stderr, proc.stderr  # batch 2 -> 3 (`input`, or `args[0]`)
    assert "its size 0 was 2, now 3" in proc.stderr, proc.stderr
    text = check_report(tmp_path / "dump" / "report.html")
    assert "aot_backward_graph" in text


def test_report_on_bad_directories_is_one_sentence(tmp_path: Path) -> None:
    missing = unveil("report", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = unveil("report", str(empty), cwd=tmp_path)
    assert proc.returncode == 2 and "is empty" in proc.stderr, proc.stderr
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("hello")
    proc = unveil("report", str(foreign), cwd=tmp_path)
    assert proc.returncode == 2 and "is not an unveil dump" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_report_on_a_crashed_run_shows_what_is_there(tmp_path: Path) -> None:
    prog = script(tmp_path, BREAKS_AND_RECOMPILES)
    assert unveil("run", "--backend", "eager", "--dump", "dump", "--no-report", str(prog),
                  "0", cwd=tmp_path).returncode == 0
    (tmp_path / "dump" / "manifest.json").unlink()  # as a killed run leaves it
    proc = unveil("report", "dump", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "no manifest.json: the run did not finish" in proc.stdout
    text = check_report(tmp_path / "dump" / "report.html")
    assert "__transformed_code_0_for_f.py" in text


DISTRIBUTED = """\
    import sys
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    diverge = sys.argv[1:] == ["diverge"]

    def step(x):
        y = torch.relu(x) * 2
        print("between graphs")
        return y.sum()

    x = torch.ones(4) * (rank + 1)
    if diverge and rank == 3:
        x = x.double()  # rank 3 compiles a different graph
    out = torch.compile(step, backend="eager")(x)
    total = torch.tensor([float(out)])
    dist.all_reduce(total)
    print("total", total.item())
    dist.destroy_process_group()
"""


@pytest.mark.parametrize("mode", ["same", "diverge"])
def test_torchrun_four_ranks_one_report(mode: str, tmp_path: Path) -> None:
    pytest.importorskip("torch.distributed")
    prog = script(tmp_path, DISTRIBUTED)
    torchrun = Path(sys.executable).with_name("torchrun")
    env = dict(os.environ, PYTHONUNBUFFERED="1", UNVEIL_RANK_WAIT="100")
    proc = subprocess.run(
        [str(torchrun), "--standalone", "--nproc-per-node", "4", "-m", "unveil",
         "run", "--dump", "dump", str(prog), mode], cwd=tmp_path, capture_output=True,
        text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("80.0") == 4, proc.stdout  # every rank: 2 * 4 * (1+2+3+4)
    dump = tmp_path / "dump"
    assert sorted(p.name for p in dump.glob("rank_*")) == [f"rank_{r}" for r in range(4)]
    for r in range(4):
        manifest = json.loads((dump / f"rank_{r}" / "manifest.json").read_text())
        assert manifest["frames"], r
    text = check_report(dump / "report.html")
    if mode == "same":
        assert "all 4 ranks compiled the same" in proc.stderr, proc.stderr
        assert "Ranks diverge" not in text
    else:
        assert "ranks DIVERGE" in proc.stderr, proc.stderr
        rank3 = [line for line in proc.stderr.splitlines() if "rank 3:" in line]
        assert any("torch.float64" in line for line in rank3), proc.stderr
        assert "Ranks diverge" in text and "torch.float64" in text
