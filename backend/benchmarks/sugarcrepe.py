"""SugarCrepe (Hsieh et al., NeurIPS 2023): one COCO image, its true caption and one hard negative.

Seven subsets, ``replace_{obj,att,rel}``, ``swap_{obj,att}``, ``add_{obj,att}``
(7,511 items; ``swap_obj`` has 245, one wrong item was removed upstream). An
item is right when the image scores its caption strictly above the negative
(docs/REFERENCE.md, "Metrics": a tie is wrong). clip_benchmark's evaluation picks
``argmax`` over the two captions, which gives a tie to the true caption, so a
tie counts as right there (docs/BENCHMARKS.md, "SugarCrepe", "Parity with clip_benchmark").

Data layout under the ``benchmarks_dir`` setting, ``<root>``:

* ``<root>/sugarcrepe/<subset>.json``: the authors' files, fetched from GitHub
  at a pinned commit and checked against the SHA-256s below;
* ``<root>/coco/val2017/*.jpg``: COCO 2017 validation images, shared with the
  other COCO-based benchmarks. They come as one zip that is not fetched
  automatically; ``DataMissing`` gives the commands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from backend import metrics as M
from backend.benchmarks.data import DataMissing, Remote, ensure, require_dir, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, first_caption_wins, grid_task

NAME = "sugarcrepe"
COMMIT = "0047054b243992f0fad63d6f64f7544862daf846"
SOURCE = f"https://raw.githubusercontent.com/RAIVNLab/sugar-crepe/{COMMIT}/data"
SUBSETS: dict[str, str] = {  # subset -> SHA-256 of data/<subset>.json at COMMIT, in the paper's table order
    "replace_obj": "9d299600639947e9d15281a9ded1382b376cf4ea088a8d08a1314bfe76e81898",
    "replace_att": "9fe55fd4c0a9ad1f85d486d9f6d0215b41f867eb025026e7f7b5ce44352545ee",
    "replace_rel": "356bcc2fc4c6aed3f4d9fd50acc58489bb1fe70c28791f9368d4cbf9ea39cdc9",
    "swap_obj": "073cdb8e253d053614e80710834d9773b09dbc1dd0a412f6f9492262caa1dcad",
    "swap_att": "7a7ce04e5c4c80412b48c6f0c1347fb1a2f5d54c0be6aa429b64d390e442f8d0",
    "add_obj": "1b9d76b93139a937b8dc1ada92a4f05ecc821bb3c291d752428bafadd4bb0682",
    "add_att": "012d88d729693d193760e6f3393b06a1cf874380a9db0062e937201199fe044d",
}
ANNOTATIONS = "sugarcrepe"
COCO_VAL2017 = Path("coco") / "val2017"
COCO_ZIP_URL = "http://images.cocodataset.org/zips/val2017.zip"

Annotations = Mapping[str, Mapping[str, Mapping[str, str]]]  # subset -> id -> {filename, caption, negative_caption}


def coco_steps(images: Path) -> list[str]:
    """The exact commands that put COCO val2017 where the loader reads it."""
    return [f"wget -c {COCO_ZIP_URL} -O /tmp/val2017.zip   (about 780 MB, 5,000 JPEG images)",
            f"mkdir -p {images.parent} && unzip -q /tmp/val2017.zip -d {images.parent}   "
            f"(the zip holds val2017/, so this makes {images}/000000000139.jpg ...)",
            "rm /tmp/val2017.zip"]


def annotation_steps(folder: Path) -> list[str]:
    """How to place the JSON files by hand on a machine that cannot reach GitHub."""
    return [f"on a connected machine: git clone https://github.com/RAIVNLab/sugar-crepe && "
            f"git -C sugar-crepe checkout {COMMIT[:7]}",
            f"copy sugar-crepe/data/{{{','.join(SUBSETS)}}}.json into {folder}/"]


def read_annotations(root: Path) -> dict[str, dict]:
    """Every subset's JSON, fetched if missing and checked against its pinned SHA-256."""
    folder = root / ANNOTATIONS
    return {subset: json.loads(ensure(NAME, folder, Remote(f"{subset}.json", f"{SOURCE}/{subset}.json", sha),
                                      annotation_steps(folder)).read_text())
            for subset, sha in SUBSETS.items()}


def check_images(images: Path, filenames: Sequence[str]) -> None:
    """Fail before encoding anything when the image folder lacks a file that an item names."""
    require_dir(NAME, images, coco_steps(images))
    missing = sorted({name for name in filenames if not (images / name).is_file()})
    if missing:
        raise DataMissing(steps_message(NAME, images, [
            f"{len(missing)} image(s) the items name are missing (first: {missing[0]}); "
            "the folder must hold all of COCO val2017", *coco_steps(images)]))


def sugarcrepe_metrics(scores: Tensor, subsets: Sequence[str],
                       categories: Sequence[str] | None = M.SUGARCREPE_CATEGORIES) -> dict[str, float]:
    """``scores`` (N, 2): s(I, caption), s(I, negative). Per subset, micro/macro per category, overall.

    Strict (``pairwise_correct``): a tie is wrong. Keys: ``<subset>``,
    ``micro/<category>`` (items pooled, the paper), ``macro/<category>`` (mean
    of its subsets, CLOVe), ``overall`` (mean of the subsets), ``micro`` (every
    item pooled: the single SugarCrepe number of BiVLC's Table 2/3, 76.56 for
    OpenAI ViT-B/32).
    """
    correct = M.pairwise_correct(scores[:, 0], scores[:, 1])
    names = list(dict.fromkeys(subsets))  # in order of first appearance, as the per-subset masks were
    index = {name: k for k, name in enumerate(names)}
    inverse = np.fromiter(map(index.__getitem__, subsets), dtype=np.int64, count=len(subsets))
    total = np.bincount(inverse, minlength=len(names))
    right = np.bincount(inverse, weights=correct.cpu().numpy(), minlength=len(names))
    summary = M.sugarcrepe_summary_of_counts(dict(zip(names, right.astype(np.int64).tolist(), strict=True)),
                                             dict(zip(names, total.tolist(), strict=True)), categories)
    out = dict(summary["subsets"])
    out.update({f"micro/{c}": v for c, v in summary["micro"].items()})
    out.update({f"macro/{c}": v for c, v in summary["macro"].items()})
    out["overall"] = summary["overall"]
    out["micro"] = correct.double().mean().item()
    return out


def sugarcrepe_task(annotations: Annotations, images: Path, limit: int | None = None,
                    categories: Sequence[str] | None = M.SUGARCREPE_CATEGORIES) -> Task:
    """Items of each subset in file order (clip_benchmark's order too), the first ``limit`` per subset; subsets
    whose category is not one of `categories` fail when scored (None: any, a validation campaign's families).

    Item = [[image], [caption, negative_caption]]; ids are ``<subset>/<id>``.
    """
    rows = [(subset, key, item) for subset, items in annotations.items()
            for key, item in list(items.items())[:limit]]
    check_images(images, [item["filename"] for _, _, item in rows])
    subsets = [subset for subset, _, _ in rows]
    return grid_task([[ImageFile(str(images / item["filename"]))] for _, _, item in rows],
                     [[item["caption"], item["negative_caption"]] for _, _, item in rows],
                     LabelledMetric(lambda s, labels: sugarcrepe_metrics(s[:, :, 0], labels, categories), subsets),
                     ids=[f"{subset}/{key}" for subset, key, _ in rows], subtypes=subsets,
                     correct=first_caption_wins)


def build(limit: int | None, root: Path) -> Task:
    return sugarcrepe_task(read_annotations(root), root / COCO_VAL2017, limit)


def _metric_names() -> list[str]:
    categories = dict.fromkeys(subset.split("_")[0] for subset in SUBSETS)
    return [*SUBSETS, *(f"{kind}/{c}" for kind in ("micro", "macro") for c in categories), "overall", "micro"]


register(Benchmark(
    NAME,
    "SugarCrepe (Hsieh et al. 2023): COCO val2017 image -> (true, hard-negative caption) over 7 subsets "
    "(replace obj/att/rel, swap obj/att, add obj/att; 7,511 items). Accuracy per subset, micro (items pooled, "
    "the paper) and macro (mean of subsets, CLOVe) per category, overall = mean of the 7 subsets. Strict: a "
    "tie is wrong (clip_benchmark counts it right).",
    f"sugar-crepe@{COMMIT[:7]}+coco-val2017",
    build,
    chance=dict.fromkeys(_metric_names(), 0.5),
    headline=("micro", "micro/replace", "micro/swap", "micro/add", "overall"),
))
