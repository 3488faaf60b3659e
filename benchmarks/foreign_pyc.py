"""Another version's .pyc files, decompiled by this Python, checked by that version.

The interpreter of CPython version V (pyenv's) compiles its own standard library (the
selection of ``throughput.py``) to ``.pyc`` files; the running Python reads each file with
``unveil.bytecode.pyc`` and decompiles its module code object (nested code included)
without V; V then compiles each output and compares it with the file's code, per code
object and per whole file (PyLingual's measure), with ``unveil.verify.oracle``. Reported:
files decompiled, outputs V compiles, identical code objects and identical files, the
decompile time against decompiling the same modules' own code on V, and the first errors.

    PYTHONPATH=src python benchmarks/foreign_pyc.py --version 3.12 [--limit N] [--json F]
    PYTHONPATH=src python benchmarks/foreign_pyc.py --version 3.14 --stdlib /tmp/std314

(3.14 runs in Pyodide: ``mkdir -p /tmp/std314 && unzip -qo
.cache/pyodide/node_modules/pyodide/python_stdlib.zip -d /tmp/std314``.)

``--packages`` measures code nobody here wrote instead: the sources of :data:`PACKAGES`
(or the names given), as installed for the running Python, copied to one directory that
V compiles as it compiles its standard library:

    PYTHONPATH=src .cache/venv-3.11/bin/python benchmarks/foreign_pyc.py --version 3.13 --packages

``--fetch`` measures the pinned PyPI packages of :data:`FETCHED` instead (their source
distributions, downloaded once to ``.cache/foreign-packages``); where unveil cannot run
on V (3.8, 3.9), the time is compared with decompiling the same sources compiled here:

    PYTHONPATH=src .cache/venv-3.11/bin/python benchmarks/foreign_pyc.py --version 3.8 --fetch

``--decompiler CMD`` measures another decompiler the same way: ``CMD FILE.pyc`` (run once
per file, 60 s each) prints the source, which V checks as it checks unveil's; for pycdc
(Decompyle++, as PyPI's ``pycdecompile`` packages it, installed outside this project):

    python -m venv /tmp/pycdc && /tmp/pycdc/bin/pip install pycdecompile
    PYTHONPATH=src python benchmarks/foreign_pyc.py --version 3.10 \
        --decompiler "/tmp/pycdc/bin/pycdecompile --no-header"
"""

from __future__ import annotations

import argparse
import collections
import json
import marshal
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

import unveil  # noqa: E402
from unveil.codeobj import iter_code_objects  # noqa: E402
from unveil.errors import BadInputError, DecompilationError  # noqa: E402
from unveil.verify.foreign import find_interpreter  # noqa: E402

# (the workers run on V, which may be older than any Python unveil runs on (3.8, 3.9):
# they import only what that version can, and unveil.bytecode where the run is here)

REPO = Path(__file__).resolve().parent.parent

#: Third-party packages of the test environment (pip's vendored ones named by their import
#: path), each copied under its last name.
PACKAGES = ("_pytest", "pluggy", "iniconfig", "packaging", "pygments", "pathspec",
            "pysource_codegen", "pip._vendor.rich", "pip._vendor.urllib3",
            "pip._vendor.requests", "pip._vendor.pkg_resources")


#: ``--fetch``: popular pure-Python packages whose sources declare support for 3.8, pinned,
#: each with the importable packages (or modules) of its source distribution.
FETCHED = (
    ("attrs==24.2.0", ("attr", "attrs")), ("requests==2.32.3", ("requests",)),
    ("urllib3==2.2.3", ("urllib3",)), ("idna==3.10", ("idna",)),
    ("charset-normalizer==3.4.0", ("charset_normalizer",)), ("six==1.16.0", ("six",)),
    ("packaging==24.2", ("packaging",)), ("pyparsing==3.1.4", ("pyparsing",)),
    ("click==8.1.7", ("click",)), ("jinja2==3.1.4", ("jinja2",)),
    ("markupsafe==2.1.5", ("markupsafe",)), ("itsdangerous==2.2.0", ("itsdangerous",)),
    ("werkzeug==3.0.6", ("werkzeug",)), ("flask==3.0.3", ("flask",)),
    ("pytz==2024.2", ("pytz",)), ("python-dateutil==2.9.0.post0", ("dateutil",)),
    ("tomli==2.0.2", ("tomli",)), ("toml==0.10.2", ("toml",)),
    ("chardet==5.2.0", ("chardet",)), ("docutils==0.20.1", ("docutils",)),
)
#: where ``--fetch`` keeps the source distributions and their unpacked trees (gitignored)
FETCH_CACHE = REPO / ".cache" / "foreign-packages"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sdist(folder: Path, spec: str) -> Path | None:
    """The source distribution of ``spec`` (``name==version``) downloaded to ``folder``."""
    want = _normal(spec.replace("==", "-"))
    return next((f for f in sorted(folder.glob("*")) if f.name.endswith((".tar.gz", ".zip"))
                 and _normal(f.name.rpartition(".tar.gz")[0] or f.name[:-4]) == want), None)


def fetch_packages(dest: Path) -> Path:
    """The sources of :data:`FETCHED` copied to ``dest``: their source distributions
    downloaded once with pip (``pip download --no-deps --no-binary :all:``) and unpacked
    under :data:`FETCH_CACHE`; from each, its importable packages (the shortest path to
    ``name/__init__.py`` outside tests and docs, or ``name.py``)."""
    import shutil
    import tarfile
    import zipfile

    sdists = FETCH_CACHE / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    missing = [spec for spec, _ in FETCHED if _sdist(sdists, spec) is None]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", "-q", "-d", str(sdists), *missing], check=True)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for spec, names in FETCHED:
        archive = _sdist(sdists, spec)
        if archive is None:
            raise SystemExit(f"pip did not download {spec}")
        tree = FETCH_CACHE / "src" / _normal(spec.replace("==", "-"))
        if not tree.exists():
            if archive.name.endswith(".zip"):
                with zipfile.ZipFile(archive) as z:
                    z.extractall(tree)
            else:
                with tarfile.open(archive) as t:
                    if hasattr(tarfile, "data_filter"):
                        t.extractall(tree, filter="data")
                    else:  # (older Pythons: a source distribution pip itself fetched)
                        t.extractall(tree)  # noqa: S202
        for name in names:
            found = sorted((p for p in [*tree.rglob(f"{name}/__init__.py"), *tree.rglob(f"{name}.py")]
                            if not {"test", "tests", "testing", "docs", "doc"} & set(p.parts)),
                           key=lambda p: (len(p.parts), str(p)))
            if not found:
                raise SystemExit(f"no package or module {name} in {archive.name}")
            if found[0].name == "__init__.py":
                shutil.copytree(found[0].parent, dest / name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy(found[0], dest / found[0].name)
    return dest


def copy_packages(names: list[str], dest: Path) -> Path:
    """The sources of the packages ``names`` (importable here), copied to ``dest``."""
    import importlib.util
    import shutil

    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"{name} is not an installed package of {sys.executable}")
        shutil.copytree(next(iter(spec.submodule_search_locations)),
                        dest / name.rpartition(".")[2],
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def interpreter(version: str) -> list[str]:
    """The command that runs CPython ``version`` (``3.12``): the one
    ``unveil.verify.foreign.find_interpreter`` finds, or for 3.14 Pyodide's
    (``scripts/pyodide_python.mjs``, set up by ``scripts/test``)."""
    if version == "3.14":
        return ["node", str(REPO / "scripts" / "pyodide_python.mjs")]
    major, _, minor = version.partition(".")
    found = find_interpreter((int(major), int(minor)))
    if found is None:
        raise SystemExit(f"no CPython {version} found (pyenv's, or python{version} on the path)")
    return [found]


# ---------------------------------------------------------------- run by version V


def _compile_stdlib(out: Path, limit: int | None, stdlib: str | None) -> None:
    """(V) Write a .pyc of each stdlib module under ``out``; list them in out/files.json."""
    import importlib._bootstrap_external as ext
    import sysconfig

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from throughput import stdlib_files

    files = []
    warnings.simplefilter("ignore")
    for path in stdlib_files(Path(stdlib or sysconfig.get_paths()["stdlib"]))[:limit]:
        try:
            source = path.read_bytes()
            code = compile(source, str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        pyc = out / f"{len(files):04d}.pyc"
        pyc.write_bytes(ext._code_to_timestamp_pyc(code, 0, len(source)))  # type: ignore[attr-defined]  # CPython's own writer
        files.append([str(path), str(pyc)])
    (out / "files.json").write_text(json.dumps(files))


def _check(out: Path) -> None:
    """(V) Compile each output and compare it with its file's code: out/checked.json."""
    from unveil.verify.foreign import compare_file

    results = []
    for path, pyc in json.loads((out / "files.json").read_text()):
        text_path = Path(pyc + ".py")
        if not text_path.exists():
            codes = sum(1 for _ in iter_code_objects(marshal.loads(Path(pyc).read_bytes()[16:])))
            results.append({"path": path, "codes": codes, "identical": 0, "compiles": False,
                            "file_identical": False})
            continue
        row = compare_file(Path(pyc).read_bytes(), text_path.read_text(encoding="utf-8"))
        row["path"] = path
        row["compiles"] = row["error"] is None
        results.append(row)
    (out / "checked.json").write_text(json.dumps(results))


def _own_time(out: Path) -> None:
    """(V) Decompile the same modules' own code on V: out/own.json (seconds, and the files
    whose text is the text decompiled here)."""
    total = 0.0
    same = []
    for path, pyc in json.loads((out / "files.json").read_text()):
        code = marshal.loads(Path(pyc).read_bytes()[16:])
        t0 = time.perf_counter()
        try:
            text: str | None = unveil.decompile(code)
        except Exception:  # noqa: BLE001 - (then no text to compare)
            text = None
        total += time.perf_counter() - t0
        theirs = Path(pyc + ".py")
        if text is not None and theirs.exists() and theirs.read_text(encoding="utf-8") == text:
            same.append(path)
    (out / "own.json").write_text(json.dumps({"seconds": total, "same_text": same}))


# ---------------------------------------------------------------- run here


def _host_time(files: list[list[str]]) -> float:
    """Seconds this Python takes to decompile its own compilation of the sources of
    ``files`` (the proxy for "on V itself" where unveil cannot run on V: 3.8, 3.9)."""
    total = 0.0
    for path, _ in files:
        try:
            code = compile(Path(path).read_bytes(), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        t0 = time.perf_counter()
        try:
            unveil.decompile(code)
        except (DecompilationError, RecursionError):
            pass
        total += time.perf_counter() - t0
    return total


def _run_other(command: str, pyc: str) -> str:
    """The source another decompiler (``command FILE.pyc``) prints for ``pyc``;
    DecompilationError when it fails, times out or prints nothing."""
    import shlex

    try:
        done = subprocess.run([*shlex.split(command), pyc], capture_output=True, text=True,
                              timeout=60, check=False)
    except subprocess.TimeoutExpired:
        raise DecompilationError("timed out (60 s)") from None
    if done.returncode != 0 or not done.stdout.strip():
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise DecompilationError(last)
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--version", required=True, help="the files' CPython version (3.12)")
    parser.add_argument("--limit", type=int, help="only the first N modules")
    parser.add_argument("--stdlib", help="the version's standard library, where its own "
                        "Python cannot list it (3.14 in Pyodide: python_stdlib.zip unzipped)")
    parser.add_argument("--packages", nargs="*", metavar="NAME",
                        help="third-party packages installed here instead of the standard "
                        "library (default: PACKAGES)")
    parser.add_argument("--fetch", action="store_true",
                        help="the pinned packages of FETCHED (downloaded once as source "
                        "distributions to .cache/foreign-packages) instead of the standard "
                        "library")
    parser.add_argument("--decompiler", metavar="CMD",
                        help="another decompiler: CMD FILE.pyc prints the source")
    parser.add_argument("--json", help="write the numbers as JSON")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)  # (run by version V)
    args = parser.parse_args()
    if args.worker:
        step, out = args.worker
        if step == "compile":
            _compile_stdlib(Path(out), args.limit, args.stdlib)
        else:
            {"check": _check, "own": _own_time}[step](Path(out))
        return 0
    from unveil.bytecode.pyc import read_pyc

    python = interpreter(args.version)
    major, _, minor = args.version.partition(".")
    # (can unveil run on V itself, to compare the text and the time with V's own?)
    own_version = (int(major), int(minor)) >= (3, 10) and not args.decompiler
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"

    def worker(step: str, out: str) -> None:
        extra = ["--limit", str(args.limit)] if args.limit else []
        if args.stdlib:
            extra += ["--stdlib", str(Path(args.stdlib).resolve())]
        subprocess.run([*python, __file__, "--version", args.version, *extra,
                        "--worker", step, out], env=env, check=True)

    with tempfile.TemporaryDirectory() as out:
        if args.fetch:  # (not under ``out``: Pyodide mounts each folder it is given)
            args.stdlib = str(fetch_packages(FETCH_CACHE / "packages"))
        elif args.packages is not None:
            args.stdlib = str(copy_packages(args.packages or list(PACKAGES),
                                            Path(out, "packages")))
        worker("compile", out)
        files = json.loads(Path(out, "files.json").read_text())
        by = args.decompiler or f"unveil on {here}"
        print(f"{len(files)} .pyc files of CPython {args.version}, decompiled by {by}",
              flush=True)
        errors: collections.Counter[str] = collections.Counter()
        decompiled = 0
        spent = 0.0
        warnings.simplefilter("ignore")
        for k, (_path, pyc) in enumerate(files):
            data = Path(pyc).read_bytes()
            t0 = time.perf_counter()
            try:
                if args.decompiler:
                    text = _run_other(args.decompiler, pyc)
                else:
                    _, code = read_pyc(data, pyc)
                    text = unveil.decompile(code)
            except (DecompilationError, BadInputError, RecursionError) as exc:
                errors[f"{type(exc).__name__}: {str(exc)[:90]}"] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - a crash: counted, and shown
                errors[f"CRASH {type(exc).__name__}: {str(exc)[:90]}"] += 1
                continue
            finally:
                spent += time.perf_counter() - t0
            Path(pyc + ".py").write_text(text, encoding="utf-8")
            decompiled += 1
            if (k + 1) % 100 == 0:
                print(f"  {k + 1} files, {spent:.1f} s", flush=True)
        worker("check", out)
        if own_version:
            worker("own", out)
        rows = json.loads(Path(out, "checked.json").read_text())
        own_run = json.loads(Path(out, "own.json").read_text()) if own_version else \
            {"seconds": 0.0, "same_text": [path for path, _ in files]}
    host_own = 0.0 if own_version or args.decompiler else _host_time(files)
    own, same_text = own_run["seconds"], len(own_run["same_text"])
    texts_differ = sorted({path for path, _ in files} - set(own_run["same_text"])
                          - {r["path"] for r in rows if not r["compiles"]})
    codes = sum(r["codes"] for r in rows)
    identical = sum(r["identical"] for r in rows)
    compiling = sum(r["compiles"] for r in rows)
    same_files = sum(r["file_identical"] for r in rows)
    n = len(rows)
    summary = {
        "version": args.version, "host": here, "files": n, "decompiled": decompiled,
        "compiling": compiling, "code_objects": codes, "identical_code_objects": identical,
        "identical_files": same_files, "decompile_s": round(spent, 2),
        "own_version_decompile_s": round(own, 2) if own_version else None,
        "same_text_as_own_version": same_text if own_version else None,
        "host_compiled_decompile_s": None if own_version else round(host_own, 2),
    }
    print(f"files: {n}, decompiled {decompiled} ({100 * decompiled / max(n, 1):.1f}%), "
          f"compiling {compiling} ({100 * compiling / max(n, 1):.1f}%)")
    print(f"code objects: {codes}, identical {identical} ({100 * identical / max(codes, 1):.2f}%)")
    print(f"whole files identical: {same_files} ({100 * same_files / max(n, 1):.1f}%)")
    if own_version:
        print(f"the same text as decompiling on {args.version} itself: {same_text} of "
              f"{decompiled}")
        print(f"decompile time here: {spent:.1f} s; the same files on {args.version} itself: "
              f"{own:.1f} s ({spent / max(own, 1e-9):.2f}x)")
    else:  # (unveil does not run on V: the same sources compiled by this Python instead)
        print(f"decompile time here: {spent:.1f} s; the same sources compiled by {here} and "
              f"decompiled here: {host_own:.1f} s ({spent / max(host_own, 1e-9):.2f}x)")
    for message, count in errors.most_common(8):
        print(f"  {count:4d}  {message}")
    if args.json:
        different = {r["path"]: r.get("first_different") or r.get("error")
                     for r in rows if r["identical"] < r["codes"]}
        Path(args.json).write_text(json.dumps({**summary, "errors": dict(errors),
                                               "different": different,
                                               "text_differs": texts_differ}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
