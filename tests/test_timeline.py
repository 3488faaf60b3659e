"""The report's compile-time picture (report/timeline.py): static SVG, one row per frame
on the time axis, each bar cut by phase (no torch)."""
# pyodide-compatible

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from unveil.report.timeline import PHASE_COLOURS, timeline_svg


def frame(cid: str, start: float | None, **phases: float) -> dict[str, object]:
    return {"compile_id": cid, "function": "f", "compile_started_s": start,
            "compile_phases": phases}


def test_each_phase_is_a_bar_placed_on_the_time_axis() -> None:
    svg = timeline_svg([frame("0/0", 100.0, Dynamo=0.5, unveil=0.1),
                        frame("0/1", 101.0, Dynamo=0.2, AOTAutograd=0.3)])
    assert svg is not None
    root = ET.fromstring(svg)  # well-formed
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect")
            if r.find("{http://www.w3.org/2000/svg}title") is not None]
    assert [b.find("{http://www.w3.org/2000/svg}title").text for b in bars] == [  # type: ignore[union-attr]
        "0/0 Dynamo: 0.500 s", "0/0 unveil: 0.100 s", "0/1 Dynamo: 0.200 s",
        "0/1 AOTAutograd: 0.300 s"]
    assert bars[0].get("fill") == PHASE_COLOURS["Dynamo"]
    xs = [float(b.get("x") or 0) for b in bars]
    assert xs[0] < xs[1] < xs[2] < xs[3]  # (0/1 starts a second later, after 0/0 ends)
    assert "<script" not in svg and not re.search(r"https?://(?!www\.w3\.org)", svg)


def test_no_phases_no_picture() -> None:
    assert timeline_svg([{"compile_id": "0/0", "compile_phases": {}}]) is None
    assert timeline_svg([]) is None
