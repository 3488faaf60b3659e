"""How often each cache entry ran (its graph's calls, and for how long), and graph breaks
with PyTorch's registry id (``GBxxxx``), each distinct break listed once with its count:
real torch.compile runs under ``unveil run`` and ``unveil run --record``."""

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

SRC = str(Path(__file__).resolve().parents[2] / "src")

PROGRAM = """\
    import torch

    def f(x):
        y = torch.sin(x) * 2
        if y.sum() > 1e9:  # never true: a data-dependent graph break
            print("big")
        return y.cos()

    cf = torch.compile(f, backend="eager", dynamic=False)
    for _ in range(250):
        cf(torch.ones(3))
    for _ in range(3):
        cf(torch.ones(5))  # a recompile, and its own cache entries
"""


def unveil_run(tmp_path: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-m", "unveil", "run", *flags, "--dump", "d", str(prog)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out, json.loads((tmp_path / "d" / "manifest.json").read_text())


@pytest.mark.parametrize("mode", ["prepare_debug", "record"])
def test_each_cache_entry_counts_its_calls(mode: str, tmp_path: Path) -> None:
    out, manifest = unveil_run(tmp_path, *(["--record"] if mode == "record" else []))
    calls = {(f["function"][:6], f["compile_id"][-1]): f["hits"]["calls"]
             for f in manifest["frames"]}
    # f's two entries (shape 3, then 5) and its resume function's two
    assert calls == {("f", "0"): 250, ("f", "1"): 3, ("torch_", "0"): 250,
                     ("torch_", "1"): 3}, calls
    for frame in manifest["frames"]:
        hits = frame["hits"]
        assert 0 < hits["first_call_s"] <= hits["time_s"] < 5, hits
        assert hits["timed_calls"] == min(hits["calls"], 101)
    assert "ran 250 times" in out.stderr and "ran 3 times" in out.stderr
    entries = {e["compile_id"]: e["hits"]["calls"] for fn in manifest["functions"]
               for e in fn["cache_entries"]}
    assert sorted(entries.values()) == [3, 3, 250, 250], entries
    html = (tmp_path / "d" / "report.html").read_text()
    assert "ran 250 times" in html


def test_counting_can_be_turned_off(tmp_path: Path) -> None:
    prog = tmp_path / "off.py"
    prog.write_text(textwrap.dedent(PROGRAM).replace(
        "cf = torch", "import unveil\ndump = unveil.prepare_debug('d', count_calls=False)\n"
                      "dump.__enter__()\ncf = torch") + "dump.__exit__(None, None, None)\n")
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    frames = json.loads((tmp_path / "d" / "manifest.json").read_text())["frames"]
    assert frames and all(f["hits"] is None for f in frames)


def test_graph_breaks_carry_registry_ids_and_are_listed_once(tmp_path: Path) -> None:
    out, manifest = unveil_run(tmp_path)
    breaks = [b for f in manifest["frames"] for b in f["graph_breaks"]]
    assert len(breaks) == 2  # one per compile of f
    for brk in breaks:
        assert re.fullmatch(r"GB\d{4}", brk["gb_id"]), brk["gb_id"]
        assert brk["doc_url"].startswith("https://") and brk["doc_url"].endswith(".html")
    gb = breaks[0]["gb_id"]
    from torch._dynamo.exc import _load_gb_type_to_gb_id_map

    assert _load_gb_type_to_gb_id_map()[breaks[0]["summary"]] == gb  # PyTorch's own id
    assert f"Data-dependent branching [{gb}]" in out.stderr
    assert "1 distinct graph break(s):" in out.stderr
    assert f"2x {gb} Data-dependent branching at prog.py:5" in out.stderr
    html = (tmp_path / "d" / "report.html").read_text()
    assert f'href="{breaks[0]["doc_url"]}"' in html and ">Graph breaks<" in html


INTERRUPTED = """\
    import os, signal, torch

    def f(x):
        return torch.sin(x) + 1

    print(torch.compile(f, backend="eager")(torch.ones(2)).sum().item())

    def stop():
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
        import time
        time.sleep(5)

    stop()
"""


def test_the_run_looks_as_if_unveil_were_not_there(tmp_path: Path) -> None:
    """Ctrl-C ends `unveil run` as it ends `python script.py` (killed by SIGINT: 130 in a
    shell), the traceback starts at the script, and the frame stack of each compile
    starts at the script too (not at runpy's or unveil's frames)."""
    prog = tmp_path / "stop.py"
    prog.write_text(textwrap.dedent(INTERRUPTED))
    env = dict(os.environ, PYTHONPATH=SRC)
    plain = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, env=env)
    ours = subprocess.run([sys.executable, "-m", "unveil", "run", "--dump", "d", str(prog)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert plain.returncode == ours.returncode == -2  # (the shell shows 128 + 2)
    assert plain.stdout == ours.stdout
    shell = subprocess.run(["bash", "-c", f'"$0" -m unveil run --dump d2 {prog}; echo "rc=$?"',
                            sys.executable], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env=env)
    assert "rc=130" in shell.stdout
    traceback = ours.stderr[ours.stderr.index("Traceback"):].split("KeyboardInterrupt")[0]
    assert traceback == plain.stderr.split("KeyboardInterrupt")[0], (traceback, plain.stderr)
    assert "unveil" not in traceback and "runpy" not in traceback
    (frame,) = json.loads((tmp_path / "d" / "manifest.json").read_text())["frames"]
    assert frame["stack"][0]["file"] == str(prog), frame["stack"]
