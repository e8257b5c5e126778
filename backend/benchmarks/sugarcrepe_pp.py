"""SugarCrepe++ (Dumpala et al., NeurIPS 2024 D&B): a COCO image, two positive captions and one hard negative.

Five subsets of SugarCrepe (``replace_{obj,att,rel}``, ``swap_{obj,att}``; 4,757 items; no ``add``) with a
second positive caption of different wording. Two tasks, each its own benchmark, both with the authors' rules
(``VLMs/test_Variants_CLIP.py`` of github.com/Sri-Harsha/scpp, every comparison strict, so a tie is wrong):

* ``sugarcrepe-pp`` (ITT, image-text task): right when ``cos(I, P1) > cos(I, N)`` and ``cos(I, P2) > cos(I, N)``
  (``itt``); also ``img_p1`` (``cos(I, P1) > cos(I, N)``) and ``img_p2``, the authors' "Image-P1-Neg" and
  "Image-P2-Neg".
* ``sugarcrepe-pp-tot`` (TOT, text-only task, the text encoder alone): right when ``cos(P1, P2) > cos(P1, N)``
  and ``cos(P1, P2) > cos(P2, N)``.

The paper reports per-subset accuracies; ``mean`` (their unweighted mean) and ``pooled`` (items pooled) are
added. Data: the authors' ``data/<subset>.json`` (a JSON list of {id, filename, caption, caption2,
negative_caption}), the same files as the Hub dataset ``Aman-J/SugarCrepe_pp``, fetched from the GitHub
repository at a pinned commit and checked against the SHA-256s below; images: COCO val2017, shared with
``sugarcrepe`` (``<root>/coco/val2017``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

from collections.abc import Sequence
from pathlib import Path

from backend.benchmarks.data import Remote, ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.rows import read_rows
from backend.benchmarks.sugarcrepe import COCO_VAL2017, check_images
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task

NAME = "sugarcrepe-pp"
TOT = "sugarcrepe-pp-tot"
FOLDER = "sugarcrepe-pp"
REPOSITORY = "Sri-Harsha/scpp"
COMMIT = "c083bbf039a5ca215acaf25e7ee736d2ea6f3864"
SOURCE = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/data"
SUBSETS: dict[str, str] = {  # subset -> SHA-256 of data/<subset>.json at COMMIT (items: 1,652 788 1,406 245 666)
    "replace_obj": "5c6dc499ec8f511a8aa4ec1b7b5eb0eca90317488abe36ec39573355e2d361ab",
    "replace_att": "6826413592894754eeca02aeebbcbbc8b95a7456998abcc714e71c033ce6fe87",
    "replace_rel": "040fb95d3f0619bf515db60879e99709a87a5e9b4f524ec3403b127243480fd4",
    "swap_obj": "5f33cae824de431a7ecd3c5de6301f689815f9497aa36d96b154bbaf117b201b",
    "swap_att": "450d0fd9fcad3e6f44950dc634e7f901ab1c6d9c60a569ade5ae8ffb3d203ad8",
}
FIELDS = ("id", "filename", "caption", "caption2", "negative_caption")
VERSION = f"scpp@{COMMIT[:7]}+coco-val2017"


def _steps(folder: Path) -> list[str]:
    return [f"on a connected machine: git clone https://github.com/{REPOSITORY} && git -C scpp checkout {COMMIT[:7]}",
            f"copy scpp/data/{{{','.join(SUBSETS)}}}.json into {folder}/ (the Hub dataset Aman-J/SugarCrepe_pp "
            "holds the same files under data/)"]


def read_subsets(root: Path, limit: int | None) -> list[tuple[str, dict]]:
    """(subset, row) in file order, the first ``limit`` of each subset; each file fetched if missing and checked."""
    folder = root / FOLDER
    rows = []
    for subset, sha in SUBSETS.items():
        path = ensure(NAME, folder, Remote(f"{subset}.json", f"{SOURCE}/{subset}.json", sha), _steps(folder))
        rows += [(subset, row) for row in read_rows(path, FIELDS)[:limit]]
    return rows


def itt_correct(scores: Tensor) -> Tensor:
    """``scores`` (N, 3, 1) = cos(I, P1), cos(I, P2), cos(I, N): both positives beat the negative."""
    return (scores[:, 0, 0] > scores[:, 2, 0]) & (scores[:, 1, 0] > scores[:, 2, 0])


def itt_metrics(scores: Tensor, subsets: Sequence[str]) -> dict[str, float]:
    """itt, img_p1 (cos(I, P1) > cos(I, N)), img_p2 per subset, their mean over subsets, and pooled."""
    flags = {"itt": itt_correct(scores), "img_p1": scores[:, 0, 0] > scores[:, 2, 0],
             "img_p2": scores[:, 1, 0] > scores[:, 2, 0]}
    return _per_subset(flags, subsets)


def tot_correct(scores: Tensor) -> Tensor:
    """``scores`` (N, 3, 3) text-text cosines over (P1, P2, N): cos(P1, P2) beats cos(P1, N) and cos(P2, N)."""
    return (scores[:, 0, 1] > scores[:, 0, 2]) & (scores[:, 0, 1] > scores[:, 1, 2])


def tot_metrics(scores: Tensor, subsets: Sequence[str]) -> dict[str, float]:
    return _per_subset({"tot": tot_correct(scores)}, subsets)


def _per_subset(flags: dict, subsets: Sequence[str]) -> dict[str, float]:
    """``<subset>/<flag>``, ``<flag>`` = mean over the subsets (the paper's table average), ``pooled/<flag>``."""
    grouped = grouped_fractions(flags, label_masks(subsets))
    names = list(dict.fromkeys(subsets))
    out = {key: value for key, value in grouped.items() if "/" in key}
    for flag in flags:
        out[f"pooled/{flag}"] = grouped[flag]
        out[flag] = sum(grouped[f"{subset}/{flag}"] for subset in names) / len(names)
    return out


def _task(rows: list[tuple[str, dict]], root: Path, text_only: bool) -> Task:
    subsets = [subset for subset, _ in rows]
    texts = [[row["caption"], row["caption2"], row["negative_caption"]] for _, row in rows]
    ids = [f"{subset}/{row['id']}" for subset, row in rows]
    if text_only:
        return grid_task([[] for _ in rows], texts, LabelledMetric(tot_metrics, subsets), ids=ids, subtypes=subsets,
                         correct=tot_correct, text_only=True)
    images = root / COCO_VAL2017
    check_images(images, [row["filename"] for _, row in rows])
    return grid_task([[ImageFile(str(images / row["filename"]))] for _, row in rows], texts,
                     LabelledMetric(itt_metrics, subsets), ids=ids, subtypes=subsets, correct=itt_correct)


def build_itt(limit: int | None, root: Path) -> Task:
    return _task(read_subsets(root, limit), root, text_only=False)


def build_tot(limit: int | None, root: Path) -> Task:
    return _task(read_subsets(root, limit), root, text_only=True)


def _chance(flags: Sequence[str], level: float) -> dict[str, float]:
    keys = [f"{prefix}{flag}" for flag in flags for prefix in ("", "pooled/", *(f"{s}/" for s in SUBSETS))]
    return dict.fromkeys(keys, level)


register(Benchmark(
    NAME,
    "SugarCrepe++ image-text task (ITT): a COCO val2017 image, two positive captions of different wording and a "
    "hard negative, 5 subsets (4,757 items). Right when both positives score above the negative (strict); also "
    "img_p1, img_p2. Per subset, mean over subsets, pooled.",
    VERSION, build_itt,
    chance={**_chance(("itt",), 1 / 3), **_chance(("img_p1", "img_p2"), 0.5)}, headline=("itt",),
    text_roles=("true", "positive", "negative")))

register(Benchmark(
    TOT,
    "SugarCrepe++ text-only task (TOT), the text encoder alone: right when the two positives are closer to each "
    "other than either is to the negative (strict). Per subset, mean over subsets, pooled.",
    VERSION, build_tot, chance=_chance(("tot",), 1 / 3), headline=("tot",)))
