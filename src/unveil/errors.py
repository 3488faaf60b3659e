"""Exceptions raised by unveil."""

from __future__ import annotations


class UnveilError(Exception):
    """Base class of every error unveil raises on purpose."""


class DecompilationError(UnveilError):
    """A code object could not be turned back into source.

    Carries the code object's qualified name, the byte offset and the instruction
    where decompilation stopped, so the message names exactly what failed.
    """

    def __init__(self, message: str, *, code_name: str | None = None,
                 offset: int | None = None, instruction: str | None = None) -> None:
        self.reason = message
        self.code_name = code_name
        self.offset = offset
        self.instruction = instruction
        where = []
        if code_name is not None:
            where.append(f"in {code_name}")
        if offset is not None:
            where.append(f"at offset {offset}")
        if instruction is not None:
            where.append(f"({instruction})")
        super().__init__(f"{message} {' '.join(where)}".strip())


class BadInputError(UnveilError):
    """The input given to unveil is not something it can work on (one clear sentence)."""
