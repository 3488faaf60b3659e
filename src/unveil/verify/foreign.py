"""Checking what was decompiled from a ``.pyc`` with the interpreter of the file's version.

Another version's bytecode can be read by any Python, but only that version's compiler
says whether the output compiles back to it. :func:`check_with` runs that interpreter
(``python -m unveil.verify.foreign PYC TEXT``, this unveil on its path), which compiles
the text and compares each code object with the file's (:mod:`.oracle`), by qualified
name, and the whole file; :func:`compare_file` is what it runs.
"""

from __future__ import annotations

import collections
import glob
import json
import marshal
import os
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..codeobj import iter_code_objects
from ..errors import BadInputError
from .report import FileReport, FunctionResult


def compare_file(pyc: bytes, text: str) -> dict[str, Any]:
    """(Run by the file's own version.) ``codes``, ``identical`` (code objects the text
    compiles to the same bytecode), ``file_identical``, ``first_different`` (a qualified
    name, or None), ``different`` (each code object that differs: its qualified name, the
    first difference, a listing diff around it and its index among the file's code
    objects), ``error`` (why the text does not compile, or None)."""
    from .oracle import compare

    original = marshal.loads(pyc[16:])
    entries = list(iter_code_objects(original))
    row: dict[str, Any] = {"codes": len(entries), "identical": 0, "file_identical": False,
                           "first_different": None, "different": [], "error": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            again = compile(text, original.co_filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            row["error"] = f"does not compile: {exc}"
            return row
    theirs: dict[str, list[Any]] = collections.defaultdict(list)
    for entry in iter_code_objects(again):
        theirs[entry.qualname].append(entry.code)
    seen: collections.Counter[str] = collections.Counter()
    for index, entry in enumerate(entries):
        k = seen[entry.qualname]
        seen[entry.qualname] += 1
        candidates = theirs.get(entry.qualname, [])
        found = compare(entry.code, candidates[k], nested=False) \
            if k < len(candidates) else None
        if k < len(candidates) and found is None:
            row["identical"] += 1
            continue
        if row["first_different"] is None:
            row["first_different"] = entry.qualname
        row["different"].append([entry.qualname, str(found) if found is not None else
                                 "not in the decompiled text", found.detail if found else "",
                                 index])
    row["file_identical"] = compare(original, again) is None
    return row


def find_interpreter(version: tuple[int, int]) -> str | None:
    """A CPython ``version`` found on this machine: pyenv's newest of it (``$PYENV_ROOT``,
    else ``pyenv root``, else ``~/.pyenv``), or ``pythonX.Y`` on the path (not a pyenv
    shim, which runs only the versions pyenv has selected)."""
    root = os.environ.get("PYENV_ROOT")
    if root is None and shutil.which("pyenv") is not None:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True,
                              check=False).stdout.strip() or None
    base = Path(root) if root is not None else Path.home() / ".pyenv"
    paths = sorted(glob.glob(str(base / "versions" / f"{version[0]}.{version[1]}.*" / "bin"
                                 / "python")),
                   key=lambda p: [int(x) for x in Path(p).parent.parent.name.split(".")
                                  if x.isdigit()])
    if paths:
        return paths[-1]
    found = shutil.which(f"python{version[0]}.{version[1]}")
    return found if found is not None and "shims" not in Path(found).parts else None


def check_with(python: str, pyc: Path, text: str, where: Path) -> dict[str, Any]:
    """Have ``python`` (the file's version) compare ``text`` with ``pyc``; ``where``: a
    directory to write the text in."""
    source = where / (pyc.stem + ".decompiled.py")
    source.write_text(text, encoding="utf-8")
    src = str(Path(__file__).resolve().parent.parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    try:
        done = subprocess.run([python, "-m", "unveil.verify.foreign", str(pyc), str(source)],
                              capture_output=True, text=True, env=env, check=False)
    except OSError as exc:
        raise BadInputError(f"cannot run {python}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BadInputError(f"{python} could not check {pyc}: {last}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@dataclass
class PycCheck:
    """What :func:`check_pyc` found for one ``.pyc``: its counts (``file``, with
    ``whole_file_identical``), a result per code object in the file's order, and the
    interpreter that compiled the decompiled text (None when the text was not made) and
    the file's version."""

    file: FileReport
    results: list[FunctionResult]
    python: str | None
    version: tuple[int, int]


def check_pyc(path: str, python: str | None = None, details: bool = False) -> PycCheck:
    """Decompile the ``.pyc`` at ``path`` here and have the interpreter of its version
    (``python``, else this one or :func:`find_interpreter`'s) compile the text and compare
    each code object (``details``: with its listing's diff); :class:`BadInputError` when
    no such interpreter is found."""
    import tempfile

    from ..bytecode.pyc import load_pyc
    from ..codeobj import code_kind, code_version
    from ..decompiler.api import decompile
    from ..errors import DecompilationError
    from .report import exception_message

    code = load_pyc(path)
    version = code_version(code)
    entries = list(iter_code_objects(code))
    report = FileReport(path, functions=len(entries))

    def results(status: str, reason: str | None = None, message: str | None = None,
                compiled: bool = False) -> list[FunctionResult]:
        return [FunctionResult(path, e.qualname, code_kind(e.code), e.code.co_firstlineno,
                               status, reason, message,
                               decompiled=reason != "decompile-error", compiled=compiled)
                for e in entries]

    try:
        text = decompile(code)
    except DecompilationError as exc:
        report.failed = len(entries)
        return PycCheck(report, results("failed", "decompile-error", exception_message(exc)),
                        None, version)
    here = sys.version_info[:2] == version
    interpreter = python or (sys.executable if here else find_interpreter(version))
    if interpreter is None:
        raise BadInputError(
            f"checking {path} needs CPython {version[0]}.{version[1]} to compile what was "
            f"decompiled: pass --python PATH to one")
    with tempfile.TemporaryDirectory() as tmp:
        row = check_with(interpreter, Path(path), text, Path(tmp))
    if row["error"] is not None:
        report.failed = len(entries)
        return PycCheck(report, results("failed", "compile-error", row["error"]), interpreter,
                        version)
    found = results("identical", compiled=True)
    for _qualname, difference, detail, index in row["different"]:
        found[index].status, found[index].message = "differs", difference
        found[index].detail = detail if details and detail else None
    report.identical = row["identical"]
    report.differs = len(entries) - row["identical"]
    report.whole_file_identical = bool(row["file_identical"])
    return PycCheck(report, found, interpreter, version)


def main(argv: list[str]) -> int:
    """``python -m unveil.verify.foreign PYC TEXT``: print :func:`compare_file` as JSON."""
    pyc, text = argv
    print(json.dumps(compare_file(Path(pyc).read_bytes(),
                                  Path(text).read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
