"""The run's compilation as a picture: one row per compiled frame on a time axis (from the
first compile's start), each bar cut into the phases its compile time went to. Static
SVG, drawn here: no script, no network, readable in any browser and from ``file://``."""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["PHASE_COLOURS", "timeline_svg"]

# one colour per phase (those compilation_metrics gives, and unveil's own)
PHASE_COLOURS = {"Dynamo": "#4c78a8", "AOTAutograd": "#f58518", "Inductor lowering": "#54a24b",
                 "Inductor code and kernels": "#e45756", "backend, other": "#b279a2",
                 "unveil": "#9d755d"}
_OTHER = "#bab0ac"
_ROW, _LABEL, _WIDTH = 18, 260, 640  # pixels: a row's height, the labels, the time axis


def timeline_svg(frames: list[dict[str, Any]]) -> str | None:
    """The SVG of ``frames`` (manifest entries with ``compile_phases``; those without a
    start time are laid end to end); None when no frame has phases."""
    rows = [f for f in frames if isinstance(f.get("compile_phases"), dict)
            and f["compile_phases"]]
    if not rows:
        return None
    starts = [f.get("compile_started_s") for f in rows]
    known = [s for s in starts if isinstance(s, (int, float))]
    origin = min(known) if known else 0.0
    placed: list[tuple[dict[str, Any], float, float]] = []
    cursor = 0.0
    for frame, start in zip(rows, starts, strict=True):
        length = sum(float(v) for v in frame["compile_phases"].values())
        at = float(start) - origin if isinstance(start, (int, float)) else cursor
        placed.append((frame, at, length))
        cursor = max(cursor, at + length)
    span = max((at + length for _, at, length in placed), default=0.0) or 1.0
    scale = _WIDTH / span
    height = _ROW * (len(placed) + 2) + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="timeline" '
             f'width="{_LABEL + _WIDTH + 70}" height="{height}" font-size="11" '
             f'font-family="system-ui,sans-serif"><title>compile time by frame and phase'
             f'</title>']
    for k, (frame, at, length) in enumerate(placed):
        y = _ROW * k + 4
        label = f"{frame.get('function') or '?'} {frame.get('compile_id') or ''}"
        parts.append(f'<text x="{_LABEL - 6}" y="{y + 12}" text-anchor="end">'
                     f'{escape(label[:40])}</text>')
        x = _LABEL + at * scale
        for phase, seconds in frame["compile_phases"].items():
            w = float(seconds) * scale
            if w <= 0:
                continue
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{max(w, 0.5):.1f}" '
                         f'height="{_ROW - 4}" fill="{PHASE_COLOURS.get(phase, _OTHER)}">'
                         f'<title>{escape(str(frame.get("compile_id")))} {escape(phase)}: '
                         f'{float(seconds):.3f} s</title></rect>')
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 12}">{length:.2f} s</text>')
    axis = _ROW * len(placed) + 8
    parts.append(f'<line x1="{_LABEL}" y1="{axis}" x2="{_LABEL + _WIDTH}" y2="{axis}" '
                 f'stroke="#57606a"/>')
    for tick in range(5):
        x = _LABEL + _WIDTH * tick / 4
        parts.append(f'<text x="{x:.1f}" y="{axis + 12}" text-anchor="middle">'
                     f'{span * tick / 4:.2f} s</text>')
    legend_y = axis + 30
    x = float(_LABEL)
    for phase, colour in PHASE_COLOURS.items():
        parts.append(f'<rect x="{x:.1f}" y="{legend_y - 9}" width="10" height="10" '
                     f'fill="{colour}"/><text x="{x + 13:.1f}" y="{legend_y}">'
                     f'{escape(phase)}</text>')
        x += 14 + 6.5 * len(phase) + 12
    parts.append("</svg>")
    return "".join(parts)
