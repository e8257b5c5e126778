"""The toy world's pinned benchmarks, registered under ``toy-*`` names.

Items come from ``backend.toyworld``'s builders (pinned seeds, one
``BENCHMARK_VERSION``), built once per process; each benchmark here only
says which images and texts to score and which rule of ``backend.metrics``
to apply (docs/REFERENCE.md, "Metrics"; every comparison strict unless stated).
The ``*_items(limit)`` functions are public so that tests and notebooks can
recompute any number independently from the very same items.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
from collections.abc import Sequence

from backend import metrics as M
from backend import toyworld as tw
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import TWO_BY_TWO_CHANCE, grouped_fractions, label_masks, two_by_two_flags
from backend.benchmarks.sugarcrepe import sugarcrepe_metrics
from backend.benchmarks.task import (
    LabelledMetric,
    QueryMetric,
    Task,
    first_caption_wins,
    fraction,
    grid_task,
    group_correct,
    original_not_beaten,
)

PRETRAIN_RETRIEVAL_SPEC = tw.BenchmarkSpec(seed=1008, size=500)
"""Gallery of ``toy-pretrain-retrieval``; seed 1008 continues toyworld's 1001-1007."""
RETRIEVAL_KS = (1, 5)


# -- items (built once per process; ``limit`` takes a prefix) ---------------------------------

@functools.cache
def _sugarcrepe() -> dict[str, list[tw.PairItem]]:
    return tw.build_sugarcrepe()


@functools.cache
def _hard_positives() -> dict[str, list[tw.HardPositiveItem]]:
    return tw.build_hard_positives()


@functools.cache
def _bivlc() -> dict[str, list[tw.BivlcItem]]:
    return tw.build_bivlc()


@functools.cache
def _aro_order() -> list[tw.OrderItem]:
    return tw.build_aro_order()


@functools.cache
def _retrieval() -> tw.RetrievalSet:
    return tw.build_retrieval()


@functools.cache
def _pretrain_retrieval() -> tw.CaptionedImages:
    spec = PRETRAIN_RETRIEVAL_SPEC
    return tw.pretraining_pairs(spec.size, spec.seed, spec.resolution)


@functools.cache
def _zero_shot(attribute: str) -> tw.ZeroShotSet:
    return tw.build_zero_shot(attribute)


def sugarcrepe_items(limit: int | None = None) -> dict[str, list[tw.PairItem]]:
    """Per SugarCrepe type, the first ``limit`` items."""
    return {t: items[:limit] for t, items in _sugarcrepe().items()}


def hard_positive_items(limit: int | None = None) -> dict[str, list[tw.HardPositiveItem]]:
    """Per subset (replace, swap), the first ``limit`` items."""
    return {s: items[:limit] for s, items in _hard_positives().items()}


def bivlc_items(limit: int | None = None) -> dict[str, list[tw.BivlcItem]]:
    """Per BiVLC type, the first ``limit`` 2x2 instances."""
    return {t: items[:limit] for t, items in _bivlc().items()}


def aro_order_items(limit: int | None = None) -> list[tw.OrderItem]:
    """The first ``limit`` ARO-order items."""
    return _aro_order()[:limit]


def retrieval_set(limit: int | None = None) -> tw.RetrievalSet:
    """The first ``limit`` images and captions (any prefix keeps one correct image per caption)."""
    full = _retrieval()
    return tw.RetrievalSet(full.images[:limit], full.captions[:limit], full.scenes[:limit])


def pretrain_retrieval_set(limit: int | None = None) -> tw.CaptionedImages:
    """The first ``limit`` pretraining-style (image, sparse caption) pairs."""
    full = _pretrain_retrieval()
    return tw.CaptionedImages(full.images[:limit], full.captions[:limit], full.scenes[:limit])


def zero_shot_items(attribute: str, limit: int | None = None) -> tw.ZeroShotSet:
    """The first ``limit`` images of the pinned "shape" or "colour" set."""
    full = _zero_shot(attribute)
    return tw.ZeroShotSet(attribute, full.images[:limit], full.labels[:limit], full.classnames, full.prompts)


# -- metric readers: scores in, metric dict out -----------------------------------------------

def _concat(groups: dict[str, list]) -> tuple[list, list[str]]:
    """All items of a per-type dict in order, with each item's type label."""
    items = [item for group in groups.values() for item in group]
    return items, [t for t, group in groups.items() for _ in group]


def _sugarcrepe_task(limit: int | None) -> Task:
    items, types = _concat(sugarcrepe_items(limit))
    return grid_task([[i.image] for i in items], [[i.positive, i.negative] for i in items],
                     LabelledMetric(lambda s, labels: sugarcrepe_metrics(s[:, :, 0], labels), types),
                     subtypes=types, correct=first_caption_wins)


def _hard_positive_metrics(scores: Tensor, subsets: Sequence[str]) -> dict[str, float]:
    """``scores`` (N, 3): s(c), s(c_n), s(c_p); Kamath et al.'s three fractions per subset."""
    import torch

    out = {}
    for subset in dict.fromkeys(subsets):
        rows = torch.tensor([s == subset for s in subsets])
        s = scores[rows]
        for key, value in M.hard_positive_metrics(s[:, 0], s[:, 1], s[:, 2]).items():
            out[f"{subset}/{key}"] = value
    return out


def _hard_positive_task(limit: int | None) -> Task:
    items, subsets = _concat(hard_positive_items(limit))
    return grid_task([[i.image] for i in items], [[i.caption, i.negative, i.positive] for i in items],
                     LabelledMetric(lambda s, labels: _hard_positive_metrics(s[:, :, 0], labels), subsets),
                     subtypes=subsets,
                     correct=lambda s: s[:, 0, 0] > s[:, 1, 0])


def _bivlc_metrics(scores: Tensor, types: Sequence[str]) -> dict[str, float]:
    """``scores[n, caption, image]``; the seven BiVLC flags per type and over all items (as ``bivlc``)."""
    return grouped_fractions(two_by_two_flags(scores), label_masks(types))


def _bivlc_task(limit: int | None) -> Task:
    items, types = _concat(bivlc_items(limit))
    return grid_task([[i.image0, i.image1] for i in items], [[i.caption0, i.caption1] for i in items],
                     LabelledMetric(_bivlc_metrics, types), subtypes=types, correct=group_correct)


def _aro_order_metrics(scores: Tensor) -> dict[str, float]:
    return {"accuracy": fraction(M.aro_order_correct(scores[:, :, 0]))}


def _aro_order_task(limit: int | None) -> Task:
    items = aro_order_items(limit)
    return grid_task([[i.image] for i in items], [[i.caption, *i.perturbations] for i in items],
                     LabelledMetric(_aro_order_metrics), correct=original_not_beaten)


def _retrieval_task(limit: int | None) -> Task:
    data = retrieval_set(limit)
    return Task([tw.to_pil(im) for im in data.images], list(data.captions),
                QueryMetric(functools.partial(M.recall_at_k, ks=RETRIEVAL_KS),
                            functools.partial(M.retrieval_hits, ks=RETRIEVAL_KS)))


def best_true_recall(sim: Tensor, truth: Tensor, ks: Sequence[int] = RETRIEVAL_KS) -> dict[str, float]:
    """Recall@K when a text may be true of several images and an image of several texts.

    ``truth[i, j]``: text j is true of image i. A query is retrieved at K when
    its best-scoring TRUE item has rank <= K among the FALSE items (false
    items scoring >= it count against it, other true items never do). This is
    exactly ``metrics.recall_at_k``'s rule once every other true item is
    removed from the gallery (set to -inf): each query keeps one owner, the
    best true item, which is what ``recall_at_k`` supports.
    """
    import torch

    def one_direction(s: Tensor, t: Tensor) -> dict[str, float]:
        # rows: gallery, columns: queries; every query has >= 1 true gallery item
        owner = s.masked_fill(~t, -torch.inf).argmax(dim=0)
        pruned = s.masked_fill(t, -torch.inf)
        columns = torch.arange(s.shape[1])
        pruned[owner, columns] = s[owner, columns]
        return M.recall_at_k(pruned, ks=ks, positives=owner)

    t2i = one_direction(sim, truth)
    i2t = one_direction(sim.T, truth.T)
    return {**{f"i2t_R@{k}": i2t[f"t2i_R@{k}"] for k in ks}, **{f"t2i_R@{k}": t2i[f"t2i_R@{k}"] for k in ks}}


def pretrain_truth(data: tw.CaptionedImages) -> Tensor:
    """``truth[i, j]`` = the oracle says caption j holds in scene i."""
    import torch

    captions = [tw.parse(c) for c in data.captions]
    return torch.tensor([[tw.evaluate(c, scene) for c in captions] for scene in data.scenes])


def _pretrain_retrieval_task(limit: int | None) -> Task:
    data = pretrain_retrieval_set(limit)
    truth = pretrain_truth(data)
    return Task([tw.to_pil(im) for im in data.images], list(data.captions),
                lambda sim: best_true_recall(sim, truth))


def _zero_shot_task(attribute: str, limit: int | None) -> Task:
    import torch

    data = zero_shot_items(attribute, limit)
    labels = torch.from_numpy(data.labels)

    return grid_task([[im] for im in data.images], [data.prompts] * len(labels), LabelledMetric(_top1, labels))


def _top1(scores: Tensor, labels: Tensor) -> dict[str, float]:
    """Strict top-1 over the prompts of item n (N, classes, 1): the true class beats every other."""
    import torch

    s = scores[:, :, 0]  # (N, classes)
    true = s[torch.arange(len(labels)), labels]
    others = s.scatter(1, labels[:, None], -torch.inf).max(dim=1).values
    return {"top1": fraction(M.pairwise_correct(true, others))}


_TOY = {
    "toy-sugarcrepe": ("SugarCrepe-style image -> (true, false caption) accuracy per type "
                       "(replace/swap/add x obj/att/rel), micro/macro per category and overall "
                       "(mean of types); strict.", _sugarcrepe_task),
    "toy-hard-positives": ("Kamath et al. REPLACE and SWAP: original_acc, augmented_acc, brittleness "
                           "as fractions of all items; strict.", _hard_positive_task),
    "toy-bivlc": ("BiVLC 2x2 (two images x two captions): Ipos2T, Ineg2T, Tpos2I, Tneg2I, I2T, T2I, "
                  "Group per type and overall (keys lowercase); strict.", _bivlc_task),
    "toy-aro-order": ("ARO COCO-Order style: the complete caption vs its four order perturbations; "
                      "correct when it scores >= every perturbation (ties to the original).",
                      _aro_order_task),
    "toy-retrieval": ("Image<->text recall@1/@5 over 500 two-object images with complete captions "
                      "(each caption true of exactly one image).", _retrieval_task),
    "toy-pretrain-retrieval": (
        "Plain, object-centric retrieval: image<->text recall@1/@5 over 500 images whose captions are "
        "drawn like the PRETRAINING data (sparse: often one object, colour rarely named, location "
        "phrases), not the complete captions of toy-retrieval. A sparse caption is usually true of "
        "several images, so any image (text) the oracle says it matches counts as a hit. This is the "
        "'what pretraining was good at' axis of patching trade-offs: complete-caption retrieval "
        "improves with compositional finetuning, so it cannot show what finetuning costs.",
        _pretrain_retrieval_task),
    "toy-zeroshot-shape": ("Zero-shot shape classification with 'a photo of a {shape}' prompts: "
                           "top-1 accuracy, a tie with another class is wrong.",
                           functools.partial(_zero_shot_task, "shape")),
    "toy-zeroshot-colour": ("Zero-shot colour classification with 'a photo of a {colour} shape' "
                            "prompts: top-1 accuracy, a tie with another class is wrong.",
                            functools.partial(_zero_shot_task, "colour")),
}

HARD_POSITIVE_CHANCE = {"original_acc": 0.5, "augmented_acc": 1 / 3, "brittleness": 1 / 3}


def _chance(name: str) -> dict[str, float]:
    """Chance per headline metric (docs/REFERENCE.md, "Metrics"): the leaderboard's Chance row."""
    if name == "toy-sugarcrepe":
        categories = sorted({t.split("_")[0] for t in tw.SUGARCREPE_TYPES})
        return {"overall": 0.5, "micro": 0.5, **dict.fromkeys(tw.SUGARCREPE_TYPES, 0.5),
                **{f"{kind}/{c}": 0.5 for kind in ("micro", "macro") for c in categories}}
    if name == "toy-bivlc":
        return dict(TWO_BY_TWO_CHANCE)
    if name == "toy-hard-positives":
        return {f"{s}/{k}": v for s in tw.HARD_POSITIVE_SUBSETS for k, v in HARD_POSITIVE_CHANCE.items()}
    if name == "toy-aro-order":
        return {"accuracy": 0.2}
    if name.startswith("toy-zeroshot-"):
        return {"top1": 1 / len(tw.SHAPES if name.endswith("shape") else tw.COLOURS)}
    return {}


# The main metric of each set's paper first (the chart's bar, the leaderboard's default column): CLOVe's average of
# the seven SugarCrepe types, BiVLC's group score ("the main metric", Miranda et al. 2024, Sec. 3), Kamath et al.'s
# augmented accuracy (their metric for hard positives), ARO's order accuracy, top-1, retrieval's R@1.
_HEADLINE = {"toy-sugarcrepe": ("overall", "micro"), "toy-bivlc": ("group", "i2t", "t2i"),
             "toy-hard-positives": tuple(f"{subset}/{metric}" for metric in ("augmented_acc", "original_acc",
                                                                              "brittleness")
                                         for subset in tw.HARD_POSITIVE_SUBSETS),
             "toy-aro-order": ("accuracy",), "toy-retrieval": ("i2t_R@1", "t2i_R@1"),
             "toy-pretrain-retrieval": ("i2t_R@1", "t2i_R@1"), "toy-zeroshot-shape": ("top1",),
             "toy-zeroshot-colour": ("top1",)}
_TEXT_ROLES = {"toy-hard-positives": ("true", "negative", "positive")}  # texts [c, c_n, c_p]


def _ignoring_root(build):
    return lambda limit, root: build(limit)


for _name, (_description, _build) in _TOY.items():
    register(Benchmark(_name, _description, tw.BENCHMARK_VERSION, _ignoring_root(_build), chance=_chance(_name),
                       object_centric=_name.startswith("toy-zeroshot-") or _name == "toy-pretrain-retrieval",
                       headline=_HEADLINE[_name], text_roles=_TEXT_ROLES.get(_name, ())))
