"""``unveil.prepare_debug`` across the PyTorch and Python versions people install: one row
per torch venv, over the same workloads.

Workloads: the real-model suite (``benchmarks/real_models.py``: transformers forward
passes, graph breaks, hooks, ``generate()``, training steps), the 2026 features
(``benchmarks/features.py``, those the PyTorch has) and the small programs of
``benchmarks/dynamo_readability.py`` (the depyf paper's toy example among them). Each runs
compiled without and with unveil (``--backend``, default ``aot_eager``). Per venv:

* workloads, and how many are broken (results differ from plain ``torch.compile``, or it
  raised where plain did not);
* frames Dynamo transformed, and how many run unveil's code;
* mean statements, walrus expressions and frames with list juggling per frame, as
  ``dynamo_readability.py`` counts them; the toy example's first frame in statements;
* first-call ratio: the first call of ``--first-call`` workloads (default ``gpt2``) under
  ``prepare_debug`` over the same under plain ``torch.compile``, each in a fresh process,
  ABBA-interleaved after one untimed warm-up of each, median of ``--repeat`` (default 3).

    python benchmarks/torch_matrix.py [--venv .cache/venv-3.11-torch ...] [--backend B]
        [--only gpt2,toy,...] [--first-call gpt2] [--repeat 3] [--json PATH]

Without ``--venv``, every ``.cache/venv-*-torch*`` of this checkout (``scripts/test
--torch`` and ``ensure_torch_venv`` in ``scripts/_lib.sh`` make them). The driver needs only
the standard library; each venv runs its own worker.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the network: models come from configs


# ---------------------------------------------------------------- the worker (one venv)


def _frames(program: str, dump: Path) -> list[dict[str, Any]]:
    """Each transformed frame of a dump: status, reason, and its shape."""
    import dynamo_readability
    from unveil.torch.dump import RUNS_OURS

    out = []
    manifest = json.loads((dump / "manifest.json").read_text())
    for frame in manifest["frames"]:
        ours = frame["status"] == RUNS_OURS
        row: dict[str, Any] = {"program": program, "function": frame["function"],
                               "ours": ours, "why": None if ours else frame.get("error")}
        file = frame.get("transformed_code")
        if file and (dump / file).exists():
            shape = dynamo_readability.measure(program, frame["function"],
                                               (dump / file).read_text(encoding="utf-8"), ours)
            if shape is not None:
                row.update(statements=shape.statements, walrus=shape.walrus,
                           juggling=shape.juggling)
        out.append(row)
    return out


def _one(name: str, kind: str, backend: str) -> dict[str, Any]:
    """Run one workload plain and under prepare_debug: whether it broke, its frames."""
    import torch

    import dynamo_readability
    import features
    import real_models

    result: dict[str, Any] = {"workload": name, "kind": kind, "broken": None, "frames": []}
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp)
        try:
            if kind == "model":
                workload = real_models.BY_NAME[name]
                expected = real_models.run_plain(workload, backend, calls=2)
                got = real_models.run_unveil(workload, backend, dump, calls=2)
                ok = real_models.same(expected, got, exact=backend != "inductor")
            elif kind == "feature":
                feature = features.BY_NAME[name]
                expected = features.run_feature(feature, backend)
                got = features.run_feature(feature, backend, dump)
                ok = features.same(expected, got, feature.exact and backend != "inductor")
            else:  # a small program: it returns nothing; what it prints is not compared
                program = dynamo_readability._programs()[name]
                torch._dynamo.reset()
                import unveil

                with unveil.prepare_debug(dump):
                    program()
                torch._dynamo.reset()
                ok = True
            result["broken"] = None if ok else "results differ"
        except Exception as exc:  # noqa: BLE001 (a broken workload is a result)
            result["broken"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        if (dump / "manifest.json").exists():
            result["frames"] = _frames(name, dump)
    return result


def _first_calls(names: list[str], backend: str, repeat: int) -> dict[str, float]:
    """First-call ratio per workload (fresh processes, ABBA, median)."""
    import real_models

    out = {}
    for name in names:
        first = ["--worker", "first-call", "--only", name, "--backend", backend]
        for tool in ("plain", "unveil"):  # warm-up (Inductor's disk caches, imports)
            real_models._run_worker([*first, "--tool", tool])
        times: dict[str, list[float]] = {"plain": [], "unveil": []}
        for k in range(repeat):
            for tool in (("plain", "unveil") if k % 2 == 0 else ("unveil", "plain")):
                times[tool].append(real_models._run_worker([*first, "--tool", tool])["seconds"])
        out[name] = statistics.median(times["unveil"]) / statistics.median(times["plain"])
    return out


def worker(args: argparse.Namespace) -> int:
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.getLogger("torch").setLevel(logging.ERROR)  # (Dynamo's graph-break advice)
    sys.path[:0] = [str(HERE.parent), str(REPO / "src")]
    import torch

    import dynamo_readability
    import features
    import real_models

    only = {n for n in args.only.split(",") if n}
    timm = real_models.TIMM if real_models.has_timm() else []
    plan = [(w.name, "model") for w in [*real_models.WORKLOADS, *timm]]
    plan += [(f.name, "feature") for f in features.FEATURES if f.needs()]
    plan += [(name, "program") for name in dynamo_readability._programs()
             if name not in features.BY_NAME]  # (its toy example is a closure: the paper's)
    plan = [(n, k) for n, k in plan if not only or n in only]
    rows = []
    for k, (name, kind) in enumerate(plan, 1):
        start = time.perf_counter()
        rows.append(_one(name, kind, args.backend))
        print(f"  [{k}/{len(plan)}] {name}: {len(rows[-1]['frames'])} frame(s), "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    first = [n for n in args.first_call.split(",") if n and n in real_models.BY_NAME]
    out = {"torch": torch.__version__.split("+")[0], "python": sys.version.split()[0],
           "backend": args.backend, "workloads": rows,
           "first_call": _first_calls(first, args.backend, args.repeat) if first else {}}
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


# ---------------------------------------------------------------- the driver


def _venvs(given: list[str]) -> list[Path]:
    if given:
        return [Path(v) for v in given]
    return sorted(p for p in (REPO / ".cache").glob("venv-*-torch*")
                  if (p / "bin/python").exists())


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("+")[0].split(".") if x.isdigit())


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """One row of the table from a worker's result."""
    rows = result["workloads"]
    frames = [f for r in rows for f in r["frames"]]
    shaped = [f for f in frames if "statements" in f]
    toy = next((r for r in rows if r["workload"] == "toy" and r["kind"] == "feature"), None)
    toy_first = next((f["statements"] for f in (toy or {}).get("frames", [])
                      if f["function"] == "toy_example" and "statements" in f), None)
    models = [r for r in rows if r["kind"] == "model"]
    model_frames = [f for r in models for f in r["frames"]]

    def mean(key: str) -> float | None:
        return statistics.mean(f[key] for f in shaped) if shaped else None

    return {"torch": result["torch"], "python": result["python"],
            "workloads": len(rows), "broken": [r["workload"] for r in rows if r["broken"]],
            "frames": len(frames), "ours": sum(f["ours"] for f in frames),
            "model_frames": len(model_frames), "model_ours": sum(f["ours"] for f in model_frames),
            "statements": mean("statements"), "walrus": mean("walrus"),
            "juggling": sum(f.get("juggling", 0) > 0 for f in shaped), "toy": toy_first,
            "toy_mean": statistics.mean(f["statements"] for f in toy["frames"]
                                        if "statements" in f) if toy and toy["frames"] else None,
            "first_call": result["first_call"],
            "kept": sorted({f"{f['program']}: {(f['why'] or '')[:90]}" for f in frames
                            if not f["ours"]})}


def table(rows: list[dict[str, Any]]) -> str:
    def num(v: float | None, fmt: str = ".1f") -> str:
        return "-" if v is None else format(v, fmt)

    lines = ["| PyTorch | Python | workloads (broken) | frames running unveil's code | "
             "real models | statements per frame | walrus per frame | frames with list "
             "juggling | toy example (first frame; mean) | first-call ratio |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = f"{r['ours']} of {r['frames']} ({r['ours'] / max(r['frames'], 1):.1%})"
        models = f"{r['model_ours']} of {r['model_frames']}"
        first = ", ".join(f"{k} {v:.2f}" for k, v in r["first_call"].items()) or "-"
        lines.append(f"| {r['torch']} | {r['python']} | {r['workloads']} ({len(r['broken'])}) "
                     f"| {share} | {models} | {num(r['statements'])} | {num(r['walrus'], '.2f')} "
                     f"| {r['juggling']} | {r['toy'] or '-'}; {num(r['toy_mean'])} | {first} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--venv", action="append", default=[], help="a torch venv (repeat)")
    parser.add_argument("--backend", default="aot_eager", help="eager, aot_eager or inductor")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--first-call", default="gpt2",
                        help="real-model workloads to time the first call of ('' for none)")
    parser.add_argument("--repeat", type=int, default=3, help="first-call runs per side")
    parser.add_argument("--json", metavar="PATH", help="also write every venv's results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    venvs = _venvs(args.venv)
    if not venvs:
        parser.error("no torch venv: give --venv, or make one (scripts/test --torch ...)")
    results, rows = [], []
    for k, venv in enumerate(venvs, 1):
        print(f"[{k}/{len(venvs)}] {venv.name} ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.json"
            env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
            cmd = [str(venv / "bin/python"), str(HERE), "--worker", "--out", str(out),
                   "--backend", args.backend, "--only", args.only,
                   "--first-call", args.first_call, "--repeat", str(args.repeat)]
            # (the workloads' own prints go nowhere; progress is on stderr)
            proc = subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL)
            if proc.returncode != 0 or not out.exists():
                print(f"  {venv.name}: the worker failed (exit {proc.returncode})",
                      file=sys.stderr)
                continue
            result = json.loads(out.read_text())
        results.append(result)
        rows.append(summary(result))
    rows.sort(key=lambda r: (_version(r["torch"]), _version(r["python"])))
    print(table(rows))
    for r in rows:
        if r["broken"] or r["kept"]:
            print(f"\ntorch {r['torch']} / Python {r['python']}:")
            for name in r["broken"]:
                print(f"- broken: {name}")
            for why in r["kept"]:
                print(f"- keeps Dynamo's code: {why}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
