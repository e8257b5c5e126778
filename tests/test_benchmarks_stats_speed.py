"""What made the bootstrap faster changes no interval: the grouped fractions a bootstrap recomputes 1,000 times
(every 2x2 benchmark's per-type metrics) are one matrix product now, and the resamples run torch on one thread;
both give the numbers the per-group loop on the default threads gave, exactly; and SugarCrepe counts its subsets
in one bincount, giving the numbers its per-subset masks gave."""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest
import torch

from backend.benchmarks import prepare, stats
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


@pytest.mark.parametrize("name", ["toy-sugarcrepe", "toy-bivlc", "toy-zeroshot-shape", "toy-hard-positives"])
def test_one_thread_gives_the_intervals_of_the_default_threads(name, monkeypatch):
    task = prepare(name, 8)
    n, k, i = len(task.image_index), task.text_index.shape[1], task.image_index.shape[1]
    scores = torch.from_numpy(np.random.default_rng(2).normal(size=(n, k, i)).astype(np.float32))
    scores[::5, 0] = scores[::5, -1]  # ties, where a reduction's order could matter if anything did
    threads = torch.get_num_threads()
    torch.set_num_threads(max(2, threads))
    try:
        one_thread = bootstrap_intervals(task, scores, resamples=200)
        assert torch.get_num_threads() == max(2, threads)  # given back
        monkeypatch.setattr(stats, "single_threaded", contextlib.nullcontext)
        assert one_thread and one_thread == bootstrap_intervals(task, scores, resamples=200)
    finally:
        torch.set_num_threads(threads)


def sugarcrepe_by_masks(scores, subsets):
    """The per-subset masks and means `sugarcrepe_metrics` took before it counted with one bincount."""
    correct = scores[:, 0] > scores[:, 1]
    labels = np.asarray(subsets)
    per = {s: correct[torch.from_numpy(labels == s)].double() for s in dict.fromkeys(subsets)}
    accuracy = {s: c.mean().item() for s, c in per.items()}
    categories = {}
    for name in per:
        categories.setdefault(name.split("_", 1)[0], []).append(name)
    out = dict(accuracy)
    out.update({f"micro/{c}": torch.cat([per[n] for n in names]).mean().item() for c, names in categories.items()})
    out.update({f"macro/{c}": float(np.mean([accuracy[n] for n in names])) for c, names in categories.items()})
    out["overall"] = float(np.mean(list(accuracy.values())))
    out["micro"] = correct.double().mean().item()
    return out


def test_sugarcrepe_counts_equal_the_masks_to_the_last_bit():
    from backend.benchmarks.sugarcrepe import sugarcrepe_metrics

    rng = np.random.default_rng(3)
    kinds = ["replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att"]
    subsets = [kinds[k] for k in rng.integers(0, 7, size=1001)]
    scores = torch.from_numpy(rng.normal(size=(1001, 2)))
    scores[::9, 1] = scores[::9, 0]  # ties: wrong
    assert sugarcrepe_metrics(scores, subsets) == sugarcrepe_by_masks(scores, subsets)
