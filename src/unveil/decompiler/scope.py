"""What the phases that decompile nested code ask of the driver.

:class:`~unveil.decompiler.functions.CodeDecompiler` runs the pipeline for one code object;
comprehensions, annotations, PEP 695 scopes and inlined comprehensions are decompiled by
asking it for a child. They see it through :class:`Scope`, so that they need not import
the driver that imports them.
"""

from __future__ import annotations

import ast
from types import CodeType
from typing import Protocol

from ..bytecode import Bytecode
from .render.renderer import Renderer


class Scope(Protocol):
    """The decompiler of one code object, as the phases below the driver use it."""

    code: CodeType
    qualname: str

    def child(self, code: CodeType) -> Scope:
        """The decompiler of a code object nested in this one (same constants)."""
        ...

    def statements(self) -> list[ast.stmt]:
        """The body as plain ``ast`` statements."""
        ...

    def raw_statements(self) -> list[ast.stmt]:
        """The body structured but not rendered."""
        ...

    def region_statements(self, bc: Bytecode, entry: list[ast.expr]) -> list[ast.stmt]:
        """Statements of ``bc`` run from ``entry`` as the initial stack."""
        ...

    def renderer(self) -> Renderer:
        """A renderer for this code object's trees."""
        ...
