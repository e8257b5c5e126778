"""The patching trade-off plot as an inline SVG drawn on the server.

Gradio 6's ScatterPlot and LinePlot cannot write a label beside each point
(their only text per point is a hover tooltip), and a trade-off curve is read
by its labels: which alpha sits where. So the Sweep tab draws it here: one
point per alpha, joined in alpha order, each labelled "α=…", the recommended
alpha ringed.
"""
from __future__ import annotations

import html
import math

WIDTH, HEIGHT = 620, 400
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 20, 52
LINE, POINT, RECOMMENDED, GRID = "#2563eb", "#1d4ed8", "#ea580c", "#e5e7eb"


def axis_range(values: list[float]) -> tuple[float, float]:
    """The values' span with room on both sides (at least one percentage point, so one point is not a cliff),
    kept within 0-100 where the values are: they are percentages."""
    low, high = min(values), max(values)
    pad = max(0.1 * (high - low), 1.0)
    return (max(low - pad, 0.0) if low >= 0 else low - pad), (min(high + pad, 100.0) if high <= 100 else high + pad)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) inside [low, high]."""
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def _scale(value: float, low: float, high: float, start: float, end: float) -> float:
    return start + (value - low) / (high - low) * (end - start)


def _axes(x_range: tuple[float, float], y_range: tuple[float, float], x_title: str, y_title: str) -> list[str]:
    """Grid lines, tick labels and axis titles."""
    parts = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>']  # readable under a dark theme too
    for xv in nice_ticks(*x_range):
        x = _scale(xv, *x_range, LEFT, WIDTH - RIGHT)
        parts.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" stroke="{GRID}"/>'
                     f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">{xv:g}</text>')
    for yv in nice_ticks(*y_range):
        y = _scale(yv, *y_range, HEIGHT - BOTTOM, TOP)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="{GRID}"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{yv:g}</text>')
    parts.append(f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
                 'fill="none" stroke="#9ca3af"/>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle" font-size="12">'
                 f'{html.escape(x_title)}</text>')
    parts.append(f'<text transform="translate(16 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" text-anchor="middle" '
                 f'font-size="12">{html.escape(y_title)}</text>')
    return parts


def tradeoff_svg(points: list[dict], x_title: str, y_title: str, recommended: float | None = None) -> str:
    """``points``: {"alpha", "x", "y"} with x and y in percent. An empty list draws a note, not an empty frame."""
    if not points:
        return '<div class="sweep-empty">No sweep point yet: launch a sweep or pick one.</div>'
    points = sorted(points, key=lambda p: p["alpha"])
    x_range, y_range = axis_range([p["x"] for p in points]), axis_range([p["y"] for p in points])
    xy = [(_scale(p["x"], *x_range, LEFT, WIDTH - RIGHT), _scale(p["y"], *y_range, HEIGHT - BOTTOM, TOP))
          for p in points]
    parts = _axes(x_range, y_range, x_title, y_title)
    if len(xy) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        parts.append(f'<polyline class="sweep-curve" points="{path}" fill="none" stroke="{LINE}" stroke-width="2"/>')
    for point, (x, y) in zip(points, xy):
        if recommended is not None and abs(point["alpha"] - recommended) < 1e-9:
            parts.append(f'<circle class="sweep-recommended" cx="{x:.1f}" cy="{y:.1f}" r="10" fill="none" '
                         f'stroke="{RECOMMENDED}" stroke-width="3"/>')
        parts.append(f'<circle class="sweep-point" data-alpha="{point["alpha"]:g}" cx="{x:.1f}" cy="{y:.1f}" r="5" '
                     f'fill="{POINT}"><title>alpha {point["alpha"]:g}: x {point["x"]:.1f}, y {point["y"]:.1f}'
                     '</title></circle>')
        anchor = "end" if x > WIDTH - RIGHT - 60 else "start"
        dx = -9 if anchor == "end" else 9
        parts.append(f'<text class="sweep-label" x="{x + dx:.1f}" y="{y - 8:.1f}" text-anchor="{anchor}" '
                     f'font-size="12" fill="#111827">α={point["alpha"]:g}</text>')
    return (f'<svg id="sweep-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="100%" style="max-width:{WIDTH}px; font-family: sans-serif">{"".join(parts)}</svg>')
