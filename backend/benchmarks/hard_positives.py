"""Kamath et al.'s hard-positive benchmarks, REPLACE and SWAP (ECCV 2024), from the authors' files.

Data (amitakamath/hard_positives at ``COMMIT``): ``data/<file>`` holds the
original caption c (``true_caption``) and the hard negative c_n
(``false_caption``); ``swapped_data/<file>``, row-aligned, holds the hard
positive c_p (``true_caption``) and the same c_n. REPLACE is
``vl_checklist_attributes.json`` (subset ``att``) and
``vl_checklist_relations.json`` (``rel``), whose ``image_path`` names a
Visual Genome image relative to the repository root (``data/VG_100K/...``),
uncropped as in their code; SWAP is ``visual_genome_attribution.json``
(``att``), ARO's VG-Attribution format, image cropped to its box. Files are
fetched from GitHub at the pinned commit into
``<benchmarks_dir>/hard-positives/`` (same sub-folders as the repository);
the REPLACE files' SHA-256 are pinned here.

Texts per item: [c, c_n, c_p]; the failure browser's "correct" is
s(c) > s(c_n) (strict). Metrics (docs/REFERENCE.md, "Metrics"): original_acc, augmented_acc
and brittleness per subset, each a fraction of all its items
(``metrics.hard_positive_metrics``); the unprefixed keys average the
subsets, as the paper's Table 1 averages REPLACE attributes and relations;
``pooled/*`` counts every item once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from backend import metrics as M
from backend.benchmarks.aro import ROW_KEYS, crop
from backend.benchmarks.data import Remote, ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task

FOLDER = "hard-positives"
COMMIT = "33addaae84b58d96dc8e9251b61d497c536ed23d"
RAW = f"https://raw.githubusercontent.com/amitakamath/hard_positives/{COMMIT}/"
ORIGINAL, POSITIVE = "data", "swapped_data"  # the repository's folders: (c, c_n) and (c_p, c_n)
SUBSETS = {
    "hard-positives-replace": {"att": "vl_checklist_attributes.json", "rel": "vl_checklist_relations.json"},
    "hard-positives-swap": {"att": "visual_genome_attribution.json"},
}
PINNED_SHA256 = {  # SHA-256 of the authors' files at COMMIT (raw.githubusercontent.com/amitakamath/hard_positives)
    "data/vl_checklist_attributes.json": "4c7d262e77e1a1fd5a89ee0de43191fe697d4cf1c044e76c496761f07d824950",
    "swapped_data/vl_checklist_attributes.json": "7f6d2f2614ff8a037780ab4b6243c6e1165ceabc5e4db506ad70c63fd95f6441",
    "data/vl_checklist_relations.json": "f4aee47194df09f73c4bdb13e2f24c17901d71fbb15ab629b40c8667a841d535",
    "swapped_data/vl_checklist_relations.json": "25174b3f0286c124cd7c2c844c1e57bb85179e37cdee0d55fc2857387dede9b5",
}
SWAP_IMAGES = "data/images"  # the authors' VG_Attribution(root_dir="data") reads data/images/<image_path>
VG_IMAGES = ("https://cs.stanford.edu/people/rak248/VG_100K_2/images.zip",
             "https://cs.stanford.edu/people/rak248/VG_100K_2/images2.zip")
ARO_IMAGES_ID = "1qaPlrwhGNMrR3a11iopZUT_GPP_LrgP9"
METRICS = ("original_acc", "augmented_acc", "brittleness")
HEADLINE = ("augmented_acc", "original_acc", "brittleness")  # the paper's metric for hard positives first


def remote(name: str) -> Remote:
    """The authors' file ``name`` (e.g. ``data/vl_checklist_relations.json``) at the pinned commit."""
    return Remote(name, RAW + name, PINNED_SHA256.get(name, ""))


def image_steps(benchmark: str, folder: Path) -> list[str]:
    """How to put the benchmark's images where its rows point."""
    if benchmark == "hard-positives-swap":
        return [f"pip install gdown && gdown --no-cookies {ARO_IMAGES_ID} -O {folder / 'vgr_vga_images.zip'} "
                "(ARO's VG-R/VG-A image zip, about 1 GB)",
                f"cd {folder / 'data'} && unzip -q ../vgr_vga_images.zip   (creates {folder / SWAP_IMAGES}/; "
                f"if aro-vg-attribution is set up, `ln -s <benchmarks_dir>/aro/images {folder / SWAP_IMAGES}` "
                "instead)"]
    return [f"cd {folder / 'data'} && wget {VG_IMAGES[0]} {VG_IMAGES[1]}   (Visual Genome 1.2 images, about 15 GB)",
            f"unzip -q images.zip && unzip -q images2.zip   (creates {folder / 'data/VG_100K'}/ and "
            f"{folder / 'data/VG_100K_2'}/)"]


def aligned_rows(benchmark: str, folder: Path, filename: str, limit: int | None) -> list[tuple[dict, dict]]:
    """(original row, hard-positive row) pairs, first ``limit``; a ValueError if the files are not row-aligned."""
    keys = ROW_KEYS if benchmark == "hard-positives-swap" else ("image_path", "true_caption", "false_caption")
    steps = [f"download {ORIGINAL}/{filename} and {POSITIVE}/{filename} of https://github.com/amitakamath/"
             f"hard_positives at commit {COMMIT[:7]} into {folder / ORIGINAL}/ and {folder / POSITIVE}/",
             *image_steps(benchmark, folder)]
    original, positive = (read_rows(ensure(benchmark, folder, remote(f"{kind}/{filename}"), steps), keys)
                          for kind in (ORIGINAL, POSITIVE))
    if len(original) != len(positive):
        raise ValueError(f"{folder}: {ORIGINAL}/{filename} has {len(original)} rows, {POSITIVE}/ {len(positive)}")
    pairs = list(zip(original, positive))[:limit]
    for number, (row, hard) in enumerate(pairs):
        if (row["image_path"], row["false_caption"]) != (hard["image_path"], hard["false_caption"]):
            raise ValueError(f"{folder}: row {number} of {filename} differs in image or c_n between "
                             f"{ORIGINAL}/ and {POSITIVE}/; the files are not row-aligned")
    return pairs


def item_image(benchmark: str, folder: Path, row: dict) -> ImageFile:
    """SWAP: the VG-A crop under data/images; REPLACE: the whole VG image, path relative to the repository."""
    if benchmark == "hard-positives-swap":
        return crop(row, folder / SWAP_IMAGES)
    return ImageFile(str(folder / row["image_path"]))


def subset_metrics(scores: Tensor, subsets: Sequence[str]) -> dict[str, float]:
    """``scores`` (N, 3, 1) = s(c), s(c_n), s(c_p): the three fractions per subset, their mean, pooled."""
    import torch

    s = scores[:, :, 0]
    labels = np.asarray(subsets)
    out: dict[str, float] = {}
    for subset in dict.fromkeys(subsets):
        rows = torch.from_numpy(labels == subset)
        out.update({f"{subset}/{k}": v for k, v in M.hard_positive_metrics(s[rows, 0], s[rows, 1], s[rows, 2]).items()})
    names = list(dict.fromkeys(subsets))
    out.update({metric: float(np.mean([out[f"{name}/{metric}"] for name in names])) for metric in METRICS})
    out.update({f"pooled/{k}": v for k, v in M.hard_positive_metrics(s[:, 0], s[:, 1], s[:, 2]).items()})
    return out


def build(benchmark: str, limit: int | None, root: Path) -> Task:
    """Every subset's first ``limit`` aligned rows, images checked, texts [c, c_n, c_p]."""
    folder = root / FOLDER
    images, texts, ids, subsets = [], [], [], []
    for subset, filename in SUBSETS[benchmark].items():
        for number, (row, hard) in enumerate(aligned_rows(benchmark, folder, filename, limit)):
            images.append([item_image(benchmark, folder, row)])
            texts.append([row["true_caption"], row["false_caption"], hard["true_caption"]])
            ids.append(f"{subset}/{number}")
            subsets.append(subset)
    require_files(benchmark, folder, [Path(row[0].path) for row in images], image_steps(benchmark, folder))
    return grid_task(images, texts, LabelledMetric(subset_metrics, subsets), ids=ids, subtypes=subsets,
                     correct=lambda scores: scores[:, 0, 0] > scores[:, 1, 0])


_DESCRIPTIONS = {
    "hard-positives-replace": "Kamath et al. REPLACE (VL-Checklist attributes `att` and relations `rel`, "
                              "whole VG images)",
    "hard-positives-swap": "Kamath et al. SWAP (ARO VG-Attribution captions with swapped conjuncts, "
                           "cropped VG images)",
}
for _name, _what in _DESCRIPTIONS.items():
    register(Benchmark(
        _name, f"{_what}: texts [c, c_n, c_p]; original_acc s(c) > s(c_n), augmented_acc also s(c_p) > s(c_n), "
               "brittleness c and c_p on opposite sides of c_n; each a fraction of all items (strict), per "
               "subset, averaged over subsets (paper's Table 1), pooled/*.",
        f"kamath2024-{COMMIT[:7]}", functools.partial(build, _name),
        {"original_acc": 0.5, "augmented_acc": 1 / 3, "brittleness": 1 / 3}, HEADLINE,
        text_roles=("true", "negative", "positive")))
