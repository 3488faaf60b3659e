"""Rich display in Jupyter: a ``prepare_debug`` dump and what ``unveil.explain(fn, *args)``
returns (:class:`Explanation`) show as the HTML report (in an ``<iframe srcdoc>``, so its
styles and search box stay its own), and as the summary in plain text."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from .load import Run, load_run


def report_iframe(run: Run, height: int = 640) -> str:
    """The HTML report of ``run`` for a notebook cell."""
    from .html import render

    return (f'<iframe style="width:100%;height:{height}px;border:1px solid #d0d7de" '
            f'srcdoc="{html.escape(render(run), quote=True)}"></iframe>')


class Explanation:
    """What ``torch.compile`` made of one call: the result, the dump, its summary.

    Shown in a notebook as the report; ``str()`` is the terminal summary."""

    def __init__(self, result: Any, dump_dir: Path) -> None:
        self.result = result
        self.dump_dir = dump_dir
        self.run = load_run(dump_dir)

    @property
    def frames(self) -> list[dict[str, Any]]:
        return self.run.frames

    def summary(self) -> str:
        from .summary import summary

        return summary(self.run)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<unveil.Explanation of {len(self.frames)} frame(s) in {self.dump_dir}>"

    def _repr_html_(self) -> str:
        return report_iframe(self.run)
