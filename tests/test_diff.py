"""``unveil diff DIR_A DIR_B`` on dump directories written by hand, as
``unveil.torch.dump`` writes them (no torch): the exit status says whether two dumps are
the same once what differs between runs of one program (uuids, object ids, compile ids in
headers, the dump directory) is left out; frames, graphs, transformed code, guards, graph
breaks and recompiles that differ are each reported, in the terminal and in HTML."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from unveil.cli import main
from unveil.report.diff import compare, normalise_guard, normalise_names
from unveil.report.load import load_run

UUID_A = "eda3d1a8_d598_40fa_b599_7de648d982a6"
UUID_B = "4d741e87_9947_4e50_822c_260498ff7c06"

GRAPH = """\
# dynamo_output_graph of __compiled_fn_{g} (compile {cid}): the code that runs, compiled from this file by unveil
# (the readable print with shapes and source lines is at the end)

def forward(self, L_x_ : torch.Tensor):
    l_x_ = L_x_
    sin = torch.sin(l_x_);  l_x_ = None
    y = sin * {factor};  sin = None
    return (y,)


# ----------------------------------------------------------------------
# As Dynamo's trace prints it:
# class GraphModule(torch.nn.Module):
#     def forward(self, L_x_: "f32[3][1]cpu"):
#         l_x_ = L_x_
#
#         # File: prog.py:4 in f, code: y = torch.sin(x) * n
#         sin: "f32[3][1]cpu" = torch.sin(l_x_);  l_x_ = None
#         y: "f32[3][1]cpu" = sin * {factor};  sin = None
#         return (y,)
"""

# the same graph where only the trace's print was at hand (Inductor's cache hit)
PRINTED_GRAPH = """# dynamo_output_graph of __compiled_fn_{g} (compile {cid}), as Dynamo's structured trace prints it; written by unveil.
class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3][1]cpu"):
        l_x_ = L_x_

        # File: prog.py:4 in f, code: y = torch.sin(x) * n
        sin: "f32[3][1]cpu" = torch.sin(l_x_);  l_x_ = None
        y: "f32[3][1]cpu" = sin * {factor};  sin = None
        return (y,)
"""

TRANSFORMED = """\
# Dynamo's code for f ({src}:3), compile {cid}: what runs when it is called
# and its guards hold (guards: full_code_for_f_*.py).
def f(x, n):
    graph_out_0 = __compiled_fn_{g}_{uuid}(x)  # the graph in __compiled_fn_{g}.dynamo_output_graph.0.py
    return __resume_at_76_{r}([], [], print('between graphs'), graph_out_0[0])  # the rest of f
"""

GUARDS = [
    "utils_device.CURRENT_DEVICE == None",
    "L['n'] == 2",
    "check_tensor(L['x'], Tensor, torch.float32, size=[3], stride=[1])",
    "___check_obj_id(G['torch'], {oid}), type=<class 'module'>",
    "___check_type_id(L['n'], {tid})  # type=<class 'int'>",
    "ID_MATCH: ___check_obj_id(G['torch'].sin, {oid})",
]


def graph_break(line: int, summary: str, user_file: str = "prog.py") -> dict[str, Any]:
    return {"reason": f"Encountered graph break:\n\n{summary}\n  Explanation: ...",
            "user_file": user_file, "user_line": line, "summary": summary, "user_stack": []}


def frame(cid: str, function: str = "f", *, source: str = "prog.py", uuid: str = UUID_A,
          oid: int = 140391747264224, tid: int = 140391760624864,
          breaks: list[dict[str, Any]] | None = None,
          recompile_reasons: list[str] | None = None, n: int = 0,
          graph_no: int = 1) -> dict[str, Any]:
    """A manifest frame; its files (names) follow the numbers ``n`` and ``graph_no``."""
    return {
        "compile_id": cid, "function": function, "qualname": function,
        "source_file": source, "first_line": 3,
        "transformed_code": f"__transformed_code_{n}_for_{function}.py",
        "status": "running unveil's code", "identical": False, "equivalent": True,
        "equivalence": "3 paths compared", "error": None,
        "compiled_fns": [f"__compiled_fn_{graph_no}_{uuid}"], "resume_fns": [],
        "graphs": [{"compiled_fn": f"__compiled_fn_{graph_no}", "kind": "dynamo_output_graph",
                    "file": f"__compiled_fn_{graph_no}.dynamo_output_graph.0.py",
                    "compiled_from_file": True}],
        "graph_breaks": breaks if breaks is not None else [graph_break(5, "Failed to trace "
                                                                          "builtin operator")],
        "recompile_reasons": recompile_reasons or [], "compile_time_s": 0.09,
        "guards": [g.format(oid=oid, tid=tid) for g in GUARDS], "stack": [],
        "restart_reasons": [], "line_map": []}


def write_dump(directory: Path, frames: list[dict[str, Any]], *, factor: str = "2",
               uuid: str = UUID_A, skipped: list[dict[str, Any]] | None = None,
               pid: int = 1234, manifest: str = "manifest.json") -> Path:
    """A dump directory holding ``frames`` (their transformed code and graph files written
    from the templates above) and its manifest.json."""
    directory.mkdir(parents=True, exist_ok=True)
    listed: list[dict[str, str]] = []
    for f in frames:
        name = f["transformed_code"]
        src = f["source_file"]
        number = f["graphs"][0]["compiled_fn"].rsplit("_", 1)[1]
        (directory / name).write_text(TRANSFORMED.format(
            src=src, cid=f["compile_id"], uuid=uuid, g=number, r=int(number) + 2))
        listed.append({"file": name, "kind": "transformed_code", "compile_id": f["compile_id"]})
        for g in f["graphs"]:
            (directory / g["file"]).write_text(GRAPH.format(cid=f["compile_id"], factor=factor,
                                                            g=number))
            listed.append({"file": g["file"], "kind": g["kind"], "compile_id": f["compile_id"]})
    data = {"torch_version": "2.13.0+cpu", "pid": pid, "frames": frames, "functions": [],
            "files": listed, "skipped_frames": skipped or [], "errors": []}
    (directory / manifest).write_text(json.dumps(data, indent=2))
    return directory


def diff(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main(["diff", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "a", [frame("0/0")])


def test_equal_dumps_exit_0(tmp_path: Path, base: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")])
    status, out, err = diff(capsys, base, other)
    assert status == 0, out
    assert out == f"unveil diff: {base} and {other} are the same (1 frame, 1 graph)\n"
    assert err == ""
    assert diff(capsys, base, base)[0] == 0


def test_changed_graph_exits_1_and_shows_the_line(tmp_path: Path, base: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")], factor="3")
    status, out, _ = diff(capsys, base, other)
    assert status == 1, out
    assert out.splitlines()[0] == f"unveil diff: {base} and {other} differ: 1 graph"
    assert "graphs:\n  f (prog.py) compile 0/0: dynamo_output_graph:\n" in out
    assert "\n    -    y = sin * 2;  sin = None\n" in out
    assert "\n    +    y = sin * 3;  sin = None\n" in out
    assert f"--- {base}/__compiled_fn_1.dynamo_output_graph.0.py" in out
    # the unchanged lines around it are context, not differences
    assert "\n         sin = torch.sin(l_x_);  l_x_ = None\n" in out
    result = compare(load_run(base), load_run(other))
    assert result.counts() == {"frames": 0, "graphs": 1, "transformed code": 0, "guards": 0,
                               "graph breaks": 0, "recompiles": 0}


def test_uuids_object_ids_compile_ids_and_paths_say_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same program run twice: other uuids and object ids; another function compiled
    # first in the second run shifts the compile ids and Dynamo's counters; the script in
    # another directory; the graph file's header names its dump directory
    a = write_dump(tmp_path / "a", [frame("0/0", source="/home/u/v1/prog.py")])
    b_frames = [frame("1/0", source="/home/u/v2/prog.py", uuid=UUID_B, oid=139707428462864,
                      tid=139707441052896, graph_no=3)]
    b = write_dump(tmp_path / "b", b_frames, uuid=UUID_B)
    for run, number in ((a, 1), (b, 3)):
        graph = run / f"__compiled_fn_{number}.dynamo_output_graph.0.py"
        graph.write_text(f"# written to {run.resolve()}/{graph.name}\n" + graph.read_text())
    status, out, _ = diff(capsys, a, b)
    assert status == 0, out
    assert "are the same (1 frame, 1 graph)" in out
    # a real difference still shows, with the path normalised away
    (b / "__transformed_code_0_for_f.py").write_text(
        (b / "__transformed_code_0_for_f.py").read_text().replace("(x)", "(x, n)"))
    status, out, _ = diff(capsys, a, b)
    assert status == 1
    assert "f (prog.py) compile 0/0 -> 1/0:" in out
    assert "+    graph_out_0 = __compiled_fn_N(x, n)" in out
    assert UUID_B not in out and "/home/u/v2" not in out


def test_a_graph_only_printed_is_compared_by_its_print(
        tmp_path: Path, base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")])
    graph = other / "__compiled_fn_1.dynamo_output_graph.0.py"
    graph.write_text(PRINTED_GRAPH.format(g=1, cid="0/0", factor="2"))
    status, out, _ = diff(capsys, base, other)
    assert status == 0, out
    graph.write_text(PRINTED_GRAPH.format(g=1, cid="0/0", factor="7"))
    status, out, _ = diff(capsys, base, other)
    assert status == 1
    assert "dynamo_output_graph (as the trace prints it: one dump has only that):" in out
    assert '\n    -        y: "f32[3][1]cpu" = sin * 2;  sin = None\n' in out
    assert '\n    +        y: "f32[3][1]cpu" = sin * 7;  sin = None\n' in out


def test_normalise_names() -> None:
    # (torch 2.8 gives resume functions a uuid too)
    for text in ("__resume_at_76_3_dfb9c949_6f3a_42ad_8ecf_1094f695efbb(y)",
                 "__resume_at_76_9(y)"):
        assert normalise_names(text) == "__resume_at_76_N(y)", text
    assert normalise_names(f"__compiled_fn_12_{UUID_B}(x), __builtins_dict___3") == \
        "__compiled_fn_N(x), __builtins_dict___N"


def test_normalise_guard() -> None:
    assert normalise_guard("___check_obj_id(G['torch'], 140391747264224), type=<class 'module'>") \
        == "___check_obj_id(G['torch'], <id>), type=<class 'module'>"
    assert normalise_guard("___check_type_id(L['self'].layers[0], 94123)") \
        == "___check_type_id(L['self'].layers[0], <id>)"
    assert normalise_guard("TYPE_MATCH: type(L['x']) is 94412345678") \
        == "TYPE_MATCH: type(L['x']) is <id>"
    assert normalise_guard("L['n'] == 123456") == "L['n'] == 123456"  # a value: kept
    # (torch 2.11 shows the checked object's repr, with its address)
    assert normalise_guard("___check_obj_id(G['torch'].sin, 140), type=<built-in method sin "
                           "of type object at 0x7fb0b5ee9fa0>") == \
        "___check_obj_id(G['torch'].sin, <id>), type=<built-in method sin of type object " \
        "at <address>>"


def test_added_frame_is_reported(tmp_path: Path, base: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0"), frame("1/0", "g", graph_no=4, breaks=[])])
    status, out, _ = diff(capsys, base, other)
    assert status == 1
    assert out.splitlines()[0].endswith("differ: 1 frame")
    assert "frames:\n  + g (prog.py) compile 1/0\n" in out
    status, out, _ = diff(capsys, other, base)  # and the other way round: removed
    assert status == 1 and "frames:\n  - g (prog.py) compile 1/0\n" in out


def test_removed_guard_is_reported(tmp_path: Path, base: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    changed = frame("0/0", oid=1, tid=2)  # (other ids: not a difference)
    changed["guards"] = [g for g in changed["guards"] if g != "L['n'] == 2"]
    changed["guards"].append("L['n'] == 3")
    other = write_dump(tmp_path / "b", [changed])
    status, out, _ = diff(capsys, base, other)
    assert status == 1
    assert out.splitlines()[0].endswith("differ: 2 guards")
    assert "guards:\n  f (prog.py) compile 0/0:\n    + L['n'] == 3\n    - L['n'] == 2\n" in out


def test_new_graph_break_is_reported(tmp_path: Path, base: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    breaks = [graph_break(5, "Failed to trace builtin operator"),
              graph_break(7, "Data-dependent branching", "/somewhere/prog.py")]
    skipped = [{"compile_id": "2/0", "function": "h", "source_file": "prog.py",
                "first_line": 20, "reason": "graph break in a loop",
                "graph_breaks": [graph_break(22, "Unsupported call")], "stack": []}]
    other = write_dump(tmp_path / "b", [frame("0/0", breaks=breaks)], skipped=skipped)
    status, out, _ = diff(capsys, base, other)
    assert status == 1
    assert out.splitlines()[0].endswith("differ: 1 frame, 2 graph breaks")
    assert "  + prog.py:7 in f: Data-dependent branching\n" in out
    assert "  + prog.py:22 in h: Unsupported call (frame run without compiling)\n" in out
    assert "  + h (prog.py) run without compiling\n" in out
    assert "Failed to trace builtin operator" not in out  # in both


def test_new_recompile_is_reported(tmp_path: Path, base: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    recompiled = frame("0/1", n=1, graph_no=5,
                       recompile_reasons=["0/0: L['n'] == 2  # n  # prog.py:4 in f"])
    other = write_dump(tmp_path / "b", [frame("0/0"), recompiled])
    status, out, _ = diff(capsys, base, other)
    assert status == 1
    assert out.splitlines()[0].endswith("differ: 1 frame, 1 recompile")
    assert "recompiles:\n  + f (prog.py) recompile 1: L['n'] == 2 failed\n" in out
    assert "+ f (prog.py) compile 0/1" in out


def test_not_a_dump_is_one_sentence_and_exit_2(tmp_path: Path, base: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("hello")
    for args in ((base, foreign), (tmp_path / "nowhere", base)):
        status, out, err = diff(capsys, *args)
        assert status == 2 and out == ""
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert err.startswith("unveil: ")
    assert "is not an unveil dump" in diff(capsys, base, foreign)[2]
    status, _, err = diff(capsys, base)  # one directory only: a usage error
    assert status == 2 and "DIR_B" in err


def test_html_has_the_changed_line_escaped(tmp_path: Path, base: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")], factor="(x < 2) & <b>")
    page = tmp_path / "out" / "diff.html"
    page.parent.mkdir()
    status, out, _ = diff(capsys, base, other, "--html", page)
    assert status == 1
    assert out.rstrip().endswith(f"html: {page}")
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "no network resources"
    assert "<script" not in text
    assert ('<span class="add">+    y = sin * (x &lt; 2) &amp; &lt;b&gt;;  sin = None</span>'
            in text)
    assert '<span class="del">-    y = sin * 2;  sin = None</span>' in text
    assert "<b>;" not in text  # nothing of the dump's text is markup
    assert 'href="#graphs"' in text and 'id="graphs"' in text  # the summary links there
    same = tmp_path / "same.html"
    assert diff(capsys, base, base, "--html", same)[0] == 0
    assert 'class="same"' in same.read_text()


def test_quiet_prints_the_verdict_only(tmp_path: Path, base: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")], factor="3")
    status, out, _ = diff(capsys, "-q", base, other)
    assert status == 1 and out == f"unveil diff: {base} and {other} differ: 1 graph\n"


def test_long_diffs_are_cut_in_the_terminal_only(tmp_path: Path, base: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0")])
    graph = other / "__compiled_fn_1.dynamo_output_graph.0.py"
    graph.write_text(graph.read_text() + "".join(f"# line {i}\n" for i in range(100)))
    page = tmp_path / "diff.html"
    status, out, _ = diff(capsys, base, other, "--html", page)
    assert status == 1
    assert "# line 30" in out and "# line 99" not in out
    assert re.search(r"\.\.\. \d+ more lines \(all of them in .*diff\.html\)", out), out
    assert "# line 99" in page.read_text()


def test_ranks_are_compared_rank_by_rank(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for run in (a, b):
        write_dump(run / "rank_0", [frame("0/0")])
    write_dump(a / "rank_1", [frame("0/0")])
    diverged = copy.deepcopy(frame("0/0"))
    diverged["guards"].append("L['x'].dtype == torch.float64")
    write_dump(b / "rank_1", [diverged])
    status, out, _ = diff(capsys, a, b)
    assert status == 1, out
    assert "guards:\n  rank 1: f (prog.py) compile 0/0:\n    + L['x'].dtype == torch.float64\n" \
        in out
    write_dump(b / "rank_2", [frame("0/0")])
    status, out, _ = diff(capsys, a, b)
    assert "  rank 2:\n    + f (prog.py) compile 0/0\n" in out


def test_processes_sharing_a_directory(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # a main process and a worker (its own manifest) that both compiled f: the process
    # ids differ from run to run and say nothing
    worker = frame("0/0", n=1, graph_no=7)
    for run, pids in (("a", (100, 200)), ("b", (300, 400))):
        write_dump(tmp_path / run, [frame("0/0")], pid=pids[0])
        write_dump(tmp_path / run, [copy.deepcopy(worker)], pid=pids[1],
                   manifest=f"manifest_{pids[1]}.json")
    status, out, _ = diff(capsys, tmp_path / "a", tmp_path / "b")
    assert status == 0, out
    assert "are the same (2 frames, 2 graphs)" in out
    graph = tmp_path / "b" / "__compiled_fn_7.dynamo_output_graph.0.py"
    graph.write_text(graph.read_text().replace("sin * 2", "sin * 5"))
    status, out, _ = diff(capsys, tmp_path / "a", tmp_path / "b")
    assert status == 1 and out.splitlines()[0].endswith("differ: 1 graph"), out
    assert "+    y = sin * 5;  sin = None" in out


def test_a_crashed_dump_is_compared_by_its_files(tmp_path: Path, base: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    other = write_dump(tmp_path / "b", [frame("0/0"), frame("0/1", n=1, graph_no=5)])
    (other / "manifest.json").unlink()  # as a killed run leaves it
    (other / "__transformed_code_0_for_f.py").write_text(
        (other / "__transformed_code_0_for_f.py").read_text().replace("(x)", "(x + 1)"))
    status, out, _ = diff(capsys, base, other)
    assert status == 1, out
    assert "note: " in out and "no manifest.json" in out
    # its frames are matched by function, in order; only their code is known
    assert out.splitlines()[0].endswith("differ: 1 frame, 1 transformed code file"), out
    assert "+ f (?) __transformed_code_1_for_f.py" in out
    assert "+    graph_out_0 = __compiled_fn_N(x + 1)" in out
    assert "\nguards:" not in out and "\ngraph breaks:" not in out
