"""The block IR: what the translator makes of the CFG and the structurer reads.

Each :class:`IRBlock` holds statements (``ast`` with the markers of :mod:`.exprs` and
:mod:`.markers`), the stacks it is entered with and leaves, and a :class:`Term`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Literal

from ...bytecode import Handler
from ..graph.cfg import CFG

TermKind = Literal["goto", "branch", "for", "return", "raise", "reraise", "end_async_for"]
"""How an IR block can end (see :class:`Term`)."""


@dataclass(slots=True)
class Term:
    """How an IR block ends.

    ``kind``: ``goto`` (targets[0]), ``branch`` (test; targets = [then, else]),
    ``for`` (test is the iterator; targets = [body, exit]), ``return`` (value),
    ``raise`` (value, cause; value None re-raises), ``reraise`` (value),
    ``end_async_for`` (an ``async for``'s end: targets[0] is where it goes on).
    """

    kind: TermKind
    targets: list[int] = field(default_factory=list)
    test: ast.expr | None = None
    value: ast.expr | None = None
    cause: ast.expr | None = None
    line: int | None = None
    src: int = -1  # the block whose last instruction made this terminator
    fall: int = -1  # for a branch: the target laid out right after it (the ``if`` body)
    back: bool = False  # a goto: a jump straight back (a ``continue``, a loop's end)


@dataclass(slots=True)
class IRBlock:
    """A chain of basic blocks as the translator leaves it: the stack it is entered
    with, its statements, the stack it leaves and how it ends."""

    id: int
    blocks: list[int]
    entry: list[ast.expr]
    stmts: list[ast.stmt]
    exit: list[ast.expr]
    term: Term
    handler: Handler | None
    handler_block: int | None = None
    preds: list[int] = field(default_factory=list)
    line: int | None = None

    @property
    def succs(self) -> list[int]:
        return self.term.targets


@dataclass(slots=True)
class IRGraph:
    """The IR blocks of one code object (or region), by id, with the CFG they came from."""

    blocks: dict[int, IRBlock]
    entry: int
    cfg: CFG
    shares: bool = True  # may hold :class:`~.exprs.Shared` values (False: the renderer
    #                      need not count them)

    def ordered(self) -> list[IRBlock]:
        return [self.blocks[k] for k in sorted(self.blocks)]
