"""What ``unveil.prepare_debug`` costs a torch.compile user (needs torch; issue 3's targets).

* compile time: the first call of a small hand-written transformer (4 layers of attention +
  MLP, d_model 64, seq 16, batch 2; two graph breaks: a ``print`` after layer 1 and a
  data-dependent ``if h.sum() > 0`` after layer 3) under ``prepare_debug(tmpdir)``,
  divided by the same first call under plain ``torch.compile``, per backend (target
  <= 1.10). Every measurement is one fresh ``python`` subprocess that builds the model,
  calls ``torch._dynamo.reset()``, enters the tool and times the first call only; plain
  and tool runs alternate ABBA after one untimed warm-up run of each (it fills Inductor's
  on-disk caches, which every timed run then hits alike); the ratio is of the medians.
* steady state: ``--calls`` (2,000) calls of a small compiled function with one graph
  break (so a resume function runs too) after warm-up, running the code compiled from the
  dumped files, divided by the same calls running Dynamo's own code (target <= 1.03). One
  subprocess per backend runs ``--repeat`` ABBA rounds (``torch._dynamo.reset()`` and a
  fresh compile each); a round's time is the best of ``--blocks`` timed blocks.
* record: ``unveil.record(tmpdir, finish="later")`` measured the same way (targets: first
  call <= 1.03, steady <= 1.01); its files are written after the timed part
  (``unveil.torch.record.complete``) and checked like prepare_debug's.
* depyf: measured the same way with ``depyf.prepare_debug(dir)`` when ``import depyf``
  works; otherwise reported as not installed (never installed by this script).

Each tool run is also checked: its output must equal the eager model's, and the manifest
must show the frames running unveil's code (else the steady-state ratio means nothing).

    .cache/venv-3.11-torch/bin/python benchmarks/torch_overhead.py [--repeat 5] [--quick]
        [--backends eager,inductor] [--calls 2000] [--blocks 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
COMPILE_TARGET = 1.10
STEADY_TARGET = 1.03
# unveil.record (issue 14): Dynamo's own code runs, the files are written later
TARGETS = {"record": (1.03, 1.01)}
TOOLS = ("unveil", "record", "depyf")

# ---------------------------------------------------------------- worker side (needs torch)


def _import_unveil() -> Any:
    try:
        import unveil
    except ImportError:  # running from a checkout without PYTHONPATH=src
        sys.path.insert(0, str(HERE.parent.parent / "src"))
        import unveil
    return unveil


def build_model() -> tuple[Any, Any]:
    """The transformer (seeded, eval mode) and its input, the same in every process."""
    import torch
    from torch import nn

    class Layer(nn.Module):
        """Pre-norm encoder layer: multi-head self-attention, then an MLP."""

        def __init__(self, d: int = 64, heads: int = 4, hidden: int = 256) -> None:
            super().__init__()
            self.heads = heads
            self.norm1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.norm2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, hidden)
            self.fc2 = nn.Linear(hidden, d)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, s, d = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
            q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                       for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
            y = att.softmax(dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))

    class Transformer(nn.Module):
        """Four layers; graph breaks after layer 1 (print) and layer 3 (data-dependent if)."""

        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(4))
            self.norm = nn.LayerNorm(64)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.layers[0](x)
            print("after layer 1:", tuple(h.shape))  # graph break 1
            h = self.layers[1](h)
            h = self.layers[2](h)
            if h.sum() > 0:  # graph break 2 (data-dependent)
                h = h * 0.5
            else:
                h = -h
            return self.norm(self.layers[3](h))

    torch.manual_seed(0)
    return Transformer().eval(), torch.randn(2, 16, 64)


def small(x: Any) -> Any:
    """The steady-state function: one graph break, so a resume function runs each call."""
    import torch

    y = (x * 2).sin()
    torch._dynamo.graph_break()
    return y.cos() + 1


@contextlib.contextmanager
def tool_context(tool: str, dump_dir: str, facts: dict[str, Any]) -> Iterator[None]:
    """``prepare_debug(dump_dir)`` of ``tool`` ("plain": nothing); the time spent
    entering and leaving it goes to ``facts`` (not part of any timed region)."""
    if tool == "plain":
        yield
        return
    if tool == "unveil":
        manager = _import_unveil().prepare_debug(dump_dir)
    elif tool == "record":
        manager = _import_unveil().record(dump_dir, finish="later")
    else:
        import depyf  # type: ignore[import-not-found]

        manager = depyf.prepare_debug(dump_dir)
    t0 = time.perf_counter()
    manager.__enter__()
    facts["enter_s"] = time.perf_counter() - t0
    try:
        yield
    except BaseException:
        manager.__exit__(*sys.exc_info())
        raise
    t0 = time.perf_counter()
    manager.__exit__(None, None, None)
    facts["exit_s"] = time.perf_counter() - t0


def dump_facts(tool: str, dump_dir: str) -> dict[str, Any]:
    """What the dump says: frames running unveil's code, errors (unveil only)."""
    if tool not in ("unveil", "record"):
        return {"files": len(os.listdir(dump_dir))}
    if tool == "record":  # its files: written now, off the timed path
        from unveil.torch.record import complete

        complete(Path(dump_dir))
    manifest = json.loads((Path(dump_dir) / "manifest.json").read_text(encoding="utf-8"))
    frames = manifest["frames"]
    shown = ("running unveil's code", "recorded (Dynamo's code ran; the file shows it)")
    return {"frames": len(frames),
            "frames_ours": sum(f["status"] in shown for f in frames),
            "frames_identical": sum(bool(f["identical"]) for f in frames),
            "frame_errors": [f"{f['qualname']}: {f['error']}" for f in frames if f["error"]],
            "manifest_errors": manifest["errors"]}


def worker_first_call(tool: str, backend: str) -> dict[str, Any]:
    """One first call of the compiled transformer in this (fresh) process."""
    import torch

    if tool in ("unveil", "record"):
        _import_unveil()  # the import a user pays before compiling, not part of the call
    model, x = build_model()
    facts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as dump_dir:
        torch._dynamo.reset()
        with tool_context(tool, dump_dir, facts), contextlib.redirect_stdout(io.StringIO()):
            compiled = torch.compile(model, backend=backend)
            t0 = time.perf_counter()
            out = compiled(x)
            facts["seconds"] = time.perf_counter() - t0
            again = compiled(x)  # the cached code, once
        if backend == "inductor":
            from torch._dynamo.utils import counters

            facts["fx_graph_cache"] = {k.removeprefix("fxgraph_cache_"): v
                                       for k, v in counters["inductor"].items()
                                       if k.startswith("fxgraph_cache_")}
        with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
            expected = model(x)
        facts["output_ok"] = bool(torch.allclose(out, expected, atol=1e-4, rtol=1e-4)
                                  and torch.allclose(again, expected, atol=1e-4, rtol=1e-4))
        if tool != "plain":
            facts.update(dump_facts(tool, dump_dir))
    return facts


def worker_steady(tools: list[str], backend: str, calls: int, blocks: int,
                  repeat: int) -> dict[str, Any]:
    """``repeat`` ABBA rounds of plain vs each tool: per round, reset, compile ``small``,
    warm up, then the best of ``blocks`` timings of ``calls`` calls (seconds)."""
    import torch

    x = torch.randn(16)
    out: dict[str, Any] = {}

    def once(tool: str) -> float:
        facts: dict[str, Any] = {}
        with tempfile.TemporaryDirectory() as dump_dir:
            torch._dynamo.reset()
            with tool_context(tool, dump_dir, facts):
                compiled = torch.compile(small, backend=backend)
                for _ in range(100):
                    result = compiled(x)
                best = float("inf")
                for _ in range(blocks):
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        compiled(x)
                    best = min(best, time.perf_counter() - t0)
            if tool != "plain":
                facts.update(dump_facts(tool, dump_dir))
                facts["output_ok"] = bool(torch.allclose(result, (x * 2).sin().cos() + 1))
                out.setdefault(f"{tool}_facts", facts)
        return best

    for tool in tools:
        once("plain")  # untimed warm-up of each
        once(tool)
        plain_s: list[float] = []
        tool_s: list[float] = []
        for i in range(repeat):
            order = ("plain", tool) if i % 2 == 0 else (tool, "plain")
            for who in order:
                (plain_s if who == "plain" else tool_s).append(once(who))
            print(f"    steady {backend} {tool} round {i + 1}/{repeat}: plain "
                  f"{plain_s[-1]:.4f} s, {tool} {tool_s[-1]:.4f} s", file=sys.stderr, flush=True)
        out[tool] = {"plain": plain_s, "tool": tool_s}
    return out


def worker(args: argparse.Namespace) -> int:
    """Run one measurement and write its JSON to ``args.out`` (an error's traceback too)."""
    try:
        if args.worker == "first-call":
            result = worker_first_call(args.tool, args.backend)
        else:
            result = worker_steady(args.tool.split(","), args.backend, args.calls,
                                   args.blocks, args.repeat)
    except Exception:  # noqa: BLE001 (a tool that breaks the model is a result too)
        result = {"error": traceback.format_exc()}
    Path(args.out).write_text(json.dumps(result), encoding="utf-8")
    return 0


# ---------------------------------------------------------------- driver side (no torch)


def run_worker(argv: list[str], *, stream: bool = False,
               timeout: float = 900) -> dict[str, Any]:
    """Run this script as a worker in a fresh interpreter and return its JSON; ``stream``
    passes its stderr (progress lines) through instead of keeping it for error reports."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(HERE), "--worker", *argv, "--out", str(out)]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, text=True, timeout=timeout,
                                  stderr=None if stream else subprocess.PIPE)
        except subprocess.TimeoutExpired:
            return {"error": f"worker timed out after {timeout:.0f} s: {' '.join(argv)}"}
        if not out.exists():
            return {"error": f"worker exited with {proc.returncode}:\n"
                             f"{(proc.stderr or '(stderr above)')[-3000:]}"}
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result


def depyf_version() -> str | None:
    """depyf's version when ``import depyf`` works in this interpreter, else None."""
    proc = subprocess.run([sys.executable, "-c", "import depyf; print(depyf.__version__)"],
                          capture_output=True, text=True)
    return (proc.stdout.strip() or "?") if proc.returncode == 0 else None


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def measure_compile(backend: str, tool: str, repeat: int, warmup: bool,
                    step: Callable[[], str]) -> dict[str, Any]:
    """ABBA first-call runs of plain vs ``tool``, one fresh subprocess each."""
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "tool": []}
    orders = [("plain", tool)] if warmup else []
    orders += [("plain", tool) if i % 2 == 0 else (tool, "plain") for i in range(repeat)]
    for i, order in enumerate(orders):
        for who in order:
            r = run_worker(["first-call", "--tool", who, "--backend", backend])
            label = "warm-up" if warmup and i == 0 else f"run {i + (not warmup)}/{repeat}"
            shown = f"{r['seconds']:.3f} s" if "seconds" in r else "FAILED"
            progress(f"  [{step()}] compile {backend} {who} {label}: {shown}")
            if "error" in r:
                progress(r["error"])
            if not (warmup and i == 0):
                runs["plain" if who == "plain" else "tool"].append(r)
    return summarize(runs["plain"], runs["tool"], TARGETS.get(tool, (COMPILE_TARGET,))[0],
                     f"compile time, first call, {backend}", tool)


def summarize(plain: list[dict[str, Any]], tool_runs: list[dict[str, Any]], target: float,
              scenario: str, tool: str) -> dict[str, Any]:
    """One table row from the runs: medians, ratio, verdict and anything odd."""
    row: dict[str, Any] = {"scenario": scenario, "tool": tool, "target": target,
                           "plain_runs": plain, "tool_runs": tool_runs}
    errors = [r["error"] for r in plain + tool_runs if "error" in r]
    notes = []
    if errors:
        row["errors"] = errors
        notes.append(f"{len(errors)} run(s) failed")
    good_p = [r["seconds"] for r in plain if "seconds" in r]
    good_t = [r["seconds"] for r in tool_runs if "seconds" in r]
    if good_p and good_t:
        row["plain_s"] = statistics.median(good_p)
        row["tool_s"] = statistics.median(good_t)
        row["ratio"] = row["tool_s"] / row["plain_s"]
        row["ok"] = row["ratio"] <= target and not errors
    else:
        row["ok"] = False
    if any(r.get("output_ok") is False for r in tool_runs):
        notes.append("output differs from eager")
        row["ok"] = False
    frames = [(r.get("frames_ours"), r.get("frames")) for r in tool_runs if "frames" in r]
    if frames:
        ours, total = min(frames)
        same = min(r.get("frames_identical", 0) for r in tool_runs if "frames" in r)
        runs = "are shown (Dynamo's ran)" if tool == "record" else "run"
        row["frames"] = (f"{ours}/{total} frames {runs} unveil's code "
                         f"({same} bytecode-identical to Dynamo's)")
        if ours != total:
            notes.append(row["frames"])
    for key in ("enter_s", "exit_s"):
        values = [r[key] for r in tool_runs if key in r]
        if values:
            row[key] = statistics.median(values)
    caches = [cache_hits(r) for r in plain], [cache_hits(r) for r in tool_runs]
    if any(caches[0]) and caches[0] != caches[1]:
        row["fx_graph_cache"] = (f"Inductor's FX graph cache hits per run: plain "
                                 f"{' '.join(caches[0])}, {tool} {' '.join(caches[1])}")
        notes.append(row["fx_graph_cache"])
    row["notes"] = notes
    return row


def cache_hits(run: dict[str, Any]) -> str:
    """A first call's FX graph cache hits as "hits/lookups" ("" without Inductor)."""
    cache = run.get("fx_graph_cache")
    if not cache:
        return ""
    return f"{cache.get('hit', 0)}/{cache.get('hit', 0) + cache.get('miss', 0)}"


def measure_steady(backend: str, tools: list[str], calls: int, blocks: int,
                   repeat: int, step: Callable[[], str]) -> list[dict[str, Any]]:
    """The steady-state rounds of every tool, in one fresh subprocess for ``backend``."""
    progress(f"  [{step()}] steady state {backend}: {repeat} ABBA rounds per tool, "
             f"best of {blocks} x {calls} calls")
    r = run_worker(["steady", "--tool", ",".join(tools), "--backend", backend,
                    "--calls", str(calls), "--blocks", str(blocks), "--repeat", str(repeat)],
                   stream=True)
    rows = []
    for tool in tools:
        scenario = f"steady state, {calls} calls, {backend}"
        if "error" in r:
            progress(r["error"])
            rows.append(summarize([], [r], TARGETS.get(tool, (0, STEADY_TARGET))[1],
                                  scenario, tool))
            continue
        facts = r.get(f"{tool}_facts", {})
        plain = [{"seconds": s} for s in r[tool]["plain"]]
        tool_runs = [{"seconds": s, **facts} for s in r[tool]["tool"]]
        rows.append(summarize(plain, tool_runs, TARGETS.get(tool, (0, STEADY_TARGET))[1],
                              scenario, tool))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The results as an aligned text table."""
    head = ("scenario", "tool", "plain s", "tool s", "ratio", "target", "ok")
    lines = [head]
    for r in rows:
        lines.append((r["scenario"], r["tool"],
                      f"{r['plain_s']:.4f}" if "plain_s" in r else "-",
                      f"{r['tool_s']:.4f}" if "tool_s" in r else "-",
                      f"{r['ratio']:.3f}" if "ratio" in r else "failed",
                      f"<= {r['target']:.2f}", "ok" if r["ok"] else "NOT OK"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                     for i, (c, w) in enumerate(zip(line, widths, strict=True))).rstrip()
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed runs per side and scenario (default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: --repeat 1, no warm-up runs, eager backend only")
    parser.add_argument("--backends", default=None,
                        help="comma-separated (default eager,inductor; --quick: eager)")
    parser.add_argument("--calls", type=int, default=2000, help="steady-state calls")
    parser.add_argument("--tools", default=None,
                        help="comma-separated, from unveil,record,depyf (default: all there)")
    parser.add_argument("--blocks", type=int, default=5,
                        help="steady state: timed blocks of --calls per round, best counts")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON here")
    parser.add_argument("--worker", choices=("first-call", "steady"), help=argparse.SUPPRESS)
    parser.add_argument("--tool", default="plain", help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="eager", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)

    repeat = 1 if args.quick else args.repeat
    backends = (args.backends or ("eager" if args.quick else "eager,inductor")).split(",")
    versions = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, torch, sys; sys.path.insert(0, sys.argv[1]); "
         "import unveil; print(json.dumps([torch.__version__, unveil.__version__]))",
         str(HERE.parent.parent / "src")], capture_output=True, text=True, check=True).stdout)
    depyf = depyf_version()
    tools = (args.tools.split(",") if args.tools
             else ["unveil", "record"] + (["depyf"] if depyf else []))
    warmup = not args.quick
    total = len(backends) * len(tools) * 2 * (repeat + warmup) + len(backends)
    done = 0

    def step() -> str:
        nonlocal done
        done += 1
        return f"{done}/{total}"

    start = time.perf_counter()
    progress(f"torch {versions[0]}, unveil {versions[1]}, depyf {depyf or 'not installed'}; "
             f"{total} subprocesses")
    rows = []
    for backend in backends:
        for tool in tools:
            rows.append(measure_compile(backend, tool, repeat, warmup, step))
    for backend in backends:
        rows += measure_steady(backend, tools, args.calls, args.blocks, repeat, step)
    elapsed = time.perf_counter() - start

    print(f"torch {versions[0]}, unveil {versions[1]}; median of {repeat} run(s) per side, "
          f"ABBA-interleaved; {elapsed:.0f} s")
    print(table(rows))
    for r in rows:
        extra = [*r["notes"]]
        if "frames" in r and r["frames"] not in extra:
            extra.append(r["frames"])
        if "enter_s" in r and "exit_s" in r:
            extra.append(f"not timed: entering prepare_debug {r['enter_s']:.3f} s, leaving "
                         f"it (full code, manifest) {r['exit_s']:.3f} s")
        if extra:
            print(f"  {r['scenario']} / {r['tool']}: {'; '.join(extra)}")
        if r.get("errors"):
            print(f"  first failure of {r['scenario']} / {r['tool']}:\n"
                  + "\n".join("    " + line for line in r["errors"][0].splitlines()[-15:]))
    if not depyf:
        print("depyf: not installed, not measured")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"torch": versions[0], "unveil": versions[1], "depyf": depyf, "repeat": repeat,
             "calls": args.calls, "blocks": args.blocks, "backends": backends,
             "seconds": elapsed, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 1 if any(r.get("errors") or "output differs from eager" in r["notes"]
                    for r in rows) else 0  # a missed target is a result, not a failure


if __name__ == "__main__":
    sys.exit(main())
