"""Which files ``unveil check`` reads: paths, directories and importable module names."""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from types import CodeType

from ..errors import BadInputError
from .report import exception_message

DEFAULT_EXCLUDE = frozenset({"__pycache__"})


def _walk_dir(root: Path, exclude: frozenset[str], suffix: str = ".py") -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in exclude and d not in DEFAULT_EXCLUDE
                             and not d.startswith("."))
        found.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(suffix))
    return found


def pyc_files(targets: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """The ``.pyc`` targets, and the ``.pyc`` files in the directory targets (walked as for
    sources: ``__pycache__``, which caches the sources beside it, is skipped)."""
    excluded = frozenset(exclude)
    found: list[str] = []
    for target in targets:
        if target.endswith(".pyc"):
            found.append(target)
        elif Path(target).is_dir():
            found.extend(str(p) for p in _walk_dir(Path(target), excluded, ".pyc"))
    return found


def _module_files(name: str, exclude: frozenset[str]) -> list[Path]:

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise BadInputError(f"cannot find module {name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a parent package failed to import
        raise BadInputError(
            f"cannot find module {name!r}: importing its package raised "
            f"{exception_message(exc)}") from None
    if spec is None:
        raise BadInputError(f"{name!r} is not a file, a directory or an importable module")
    if spec.submodule_search_locations:
        files: list[Path] = []
        for location in spec.submodule_search_locations:
            files.extend(_walk_dir(Path(location), exclude))
        if not files:
            raise BadInputError(f"package {name!r} has no Python source files on disk")
        return files
    origin = spec.origin
    if origin == "frozen":
        origin = getattr(spec.loader_state, "filename", None)
    if not origin or not origin.endswith(".py") or not os.path.isfile(origin):
        raise BadInputError(f"module {name!r} has no Python source file ({spec.origin})")
    return [Path(origin)]


def resolve_targets(targets: Iterable[str | os.PathLike[str]], *,
                    exclude: Iterable[str] = ()) -> list[tuple[Path, bool]]:
    """Expand targets to ``(file, explicit)`` pairs: a .py file, a directory or a module.

    Directories are walked recursively, skipping hidden directories, ``__pycache__``
    and any directory whose name is in ``exclude``. Raises BadInputError.
    """

    excluded = frozenset(exclude)
    out: list[tuple[Path, bool]] = []
    for target in targets:
        path = Path(target)
        text = str(target)
        if path.is_file():
            if path.suffix != ".py":
                raise BadInputError(f"{text} is not a Python source file (.py)")
            out.append((path, True))
        elif path.is_dir():
            out.extend((p, False) for p in _walk_dir(path, excluded))
        elif text and all(part.isidentifier() for part in text.split(".")):
            out.extend((p, False) for p in _module_files(text, excluded))
        else:
            raise BadInputError(f"{text} is not a file, a directory or an importable module")
    seen: set[Path] = set()
    unique = []
    for path, explicit in out:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((path, explicit))
    return unique


def compile_file(path: Path) -> CodeType:
    """Compile a source file (never import it); warnings are silenced."""
    source = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, str(path), "exec", dont_inherit=True)

