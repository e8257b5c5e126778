"""The grouped fractions a bootstrap recomputes 1,000 times (every 2x2 benchmark's per-type metrics) are computed
in one matrix product now: the same numbers, exactly, and so the same intervals as the per-group loop before."""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from backend.benchmarks import prepare
from backend.benchmarks.grouping import grouped_fractions, label_masks, two_by_two_flags
from backend.benchmarks.stats import bootstrap_intervals
from backend.benchmarks.task import LabelledMetric


def masks_one_by_one(labels):
    return {label: torch.tensor([value == label for value in labels]) for label in dict.fromkeys(labels)}


def fractions_one_by_one(flags, groups):
    """The per-group loop the product replaced: a flag's mean over all items, then within each non-empty group."""
    out = {name: values.double().mean().item() for name, values in flags.items()}
    for group, mask in groups.items():
        if mask.any():
            out.update({f"{group}/{name}": values[mask].double().mean().item() for name, values in flags.items()})
    return out


def test_masks_and_fractions_by_hand():
    masks = label_masks(["a", "b", "a", "c"])
    assert {label: mask.tolist() for label, mask in masks.items()} == {
        "a": [True, False, True, False], "b": [False, True, False, False], "c": [False, False, False, True]}
    flags = {"x": torch.tensor([True, True, False, False]), "y": torch.tensor([True, False, True, True])}
    groups = {**masks, "empty": torch.zeros(4, dtype=torch.bool)}
    assert grouped_fractions(flags, groups) == {"x": 0.5, "y": 0.75, "a/x": 0.5, "a/y": 1.0, "b/x": 1.0, "b/y": 0.0,
                                                "c/x": 0.0, "c/y": 1.0}  # an empty group is skipped, never NaN


def test_the_product_equals_the_loop_to_the_last_bit():
    rng = np.random.default_rng(1)
    labels = [f"type{k}" for k in rng.integers(0, 7, size=997)]
    flags = {f"flag{k}": torch.from_numpy(rng.random(997) < 0.3 + 0.1 * k) for k in range(7)}
    assert grouped_fractions(flags, label_masks(labels)) == fractions_one_by_one(flags, masks_one_by_one(labels))


def test_a_2x2_benchmarks_intervals_are_the_same_as_before():
    task = prepare("toy-bivlc", 12)
    types = task.metrics.labels[0]
    scores = torch.from_numpy(np.random.default_rng(0).normal(size=(len(types), 2, 2)))
    before = dataclasses.replace(task, metrics=LabelledMetric(
        lambda s, kinds: fractions_one_by_one(two_by_two_flags(s), masks_one_by_one(kinds)), types))
    now = bootstrap_intervals(task, scores, resamples=300)
    assert now and now == bootstrap_intervals(before, scores, resamples=300)
