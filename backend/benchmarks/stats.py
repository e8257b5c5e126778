"""Error bars and paired tests for benchmark numbers (docs/REFERENCE.md, "Intervals and paired tests").

Why: MMVP-VLM has 135 pairs and Winoground 400 items, so a difference of a few
points between two models is often noise. Every metric gets a 95% percentile
bootstrap interval, recomputed by the benchmark's own rule on each resample;
two results on the same items get an exact McNemar test on their per-item flags
and a paired bootstrap interval of the difference.

The bootstrap resamples the unit the metric is defined on: an item (a pair, a
2x2 group), or several items declared one unit (ARO-Order's caption, scored once
per seed). It is stratified by the items' subtypes (the subsets, types, pieces
or relations a benchmark reports on): the benchmark fixes how many items each
has, so every resample keeps them, and macro means and ARO's ">= 25 items"
filter are computed over the same groups as the point estimate. A metric whose
rule does not say how its per-item labels follow a resample (a plain closure,
not a ``LabelledMetric``) gets no interval rather than a wrong one.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from backend.benchmarks.task import LabelledMetric, QueryMetric, Task

if TYPE_CHECKING:
    from torch import Tensor

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95


def resample_plan(strata: Sequence[str], units: Sequence[str]) -> list[np.ndarray]:
    """The bootstrap's groups: per stratum, a (units, items per unit) table of positions.

    A unit is every item sharing a ``units`` value; its stratum is the sequence of its items' ``strata`` labels,
    so the j-th item of a drawn unit fills the j-th item of the unit it replaces and every position keeps its
    label (units of one stratum have the same number of items by construction).
    """
    members: dict[str, list[int]] = {}
    for position, unit in enumerate(units):
        members.setdefault(unit, []).append(position)
    by_stratum: dict[tuple[str, ...], list[list[int]]] = {}
    for positions in members.values():
        by_stratum.setdefault(tuple(strata[p] for p in positions), []).append(positions)
    return [np.asarray(group, dtype=np.int64) for group in by_stratum.values()]


def draw(plan: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """One bootstrap draw: for every position, the position whose scores it takes (units drawn with replacement
    within their stratum)."""
    rows = np.empty(sum(table.size for table in plan), dtype=np.int64)
    for table in plan:
        rows[table.ravel()] = table[rng.integers(0, len(table), size=len(table))].ravel()
    return rows


def resample_rows(strata: Sequence[str], units: Sequence[str], rng: np.random.Generator) -> np.ndarray:
    """One draw of ``resample_plan(strata, units)`` (for a single draw; loops build the plan once)."""
    return draw(resample_plan(strata, units), rng)


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap values (NaN draws ignored; all NaN: NaN)."""
    finite = values[~np.isnan(values)]
    if not len(finite):
        return math.nan, math.nan
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


@contextmanager
def single_threaded() -> Iterator[None]:
    """torch on one thread for the resamples' many tiny operations: a parallel region per operation costs more
    than the work, and on a busy machine it waits for a descheduled thread (a (100, 4) max took 31 ms on two
    threads beside another process, 5 us on one). The draws' metrics are counts and fractions, the same on any
    number of threads (tests/test_benchmarks_stats_speed.py)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _plan(task: Task, n: int) -> tuple[list[str], list[str]]:
    strata = list(task.items.subtypes) if task.items is not None else ["all"] * n
    units = list(task.units) if task.units is not None else [str(p) for p in range(n)]
    return strata, units


def bootstrap_intervals(task: Task, scores: Tensor, resamples: int = RESAMPLES, seed: int = SEED,
                        level: float = LEVEL) -> dict[str, tuple[float, float]]:
    """``{metric: (low, high)}`` for every metric of ``task.metrics(scores)``; {} when the rule is a plain closure.

    ``scores`` is what ``task.metrics`` reads: (N, K, I) item scores, or a
    gallery task's (images, classes) matrix, whose rows (images) are the units.
    """
    import torch

    metric = task.metrics
    if isinstance(metric, QueryMetric) and resamples >= 1:
        return query_intervals(metric.hits(scores), resamples, seed, level)
    if not isinstance(metric, LabelledMetric) or resamples < 1 or len(scores) == 0:
        return {}
    plan = resample_plan(*_plan(task, len(scores)))
    reduce = getattr(metric, "reduce", None)  # per-row values the rule reads instead (a zero-shot image's rank)
    scores = reduce(scores) if reduce is not None else scores
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {}
    with single_threaded():
        for _ in range(resamples):
            rows = draw(plan, rng)
            for key, value in metric.take(rows)(scores.index_select(0, torch.from_numpy(rows))).items():
                draws.setdefault(key, []).append(float(value))
    return {key: percentile_interval(np.asarray(values), level) for key, values in draws.items()
            if len(values) == resamples}


def query_intervals(hits: dict[str, tuple[Tensor, Tensor]], resamples: int = RESAMPLES, seed: int = SEED,
                    level: float = LEVEL) -> dict[str, tuple[float, float]]:
    """``{metric: (low, high)}`` for means of per-query hits, each query owned by a unit (``QueryMetric``).

    A draw takes as many units as own a query, with replacement, each with all its queries (an image with its
    captions), and the gallery stays whole: the ranks are computed once, on the real gallery, so the interval
    is the spread of the queries' sample, not of the gallery's make-up. Every metric of one call is drawn
    with the same units, so i2t and t2i intervals describe the same resamples.
    """
    if not hits:
        return {}
    owners = {key: np.asarray(unit).astype(np.int64) for key, (_, unit) in hits.items()}
    units = np.unique(np.concatenate(list(owners.values())))
    index = {key: np.searchsorted(units, unit) for key, unit in owners.items()}
    totals = {key: (np.bincount(index[key], weights=np.asarray(hit, dtype=np.float64), minlength=len(units)),
                    np.bincount(index[key], minlength=len(units)).astype(np.float64))
              for key, (hit, _) in hits.items()}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {key: [] for key in hits}
    for _ in range(resamples):
        taken = np.bincount(rng.integers(0, len(units), size=len(units)), minlength=len(units))
        for key, (hit_sum, count) in totals.items():
            asked = taken @ count
            draws[key].append(float(taken @ hit_sum / asked) if asked else math.nan)
    return {key: percentile_interval(np.asarray(values), level) for key, values in draws.items()}


@dataclass(frozen=True)
class PairedTest:
    """Two results on the same items: accuracies, discordant counts, McNemar's exact p, the difference's interval.

    ``only_a`` = items A gets right and B wrong, ``only_b`` the reverse;
    ``difference`` = accuracy(A) - accuracy(B) = (only_a - only_b) / n.
    """

    n: int
    accuracy_a: float
    accuracy_b: float
    only_a: int
    only_b: int
    p_value: float
    difference: float
    interval: tuple[float, float]

    def line(self) -> str:
        low, high = self.interval
        return (f"{self.n} items: A {100 * self.accuracy_a:.2f}%, B {100 * self.accuracy_b:.2f}%, A - B "
                f"{100 * self.difference:+.2f} points (95% paired bootstrap {100 * low:+.2f} to {100 * high:+.2f}); "
                f"discordant: {self.only_a} only A right, {self.only_b} only B right; exact McNemar "
                f"p = {self.p_value:.4g}")


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of ``only_a`` of the discordant items at 1/2.

    p = min(1, 2 * P[X <= min(b, c)]), X ~ Binomial(b + c, 1/2); no discordant item gives p = 1.
    Exact integer sums (math.comb), so small counts are never approximated.
    """
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2 ** discordant)


def paired_test(correct_a: Sequence[bool], correct_b: Sequence[bool], strata: Sequence[str] | None = None,
                resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> PairedTest:
    """McNemar exact and a paired bootstrap (the same resampled items for both) on two per-item flag lists."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or not len(a):
        raise ValueError(f"a paired test needs two equally long, non-empty flag lists ({a.shape} vs {b.shape})")
    only_a, only_b = int((a & ~b).sum()), int((b & ~a).sum())
    plan = resample_plan(list(strata) if strata is not None else ["all"] * len(a), [str(p) for p in range(len(a))])
    rng = np.random.default_rng(seed)
    delta = a.astype(np.float64) - b.astype(np.float64)
    draws = np.array([delta[draw(plan, rng)].mean() for _ in range(resamples)])
    return PairedTest(len(a), float(a.mean()), float(b.mean()), only_a, only_b, mcnemar_exact(only_a, only_b),
                      float(delta.mean()), percentile_interval(draws, level))

