"""MMVP-VLM (Tong et al. 2024, "Eyes Wide Shut?"): 9 visual patterns x 15 pairs of images and statements.

Data: the Hub dataset repo ``MMVP/MMVP_VLM`` (commit 211372d, "Upload
Questions.csv") in ``<benchmarks_dir>/mmvp-vlm/``: ``Questions.csv`` (columns
Question ID, Type, Statement; two consecutive rows form a pair) and
``MLLM_VLM Images/<Type>/<Question ID>.jpg`` (the repo's folder name; the
README's ``MMVP_VLM_Images`` is accepted too).

Rule, exactly as the authors' scripts/evaluate_vlm.py: the text is
"a photo of " + statement; each statement picks image 1 when
softmax over the pair's two images gives image 1 more than 0.5, i.e.
s(text, image 1) > s(text, image 2), else image 2; a statement with an odd
question id belongs to image 1 (the pair's first image), an even one to
image 2; a pair is correct when both statements pick their own image. So a
tie counts against the odd statement and for the even one, as in their code.
Chance: 1/4 (each statement 1/2).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks.data import DataMissing, require_dir, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task

NAME = "mmvp-vlm"
HUB_ID = "MMVP/MMVP_VLM"
COMMIT = "211372d5357398f914d806d07dc305aea1f257d2"
IMAGE_FOLDERS = ("MLLM_VLM Images", "MMVP_VLM_Images")
PROMPT = "a photo of "


@dataclass(frozen=True)
class Pair:
    """Two statements and their two images; ``owner[k]`` is the image (0 or 1) statement k describes."""

    pattern: str
    ids: tuple[int, int]
    statements: tuple[str, str]
    images: tuple[ImageFile, ImageFile]
    owner: tuple[int, int]


def pattern_key(pattern: str) -> str:
    """A metric key for a Type value: "Camera Perspective" -> "camera_perspective"."""
    return re.sub(r"[^a-z0-9]+", "_", pattern.lower()).strip("_")


def pair_correct(scores: Tensor, owner: Tensor) -> Tensor:
    """Both statements pick their image; statement k picks image 0 iff s[k, 0] > s[k, 1] (their "> 0.5")."""
    import torch

    picks = torch.where(scores[:, :, 0] > scores[:, :, 1], 0, 1)  # (N, 2) image picked by each statement
    return (picks == owner).all(dim=1)


def mmvp_metrics(scores: Tensor, owner: Tensor, patterns: list[str]) -> dict[str, float]:
    """pair_acc overall and per pattern (``orientation/pair_acc``)."""
    return grouped_fractions({"pair_acc": pair_correct(scores, owner)}, label_masks(patterns))


def _steps(folder: Path) -> list[str]:
    return [(f"download the dataset repo {HUB_ID} into {folder}: huggingface-cli download {HUB_ID} --repo-type "
            f"dataset --revision {COMMIT} --local-dir {folder}"),
            f"check that {folder}/Questions.csv and {folder}/MLLM_VLM Images/<Type>/<Question ID>.jpg exist"]


def _image_root(folder: Path) -> Path:
    for name in IMAGE_FOLDERS:
        if (folder / name).is_dir():
            return folder / name
    raise DataMissing(steps_message(NAME, folder, [f"no image folder ({' or '.join(IMAGE_FOLDERS)})",
                                                   *_steps(folder)]))


def _pair(rows: list[list[str]], images: Path) -> Pair:
    (qid1, type1, statement1), (qid2, _, statement2) = rows
    ids = int(qid1), int(qid2)
    first, second = (ImageFile(str(images / type1 / f"{qid}.jpg")) for qid in ids)
    owner_1, owner_2 = (0 if qid % 2 == 1 else 1 for qid in ids)
    return Pair(type1, ids, (statement1, statement2), (first, second), (owner_1, owner_2))


def mmvp_pairs(root: Path, limit: int | None = None) -> list[Pair]:
    """The pairs in file order (rows 1-2, 3-4, ...), the first ``limit`` of each pattern."""
    folder = require_dir(NAME, root / NAME, _steps(root / NAME))
    if not (folder / "Questions.csv").is_file():
        raise DataMissing(steps_message(NAME, folder, ["Questions.csv is missing", *_steps(folder)]))
    images = _image_root(folder)
    with (folder / "Questions.csv").open(newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.reader(handle) if row][1:]
    pairs = [_pair(rows[i:i + 2], images) for i in range(0, len(rows) - 1, 2)]
    missing = [image.path for pair in pairs for image in pair.images if not Path(image.path).is_file()]
    if missing:
        raise DataMissing(steps_message(NAME, images, [f"{len(missing)} images are missing (first: {missing[0]})",
                                                       *_steps(folder)]))
    counts: dict[str, int] = {}
    kept = []
    for pair in pairs:
        counts[pair.pattern] = counts.get(pair.pattern, 0) + 1
        if limit is None or counts[pair.pattern] <= limit:
            kept.append(pair)
    return kept


def _build(limit: int | None, root: Path) -> Task:
    import torch

    pairs = mmvp_pairs(root, limit)
    owner = torch.tensor([pair.owner for pair in pairs], dtype=torch.long).reshape(-1, 2)
    patterns = [pattern_key(pair.pattern) for pair in pairs]
    return grid_task([list(pair.images) for pair in pairs], [[PROMPT + s for s in pair.statements] for pair in pairs],
                     LabelledMetric(mmvp_metrics, owner, patterns), ids=[f"{a}-{b}" for a, b in (p.ids for p in pairs)],
                     subtypes=patterns, correct=lambda s: pair_correct(s, owner))


register(Benchmark(
    NAME,
    "MMVP-VLM: 9 visual patterns x 15 pairs of images with one statement each ('a photo of ...'). A pair is "
    "right when each statement scores its own image above the other (the authors' rule: a tie picks the "
    "pair's second image). pair_acc overall and per pattern.",
    f"{HUB_ID}@{COMMIT[:7]} (135 pairs)",
    _build, chance={"pair_acc": 0.25}, headline=("pair_acc",)))
