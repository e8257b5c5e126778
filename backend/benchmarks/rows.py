"""Annotation rows and image files of published benchmarks: read, checked, and refused with exact steps.

Why a module: ARO, hard positives and the order benchmarks all ship a JSON
list of rows naming image files that the user downloads by hand. Each loader
must refuse the same way when something is missing (``DataMissing`` with the
steps, before any encoding starts, never halfway through a run with a
DataLoader error) and must reject a file of another format with its row
number rather than a ``KeyError`` deep in a build.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message


def read_rows(path: Path, required: Sequence[str]) -> list[dict]:
    """The JSON list of dicts in ``path``; a ValueError names the first row that lacks a ``required`` key."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error}); delete it and fetch it again") from None
    if not isinstance(rows, list):
        raise ValueError(f"{path}: expected a JSON list of rows, found {type(rows).__name__}")
    for number, row in enumerate(rows):
        lacking = [key for key in required if not isinstance(row, dict) or key not in row]
        if lacking:
            raise ValueError(f"{path}: row {number} lacks {', '.join(lacking)} (is this the authors' file?)")
    return rows


def require_files(benchmark: str, folder: Path, paths: Sequence[Path], steps: list[str]) -> None:
    """Raise ``DataMissing`` with ``steps`` (and how many files are absent, naming one) unless every path exists.

    Checked up front because an image found missing inside a DataLoader
    worker would abort an evaluation after minutes of encoding.
    """
    missing = [path for path in dict.fromkeys(paths) if not path.is_file()]
    if missing:
        count = len(dict.fromkeys(paths))
        raise DataMissing(steps_message(benchmark, folder, [
            *steps, f"check: {missing[0]} must exist ({len(missing)} of the {count} image files needed are "
                    "missing)"]))
