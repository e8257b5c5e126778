"""Benchmark metrics on precomputed scores (docs/REFERENCE.md, "Metrics").

Every function takes torch tensors, numpy arrays or nested lists of scores
(higher = better match) and returns bool tensors for per-item correctness or
python floats in [0, 1] for aggregates; the UI turns fractions into percents.

Ties matter: fp16 scoring produces exact ties and the tie rule moves
accuracies by points. Each docstring states its rule. Comparisons with NaN are
false, so an item whose scores contain NaN is wrong under the strict rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from torch import Tensor

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

ArrayLike = Union["Tensor", np.ndarray, Sequence]  # a string: torch is imported where a metric runs

SUGARCREPE_CATEGORIES = ("replace", "swap", "add")

# The relation filter of ARO's own evaluation, verbatim (vision-language-models-
# are-bows, notebook "Replicate ARO! VG-Relation, VG-Attribution", variable
# `symmetric`; later papers' evaluation scripts copy it). The paper only says it
# removes "symmetric relations such as 'near' or 'next to'"; the list holds
# those (its last eight entries) plus 149 more, many plainly not symmetric
# ("biting", "wrapped in", ...), for reasons the authors do not give. It lives
# outside the data file, so published VG-Relation numbers are only comparable
# with exactly this list.
DEFAULT_SYMMETRIC_RELATIONS: frozenset[str] = frozenset((
    "adjusting", "attached to", "between", "bigger than", "biting", "boarding", "brushing",
    "chewing", "cleaning", "climbing", "close to", "coming from", "coming out of", "contain",
    "crossing", "dragging", "draped over", "drinking", "drinking from", "driving",
    "driving down", "driving on", "eating from", "eating in", "enclosing", "exiting", "facing",
    "filled with", "floating in", "floating on", "flying", "flying above", "flying in",
    "flying over", "flying through", "full of", "going down", "going into", "going through",
    "grazing in", "growing in", "growing on", "guiding", "hanging from", "hanging in",
    "hanging off", "hanging over", "higher than", "holding onto", "hugging", "in between",
    "jumping off", "jumping on", "jumping over", "kept in", "larger than", "leading",
    "leaning over", "leaving", "licking", "longer than", "looking in", "looking into",
    "looking out", "looking over", "looking through", "lying next to", "lying on top of",
    "making", "mixed with", "mounted on", "moving", "on the back of", "on the edge of",
    "on the front of", "on the other side of", "opening", "painted on", "parked at",
    "parked beside", "parked by", "parked in", "parked in front of", "parked near",
    "parked next to", "perched on", "petting", "piled on", "playing", "playing in",
    "playing on", "playing with", "pouring", "reaching for", "reading", "reflected on",
    "riding on", "running in", "running on", "running through", "seen through",
    "sitting behind", "sitting beside", "sitting by", "sitting in front of", "sitting near",
    "sitting next to", "sitting under", "skiing down", "skiing on", "sleeping in",
    "sleeping on", "smiling at", "sniffing", "splashing", "sprinkled on", "stacked on",
    "standing against", "standing around", "standing behind", "standing beside",
    "standing in front of", "standing near", "standing next to", "staring at", "stuck in",
    "surrounding", "swimming in", "swinging", "talking to", "topped with", "touching",
    "traveling down", "traveling on", "tying", "typing on", "underneath", "wading in",
    "waiting for", "walking across", "walking by", "walking down", "walking next to",
    "walking through", "working in", "working on", "worn on", "wrapped around", "wrapped in",
    "by", "of", "near", "next to", "with", "beside", "on the side of", "around",
))


def _as_tensor(x: ArrayLike) -> Tensor:
    import torch

    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def _accuracy(correct: ArrayLike) -> float:
    correct = _as_tensor(correct)
    if correct.numel() == 0:
        raise ValueError("accuracy of an empty set of items is undefined")
    return correct.double().mean().item()


def pairwise_correct(pos: ArrayLike, neg: ArrayLike) -> Tensor:
    """Per item, ``pos > neg`` (SugarCrepe, ARO VG-R / VG-A).

    Strict: a tie is wrong, as in ARO's code where ``argmax([false, true])``
    returns the false caption on a tie.
    """
    return _as_tensor(pos) > _as_tensor(neg)


def group_accuracy(correct: ArrayLike, groups: Sequence[Hashable]) -> dict[Hashable, tuple[float, int]]:
    """Accuracy and item count per group label, for per-type tables."""
    correct = _as_tensor(correct).reshape(-1)
    if len(groups) != correct.numel():
        raise ValueError(f"{correct.numel()} items but {len(groups)} group labels")
    first = {g: k for k, g in enumerate(dict.fromkeys(groups))}  # groups in order of first appearance
    inverse = np.fromiter(map(first.__getitem__, groups), dtype=np.int64, count=len(groups))
    counts = np.bincount(inverse, minlength=len(first))
    rights = np.bincount(inverse, weights=correct.double().numpy(), minlength=len(first))  # vectorised: a bootstrap
    return {g: (float(rights[k] / counts[k]), int(counts[k])) for g, k in first.items()}  # calls this 1,000 times


def sugarcrepe_summary(per_subset_correct: Mapping[str, ArrayLike],
                       categories: Sequence[str] | None = SUGARCREPE_CATEGORIES) -> dict:
    """SugarCrepe accuracies from per-item correctness of each subset.

    Subset names are ``<category>_<kind>`` (``replace_obj``, ``swap_att``,
    ``add_obj``, ...), the category one of `categories`; None takes any (a
    validation campaign's subsets name perturbation families,
    ``binding-swap_att``: each is its own category). Returns ``{"subsets": {name: acc}, "micro": {category:
    acc}, "macro": {category: acc}, "overall": acc}`` where micro pools the
    items of a category (the SugarCrepe paper), macro averages its subsets
    (CLOVe, following Tschannen et al.), and overall is the mean of the subset
    accuracies (CLOVe's "average of the seven fine-grained tasks").
    """
    subsets = {name: _as_tensor(c).reshape(-1) for name, c in per_subset_correct.items()}
    if any(c.numel() == 0 for c in subsets.values()):
        raise ValueError("accuracy of an empty set of items is undefined")
    return sugarcrepe_summary_of_counts({name: int(c.sum()) for name, c in subsets.items()},
                                        {name: c.numel() for name, c in subsets.items()}, categories)


def sugarcrepe_summary_of_counts(right: Mapping[str, int], total: Mapping[str, int],
                                 categories: Sequence[str] | None = SUGARCREPE_CATEGORIES) -> dict:
    """`sugarcrepe_summary` from each subset's count of correct items and of items (a bootstrap's resample
    counts them in one bincount). A fraction of counts is the mean of the 0/1 flags to the last bit: their
    float64 sum is exact, and so is its one rounded division."""
    if not right:
        raise ValueError("no SugarCrepe subset given")
    by_category: dict[str, list[str]] = defaultdict(list)
    for name in right:
        category = name.split("_", 1)[0]
        if categories is not None and category not in categories:
            raise ValueError(f"subset {name!r} is not {', '.join(f'{c}_*' for c in categories)}")
        by_category[category].append(name)
    subset_acc = {name: right[name] / total[name] for name in right}
    micro = {cat: sum(right[n] for n in names) / sum(total[n] for n in names) for cat, names in by_category.items()}
    macro = {cat: float(np.mean([subset_acc[n] for n in names])) for cat, names in by_category.items()}
    return {"subsets": subset_acc, "micro": micro, "macro": macro,
            "overall": float(np.mean(list(subset_acc.values())))}


def aro_relation_accuracy(
    correct: ArrayLike,
    relation_names: Sequence[str],
    symmetric: Iterable[str] = DEFAULT_SYMMETRIC_RELATIONS,
) -> float:
    """VG-Relation macro accuracy: mean over relations of per-relation accuracy.

    Relations in ``symmetric`` are dropped first. The default is ARO's exact
    filter list (see ``DEFAULT_SYMMETRIC_RELATIONS``: misnamed, it removes far
    more than symmetric relations); pass ``()`` to keep every relation.
    ``correct`` should come from ``pairwise_correct`` (ties wrong).
    """
    excluded = set(symmetric)
    per_relation = group_accuracy(correct, relation_names)
    kept = [acc for rel, (acc, _) in per_relation.items() if rel not in excluded]
    if not kept:
        raise ValueError("every relation was filtered out")
    return float(np.mean(kept))


def aro_attribution_accuracy(
    correct: ArrayLike, attribute_pairs: Sequence[Hashable], min_items: int = 25
) -> float:
    """VG-Attribution macro accuracy over attribute-pair groups.

    An item's group is its ordered attribute pair (ARO keys it as
    ``f"{a0}_{a1}"``; any hashable works). As in ARO's code, groups with fewer
    than ``min_items`` items are skipped and the rest averaged unweighted.
    """
    per_pair = group_accuracy(correct, attribute_pairs)
    kept = [acc for acc, count in per_pair.values() if count >= min_items]
    if not kept:
        raise ValueError(f"no attribute pair has >= {min_items} items")
    return float(np.mean(kept))


def aro_order_correct(scores: ArrayLike) -> Tensor:
    """COCO/Flickr30k-Order: is column 0 (the original caption) the argmax?

    ``scores`` is (N, 1 + perturbations), normally (N, 5). A tie goes to the
    original (``>=``), matching ARO's ``np.argmax(...) == 0``, which returns
    the first maximal index.
    """
    scores = _as_tensor(scores)
    return scores[:, 0] >= scores[:, 1:].max(dim=1).values


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1) of per-seed accuracies.

    The std of a single value is reported as 0.0 rather than NaN.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        raise ValueError("no values")
    std = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return float(array.mean()), std


def _hard_positive_flags(c: Tensor, n: Tensor, p: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    original = c > n
    augmented = original & (p > n)
    brittle = ((c > n) & (n > p)) | ((p > n) & (n > c))
    return original, augmented, brittle


def hard_positive_metrics(s_c: ArrayLike, s_n: ArrayLike, s_p: ArrayLike) -> dict[str, float]:
    """Kamath et al.'s metrics, each a fraction of ALL items (strict).

    original_acc: s(c) > s(c_n). augmented_acc: s(c) > s(c_n) and
    s(c_p) > s(c_n). brittleness: s(c) > s(c_n) > s(c_p) or
    s(c_p) > s(c_n) > s(c). Any tie makes the condition false.
    """
    flags = _hard_positive_flags(_as_tensor(s_c), _as_tensor(s_n), _as_tensor(s_p))
    return dict(zip(("original_acc", "augmented_acc", "brittleness"), map(_accuracy, flags)))


def caption_probe_metrics(
    s_orig: float, s_negs: Sequence[float], s_poss: Sequence[float]
) -> dict[str, float | int | None]:
    """Metrics for ONE image-caption pair probed with many variants.

    accuracy: fraction of negatives with s_orig > s_neg (strict).
    augmented_acc and brittleness: the hard-positive definitions above with
    c = the original, c_n = one negative, c_p = one positive, averaged over
    every (positive, negative) pair, so each negative is checked against each
    positive. A metric with no item to average (no negative, or no positive
    for the pair metrics) is None. Counts are returned for display.
    """
    import torch

    negs = _as_tensor(s_negs).reshape(-1).double()
    poss = _as_tensor(s_poss).reshape(-1).double()
    orig = torch.as_tensor(s_orig, dtype=torch.float64)
    result: dict[str, float | int | None] = {
        "accuracy": _accuracy(orig > negs) if negs.numel() else None,
        "augmented_acc": None,
        "brittleness": None,
        "n_negatives": negs.numel(),
        "n_positives": poss.numel(),
    }
    if negs.numel() and poss.numel():
        # rows: positives, columns: negatives -> every (positive, negative) pair
        _, augmented, brittle = _hard_positive_flags(*torch.broadcast_tensors(orig, negs[None, :], poss[:, None]))
        result["augmented_acc"] = _accuracy(augmented)
        result["brittleness"] = _accuracy(brittle)
    return result


def group_scores(s: ArrayLike) -> dict[str, Tensor]:
    """BiVLC / Winoground 2x2 per-item flags; ``s[n, caption, image]``.

    Caption 0 / image 0 are the positive pair, caption 1 / image 1 the
    negative pair. All comparisons strict (a tie is wrong):
    Ipos2T s00 > s10, Ineg2T s11 > s01, Tpos2I s00 > s01, Tneg2I s11 > s10,
    I2T = Ipos2T & Ineg2T, T2I = Tpos2I & Tneg2I, Group = I2T & T2I.
    """
    s = _as_tensor(s)
    if s.dim() != 3 or s.shape[1:] != (2, 2):
        raise ValueError(f"expected (N, 2, 2) scores, got {tuple(s.shape)}")
    flags = {
        "Ipos2T": s[:, 0, 0] > s[:, 1, 0],
        "Ineg2T": s[:, 1, 1] > s[:, 0, 1],
        "Tpos2I": s[:, 0, 0] > s[:, 0, 1],
        "Tneg2I": s[:, 1, 1] > s[:, 1, 0],
    }
    flags["I2T"] = flags["Ipos2T"] & flags["Ineg2T"]
    flags["T2I"] = flags["Tpos2I"] & flags["Tneg2I"]
    flags["Group"] = flags["I2T"] & flags["T2I"]
    return flags


def _best_rank(sim: Tensor, is_positive: Tensor) -> Tensor:
    """Per row, 1 + number of wrong columns scoring >= the best right column.

    NaN right columns are ignored; a row whose right columns are all NaN gets
    the largest representable rank, so it is never retrieved at any K.
    """
    import torch

    usable = is_positive & ~torch.isnan(sim)
    best = sim.masked_fill(~usable, -math.inf).max(dim=1).values
    rank = 1 + ((sim >= best[:, None]) & ~is_positive).sum(dim=1)
    return torch.where(usable.any(dim=1), rank, torch.iinfo(rank.dtype).max)


def retrieval_hits(
    sim: ArrayLike, ks: Sequence[int] = (1, 5, 10), positives: ArrayLike | None = None
) -> dict[str, tuple[Tensor, Tensor]]:
    """Per query, whether it is retrieved at K, with the image that owns the query: ``recall_at_k``'s rule
    before the mean. ``{"i2t_R@K": (hit per image query, that image), "t2i_R@K": (hit per text, its image)}``;
    the owners let a bootstrap redraw an image together with its captions (``benchmarks.stats``)."""
    import torch

    sim = _as_tensor(sim)
    n_images, n_texts = sim.shape
    owner = torch.arange(n_texts) if positives is None else _as_tensor(positives).long().reshape(-1)
    if owner.numel() != n_texts:
        raise ValueError(f"{n_texts} texts but {owner.numel()} positive indices")
    is_positive = owner[None, :] == torch.arange(n_images)[:, None]  # (images, texts)
    queries = is_positive.any(dim=1)
    i2t_rank = _best_rank(sim[queries], is_positive[queries])
    t2i_rank = _best_rank(sim.T, is_positive.T)
    query_images = torch.nonzero(queries).reshape(-1)
    hits = {}
    for k in ks:
        hits[f"i2t_R@{k}"] = (i2t_rank <= k, query_images)
        hits[f"t2i_R@{k}"] = (t2i_rank <= k, owner)
    return hits


def recall_at_k(
    sim: ArrayLike, ks: Sequence[int] = (1, 5, 10), positives: ArrayLike | None = None
) -> dict[str, float]:
    """Image->text and text->image recall@K over the full gallery.

    ``sim`` is (n_images, n_texts). ``positives[j]`` is the index of the image
    that text j describes (several texts may share an image, as COCO's five
    captions do); None means text j describes image j. A query is retrieved at
    K when its best correct item has rank <= K, with rank = 1 + the number of
    INCORRECT items scoring >= it: ties with wrong items are resolved
    pessimistically (the correct item is placed after them), ties among correct
    items cost nothing; a NaN score never ranks: a NaN correct item is not
    retrieved and a NaN wrong item outranks nothing. An image
    with no caption is still a candidate for text->image but is not an
    image->text query. Keys: ``"i2t_R@K"`` and ``"t2i_R@K"``.
    """
    return {key: _accuracy(hit) for key, (hit, _) in retrieval_hits(sim, ks, positives).items()}
