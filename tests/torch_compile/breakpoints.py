"""pdb's machinery without its prompt, for tests that set breakpoints in dumped files."""

from __future__ import annotations

import bdb
from types import FrameType


class Breakpoints(bdb.Bdb):
    """Records the breakpoints hit (file, line), then goes on."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[tuple[str, int]] = []

    def user_line(self, frame: FrameType) -> None:
        if self.break_here(frame):
            self.hits.append((frame.f_code.co_filename, frame.f_lineno))
        self.set_continue()
