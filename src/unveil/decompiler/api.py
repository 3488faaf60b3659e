"""Public entry points of the decompiler (filled in as the decompiler grows)."""

from __future__ import annotations

from types import CodeType


def decompile(obj: object) -> str:
    raise NotImplementedError("decompiler not written yet")


def recompile(code: CodeType, filename: str | None = None) -> CodeType:
    raise NotImplementedError("decompiler not written yet")
