"""A sweep's results as files: a CSV table (every metric per alpha) and the trade-off figure (PNG or SVG).

Written from the sweep's result (``backend.patching.sweep.run_job``'s, or the CLI's
in-process sweep): the rows hold every metric of both benchmarks per alpha, so the
table carries more than the two plotted axes. The Sweep tab and
``python -m backend sweep --csv/--figure`` / ``sweep-export JOB`` write the same files.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from backend.core.files import atomic_path, write_text_atomic
from backend.patching import figure

FIGURE_SUFFIXES = (".png", ".svg")


def points(result: dict) -> list[dict]:
    """The plotted points: {"alpha", "x", "y"} in percent, x the object-centric metric, y the compositional one."""
    return [{"alpha": row["alpha"], "x": 100 * row[result["object_centric"]], "y": 100 * row[result["compositional"]]}
            for row in result["rows"]]


def table(result: dict) -> list[list[str]]:
    """Header and one line per alpha: alpha, whether it is the recommended one, the two axes, then every other
    metric of the sweep's benchmarks, in percent."""
    axes = [result["object_centric"], result["compositional"]]
    others = [name for name in dict.fromkeys(k for row in result["rows"] for k in row) if name not in {"alpha", *axes}]
    recommended = (result.get("recommended") or {}).get("alpha")
    lines = [["alpha", "recommended", *(f"{name} (%)" for name in [*axes, *others])]]
    for row in result["rows"]:
        lines.append([f"{row['alpha']:g}", "yes" if row["alpha"] == recommended else "",
                      *(f"{100 * row[name]:.4f}" if name in row else "" for name in [*axes, *others])])
    return lines


def write_csv(result: dict, path: Path | str) -> Path:
    """The table as a CSV file (written whole, then moved into place)."""
    path, text = Path(path), io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(table(result))
    write_text_atomic(path, text.getvalue())
    return path


def write_figure(result: dict, path: Path | str) -> Path:
    """The trade-off figure as a PNG or SVG file, by the path's suffix."""
    path = Path(path)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise ValueError(f"figure {path.name!r}: name a .png or .svg file")
    marks = figure.layout(points(result), f"object-centric: {result['object_centric']} (%)",
                          f"compositional: {result['compositional']} (%)",
                          (result.get("recommended") or {}).get("alpha"))
    if path.suffix.lower() == ".svg":
        write_text_atomic(path, figure.to_svg(marks, inline=False))
    else:
        with atomic_path(path) as temporary:
            figure.to_png(marks, temporary)
    return path
