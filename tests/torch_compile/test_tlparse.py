"""Same facts as PyTorch's own view: each script of a small corpus runs once under
``unveil run`` with ``TORCH_TRACE`` set, ``tlparse`` reads that trace, and every graph break,
recompile reason and graph that tlparse shows for a compile id must be in unveil's manifest
under the same compile id, and in unveil's HTML report; so must the script's frames in each
graph break's user code traceback. Known gaps are strict xfails (see GAPS).

What is read from tlparse's output directory (``tlparse LOG -o OUT -p``):
``compile_directory.json`` maps each compile id (``[0/1]``, ``[0/1_2]`` for attempt 2,
``[!0/1/0]`` under compiled autograd, ``[-/-]`` for none) to its artifacts; of those,
``dynamo_graph_break_reason_N.txt`` (``Graph break in user code at FILE:LINE`` /
``Graph Break Reason: ...`` / ``User code traceback: ...``), ``recompile_reasons_N.json``
(one reason as plain text, several as a JSON list) and the graph files
``<kind>[_<hash>]_N.txt`` of the six graph events unveil dumps.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if getattr(torch, "__file__", None) is None:  # tests/torch_compile itself, as a namespace package
    pytest.skip("torch is not installed", allow_module_level=True)


def _find_tlparse() -> str | None:
    """The ``tlparse`` executable (PyPI ``tlparse``, in the 'report' extra): next to this
    Python first, since a virtual environment's bin/ need not be on PATH."""
    beside = Path(sys.executable).with_name("tlparse")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("tlparse")


TLPARSE = _find_tlparse()
if TLPARSE is None:
    pytest.skip("tlparse is not installed (pip install tlparse; the 'report' extra has it)",
                allow_module_level=True)

TIMEOUT = 240
# The trace events that carry a graph: what unveil dumps, and what tlparse names them.
GRAPH_KINDS = ("dynamo_output_graph", "aot_joint_graph", "aot_forward_graph",
               "aot_backward_graph", "aot_inference_graph", "inductor_output_code")
_GRAPH_FILE = re.compile(rf"^(?P<kind>{'|'.join(GRAPH_KINDS)})(?:_[0-9a-z]+)?_\d+\.txt$")
_COMPILE_ID = re.compile(r"^\[(?P<ca>!\d+/)?(?P<frame>\d+|-)/(?P<compile>\d+|-)(?:_\d+)?\]$")
_BREAK = re.compile(r"\AGraph break in user code at (?P<file>.+?):(?P<line>\d+)\n"
                    r"Graph Break Reason: (?P<reason>.*?)\n\s*User code traceback:", re.S)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in ', re.M)
_CHECK = re.compile(r"^(?P<cid>(?:!\d+/)?\d+/\d+): (?P<check>.*?)(?:\s+#\s(?P<note>.*))?$")

CORPUS: dict[str, str] = {
    # print, data-dependent branch, .item(), a break in an inlined function, a frame that
    # makes no graph, torch._dynamo.graph_break()
    "breaks": """\
        import torch


        def helper(y):
            print("inside helper")
            return y * 2


        def log_only(x):
            print("log only", x.shape)


        def f(x):
            y = torch.sin(x)
            print("between graphs")
            if y.sum() > 0:
                y = y.cos()
            k = y.max().item()
            z = helper(y + k)
            log_only(z)
            torch._dynamo.graph_break()
            return z + 1


        print(torch.compile(f, backend="eager")(torch.ones(3)).sum().item())
    """,
    # a graph break in a loop: Dynamo runs that frame without compiling it
    "skipped": """\
        import torch


        def in_loop(x):
            for i in range(2):
                x = x * 2
                print("step", i)
            return x


        def f(x):
            return in_loop(x.sin()) + 1


        print(torch.compile(f, backend="eager")(torch.ones(3)).sum().item())
    """,
    # a recompile because a python int changed
    "recompile_scalar": """\
        import torch


        @torch.compile(backend="eager")
        def scale(x, n):
            return torch.sin(x) * n


        for n in (2, 3):
            print(scale(torch.ones(3), n).sum().item())
    """,
    # recompiles because a shape changed, then a dtype (two cache entries fail)
    "recompile_shape": """\
        import torch


        @torch.compile(backend="eager")
        def g(x):
            return x.relu().sum(0)


        g(torch.ones(3, 2))
        g(torch.ones(4, 2))
        g(torch.ones(5, 2, dtype=torch.float64))
    """,
    # a training step (joint, forward and backward graphs), a new batch size, then no_grad
    "training": """\
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                    torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        step = torch.compile(model, backend="aot_eager")
        for batch in (2, 3):
            loss = step(torch.randn(batch, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            print(step(torch.randn(3, 4)).shape)
    """,
    # inductor: inference graph and output code
    "inductor": """\
        import torch


        @torch.compile(backend="inductor")
        def h(x):
            return torch.nn.functional.gelu(x) * 2 + x.sum()


        print(h(torch.randn(8)).shape)
    """,
}

# Facts tlparse shows that unveil's manifest or report lacks: (script, check) -> why. Each
# is an xfail(strict=True): the comparison below fails on it, and passes everywhere else.
GAPS: dict[tuple[str, str], str] = {}


def cases(check: str) -> list[Any]:
    """The corpus' script names, known gaps of ``check`` marked xfail(strict=True) (on the
    comparison's AssertionError only: a run that fails is a failure)."""
    return [pytest.param(name, marks=pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=GAPS[name, check]))
        if (name, check) in GAPS else name for name in CORPUS]


# ------------------------------------------------------------------------------ normalizing


def norm(text: str) -> str:
    """Whitespace collapsed."""
    return " ".join(text.split())


def code_lines(text: str) -> str:
    """Code compared line by line: each line stripped of indentation and of leading ``#``
    (unveil keeps the printed graph as comments under the code that runs)."""
    lines = (re.sub(r"^[#\s]+", "", line).rstrip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def report_text(report: Path) -> str:
    """The report's text as a reader sees it: tags dropped, entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", "", report.read_text(), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


# ------------------------------------------------------------------------------ tlparse


@dataclass
class Break:
    """A graph break as tlparse shows it."""

    file: str
    line: int
    reason: str
    stack: list[tuple[str, int]]  # the user code traceback's frames, outermost first


@dataclass
class TlCompile:
    """What tlparse shows for one compile id (all its attempts)."""

    breaks: list[Break] = field(default_factory=list)
    recompiles: list[str] = field(default_factory=list)
    graphs: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)


def unveil_compile_id(key: str) -> str | None:
    """tlparse's ``[0/1_2]`` -> unveil's ``0/1`` (attempts are one compile); None for
    ``[-/-]`` (events outside any compile)."""
    match = _COMPILE_ID.match(key)
    assert match, f"tlparse compile id {key!r} has a form this test does not know"
    if "-" in (match["frame"], match["compile"]):
        return None
    return f"{match['ca'] or ''}{match['frame']}/{match['compile']}"


def parse_break(text: str) -> Break:
    match = _BREAK.match(text)
    if match is None:
        pytest.fail(f"tlparse shows a graph break in a form this test does not know:\n"
                    f"{text[:500]}")
    user_code = text[match.end():].split("\nTraceback (most recent call last):")[0]
    stack = [(m["file"], int(m["line"])) for m in _FRAME.finditer(user_code)]
    return Break(match["file"], int(match["line"]), match["reason"].strip(), stack)


def parse_reasons(text: str) -> list[str]:
    """A recompile_reasons artifact: one reason as plain text, several as a JSON list."""
    try:
        data = json.loads(text)
    except ValueError:
        return [text.strip()]
    items = data if isinstance(data, list) else [data]
    return [str(item).strip() for item in items]


def read_tlparse(out: Path) -> dict[str, TlCompile]:
    """tlparse's facts by unveil compile id, from ``compile_directory.json``."""
    directory = json.loads((out / "compile_directory.json").read_text())
    facts: dict[str, TlCompile] = {}
    for key, entry in directory.items():
        cid = unveil_compile_id(key)
        if cid is None:
            continue
        compile_ = facts.setdefault(cid, TlCompile())
        for artifact in entry.get("artifacts") or []:
            name = artifact["name"]
            text = (out / artifact["url"]).read_text()
            graph = _GRAPH_FILE.match(name)
            if name.startswith("dynamo_graph_break_reason_"):
                compile_.breaks.append(parse_break(text))
            elif name.startswith("recompile_reasons_"):
                compile_.recompiles.extend(parse_reasons(text))
            elif graph:
                compile_.graphs.append((graph["kind"], text))
    return facts


# ------------------------------------------------------------------------------ running


@dataclass
class Run:
    """One script's run: tlparse's view of its trace and unveil's dump of it."""

    name: str
    tlparse: dict[str, TlCompile]
    manifest: dict[str, Any]
    dump: Path
    report: str  # report.html's text

    def entries(self) -> dict[str, dict[str, Any]]:
        """unveil's frames and frames run without compiling, by compile id."""
        out = {f["compile_id"]: f for f in self.manifest["skipped_frames"]}
        out.update({f["compile_id"]: f for f in self.manifest["frames"]})
        return out


def run_both(name: str, work: Path) -> Run:
    """``unveil run --dump`` with ``TORCH_TRACE`` set (one run), then tlparse on the trace."""
    work.mkdir(parents=True)
    (work / f"{name}.py").write_text(textwrap.dedent(CORPUS[name]))
    env = dict(os.environ, PYTHONUNBUFFERED="1", TORCH_TRACE=str(work / "trace"),
               TORCHINDUCTOR_CACHE_DIR=str(work / "inductor_cache"))  # cold: every event
    proc = subprocess.run([sys.executable, "-m", "unveil", "run", "--dump", "dump",
                           f"{name}.py"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(f"unveil run {name}.py: exit status {proc.returncode}\n{proc.stderr}")
    logs = sorted((work / "trace").glob("dedicated_log_torch_trace_*.log"))
    if len(logs) != 1:
        pytest.fail(f"TORCH_TRACE wrote {len(logs)} logs for {name}.py, not one")
    parsed = subprocess.run([TLPARSE, str(logs[0]), "-o", str(work / "tl_out"), "--overwrite",
                             "--no-browser", "--plain-text"], cwd=work, capture_output=True,
                            text=True, timeout=TIMEOUT)
    if parsed.returncode != 0:
        pytest.fail(f"tlparse on {name}'s trace: exit status {parsed.returncode}\n"
                    f"{parsed.stdout}{parsed.stderr}")
    dump = work / "dump"
    return Run(name, read_tlparse(work / "tl_out"),
               json.loads((dump / "manifest.json").read_text()), dump,
               report_text(dump / "report.html"))


@pytest.fixture(scope="module")
def runs() -> dict[str, Run | str]:
    """Each script runs once for all the checks (filled on first use; a str: why it failed)."""
    return {}


def get_run(runs: dict[str, Run | str], name: str,
            tmp_path_factory: pytest.TempPathFactory) -> Run:
    if name not in runs:
        try:
            runs[name] = run_both(name, tmp_path_factory.mktemp("tlparse") / name)
        except pytest.fail.Exception as exc:
            runs[name] = str(exc)
    got = runs[name]
    if isinstance(got, str):
        pytest.fail(got)
    return got


@pytest.fixture
def run(script: str, runs: dict[str, Run | str],
        tmp_path_factory: pytest.TempPathFactory) -> Run:
    return get_run(runs, script, tmp_path_factory)


def missing_from(report: str, pieces: list[str]) -> list[str]:
    text = norm(report)
    return [piece for piece in pieces if norm(piece) not in text]


def explain(run: Run, missing: list[str]) -> str:
    return f"{run.name}: tlparse shows, unveil lacks:\n" + "\n".join(missing)


# ------------------------------------------------------------------------------ checks


def test_corpus_covers_every_fact(runs: dict[str, Run | str],
                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """The comparison is not empty: tlparse finds each kind of fact somewhere."""
    done = {name: get_run(runs, name, tmp_path_factory) for name in CORPUS}
    facts = [c for r in done.values() for c in r.tlparse.values()]
    kinds = {kind for c in facts for kind, _ in c.graphs}
    assert kinds == set(GRAPH_KINDS), kinds
    reasons = " ".join(b.reason for c in facts for b in c.breaks)
    for gist in ("builtin operator", "Data-dependent branching", "Tensor.item()",
                 "torch._dynamo.graph_break()", "graph break in loop"):
        assert gist in reasons, gist
    recompiles = " ".join(r for c in facts for r in c.recompiles)
    for gist in ("n == 2", "size mismatch", "dtype mismatch", "GLOBAL_STATE changed"):
        assert gist in recompiles, gist
    assert done["skipped"].manifest["skipped_frames"], "a frame run without compiling"


@pytest.mark.parametrize("script", CORPUS)
def test_compile_ids(run: Run) -> None:
    """Every compile id tlparse lists is a frame (or a frame run without compiling) in the
    manifest."""
    missing = sorted(set(run.tlparse) - set(run.entries()))
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("breaks_manifest"))
def test_graph_breaks_in_manifest(run: Run) -> None:
    """Each graph break: same compile id, user file:line and reason (whitespace aside)."""
    entries = run.entries()
    missing = []
    for cid, facts in run.tlparse.items():
        ours = Counter((b["user_file"], b["user_line"], norm(b["reason"]))
                       for b in (entries.get(cid) or {}).get("graph_breaks") or [])
        theirs = Counter((b.file, b.line, norm(b.reason)) for b in facts.breaks)
        missing += [f"{cid}: {f}:{line}: {reason[:300]}"
                    for (f, line, reason) in theirs - ours]
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("break_stacks"))
def test_graph_break_user_stacks_in_manifest(run: Run) -> None:
    """Each frame of the script in a graph break's user code traceback (the calls that led
    to the break, inlined ones included) is in the manifest: a frame of the compile's stack,
    or the break's own location."""
    entries = run.entries()
    missing = []
    for cid, facts in run.tlparse.items():
        entry = entries.get(cid) or {}
        ours = {(s.get("file"), s.get("line")) for s in entry.get("stack") or []}
        ours |= {(b["user_file"], b["user_line"]) for b in entry.get("graph_breaks") or []}
        ours |= {(f["file"], f["line"]) for b in entry.get("graph_breaks") or []
                 for f in b.get("user_stack") or []}
        for b in facts.breaks:
            missing += [f"{cid}: break at {b.file}:{b.line} called through {f}:{line}"
                        for f, line in b.stack if f == f"{run.name}.py" and (f, line) not in ours]
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("breaks_report"))
def test_graph_breaks_in_report(run: Run) -> None:
    """Each graph break's user file:line and its whole reason are in the report's text."""
    missing = []
    for cid, facts in run.tlparse.items():
        for b in facts.breaks:
            missing += [f"{cid}: {piece[:300]}"
                        for piece in missing_from(run.report, [f"{b.file}:{b.line}", b.reason])]
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("recompiles_manifest"))
def test_recompile_reasons_in_manifest(run: Run) -> None:
    """Each recompile reason, whole, under the same compile id."""
    entries = run.entries()
    missing = []
    for cid, facts in run.tlparse.items():
        ours = Counter(norm(r) for r in (entries.get(cid) or {}).get("recompile_reasons") or [])
        missing += [f"{cid}: {r}" for r in Counter(norm(r) for r in facts.recompiles) - ours]
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("recompiles_report"))
def test_recompile_reasons_in_report(run: Run) -> None:
    """Each line of each recompile reason is in the report's text: for a
    ``<compile id>: <check>  # <note>`` line the compile id, the check and the note each;
    any other line (the guard's user stack) as it is."""
    missing = []
    for cid, facts in run.tlparse.items():
        for reason in facts.recompiles:
            pieces = []
            for line in reason.splitlines():
                line = line.strip()
                check = _CHECK.match(line)
                if check:
                    pieces += [p for p in (check["cid"], check["check"], check["note"]) if p]
                elif line and line != "User stack trace:":
                    pieces.append(line)
            missing += [f"{cid}: {p}" for p in missing_from(run.report, pieces)]
    assert not missing, explain(run, missing)


@pytest.mark.parametrize("script", cases("graphs"))
def test_graphs(run: Run) -> None:
    """Each graph tlparse shows: under the same compile id unveil has a graph file of that
    kind whose text holds tlparse's (line by line), and the report shows that file."""
    entries = run.entries()
    missing = []
    for cid, facts in run.tlparse.items():
        ours = [(g["kind"], g["file"]) for g in (entries.get(cid) or {}).get("graphs") or []]
        for kind, text in facts.graphs:
            want = code_lines(text)
            found = next(((k, f) for k, f in ours if k == kind
                          and want in code_lines((run.dump / f).read_text())), None)
            if found is None:
                missing.append(f"{cid}: {kind} ({len(text)} characters)")
                continue
            ours.remove(found)
            if found[1] not in run.report or want not in code_lines(run.report):
                missing.append(f"{cid}: {kind} in the report ({found[1]})")
    assert not missing, explain(run, missing)
