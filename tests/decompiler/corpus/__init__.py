"""Behaviour corpus for the decompiler: small realistic functions with their inputs.

Modules named ``vXYY_*.py`` use syntax of Python X.YY and are only loaded there.
Nothing here is collected by pytest; :func:`load_modules` imports the modules.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings
from types import FunctionType, ModuleType

_VERSIONED = re.compile(r"^v(\d)(\d\d)_")
HERE = os.path.dirname(os.path.abspath(__file__))


def module_names(all_versions: bool = False) -> list[str]:
    """Names of the corpus modules loadable on this Python (or all of them)."""
    names = []
    for filename in sorted(os.listdir(HERE)):
        if not filename.endswith(".py") or filename.startswith("_"):
            continue
        name = filename[:-3]
        match = _VERSIONED.match(name)
        if match and not all_versions:
            needed = (int(match.group(1)), int(match.group(2)))
            if sys.version_info[:2] < needed:
                continue
        names.append(name)
    return names


def load_module(name: str) -> ModuleType:
    """Import one corpus module (compile-time SyntaxWarnings are expected and muted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return importlib.import_module(f"{__name__}.{name}")


def load_modules() -> list[ModuleType]:
    """Import every corpus module this Python can load."""
    return [load_module(name) for name in module_names()]


def functions_of(module: ModuleType) -> list[tuple[str, FunctionType]]:
    """The ``(name, function)`` pairs of a module that carry ``@cases``, in source order."""
    found = [
        (name, value)
        for name, value in vars(module).items()
        if isinstance(value, FunctionType) and getattr(value, "__cases__", None) is not None
    ]
    found.sort(key=lambda item: item[1].__code__.co_firstlineno)
    return found


def classes_of(module: ModuleType) -> list[tuple[str, type]]:
    """The module-level classes marked with ``@exercised_by``, in source order."""
    found = [
        (name, value)
        for name, value in vars(module).items()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and "__exercised_by__" in vars(value)
    ]
    found.sort(key=lambda item: item[0])
    return found
