"""Is the decompiler's output unchanged? Fingerprints of its text, to compare before and
after a change that must not alter output (a move, a refactor, a speed-up).

    python scripts/same_output.py stdlib OUT.json [DIR]    # every stdlib module, this Python
                                                           #   (or the stdlib in DIR)
    python scripts/same_output.py record DIR               # (torch venv) real-model frames,
                                                           #   recorded once with unveil.record
    python scripts/same_output.py frames DIR OUT.json      # their files, written by this tree
    python scripts/same_output.py compare A.json B.json    # exit status 1 when they differ

On 3.14, in Pyodide: ``PYTHONHASHSEED=0 node scripts/pyodide_python.mjs
scripts/same_output.py stdlib OUT.json /tmp/std314`` (the stdlib unzipped from Pyodide's
``python_stdlib.zip``, as ``scripts/pyodide_python.mjs`` says).

``stdlib`` decompiles each module of the running interpreter's standard library (the
files ``benchmarks/stdlib_roundtrip.py`` reads) as one module code object (nested code
included) and keeps a SHA-256 of the text, or the error's class and message. ``record``
runs each transformers workload of ``benchmarks/real_models.py`` once under
``unveil.record(finish="later")``, so the same Dynamo code objects can be decompiled again
by any source tree; ``frames`` copies the recordings, writes their files with ``unveil
report`` (with this tree's ``src`` first on the path) and keeps a SHA-256 of each
transformed-code and full-code file, with graph-name uuids and object ids left out.
Each runs with ``PYTHONHASHSEED=0``: the order of a set constant's items follows it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SRC = HERE.parent.parent / "src"
BENCHMARKS = HERE.parent.parent / "benchmarks"
EXCLUDE = {"test", "tests", "idle_test", "idlelib", "tkinter", "lib2to3", "turtledemo",
           "site-packages", "dist-packages", "__pycache__"}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def stdlib(out: Path, root: Path | None = None) -> int:
    sys.path.insert(0, str(SRC))
    import unveil

    root = root or Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py")
                   if not EXCLUDE & set(p.relative_to(root).parts[:-1]))
    result: dict[str, str] = {}
    start = time.perf_counter()
    for i, path in enumerate(files, 1):
        name = str(path.relative_to(root))
        try:
            code = compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError):
            continue
        try:
            result[name] = _digest(unveil.decompile(code))
        except Exception as exc:  # noqa: BLE001 (an error is part of the output)
            result[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
        if i % 200 == 0:
            print(f"[{i}/{len(files)}] {time.perf_counter() - start:.0f} s", file=sys.stderr)
    out.write_text(json.dumps({"python": sys.version.split()[0], "texts": result}, indent=1))
    errors = sum(not re.fullmatch(r"[0-9a-f]{20}", v) for v in result.values())
    print(f"{len(result)} modules ({errors} errors) in {time.perf_counter() - start:.0f} s")
    return 0


def _record_worker(name: str, dump: str) -> None:
    sys.path[:0] = [str(SRC), str(BENCHMARKS)]
    import torch

    import unveil
    from real_models import BY_NAME

    workload = BY_NAME[name]
    model = workload.build()
    torch._dynamo.reset()
    with unveil.record(dump, finish="later"):
        once = workload.run(model, "aot_eager")
        once()
        once()


def record(target: Path) -> int:
    sys.path.insert(0, str(BENCHMARKS))
    from real_models import WORKLOADS

    target.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for i, workload in enumerate(WORKLOADS, 1):
        dump = target / workload.name
        proc = subprocess.run([sys.executable, str(HERE), "_record", workload.name, str(dump)],
                              capture_output=True, text=True, timeout=900, env=env)
        status = "ok" if proc.returncode == 0 else f"failed: {proc.stderr[-300:]}"
        print(f"[{i}/{len(WORKLOADS)}] {workload.name}: {status}", file=sys.stderr, flush=True)
    return 0


def frames(recordings: Path, out: Path) -> int:
    sys.path.insert(0, str(BENCHMARKS))
    from record_models import normalised  # (what differs between two processes, left out)

    result: dict[str, str] = {}
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        for dump in sorted(p for p in recordings.iterdir() if p.is_dir()):
            copy = Path(tmp) / dump.name
            shutil.copytree(dump, copy)
            subprocess.run([sys.executable, "-m", "unveil", "report", str(copy), "--no-html",
                            "--quiet"], capture_output=True, text=True, env=env, timeout=900)
            for path in sorted(copy.rglob("*.py")):
                if path.name.startswith(("__transformed_code_", "full_code_for_")):
                    key = f"{dump.name}/{path.relative_to(copy)}"
                    result[key] = _digest(normalised(path.read_text(), path.name))
    out.write_text(json.dumps({"python": sys.version.split()[0], "texts": result}, indent=1))
    print(f"{len(result)} files of {len(list(recordings.iterdir()))} recordings")
    return 0


def compare(a: Path, b: Path) -> int:
    one, two = (json.loads(p.read_text())["texts"] for p in (a, b))
    differ = sorted(k for k in one.keys() & two.keys() if one[k] != two[k])
    only = sorted(one.keys() ^ two.keys())
    for key in differ[:20]:
        print(f"differs: {key}: {one[key]} -> {two[key]}")
    for key in only[:20]:
        print(f"only in {'first' if key in one else 'second'}: {key}")
    same = len(one.keys() & two.keys()) - len(differ)
    print(f"{same} of {len(one.keys() | two.keys())} the same ({len(differ)} differ, "
          f"{len(only)} in one only)")
    return 1 if differ or only else 0


def main(argv: list[str]) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # (set literals' order follows the seed;
        #                                            in Pyodide: set it when loading)
        os.environ["PYTHONHASHSEED"] = "0"
        return subprocess.call([sys.executable, str(HERE), *argv])
    if argv[:1] == ["stdlib"] and len(argv) in (2, 3):
        return stdlib(Path(argv[1]), Path(argv[2]) if len(argv) == 3 else None)
    if argv[:1] == ["record"] and len(argv) == 2:
        return record(Path(argv[1]))
    if argv[:1] == ["_record"] and len(argv) == 3:
        _record_worker(argv[1], argv[2])
        return 0
    if argv[:1] == ["frames"] and len(argv) == 3:
        return frames(Path(argv[1]), Path(argv[2]))
    if argv[:1] == ["compare"] and len(argv) == 3:
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
