"""ImageCoDe (Krojer et al., ACL 2022): a contextual description picks its image out of 10 near-identical ones.

Format read from the authors' repository (github.com/McGill-NLP/imagecode at commit 609f076, README and
``baselines/clip/zero_shot.py``): ``data/valid_data.json`` is ``{"<image set>": {"<target index>":
"<description>", ...}, ...}`` (1,039 sets, 2,302 descriptions); the image sets (Zenodo record 6518944,
``image-sets.zip``) hold ``<image set>/img<N>.jpg``, 10 per set, where N is the frame number for video sets,
and the target index counts the set's images **sorted by N as an integer** (img7 before img14). The test
split's labels are secret (the authors score submissions), so this benchmark is the **validation** split.

Rule, exactly theirs: the description (``strip()``-ed) is scored against the 10 images; right when the first
maximum is the target (``torch.argmax`` in ``evaluate_clip.py``; ``zero_shot.py``'s numpy argsort of the
negated scores orders 10 ties by position too): **a tie goes to the earlier image**. ``accuracy`` pools all
descriptions; ``static/accuracy`` (sets from Open Images, ``open-images`` in the name) and ``video/accuracy``
(MSR-VTT, Video-Storytelling, YouCook) are reported separately, as the paper does. Chance: 1/10. The
bootstrap draws descriptions (the unit the accuracy counts) within static and within video.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
import json
import re
from pathlib import Path

from backend.benchmarks.data import DataMissing, Remote, ensure, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import grouped_fractions, label_masks
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, first_maximum, grid_task

NAME = "imagecode"
COMMIT = "609f07611aed2599f946c30d730f40a41af1079b"
ANNOTATIONS = Remote("valid_data.json",
                     f"https://raw.githubusercontent.com/McGill-NLP/imagecode/{COMMIT}/data/valid_data.json",
                     "cb4b8482354ba9bac62b6e101f145f9e59722dcf3b3fd42583f5b6de12bc698a")
IMAGE_SETS = "image-sets"
ZIP_URL = "https://zenodo.org/record/6518944/files/image-sets.zip"
IMAGES_PER_SET = 10
STATIC_MARK = "open-images"  # the authors' test: a set whose name has it is static, every other is video
_FRAME = re.compile(r"^img(\d+)\.jpg$")


def kind(image_set: str) -> str:
    return "static" if STATIC_MARK in image_set else "video"


def imagecode_correct(scores: Tensor, targets: Tensor) -> Tensor:
    """``scores`` (N, 1, 10): the description's first maximum over the images is its target."""
    return first_maximum(scores[:, 0, :]) == targets


def imagecode_metrics(scores: Tensor, targets: Tensor, kinds: list[str]) -> dict[str, float]:
    """accuracy over all descriptions, and ``static/accuracy``, ``video/accuracy``."""
    return grouped_fractions({"accuracy": imagecode_correct(scores, targets)}, label_masks(kinds))


def frames(folder: Path) -> list[Path]:
    """The set's ``img<N>.jpg`` files in the authors' order (N as an integer)."""
    found = [(int(match.group(1)), path) for path in folder.iterdir() if (match := _FRAME.match(path.name))]
    return [path for _, path in sorted(found)]


def _steps(folder: Path) -> list[str]:
    return [f"wget {ZIP_URL} -O {folder / 'image-sets.zip'}   (the authors' image sets, Zenodo record 6518944; "
            "also on their Google Drive, linked in the repository's README)",
            f"cd {folder} && unzip -q image-sets.zip   (gives {folder / IMAGE_SETS}/<image set>/img<N>.jpg)"]


def image_root(folder: Path) -> Path:
    """``image-sets/`` as the zip unpacks; the set folders directly under ``folder`` are accepted too."""
    return folder / IMAGE_SETS if (folder / IMAGE_SETS).is_dir() else folder


def set_images(folder: Path, image_sets: list[str]) -> dict[str, list[Path]]:
    """Each set's 10 images in order; ``DataMissing`` naming an absent set, a ValueError for a set without 10."""
    directories = {image_set: image_root(folder) / image_set for image_set in image_sets}
    missing = [directory for directory in directories.values() if not directory.is_dir()]
    if missing:
        raise DataMissing(steps_message(NAME, folder, [*_steps(folder), (
            f"check: {missing[0]} must exist ({len(missing)} of the {len(directories)} image sets needed are "
            "missing)")]))
    images = {image_set: frames(directory) for image_set, directory in directories.items()}
    for image_set, paths in images.items():
        if len(paths) != IMAGES_PER_SET:
            raise ValueError(f"{directories[image_set]} holds {len(paths)} img<N>.jpg files, not {IMAGES_PER_SET}: "
                             "unzip the image sets again")
    return images


def load(root: Path, limit: int | None) -> list[tuple[str, int, str]]:
    """(image set, target, description) in file order, the first ``limit`` descriptions."""
    folder = root / NAME
    path = ensure(NAME, folder, ANNOTATIONS, _steps(folder))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON ({error}); delete it and fetch it again") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: expected {{image set: {{target index: description}}}} (the authors' file)")
    rows = [(image_set, int(target), text.strip()) for image_set, described in data.items()
            for target, text in described.items()]
    return rows[:limit]


def build(limit: int | None, root: Path) -> Task:
    import torch

    folder = root / NAME
    rows = load(root, limit)
    images = set_images(folder, list(dict.fromkeys(image_set for image_set, _, _ in rows)))
    targets = torch.tensor([target for _, target, _ in rows], dtype=torch.long)
    kinds = [kind(image_set) for image_set, _, _ in rows]
    return grid_task([[ImageFile(str(path)) for path in images[image_set]] for image_set, _, _ in rows],
                     [[text] for _, _, text in rows], LabelledMetric(imagecode_metrics, targets, kinds),
                     ids=[f"{image_set}/{target}" for image_set, target, _ in rows], subtypes=kinds,
                     correct=functools.partial(imagecode_correct, targets=targets))


register(Benchmark(
    NAME,
    "ImageCoDe (validation split): a contextual description vs the 10 images of its set (video frames or "
    "similar static images). accuracy: the first maximum is the target (a tie goes to the earlier image); "
    "static/ and video/ separately, as the paper reports.",
    f"McGill-NLP/imagecode@{COMMIT[:7]}/valid_data.json+zenodo-6518944", build,
    chance={"accuracy": 0.1, "static/accuracy": 0.1, "video/accuracy": 0.1},
    headline=("accuracy", "static/accuracy", "video/accuracy")))
