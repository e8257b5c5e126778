"""ARO's Visual Genome Relation and Attribution benchmarks (Yuksekgonul et al., ICLR 2023), from the authors' files.

Data: the authors' JSON lists (``visual_genome_relation.json``,
``visual_genome_attribution.json``; each row has ``image_path``, ``bbox_x``,
``bbox_y``, ``bbox_w``, ``bbox_h``, ``true_caption``, ``false_caption`` and
``relation_name`` (VG-R) or ``attributes`` (VG-A, two adjectives)) and their
image zip, under ``<benchmarks_dir>/aro/`` (``images/`` as the zip unpacks).
The image is cropped to the row's box exactly as the authors crop it,
``(x, y, x + w, y + h)`` (``task.ImageFile``), which matters: uncropped
scenes change every score.

Rule (docs/REFERENCE.md, "Metrics"): an item is right when s(true) > s(false),
strictly (the authors' ``argmax([false, true]) == 1`` gives a tie to the
false caption). VG-R's headline is the macro mean over relations after
ARO's own relation filter (``metrics.DEFAULT_SYMMETRIC_RELATIONS``; the
filter lives in their notebook, not in the data); VG-A's is the macro mean
over attribute pairs with >= 25 items. A prefix (``limit``) may leave no
relation or pair that qualifies: that macro is then NaN, never a number
computed from another rule.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from backend import metrics as M
from backend.benchmarks.data import Remote, ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, first_caption_wins, fraction, grid_task

FOLDER = "aro"
IMAGES = "images"
ROW_KEYS = ("image_path", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "true_caption", "false_caption")
GDRIVE = "https://drive.google.com/uc?export=download&id="
# The authors' Google Drive ids (dataset_zoo/aro_datasets.py at mertyg/vision-language-models-are-bows@81fdd20).
RELATION_ID = "1kX2iCHEv0CADL8dSO1nMdW-V0NqIAiP3"
ATTRIBUTION_ID = "13tWvOrNOLHxl3Rm9cR3geAdHx2qR3-Tw"
IMAGES_ID = "1qaPlrwhGNMrR3a11iopZUT_GPP_LrgP9"
REMOTES = {
    "aro-vg-relation": Remote("visual_genome_relation.json", GDRIVE + RELATION_ID),
    "aro-vg-attribution": Remote("visual_genome_attribution.json", GDRIVE + ATTRIBUTION_ID),
}
DRIVE_IDS = {"aro-vg-relation": RELATION_ID, "aro-vg-attribution": ATTRIBUTION_ID}
MIN_PAIR_ITEMS = 25  # ARO's VG-A rule: attribute pairs with fewer items are left out of the macro mean


def crop(row: dict, image_dir: Path) -> ImageFile:
    """The row's image cropped to its box: (x, y, w, h) -> PIL crop (x, y, x + w, y + h), as ARO does."""
    x, y, width, height = (float(row[key]) for key in ("bbox_x", "bbox_y", "bbox_w", "bbox_h"))
    return ImageFile(str(image_dir / row["image_path"]), (x, y, width, height))


def image_steps(folder: Path) -> list[str]:
    """How to get ARO's VG-R/VG-A image zip (about 1 GB, a subset of GQA) into ``folder``."""
    return [f"pip install gdown && gdown --no-cookies {IMAGES_ID} -O {folder / 'vgr_vga_images.zip'} "
            "(the authors' vgr_vga_images.zip, about 1 GB)",
            f"cd {folder} && unzip -q vgr_vga_images.zip   (creates {folder / IMAGES}/)"]


def vg_rows(benchmark: str, limit: int | None, root: Path, extra_keys: Sequence[str]) -> tuple[list[dict], Path]:
    """The first ``limit`` rows of the benchmark's JSON (fetched if absent) and the image folder, all checked."""
    folder = root / FOLDER
    remote = REMOTES[benchmark]
    json_steps = [f"pip install gdown && gdown {DRIVE_IDS[benchmark]} -O {folder / remote.name}",
                  *image_steps(folder)]
    path = ensure(benchmark, folder, remote, json_steps)
    rows = read_rows(path, (*ROW_KEYS, *extra_keys))[:limit]
    image_dir = folder / IMAGES
    require_files(benchmark, folder, [image_dir / row["image_path"] for row in rows], image_steps(folder))
    return rows, image_dir


def _or_nan(rule: Callable[..., float], *args) -> float:
    """A macro mean, or NaN when no group qualifies (a short prefix): undefined, not silently another number."""
    try:
        return rule(*args)
    except ValueError:
        return math.nan


def relation_metrics(scores: Tensor, relations: Sequence[str],
                     symmetric: Iterable[str] = M.DEFAULT_SYMMETRIC_RELATIONS) -> dict[str, float]:
    """VG-R from ``scores`` (N, 2, 1) = s(true), s(false): macro (filtered), macro_unfiltered, micro, per relation."""
    correct = M.pairwise_correct(scores[:, 0, 0], scores[:, 1, 0])
    out = {"macro": _or_nan(M.aro_relation_accuracy, correct, relations, symmetric),
           "macro_unfiltered": _or_nan(M.aro_relation_accuracy, correct, relations, ()),
           "micro": fraction(correct)}
    out.update({f"relation/{name}": acc for name, (acc, _) in M.group_accuracy(correct, relations).items()})
    return out


def attribute_pair(row: dict) -> str:
    """ARO's VG-A group key, ``f"{a0}_{a1}"`` (ordered: the pair as the row lists it)."""
    first, second = row["attributes"]
    return f"{first}_{second}"


def attribution_metrics(scores: Tensor, pairs: Sequence[str], min_items: int = MIN_PAIR_ITEMS) -> dict[str, float]:
    """VG-A from ``scores`` (N, 2, 1): macro over attribute pairs with >= ``min_items`` items, and micro."""
    correct = M.pairwise_correct(scores[:, 0, 0], scores[:, 1, 0])
    return {"macro": _or_nan(M.aro_attribution_accuracy, correct, pairs, min_items), "micro": fraction(correct)}


def _pair_task(rows: list[dict], image_dir: Path, subtypes: list[str],
               metrics: Callable[[Tensor, Sequence[str]], dict[str, float]]) -> Task:
    """Item n: the cropped image against [true, false] captions; browsable per subtype."""
    return grid_task([[crop(row, image_dir)] for row in rows],
                     [[row["true_caption"], row["false_caption"]] for row in rows],
                     LabelledMetric(metrics, subtypes), ids=[str(n) for n in range(len(rows))],
                     subtypes=subtypes, correct=first_caption_wins)


def build_relation(limit: int | None, root: Path) -> Task:
    """``aro-vg-relation``: the first ``limit`` rows of the authors' file."""
    rows, image_dir = vg_rows("aro-vg-relation", limit, root, ("relation_name",))
    return _pair_task(rows, image_dir, [row["relation_name"] for row in rows], relation_metrics)


def build_attribution(limit: int | None, root: Path) -> Task:
    """``aro-vg-attribution``: the first ``limit`` rows of the authors' file."""
    rows, image_dir = vg_rows("aro-vg-attribution", limit, root, ("attributes",))
    return _pair_task(rows, image_dir, [attribute_pair(row) for row in rows], attribution_metrics)


_CHANCE = {"macro": 0.5, "micro": 0.5}

register(Benchmark(
    "aro-vg-relation",
    "ARO Visual Genome Relation: cropped VG image vs (true, argument-swapped) caption, s(true) > s(false) "
    "strict; macro = mean per-relation accuracy after ARO's relation filter (headline), macro_unfiltered, "
    "micro, relation/<name>.",
    f"aro-iclr2023-gdrive-{RELATION_ID}", build_relation, {**_CHANCE, "macro_unfiltered": 0.5}, ("macro",)))
register(Benchmark(
    "aro-vg-attribution",
    "ARO Visual Genome Attribution: cropped VG image vs (true, attribute-swapped) caption, s(true) > s(false) "
    "strict; macro = mean accuracy over attribute pairs with >= 25 items (headline), micro.",
    f"aro-iclr2023-gdrive-{ATTRIBUTION_ID}", build_attribution, dict(_CHANCE), ("macro",)))
