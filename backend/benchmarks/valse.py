"""VALSE (Parcalabescu et al. 2022): caption vs foil per linguistic phenomenon, eleven "pieces".

Data: the pieces' JSON files of github.com/Heidelberg-NLP/VALSE at commit
2152d90 (``data/<piece>.json``: id -> {dataset, image_file, caption, foil,
mturk: {caption, foil, other}, ...}) go to ``<benchmarks_dir>/valse/<piece>.json``
(downloaded when online; a file placed by hand is used as it is). Images
come from five source datasets and must be placed by hand under
``valse/images/<source folder>/<image_file>`` (``SOURCES``).

Rule (the authors' lxmert_valse_eval.py): only the validated items, those
where at least two of three annotators chose the caption and not the foil
(``mturk.caption >= 2``; the README calls the rest non-validated), and
pairwise accuracy acc_r = s(image, caption) > s(image, foil), strict.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import json
from pathlib import Path

from backend.benchmarks.data import DataMissing, Remote, ensure, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.task import (
    ImageFile,
    LabelledMetric,
    Task,
    first_caption_wins,
    fraction,
    grid_task,
)

NAME = "valse"
COMMIT = "2152d90d4aecd11f7f74cf03420abcb63efff9c5"
RAW = f"https://raw.githubusercontent.com/Heidelberg-NLP/VALSE/{COMMIT}/data"
PIECES = ("existence", "plurals", "counting-hard", "counting-small-quant", "counting-adversarial", "relations",
          "action-replacement", "actant-swap", "coreference-standard", "coreference-hard", "foil-it")
MIN_CAPTION_VOTES = 2
SOURCES = {  # the JSON's "dataset" value -> (folder under valse/images, where its images come from)
    "visual7w": ("visual7w", "Visual7W images (v7w_<id>.jpg): http://vision.stanford.edu/yukezhu/visual7w_images.zip"),
    "SWiG": ("swig", "SWiG / imSitu images (images_512): https://github.com/allenai/swig"),
    "VisDial_v1.0": ("visdial", ("VisDial v1.0 images (COCO_train2014_*.jpg of its train set and "
                                "VisualDialog_val2018_*.jpg): https://visualdialog.org/data")),
    "FOIL dataset": ("coco2014", ("COCO 2014 val images (COCO_val2014_*.jpg): "
                                 "http://images.cocodataset.org/zips/val2014.zip")),
    "coco2017": ("coco2017", "COCO 2017 val images: http://images.cocodataset.org/zips/val2017.zip"),
    "coco_2017": ("coco2017", "COCO 2017 val images: http://images.cocodataset.org/zips/val2017.zip"),
}


def valse_metrics(scores: Tensor, pieces: list[str]) -> dict[str, float]:
    """acc_r per piece (``existence/acc_r``), their mean (``acc_r``, VALSE's average) and pooled (``acc_r_pooled``)."""
    per_piece = grouped_fractions({"acc_r": first_caption_wins(scores)}, label_masks(pieces))
    out = {key: value for key, value in per_piece.items() if "/" in key}
    out["acc_r"] = sum(out.values()) / len(out)
    out["acc_r_pooled"] = fraction(first_caption_wins(scores))
    return out


def _piece(folder: Path, piece: str) -> dict:
    steps = [f"download {RAW}/{piece}.json to {folder / (piece + '.json')}"]
    path = ensure(NAME, folder, Remote(f"{piece}.json", f"{RAW}/{piece}.json"), steps)
    return json.loads(path.read_text(encoding="utf-8"))


def _source_dir(folder: Path, source: str) -> Path:
    return folder / "images" / (SOURCES[source][0] if source in SOURCES else source)


def _image(folder: Path, entry: dict) -> Path:
    return _source_dir(folder, entry["dataset"]) / entry["image_file"]


def _check_images(folder: Path, items: list[tuple[str, str, dict]]) -> None:
    """Every validated item's image must be there; the message names each source that lacks some."""
    lacking: dict[str, int] = {}
    for _, _, entry in items:
        if not _image(folder, entry).is_file():
            lacking[entry["dataset"]] = lacking.get(entry["dataset"], 0) + 1
    if lacking:
        steps = [f"{count} images of {source} are missing: put {SOURCES.get(source, (source, source))[1]} into "
                 f"{_source_dir(folder, source)}/" for source, count in lacking.items()]
        raise DataMissing(steps_message(NAME, folder / "images", steps))


def valse_items(root: Path, limit: int | None = None) -> list[tuple[str, str, dict]]:
    """(piece, id, entry) of the validated items, the first ``limit`` of each piece in file order."""
    folder = root / NAME
    items = []
    for piece in PIECES:
        valid = [(piece, key, entry) for key, entry in _piece(folder, piece).items()
                 if entry["mturk"]["caption"] >= MIN_CAPTION_VOTES]
        items.extend(valid[:limit])
    _check_images(folder, items)
    return items


def _build(limit: int | None, root: Path) -> Task:
    items = valse_items(root, limit)
    pieces = [piece for piece, _, _ in items]
    return grid_task([[ImageFile(str(_image(root / NAME, entry)))] for _, _, entry in items],
                     [[entry["caption"], entry["foil"]] for _, _, entry in items],
                     LabelledMetric(valse_metrics, pieces),
                     ids=[f"{piece}/{key}" for piece, key, _ in items], subtypes=pieces, correct=first_caption_wins)


register(Benchmark(
    NAME,
    "VALSE: image vs caption and foil for 11 pieces (existence, plurals, counting, relations, actions, "
    "coreference, FOIL-it). Items validated by at least 2 of 3 annotators (mturk.caption >= 2); pairwise "
    "accuracy acc_r = s(caption) > s(foil), strict, per piece; acc_r = mean over pieces.",
    f"Heidelberg-NLP/VALSE@{COMMIT[:7]}, mturk.caption>={MIN_CAPTION_VOTES}",
    _build, chance={"acc_r": 0.5, "acc_r_pooled": 0.5}, headline=("acc_r",)))
