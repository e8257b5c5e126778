"""Object-centric zero-shot classification (CIFAR-10, ImageNet) with CLIP's prompt ensembles.

The axis a patching sweep trades compositionality against (CLOVe plots
ImageNet; docs/REFERENCE.md, "Model patching"). Each class is the re-normalised
mean of its prompts' text embeddings (``task.pool_texts``), as in CLIP's
zero-shot recipe: the 18 CIFAR-10 templates of CLIP's prompt-engineering
notebook, and the 80 ImageNet templates open_clip ships. Top-1 is strict: a
tie between the true class and another is wrong (as every rule here).

CIFAR-10 is fetched by torchvision (its archive is checked against its MD5
before the batches are read, which are pickles: only that verified archive is
ever unpickled). ImageNet cannot be fetched without an account: the steps are
given when it is missing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.task import ImageFile, ImageSource, LabelledMetric, Task
from backend.core import env

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
CIFAR10_TEMPLATES = (
    "a photo of a {}.", "a blurry photo of a {}.", "a black and white photo of a {}.", "a low contrast photo of a {}.",
    "a high contrast photo of a {}.", "a bad photo of a {}.", "a good photo of a {}.", "a photo of a small {}.",
    "a photo of a big {}.", "a photo of the {}.", "a blurry photo of the {}.", "a black and white photo of the {}.",
    "a low contrast photo of the {}.", "a high contrast photo of the {}.", "a bad photo of the {}.",
    "a good photo of the {}.", "a photo of the small {}.", "a photo of the big {}.",
)
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
TOP_KS = (1, 5)


def true_class_rank(sim: Tensor, labels: Tensor) -> Tensor:
    """Per image, the true class's rank: the number of classes scoring >= it, itself included, so a tie with
    another class costs a place (ties are wrong); a NaN true score ranks last."""
    import torch

    true = sim[torch.arange(len(labels)), labels]
    return (sim >= true[:, None]).sum(dim=1).masked_fill(torch.isnan(true), sim.shape[1] + 1)


def top_k(sim: Tensor, labels: Tensor, ks: Sequence[int] = TOP_KS) -> dict[str, float]:
    """Top-k accuracy by `true_class_rank` (ties are wrong)."""
    return _top_k(true_class_rank(sim, labels), sim.shape[1], ks)


def _top_k(rank, classes: int, ks: Sequence[int] = TOP_KS) -> dict[str, float]:
    rank = _numpy(rank)
    return {f"top{k}": float((rank <= k).mean()) for k in ks if k <= classes}


def mean_per_class_recall(rank, labels, classes: int) -> float:
    """clip_benchmark's ``mean_per_class_recall`` (sklearn's balanced accuracy): per class present among the
    labels, the fraction of its images ranked first (``rank``: `true_class_rank`, so a tie is wrong), averaged
    over those classes."""
    rank, labels = _numpy(rank), _numpy(labels)
    right = np.bincount(labels, weights=rank <= 1, minlength=classes)
    seen = np.bincount(labels, minlength=classes)
    present = seen > 0
    return float((right[present] / seen[present]).mean()) if present.any() else float("nan")


def _numpy(values) -> np.ndarray:
    """A tensor's values as numpy (the bootstrap's thousand small reductions are cheaper there than in torch)."""
    return values.cpu().numpy() if hasattr(values, "cpu") else np.asarray(values)


def zero_shot_metrics(sim: Tensor, labels: Tensor) -> dict[str, float]:
    """What clip_benchmark reports for a classification set: top-1, top-5 and mean per-class recall."""
    return _from_ranks(true_class_rank(sim, labels), labels, sim.shape[1])


def _from_ranks(rank: Tensor, labels: Tensor, classes: int) -> dict[str, float]:
    return {**_top_k(rank, classes), "mean_per_class_recall": mean_per_class_recall(rank, labels, classes)}


class RankMetric(LabelledMetric):
    """`zero_shot_metrics` read from each image's true-class rank, with the images' labels.

    The bootstrap resamples images: ``reduce`` turns the (images x classes) matrix into ranks once and the
    draws take ranks, not matrix rows (ImageNet's 50,000 x 1,000 matrix copied 1,000 times took half an hour
    on a CPU; the ranks take a second). Called on the matrix or on ranks, it gives the same numbers.
    """

    def __init__(self, labels: Tensor, classes: int) -> None:
        super().__init__(_from_ranks, labels)
        self.classes = classes

    def reduce(self, sim: Tensor) -> Tensor:
        return true_class_rank(sim, self.labels[0])

    def __call__(self, scores: Tensor) -> dict[str, float]:
        rank = scores if scores.ndim == 1 else self.reduce(scores)
        return _from_ranks(rank, self.labels[0], self.classes)

    def take(self, rows: np.ndarray) -> RankMetric:
        return RankMetric(super().take(rows).labels[0], self.classes)


def chance_levels(classes: int) -> dict[str, float]:
    """Chance for ``zero_shot_metrics`` over ``classes`` equally likely classes."""
    return {"top1": 1 / classes, "top5": min(5, classes) / classes, "mean_per_class_recall": 1 / classes}


def ensemble_task(images: Sequence[ImageSource], labels: Sequence[int], classnames: Sequence[str],
                  templates: Sequence) -> Task:
    """A gallery task: every (class, template) prompt encoded once, pooled per class, top-k read off the matrix."""
    import torch

    texts = [template.format(name) if isinstance(template, str) else template(name)
             for name in classnames for template in templates]
    pool = torch.zeros(len(classnames), len(texts))
    for c in range(len(classnames)):
        pool[c, c * len(templates):(c + 1) * len(templates)] = 1.0 / len(templates)
    label_tensor = torch.as_tensor(list(labels), dtype=torch.long)
    return Task(list(images), texts, RankMetric(label_tensor, len(classnames)), text_pool=pool)


def _cifar10(limit: int | None, root: Path) -> Task:
    from torchvision.datasets import CIFAR10

    folder = root / "cifar10"
    steps = [f"mkdir -p {folder} && wget {CIFAR10_URL} -P {folder} && tar xzf {folder}/cifar-10-python.tar.gz "
             f"-C {folder}", "or run once with network access: the archive is fetched and checked automatically"]
    try:
        data = CIFAR10(str(folder), train=False, download=not env.hub_offline())
    except RuntimeError as error:  # torchvision: "Dataset not found or corrupted" / download failures
        raise DataMissing(steps_message("cifar10", folder, [f"torchvision said: {error}", *steps])) from None
    except OSError as error:
        raise DataMissing(steps_message("cifar10", folder, [f"downloading failed: {error}", *steps])) from None
    count = len(data) if limit is None else min(limit, len(data))
    return ensemble_task(list(data.data[:count]), data.targets[:count], CIFAR10_CLASSES, CIFAR10_TEMPLATES)


def _imagenet(limit: int | None, root: Path) -> Task:
    from open_clip.zero_shot_metadata import IMAGENET_CLASSNAMES, OPENAI_IMAGENET_TEMPLATES

    folder = root / "imagenet" / "val"
    wnids = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    if len(wnids) != len(IMAGENET_CLASSNAMES):
        raise DataMissing(steps_message("imagenet", folder, [
            "sign in at https://image-net.org and download ILSVRC2012_img_val.tar (6.3 GB; the licence forbids "
            "redistribution, so the lab cannot fetch it)",
            f"mkdir -p {folder} && tar xf ILSVRC2012_img_val.tar -C {folder}",
            f"sort the 50,000 images into one folder per class (n01440764, ...): e.g. `cd {folder} && wget -qO- "
            "https://raw.githubusercontent.com/soumith/imagenetloader.torch/master/valprep.sh | bash`",
            f"expected 1000 class folders, found {len(wnids)}"]))
    files: list[ImageSource] = []
    labels: list[int] = []
    for label, wnid in enumerate(wnids):
        names = sorted(p for p in (folder / wnid).iterdir() if p.is_file())
        names = names[:limit] if limit is not None else names  # limit: images per class, so every class stays
        files.extend(ImageFile(str(p)) for p in names)
        labels.extend([label] * len(names))
    return ensemble_task(files, labels, IMAGENET_CLASSNAMES, OPENAI_IMAGENET_TEMPLATES)


register(Benchmark("cifar10", "CIFAR-10 test set (10,000 images), zero-shot top-1/top-5/mean per-class recall "
                   "with CLIP's 18 prompt templates; strict ties. Fetched and checked by torchvision.",
                   "cifar10-test-v1", _cifar10, chance=chance_levels(10), headline=("top1",), object_centric=True))
register(Benchmark("imagenet", "ImageNet-1k validation (50,000 images), zero-shot top-1/top-5/mean per-class recall "
                   "with CLIP's 80 prompt templates; strict ties. `limit` = images per class.", "imagenet-val-v1",
                   _imagenet, chance=chance_levels(1000), headline=("top1",), object_centric=True))
