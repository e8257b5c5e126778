"""The patching trade-off figure: one layout, drawn as SVG (the Sweep tab, exports) or as PNG (exports).

Gradio 6's ScatterPlot and LinePlot cannot write a label beside each point
(their only text per point is a hover tooltip), and a trade-off curve is read
by its labels: which alpha sits where. So the figure is laid out here: one
point per alpha, joined in alpha order, each labelled "α=…", the recommended
alpha ringed. `layout` places every mark once, as SVG elements with their
attributes; `to_svg` writes them, `to_png` paints the same marks with Pillow
(already a runtime dependency; a plotting library would draw a second, different
figure and add tens of megabytes to the Space for one picture).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

WIDTH, HEIGHT = 620, 400
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 20, 52
LINE, POINT, RECOMMENDED, GRID, FRAME, INK = "#2563eb", "#1d4ed8", "#ea580c", "#e5e7eb", "#9ca3af", "#111827"
PNG_SCALE = 2  # pixels per SVG unit: sharp on a paper's page and a high-density screen


@dataclass(frozen=True)
class Mark:
    """One SVG element: its tag, attributes (SVG's names) and text."""

    tag: str
    attrs: dict[str, Any] = field(default_factory=dict)
    text: str = ""


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


def _text(x: float, y: float, text: str, anchor: str = "middle", size: int = 11, **attrs: Any) -> Mark:
    return Mark("text", {"x": round(x, 1), "y": round(y, 1), "text-anchor": anchor, "font-size": size, **attrs}, text)


def _axes(x_range: tuple[float, float], y_range: tuple[float, float], x_title: str, y_title: str) -> list[Mark]:
    """Background, grid lines, tick labels, frame and axis titles."""
    marks = [Mark("rect", {"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT, "fill": "white"})]  # dark themes too
    for xv in nice_ticks(*x_range):
        x = round(_scale(xv, *x_range, LEFT, WIDTH - RIGHT), 1)
        marks += [Mark("line", {"x1": x, "y1": TOP, "x2": x, "y2": HEIGHT - BOTTOM, "stroke": GRID}),
                  _text(x, HEIGHT - BOTTOM + 16, f"{xv:g}")]
    for yv in nice_ticks(*y_range):
        y = round(_scale(yv, *y_range, HEIGHT - BOTTOM, TOP), 1)
        marks += [Mark("line", {"x1": LEFT, "y1": y, "x2": WIDTH - RIGHT, "y2": y, "stroke": GRID}),
                  _text(LEFT - 6, y + 4, f"{yv:g}", anchor="end")]
    marks.append(Mark("rect", {"x": LEFT, "y": TOP, "width": WIDTH - LEFT - RIGHT, "height": HEIGHT - TOP - BOTTOM,
                               "fill": "none", "stroke": FRAME}))
    marks.append(_text((LEFT + WIDTH - RIGHT) / 2, HEIGHT - 12, x_title, size=12))
    marks.append(_text(0, 0, y_title, size=12, transform=f"translate(16 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)"))
    return marks


def layout(points: list[dict], x_title: str, y_title: str, recommended: float | None = None) -> list[Mark]:
    """Every mark of the figure. ``points``: {"alpha", "x", "y"} with x and y in percent (at least one)."""
    points = sorted(points, key=lambda p: p["alpha"])
    x_range, y_range = axis_range([p["x"] for p in points]), axis_range([p["y"] for p in points])
    xy = [(round(_scale(p["x"], *x_range, LEFT, WIDTH - RIGHT), 1), round(_scale(p["y"], *y_range, HEIGHT - BOTTOM,
                                                                                 TOP), 1)) for p in points]
    marks = _axes(x_range, y_range, x_title, y_title)
    if len(xy) > 1:
        marks.append(Mark("polyline", {"class": "sweep-curve", "points": " ".join(f"{x},{y}" for x, y in xy),
                                       "fill": "none", "stroke": LINE, "stroke-width": 2}))
    for point, (x, y) in zip(points, xy):
        if recommended is not None and abs(point["alpha"] - recommended) < 1e-9:
            marks.append(Mark("circle", {"class": "sweep-recommended", "cx": x, "cy": y, "r": 10, "fill": "none",
                                         "stroke": RECOMMENDED, "stroke-width": 3}))
        marks.append(Mark("circle", {"class": "sweep-point", "data-alpha": f"{point['alpha']:g}", "cx": x, "cy": y,
                                     "r": 5, "fill": POINT},
                          f"alpha {point['alpha']:g}: x {point['x']:.1f}, y {point['y']:.1f}"))
        anchor = "end" if x > WIDTH - RIGHT - 60 else "start"
        marks.append(_text(x + (-9 if anchor == "end" else 9), y - 8, f"α={point['alpha']:g}", anchor=anchor,
                           size=12, fill=INK, **{"class": "sweep-label"}))
    return marks


def to_svg(marks: list[Mark], inline: bool = True) -> str:
    """The marks as an SVG document; `inline` sizes it to its container (a page) rather than in pixels (a file)."""
    body = []
    for mark in marks:
        attrs = " ".join(f'{name}="{html.escape(str(value))}"' for name, value in mark.attrs.items())
        text = html.escape(mark.text)
        body.append(f"<{mark.tag} {attrs}><title>{text}</title></{mark.tag}>" if mark.tag == "circle" and text else
                    f"<{mark.tag} {attrs}>{text}</{mark.tag}>" if text else f"<{mark.tag} {attrs}/>")
    size = (f'width="100%" style="max-width:{WIDTH}px; font-family: sans-serif"' if inline else
            f'width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif"')
    return (f'<svg id="sweep-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" {size}>'
            f'{"".join(body)}</svg>')


def tradeoff_svg(points: list[dict], x_title: str, y_title: str, recommended: float | None = None) -> str:
    """The Sweep tab's figure; an empty list draws a note, not an empty frame."""
    if not points:
        return '<div class="sweep-empty">No sweep point yet: launch a sweep or pick one.</div>'
    return to_svg(layout(points, x_title, y_title, recommended))


def _font(size: int):
    """DejaVu Sans where the system has it (it has the α the labels use), else Pillow's own font, which lacks
    Greek: the caller then writes "alpha" instead."""
    from PIL import ImageFont

    try:
        return ImageFont.truetype("DejaVuSans.ttf", size), True
    except OSError:
        return ImageFont.load_default(size=size), False


def to_png(marks: list[Mark], path) -> None:
    """Paint the marks with Pillow at `PNG_SCALE` pixels per unit and save them as a PNG file at `path`."""
    from PIL import Image, ImageDraw

    k = PNG_SCALE
    image = Image.new("RGB", (WIDTH * k, HEIGHT * k), "white")
    draw = ImageDraw.Draw(image)
    anchors = {"start": "ls", "middle": "ms", "end": "rs"}
    for mark in marks:
        a = mark.attrs
        width = int(float(a.get("stroke-width", 1)) * k)
        if mark.tag == "rect":
            corners = [a["x"] * k, a["y"] * k, (a["x"] + a["width"]) * k, (a["y"] + a["height"]) * k]
            draw.rectangle(corners, fill=None if a.get("fill") == "none" else a.get("fill"), outline=a.get("stroke"))
        elif mark.tag == "line":
            draw.line([a["x1"] * k, a["y1"] * k, a["x2"] * k, a["y2"] * k], fill=a["stroke"], width=width)
        elif mark.tag == "polyline":
            xy = [float(v) * k for pair in a["points"].split() for v in pair.split(",")]
            draw.line(xy, fill=a["stroke"], width=width, joint="curve")
        elif mark.tag == "circle":
            r, cx, cy = a["r"] * k, a["cx"] * k, a["cy"] * k
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=None if a["fill"] == "none" else a["fill"],
                         outline=a.get("stroke"), width=width)
        elif mark.tag == "text":
            font, greek = _font(int(a["font-size"]) * k)
            text = mark.text if greek else mark.text.replace("α=", "alpha ")
            if "transform" in a:  # the y title: drawn level, turned a quarter left, centred where it is translated to
                x, y = (float(v) * k for v in a["transform"].split("(", 1)[1].split(")", 1)[0].split())
                box = draw.textbbox((0, 0), text, font=font)
                label = Image.new("RGBA", (int(box[2] - box[0]) + 4, int(box[3] - box[1]) + 4), (255, 255, 255, 0))
                ImageDraw.Draw(label).text((2 - box[0], 2 - box[1]), text, font=font, fill=INK)
                label = label.rotate(90, expand=True)
                image.paste(label, (int(x - label.width / 2), int(y - label.height / 2)), label)
            else:
                draw.text((a["x"] * k, a["y"] * k), text, font=font, fill=a.get("fill", INK),
                          anchor=anchors[a["text-anchor"]])
    image.save(path, format="PNG")
