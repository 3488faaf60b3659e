"""``unveil.record`` on real model code: for each transformers workload of
``real_models.py``, one fresh process under ``prepare_debug`` and one under
``unveil.record`` (files written at exit), and the files compared: the same names, and
each file equal once what differs between any two processes is left out (graph-name
uuids, object ids and addresses, Dynamo's per-process module names, a graph file's first
line, which says whether its code ran; AOT graphs: their printed form).

    .cache/venv-3.11-torch/bin/python benchmarks/record_models.py [--backend aot_eager]
        [--only gpt2,llama] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

from real_models import BY_NAME, WORKLOADS  # noqa: E402


def normalised(text: str, name: str) -> str:
    """``text`` without what differs between two processes of one program."""
    if ".aot_" in name:
        text = text.split("# As Dynamo's trace prints it:")[-1]
    text = re.sub(r"(__compiled_fn_\d+)_[0-9a-f_]{36}", r"\1", text)
    text = re.sub(r"(___check_(?:obj|type)_id\([^,]+, )\d+", r"\1ID", text)
    text = re.sub(r"at 0x[0-9a-f]+", "at 0x", text)
    text = re.sub(r"_\d{9,}_", "_ID_", text)  # ___module_collections_<id>_c0
    lines = text.splitlines()
    if lines and re.match(r"# \w+ of __compiled_fn_\d+ \(compile ", lines[0]):
        lines[0] = "#"
    return "\n".join(lines)


def worker(name: str, mode: str, backend: str, dump: str) -> None:
    sys.path.insert(0, str(HERE.parent.parent / "src"))
    import torch

    import unveil

    workload = BY_NAME[name]
    model = workload.build()
    torch._dynamo.reset()
    ctx = (unveil.prepare_debug(dump) if mode == "debug"
           else unveil.record(dump, finish="exit"))
    with ctx:
        once = workload.run(model, backend)
        once()
        once()


def compare(a: Path, b: Path) -> dict[str, Any]:
    names_a = sorted(p.name for p in a.glob("*.py"))
    names_b = sorted(p.name for p in b.glob("*.py"))
    differ = [n for n in names_a if n in names_b
              and normalised((a / n).read_text(), n) != normalised((b / n).read_text(), n)]
    manifest = json.loads((b / "manifest.json").read_text())
    return {"files": len(names_a), "same_names": names_a == names_b, "differ": differ,
            "frames": len(manifest["frames"]),
            "recorded": sum("recorded" in f["status"] for f in manifest["frames"]),
            "equivalent": sum(bool(f.get("equivalent")) for f in manifest["frames"]),
            "errors": manifest["errors"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--backend", default="aot_eager")
    parser.add_argument("--only", default="")
    parser.add_argument("--json")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.backend, args.worker[2])
        return 0
    names = [n for n in args.only.split(",") if n] or [w.name for w in WORKLOADS]
    rows = []
    start = time.perf_counter()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for i, name in enumerate(names, 1):
        with tempfile.TemporaryDirectory() as tmp:
            for mode in ("debug", "record"):
                proc = subprocess.run([sys.executable, str(HERE), "--backend", args.backend,
                                       "--worker", name, mode, str(Path(tmp) / mode)],
                                      capture_output=True, text=True, timeout=900, env=env)
                if proc.returncode != 0:
                    rows.append({"workload": name, "error": f"{mode}: {proc.stderr[-2000:]}"})
                    break
            else:
                rows.append({"workload": name, **compare(Path(tmp) / "debug",
                                                         Path(tmp) / "record")})
        row = rows[-1]
        print(f"[{i}/{len(names)}] {name}: " + (row.get("error", "")[:300] or
              f"{row['frames']} frames ({row['recorded']} recorded, {row['equivalent']} "
              f"shown equivalent), {row['files']} files, same names {row['same_names']}, "
              f"differing {row['differ'] or 'none'}"), file=sys.stderr, flush=True)
    good = [r for r in rows if "error" not in r and r["same_names"] and not r["differ"]
            and not r["errors"]]
    print(f"{len(good)} of {len(rows)} workloads ({args.backend}): every file of record equal "
          f"to prepare_debug's; {sum(r.get('frames', 0) for r in rows)} frames, "
          f"{sum(r.get('recorded', 0) for r in rows)} recorded; "
          f"{time.perf_counter() - start:.0f} s")
    for r in rows:
        if r not in good:
            print(f"  {r['workload']}: {r.get('error') or r}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0 if len(good) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
