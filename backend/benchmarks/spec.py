"""SPEC (Peng et al., CVPR 2024): synthetic candidate sets that differ in one concept only, read both ways.

Six subsets (the authors' folder names; the paper's "absolute/relative position" are ``*_spatial``):
``absolute_size``, ``relative_size``, ``absolute_spatial``, ``relative_spatial``, ``existence``, ``count``.
Each is two benchmarks here, ``spec-<subset>-i2t`` and ``spec-<subset>-t2i`` (hyphens for underscores): the
two directions are different item sets with different shapes (one image vs L texts, one text vs K images),
and the candidate count differs by subset, so one grid cannot hold them.

Format and rules read from the authors' repository (github.com/wjpoom/SPEC at commit ad982a4,
``spec/dataset.py``, ``spec/models/clip_wrapper.py``): the Hub dataset ``wjpoom/SPEC`` holds ``data.zip``
(revision 694dfdc) that unzips into ``<subset>/image2text.json`` (a JSON list of ``{"query": <image path
relative to the subset folder>, "keys": [candidate texts], "label": <index of the right text>}``) and
``<subset>/text2image.json`` (``{"query": <text>, "keys": [candidate image paths], "label": <index>}``), with
the images beside them.

Rule, exactly theirs: ``accuracy`` = the fraction of queries whose ``argmax`` over the candidates' cosine
similarities is ``label``. Their ``torch.argmax`` returns the first maximum, so **a tie goes to the earlier
candidate**: the right candidate wins a tie with candidates after it and loses one with candidates before it
(``task.first_maximum``). The paper's "average" is the unweighted mean of the six subsets' accuracies per
direction (their ``eval.py``); compute it from the six results. The bootstrap draws queries. No chance level
is registered: it is one over the number of candidates, which the files fix and this code does not presume.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, first_maximum, fraction, grid_task

FOLDER = "spec"
HUB_ID = "wjpoom/SPEC"
REVISION = "694dfdc74fe72acdc932fd5fc919b6b0268f7a07"  # "Upload data.zip"
ZIP_SHA256 = "77ada96030bd2f8fd93dbb5a988cfa097692464be06cd930be5c35fe5dce7186"  # data.zip, 1,555,390,680 bytes
COMMIT = "ad982a42d023581fae256608a7f812ec1c64ef94"
SUBSETS = ("absolute_size", "relative_size", "absolute_spatial", "relative_spatial", "existence", "count")
FILES = {"i2t": "image2text.json", "t2i": "text2image.json"}
FIELDS = ("query", "keys", "label")


def candidate_scores(scores: Tensor, direction: str) -> Tensor:
    """(N, candidates): I2T items are one image vs L texts (N, L, 1); T2I items one text vs K images (N, 1, K)."""
    return scores[:, :, 0] if direction == "i2t" else scores[:, 0, :]


def spec_correct(scores: Tensor, labels: Tensor, direction: str) -> Tensor:
    """The query's first maximum is its label (their ``argmax == label``)."""
    return first_maximum(candidate_scores(scores, direction)) == labels


def spec_metrics(scores: Tensor, labels: Tensor, *, direction: str) -> dict[str, float]:
    return {"accuracy": fraction(spec_correct(scores, labels, direction))}


def _steps(folder: Path) -> list[str]:
    return [(f"on a connected machine: huggingface-cli download {HUB_ID} data.zip --repo-type dataset --revision "
             f"{REVISION} --local-dir {folder}   (1.56 GB; sha256sum must give {ZIP_SHA256})"),
            f"cd {folder} && unzip -q data.zip   (gives {folder}/<subset>/image2text.json, text2image.json and "
            f"the images, for the subsets {', '.join(SUBSETS)})"]


def subset_folder(root: Path, subset: str, benchmark: str) -> Path:
    """``<root>/spec/<subset>``, or ``<root>/spec/data/<subset>`` when the zip was unpacked with its own folder."""
    folder = root / FOLDER
    for candidate in (folder / subset, folder / "data" / subset):
        if (candidate / FILES["i2t"]).is_file():
            return candidate
    raise DataMissing(steps_message(benchmark, folder, [
        f"{folder / subset / FILES['i2t']} is missing", *_steps(folder)]))


def build(subset: str, direction: str, limit: int | None, root: Path) -> Task:
    """The first ``limit`` queries of the subset's file for ``direction``; every image checked up front."""
    import torch

    name = benchmark_name(subset, direction)
    folder = subset_folder(root, subset, name)
    rows = read_rows(folder / FILES[direction], FIELDS)[:limit]
    if len({len(row["keys"]) for row in rows}) > 1:
        raise ValueError(f"{folder / FILES[direction]}: queries have different numbers of candidates "
                         f"({sorted({len(row['keys']) for row in rows})}); is this the authors' file?")
    if direction == "i2t":
        images = [[folder / row["query"]] for row in rows]
        texts = [list(row["keys"]) for row in rows]
    else:
        images = [[folder / key for key in row["keys"]] for row in rows]
        texts = [[row["query"]] for row in rows]
    require_files(name, folder, [path for row in images for path in row], _steps(root / FOLDER))
    labels = torch.tensor([int(row["label"]) for row in rows], dtype=torch.long)
    return grid_task([[ImageFile(str(path)) for path in row] for row in images], texts,
                     LabelledMetric(functools.partial(spec_metrics, direction=direction), labels),
                     ids=[str(n) for n in range(len(rows))], subtypes=[subset] * len(rows),
                     correct=functools.partial(spec_correct, labels=labels, direction=direction))


def benchmark_name(subset: str, direction: str) -> str:
    return f"spec-{subset.replace('_', '-')}-{direction}"


_WHAT = {"i2t": "an image vs its candidate texts (I2T)", "t2i": "a text vs its candidate images (T2I)"}

for _subset in SUBSETS:
    for _direction in FILES:
        register(Benchmark(
            benchmark_name(_subset, _direction),
            f"SPEC {_subset.replace('_', ' ')} (Peng et al. 2024), {_WHAT[_direction]} differing in that concept "
            "only. accuracy: the query's argmax is its label (the first maximum wins a tie, as their argmax).",
            f"{HUB_ID}@{REVISION[:7]}/data.zip:{_subset}/{FILES[_direction]}",
            functools.partial(build, _subset, _direction), headline=("accuracy",)))
