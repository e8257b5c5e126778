"""CREPE productivity (Ma et al., CVPR 2023): a cropped Visual Genome image retrieves its caption among hard
negatives, at caption complexities 4 to 12 (the number of atoms in the caption's scene graph).

One benchmark per hard-negative type, as the authors evaluate them: ``crepe-prod-atom`` (an atom replaced),
``crepe-prod-swap`` (two atoms swapped), ``crepe-prod-negate`` (a negation added).

Format and rules read from the authors' repository (github.com/RAIVNLab/CREPE at commit 1fa81c4,
``crepe_eval_utils.py``, ``crepe_prod_eval_clip.py``, ``crepe_params.py``): ``data/prod_hard_negatives.zip``
unzips into ``prod_hard_negatives/<type>/prod_vg_hard_negs_<type>_complexity_<k>.csv``, one file per
complexity k = 4..12, with columns ``image_id``, ``x``, ``y``, ``width``, ``height``, ``caption`` and
``hard_negs`` (a Python list literal of the negatives). The image is ``VG_100K/<image_id>.jpg`` or
``VG_100K_2/<image_id>.jpg`` of Visual Genome, cropped to the row's box (``TF.crop(image, y, x, height,
width)``, i.e. PIL's ``crop((x, y, x + width, y + height))``, as ``task.ImageFile`` does).

Rule, theirs: the candidates are the caption followed by its hard negatives; the ground truth's rank is its
position in ``torch.argsort(scores, descending=True)`` and ``R@k`` = the fraction of images whose rank is
below k. Their argsort runs on CPU over at most a few dozen scores; for short rows it orders equal scores by
position, which puts the ground truth (position 0) first, so here **a tie goes to the ground truth**: its rank
is the number of negatives scoring strictly above it (for rows longer than 16 torch's CPU sort does not keep
that order, so their code gives ties there an unspecified rank). ``R@1`` (the paper's headline) and ``R@3``,
``R@5``, ``R@10`` pooled over complexities and per complexity (``complexity_<k>/R@1``); the bootstrap draws
images within each complexity. Rows of one file may hold different numbers of negatives: the shorter are
padded with copies of their own caption's last negative, which are never read (each row's own count is a
label of the rule). No chance level is registered: it is 1 / (1 + negatives), fixed by the files.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import ast
import csv
import functools
from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.hard_positives import VG_IMAGES
from backend.benchmarks.rows import require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task

FOLDER = "crepe"
COMMIT = "1fa81c425f442396fe304f170c8eb6dc0747c814"
ZIP_URL = f"https://github.com/RAIVNLab/CREPE/raw/{COMMIT}/data/prod_hard_negatives.zip"
TYPES = ("atom", "swap", "negate")
COMPLEXITIES = tuple(range(4, 13))
COLUMNS = ("image_id", "x", "y", "width", "height", "caption", "hard_negs")
VG_FOLDERS = ("VG_100K", "VG_100K_2")
RECALL_AT = (1, 3, 5, 10)


def ground_truth_rank(scores: Tensor, candidates: Tensor) -> Tensor:
    """``scores`` (N, K, 1), caption first: how many of each row's own ``candidates[n] - 1`` negatives score
    strictly above its caption (0 = retrieved first; a tie goes to the caption). Padding columns are not read."""
    import torch

    values = scores[:, :, 0]
    real = torch.arange(values.shape[1]).expand_as(values) < candidates[:, None]
    return ((values[:, 1:] > values[:, :1]) & real[:, 1:]).sum(dim=1)


def crepe_correct(scores: Tensor, candidates: Tensor) -> Tensor:
    """Recall@1: the caption is retrieved first."""
    return ground_truth_rank(scores, candidates) == 0


def crepe_metrics(scores: Tensor, candidates: Tensor, complexities: list[str]) -> dict[str, float]:
    """``R@k`` for k in 1, 3, 5, 10, over all images and per complexity (``complexity_<k>/R@1``)."""
    rank = ground_truth_rank(scores, candidates)
    return grouped_fractions({f"R@{k}": rank < k for k in RECALL_AT}, label_masks(complexities))


def csv_path(folder: Path, negative_type: str, complexity: int) -> Path:
    name = f"prod_vg_hard_negs_{negative_type}_complexity_{complexity}.csv"
    return folder / "prod_hard_negatives" / negative_type / name


def _steps(folder: Path) -> list[str]:
    return [f"wget {ZIP_URL} -O {folder / 'prod_hard_negatives.zip'} && cd {folder} && unzip -q "
            f"prod_hard_negatives.zip   (gives {folder}/prod_hard_negatives/<type>/prod_vg_hard_negs_<type>_"
            "complexity_<4..12>.csv)",
            f"cd {folder} && wget {' '.join(VG_IMAGES)} && unzip -q images.zip && unzip -q images2.zip   (Visual "
            f"Genome 1.2, about 15 GB: gives {folder}/VG_100K/ and {folder}/VG_100K_2/; if another benchmark "
            "has them, link the two folders here instead)"]


def read_csv(path: Path) -> list[dict]:
    """The rows of one complexity file, ``hard_negs`` parsed (a literal, never evaluated as code)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        lacking = [column for column in COLUMNS if column not in (reader.fieldnames or ())]
        if lacking:
            raise ValueError(f"{path} has no column {', '.join(lacking)} (is this the authors' file?)")
        rows = list(reader)
    for number, row in enumerate(rows):
        try:
            negatives = ast.literal_eval(row["hard_negs"])
        except (ValueError, SyntaxError):
            negatives = None
        if not isinstance(negatives, (list, tuple)) or not negatives:
            raise ValueError(f"{path}: row {number}'s hard_negs is not a non-empty list literal")
        row["hard_negs"] = [str(negative) for negative in negatives]
    return rows


def vg_image(folder: Path, image_id: str) -> Path:
    """Where the authors look: VG_100K first, then VG_100K_2 (the first path when neither has it)."""
    paths = [folder / name / f"{image_id}.jpg" for name in VG_FOLDERS]
    return next((path for path in paths if path.is_file()), paths[0])


def load(negative_type: str, root: Path, limit: int | None) -> list[tuple[int, dict]]:
    """(complexity, row) in file order, the first ``limit`` rows of each complexity; ``row["row"]`` is the row's
    number in its file."""
    folder = root / FOLDER
    paths = {k: csv_path(folder, negative_type, k) for k in COMPLEXITIES}
    missing = [path for path in paths.values() if not path.is_file()]
    if missing:
        raise DataMissing(steps_message(f"crepe-prod-{negative_type}", folder, [
            *_steps(folder), f"check: {missing[0]} must exist ({len(missing)} of the {len(paths)} files are missing)"]))
    return [(k, {**row, "row": number}) for k, path in paths.items()
            for number, row in enumerate(read_csv(path)[:limit])]


def build(negative_type: str, limit: int | None, root: Path) -> Task:
    import torch

    folder = root / FOLDER
    rows = load(negative_type, root, limit)
    images = [vg_image(folder, row["image_id"]) for _, row in rows]
    require_files(f"crepe-prod-{negative_type}", folder, images, _steps(folder)[1:])
    widest = max((len(row["hard_negs"]) for _, row in rows), default=0)
    texts = [[row["caption"], *row["hard_negs"], *[row["hard_negs"][-1]] * (widest - len(row["hard_negs"]))]
             for _, row in rows]
    candidates = torch.tensor([1 + len(row["hard_negs"]) for _, row in rows], dtype=torch.long)
    complexities = [f"complexity_{k}" for k, _ in rows]
    crops = [ImageFile(str(path), (float(row["x"]), float(row["y"]), float(row["width"]), float(row["height"])))
             for path, (_, row) in zip(images, rows)]
    return grid_task([[image] for image in crops], texts, LabelledMetric(crepe_metrics, candidates, complexities),
                     ids=[f"complexity_{k}/{row['row']}" for k, row in rows], subtypes=complexities,
                     correct=functools.partial(crepe_correct, candidates=candidates))


for _type in TYPES:
    register(Benchmark(
        f"crepe-prod-{_type}",
        f"CREPE productivity, HN-{_type.capitalize()} negatives (Ma et al. 2023): a cropped Visual Genome image "
        "retrieves its caption among its hard negatives, complexities 4-12. R@1 (a tie goes to the caption, as "
        "their argsort orders it), R@3/5/10; pooled and per complexity.",
        f"RAIVNLab/CREPE@{COMMIT[:7]}/prod_hard_negatives/{_type}+vg1.2", functools.partial(build, _type),
        headline=("R@1",)))
