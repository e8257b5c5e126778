"""What'sUp (Kamath et al., EMNLP 2023), Controlled Images A and B: one photo, four captions that differ only in
the preposition.

Format and rules read from the authors' repository (github.com/amitakamath/whatsup_vlms at commit 7c1f255,
``dataset_zoo/aro_datasets.py`` ``Controlled_Images``): ``controlled_images_dataset.json`` (A: on, under, left
of, right of; 408 photos) and ``controlled_clevr_dataset.json`` (B: in front of, behind, left of, right of),
each a JSON list of ``{"image_path": "data/controlled_images/<obj>_<preposition>_<obj2>.jpeg",
"caption_options": [4 captions, the first correct]}``; images in ``controlled_images/`` and ``controlled_clevr/``
(the authors' tar files).

Rules, exactly theirs: an item is right when ``np.argmax`` over the four captions is 0, so **a tie with the
correct caption counts as right** (the first maximum); ``accuracy`` over items. ``pair_acc``: per object pair
(the first and last ``_`` fields of the file name), left/right both right counts one pair, and on/under (A) or
in-front/behind (B) another, over N/2; ``set_acc``: all four right, over N/4; a preposition missing for an
object pair counts as wrong, as their dictionaries start at 0. ``<preposition>/accuracy`` per preposition.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks.data import Remote, ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task, original_not_beaten

FOLDER = "whatsup"
COMMIT = "7c1f2550eace32e7b8c77de5a792347c402960d1"
GDRIVE = "https://drive.google.com/uc?export=download&id="


@dataclass(frozen=True)
class Subset:
    annotations: str
    drive_id: str  # the authors' Google Drive id of the JSON (dataset_zoo/aro_datasets.py)
    images: str
    images_id: str  # ... and of the images' tar file
    vertical: tuple[str, str]  # the second pair of opposite prepositions (A: on/under, B: in-front/behind)


SUBSETS = {
    "whatsup-a": Subset("controlled_images_dataset.json", "1ap8mmmpQjLIjPGuplkpBgc1hoEHCj4hm", "controlled_images",
                        "19KGYVQjrV3syb00GgcavB2nZTW5NXX0H", ("on", "under")),
    "whatsup-b": Subset("controlled_clevr_dataset.json", "1unNNosLbdy9NDjgj4l8fsQP3WiAAGA6z", "controlled_clevr",
                        "13jdBpg8t3NqW3jrL6FK8HO93vwsUjDxG", ("in-front", "behind")),
}


def name_fields(image_path: str) -> tuple[str, str, str]:
    """(object, preposition slot, object 2) of ``.../<obj>_<prep>[_of]_<obj2>.jpeg``, read as the authors do."""
    parts = image_path.split("/")[-1].split("_")
    return parts[0], parts[1], parts[-1][:-5]


def whatsup_metrics(scores: Tensor, prepositions: Sequence[str], *, vertical: tuple[str, str],
                    pair_of: Sequence[int]) -> dict[str, float]:
    """accuracy, pair_acc, set_acc and per-preposition accuracy from (N, 4, 1) scores (caption 0 correct).

    ``pair_of[n]`` numbers item n's object pair. It is fixed by position (a ``partial`` argument, not a label):
    the bootstrap draws whole object pairs, so a pair drawn twice fills two pair slots and counts twice.
    """
    correct = original_not_beaten(scores)
    out = grouped_fractions({"accuracy": correct}, label_masks(prepositions))
    slots = dict.fromkeys(("left", "right", *vertical), False)
    by_pair: dict[int, dict[str, bool]] = {}
    for pair, prep, right in zip(pair_of, prepositions, correct.tolist()):
        by_pair.setdefault(pair, dict(slots))[prep] = bool(right)
    pairs = sum((d["left"] and d["right"]) + (d[vertical[0]] and d[vertical[1]]) for d in by_pair.values())
    sets = sum(all(d.values()) for d in by_pair.values())
    out["pair_acc"] = pairs / (len(prepositions) / 2)
    out["set_acc"] = sets / (len(prepositions) / 4)
    return out


def _steps(folder: Path, subset: Subset) -> list[str]:
    return [f"pip install gdown && gdown {subset.drive_id} -O {folder / subset.annotations}",
            f"gdown --no-cookies {subset.images_id} -O {folder / subset.images}.tar.gz && "
            f"tar -xf {folder / subset.images}.tar.gz -C {folder}   (creates {folder / subset.images}/)",
            "or download both from the authors' Google Drive folder linked in the README of "
            f"github.com/amitakamath/whatsup_vlms into {folder}"]


def build(name: str, limit: int | None, root: Path) -> Task:
    """The first ``limit`` photos of the authors' file (a prefix cuts object pairs: pair/set need every photo)."""
    subset = SUBSETS[name]
    folder = root / FOLDER
    steps = _steps(folder, subset)
    rows = read_rows(ensure(name, folder, Remote(subset.annotations, GDRIVE + subset.drive_id), steps),
                     ("image_path", "caption_options"))[:limit]
    images = [folder / subset.images / Path(row["image_path"]).name for row in rows]
    require_files(name, folder, images, steps[1:])
    names = [name_fields(row["image_path"]) for row in rows]
    pair_ids = {pair: n for n, pair in enumerate(dict.fromkeys((first, second) for first, _, second in names))}
    pair_of = [pair_ids[first, second] for first, _, second in names]
    prepositions = [prep for _, prep, _ in names]
    rule = functools.partial(whatsup_metrics, vertical=subset.vertical, pair_of=pair_of)
    return grid_task([[ImageFile(str(path))] for path in images], [row["caption_options"] for row in rows],
                     LabelledMetric(rule, prepositions), ids=[Path(row["image_path"]).stem for row in rows],
                     subtypes=prepositions, correct=original_not_beaten, units=[str(n) for n in pair_of])


for _name, _subset in SUBSETS.items():
    register(Benchmark(
        _name,
        f"What'sUp Controlled Images {_name[-1].upper()} (Kamath et al. 2023): a photo vs 4 captions differing "
        f"only in the preposition (left, right, {' / '.join(_subset.vertical)}). Right when the correct caption "
        "scores >= the others (the authors' argmax: a tie goes to it); pair_acc, set_acc as theirs.",
        f"whatsup_vlms@{COMMIT[:7]}-gdrive-{_subset.drive_id}", functools.partial(build, _name),
        chance={"accuracy": 0.25, "pair_acc": 1 / 16, "set_acc": 1 / 256}, headline=("accuracy", "pair_acc")))
