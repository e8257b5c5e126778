"""Per-item flags into per-group fractions: the one reduction every 2x2 and pairwise benchmark reports.

Why a module of its own: BiVLC (per type and type/subtype), Winoground (per
tag, secondary tag, number of main predicates), VALSE (per piece) and MMVP-VLM
(per visual pattern) all turn boolean per-item flags into "fraction of the
items of each group", and an exported campaign reuses BiVLC's. One function
keeps the key layout (``<group>/<flag>``, overall without a prefix) identical.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

from collections.abc import Iterable, Mapping, Sequence

from backend import metrics as M

TWO_BY_TWO_CHANCE = {"ipos2t": 0.5, "ineg2t": 0.5, "tpos2i": 0.5, "tneg2i": 0.5, "i2t": 0.25, "t2i": 0.25,
                     "group": 1 / 6}
"""Chance of the seven 2x2 flags (docs/REFERENCE.md, "Metrics": 25 / 25 / 16.7; each single comparison 50)."""

WINOGROUND_NAMES = {"i2t": "text", "t2i": "image"}
"""Winoground's names for I2T and T2I, used by every benchmark in its schema (VisMin, EqBen, NaturalBench)."""

WINOGROUND_CHANCE = {WINOGROUND_NAMES.get(flag, flag): level for flag, level in TWO_BY_TWO_CHANCE.items()}
"""``TWO_BY_TWO_CHANCE`` under Winoground's names: text 25, image 25, group 16.7, single comparisons 50."""


def first_per_label(labels: Sequence[str], limit: int | None) -> list[int]:
    """The positions of the first ``limit`` items of each label, in order (a benchmark's ``limit`` per subset)."""
    seen: dict[str, int] = {}
    kept = []
    for position, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        if limit is None or seen[label] <= limit:
            kept.append(position)
    return kept


def label_masks(labels: Sequence[str]) -> dict[str, Tensor]:
    """One boolean mask per distinct label, in order of first appearance (one numpy comparison per label: a
    bootstrap builds them once per resample)."""
    import numpy as np
    import torch

    values = np.fromiter(labels, dtype=object, count=len(labels))
    return {label: torch.from_numpy(values == label) for label in dict.fromkeys(labels)}


def multi_label_masks(labels: Sequence[Iterable[str]]) -> dict[str, Tensor]:
    """One mask per label for items that may carry several (Winoground's secondary tags)."""
    import torch

    sets = [set(item) for item in labels]
    names = dict.fromkeys(label for item in labels for label in item)
    return {name: torch.tensor([name in item for item in sets], dtype=torch.bool) for name in names}


def grouped_fractions(flags: Mapping[str, Tensor], groups: Mapping[str, Tensor]) -> dict[str, float]:
    """``{flag: fraction over all items}`` plus ``{"<group>/<flag>": fraction within the group}``.

    Empty groups are skipped (a ``limit`` may leave none of a type), never
    reported as NaN.
    """
    import torch

    if not flags:
        return {}
    # every group's count of every flag in one product: sums of 0/1 in float64 are exact, so count / size is the
    # same number as the mean of the group's flags (a bootstrap calls this once per resample)
    names = list(flags)
    values = torch.stack([flags[name].double() for name in names])
    out = dict(zip(names, (values.sum(dim=1) / values.shape[1]).tolist(), strict=True))
    if not groups:
        return out
    members = torch.stack([mask.double() for mask in groups.values()])
    sizes = members.sum(dim=1, keepdim=True)
    for group, size, row in zip(groups, sizes[:, 0].tolist(), ((members @ values.T) / sizes).tolist(), strict=True):
        if size > 0:
            out.update({f"{group}/{name}": value for name, value in zip(names, row, strict=True)})
    return out


def two_by_two_flags(scores: Tensor, names: Mapping[str, str] | None = None) -> dict[str, Tensor]:
    """``metrics.group_scores`` (strict ties) with lowercase keys, renamed by ``names`` (Winoground's text/image)."""
    flags = {flag.lower(): values for flag, values in M.group_scores(scores).items()}
    if names is None:
        return flags
    return {names.get(flag, flag): values for flag, values in flags.items()}


def winoground_fractions(scores: Tensor, labels: Sequence[str] = ()) -> dict[str, float]:
    """Winoground's ``text``, ``image``, ``group`` and the single comparisons (strict) over all items and per label
    (``<label>/group``): the whole rule of the benchmarks in its schema (VisMin, EqBen, NaturalBench-Retrieval)."""
    return grouped_fractions(two_by_two_flags(scores, WINOGROUND_NAMES), label_masks(list(labels)))
