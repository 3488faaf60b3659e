"""``unveil.record`` on a real model with Inductor on a GPU (or the CPU): its first-call
cost against plain ``torch.compile``, and its files against ``prepare_debug``'s.

* first call: a fresh process per run builds the model (timm's ``resnet18`` with random
  weights when timm is installed, else a small CNN), compiles it with ``backend=inductor``
  and times the first call (``torch.cuda.synchronize`` around it); plain and record runs
  alternate ABBA after one untimed warm-up run of each (which fills Inductor's on-disk
  caches); the ratio is of the medians (target <= 1.03). The steady state (the best of 5
  blocks of 200 calls, after warm-up) is timed in the same processes.
* files: one run under ``prepare_debug`` and one under ``record`` (files written after the
  run with ``unveil.torch.record.complete``): the same file names, and each file equal
  once graph-name uuids, object ids and graph files' first lines are left out (AOT graphs:
  their printed form).

    python benchmarks/record_gpu.py [--repeat 3] [--device cuda] [--json PATH]
"""

from __future__ import annotations

import argparse
import difflib
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
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE.parent))

from record_models import normalised  # noqa: E402 (what differs between two processes)


def build(device: str) -> tuple[Any, Any, str]:
    import torch

    torch.manual_seed(0)
    try:
        import timm

        model, name = timm.create_model("resnet18", pretrained=False), "timm resnet18"
        x = torch.randn(8, 3, 224, 224)
    except ImportError:
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))
        name, x = "small CNN", torch.randn(8, 3, 32, 32)
    return model.eval().to(device), x.to(device), name


def worker(mode: str, device: str, dump: str) -> dict[str, Any]:
    import torch

    sys.path.insert(0, str(SRC))
    import unveil

    model, x, name = build(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    ctx: Any = (unveil.record(dump, finish="later") if mode == "record"
                else unveil.prepare_debug(dump) if mode == "debug" else None)
    if ctx is not None:
        ctx.__enter__()
    with torch.no_grad():
        compiled = torch.compile(model, backend="inductor")
        sync()
        t0 = time.perf_counter()
        out = compiled(x)
        sync()
        first = time.perf_counter() - t0
        for _ in range(20):
            compiled(x)
        steady = float("inf")
        for _ in range(5):  # the best of 5 blocks of 200 calls
            sync()
            t0 = time.perf_counter()
            for _ in range(200):
                compiled(x)
            sync()
            steady = min(steady, time.perf_counter() - t0)
        expected = model(x)
    if ctx is not None:
        ctx.__exit__(None, None, None)
    return {"model": name, "first_s": first, "steady_s": steady,
            "ok": bool(torch.allclose(out, expected, atol=1e-3, rtol=1e-3)),
            "torch": torch.__version__, "device": torch.cuda.get_device_name()
            if device == "cuda" else "cpu"}


def run(mode: str, device: str, dump: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        proc = subprocess.run([sys.executable, str(HERE), "--worker", mode, "--device", device,
                               "--dump", dump, "--out", str(out)], capture_output=True,
                              text=True, timeout=600)
        if not out.exists():
            return {"error": proc.stderr[-3000:]}
        return json.loads(out.read_text())


def compare_files(a: Path, b: Path) -> dict[str, Any]:
    sys.path.insert(0, str(SRC))
    from unveil.torch.record import complete

    t0 = time.perf_counter()
    complete(b)
    written = time.perf_counter() - t0
    names_a = sorted(p.name for p in a.glob("*.py"))
    names_b = sorted(p.name for p in b.glob("*.py"))
    differ = [n for n in names_a if n in names_b and normalised(
        (a / n).read_text(), n) != normalised((b / n).read_text(), n)]
    diffs = {n: "".join(list(difflib.unified_diff(
        normalised((a / n).read_text(), n).splitlines(True),
        normalised((b / n).read_text(), n).splitlines(True), "debug", "record"))[:60])
        for n in differ}
    frames = json.loads((b / "manifest.json").read_text())["frames"]
    return {"files": len(names_a), "same_names": names_a == names_b, "differ": differ,
            "only_debug": sorted(set(names_a) - set(names_b)),
            "only_record": sorted(set(names_b) - set(names_a)),
            "frames": len(frames), "hits": [f.get("hits") for f in frames],
            "write_files_s": round(written, 3), "diffs": diffs,
            "statuses": sorted({f["status"] for f in frames})}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--dump", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        Path(args.out).write_text(json.dumps(worker(args.worker, args.device, args.dump)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "record": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat + 1):
            for mode in (("plain", "record") if i % 2 == 0 else ("record", "plain")):
                r = run(mode, args.device, str(Path(tmp) / f"{mode}{i}"))
                print(f"  {'warm-up' if i == 0 else f'run {i}'} {mode}: "
                      f"{r.get('first_s', 'FAILED')}", file=sys.stderr, flush=True)
                if "error" in r:
                    print(r["error"], file=sys.stderr)
                elif i:
                    runs[mode].append(r)
        debug = run("debug", args.device, str(Path(tmp) / "debug"))
        files = compare_files(Path(tmp) / "debug", Path(tmp) / "record0")
    result: dict[str, Any] = {"runs": runs, "debug": debug, "files": files}
    if runs["plain"] and runs["record"]:
        for key in ("first_s", "steady_s"):
            p = statistics.median(r[key] for r in runs["plain"])
            t = statistics.median(r[key] for r in runs["record"])
            result[key] = {"plain": p, "record": t, "ratio": t / p}
        info = runs["plain"][0]
        print(f"{info['model']}, inductor, torch {info['torch']}, {info['device']}; median of "
              f"{len(runs['plain'])} fresh processes per side, ABBA")
        print(f"first call: plain {result['first_s']['plain']:.3f} s, record "
              f"{result['first_s']['record']:.3f} s, ratio {result['first_s']['ratio']:.3f} "
              f"(target 1.03)")
        print(f"steady, best of 5 x 200 calls: plain {result['steady_s']['plain']:.4f} s, record "
              f"{result['steady_s']['record']:.4f} s, ratio {result['steady_s']['ratio']:.3f}")
        print(f"outputs equal eager: {all(r['ok'] for v in runs.values() for r in v)}; "
              f"prepare_debug run: {debug.get('first_s', debug.get('error', '?'))}")
    print("files:", json.dumps({k: v for k, v in files.items() if k != "diffs"}))
    for name, diff in files["diffs"].items():
        print(f"--- {name} differs:\n{diff}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
