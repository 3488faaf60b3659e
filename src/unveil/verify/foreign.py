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
from pathlib import Path
from typing import Any

from ..codeobj import iter_code_objects
from ..errors import BadInputError


def compare_file(pyc: bytes, text: str) -> dict[str, Any]:
    """(Run by the file's own version.) ``codes``, ``identical`` (code objects the text
    compiles to the same bytecode), ``file_identical``, ``first_different`` (a qualified
    name, or None), ``different`` (each code object that differs: its qualified name, the
    first difference and a listing diff around it), ``error`` (why the text does not
    compile, or None)."""
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
    for entry in entries:
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
                                 "not in the decompiled text", found.detail if found else ""])
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


def main(argv: list[str]) -> int:
    """``python -m unveil.verify.foreign PYC TEXT``: print :func:`compare_file` as JSON."""
    pyc, text = argv
    print(json.dumps(compare_file(Path(pyc).read_bytes(),
                                  Path(text).read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
