"""Intervals and paired tests (backend.benchmarks.stats) on hand-made score matrices, ties included, and their
way into the store, the leaderboard, its CSV and the CLI."""
import csv
import io
import json
import math

import numpy as np
import pytest
import torch

from backend.benchmarks import stats
from backend.benchmarks.job import EvaluateConfig, evaluate_models
from backend.benchmarks.mmvp import mmvp_metrics, pair_correct
from backend.benchmarks.order import order_metrics
from backend.benchmarks.results import leaderboard, paired_test, results
from backend.benchmarks.sugarcrepe import sugarcrepe_metrics
from backend.benchmarks.task import LabelledMetric, Task, first_caption_wins, grid_task, original_not_beaten
from backend.core.store import Store


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval, written out from its formula (the check for a plain proportion)."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def pairwise_scores(outcomes: list[str]) -> torch.Tensor:
    """(N, 2, 1) scores: "w" the caption wins, "l" it loses, "t" an exact tie (wrong under the strict rule)."""
    values = {"w": (0.31, 0.29), "l": (0.27, 0.30), "t": (0.28, 0.28)}
    return torch.tensor([values[o] for o in outcomes], dtype=torch.float32)[:, :, None]


def sugarcrepe_like(outcomes: dict[str, str]) -> tuple[Task, torch.Tensor]:
    """A task over hand-made scores: subset -> a string of outcomes, one letter per item."""
    subsets = [subset for subset, letters in outcomes.items() for _ in letters]
    scores = pairwise_scores([letter for letters in outcomes.values() for letter in letters])
    task = Task([], [], LabelledMetric(lambda s, labels: sugarcrepe_metrics(s[:, :, 0], labels), subsets),
                items=grid_task([[np.zeros((2, 2, 3), np.uint8)]] * len(subsets), [["a", "b"]] * len(subsets),
                                lambda s: {}, subtypes=subsets, correct=first_caption_wins).items)
    return task, scores


# -- McNemar, exact ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("only_a", "only_b", "expected"), [
    (0, 0, 1.0),                       # nothing discordant: no evidence
    (5, 0, 2 / 32),                    # 2 * P[X <= 0], X ~ Bin(5, 1/2)
    (1, 4, 2 * (1 + 5) / 32),          # 2 * (C(5,0) + C(5,1)) / 2^5 = 0.375
    (3, 3, 1.0),                       # 2 * 42/64 > 1: capped
    (10, 0, 2 / 1024),
    (2, 9, 2 * (1 + 11 + 55) / 2048),  # 0.0654296875
])
def test_mcnemar_exact_hand_computed(only_a, only_b, expected):
    assert stats.mcnemar_exact(only_a, only_b) == pytest.approx(expected, rel=1e-12)
    assert stats.mcnemar_exact(only_b, only_a) == pytest.approx(expected, rel=1e-12)  # symmetric


def test_mcnemar_matches_scipys_binomial_test():
    binomtest = pytest.importorskip("scipy.stats").binomtest
    for only_a, only_b in [(7, 19), (40, 61), (0, 3), (12, 12), (1, 30)]:
        reference = binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue
        assert stats.mcnemar_exact(only_a, only_b) == pytest.approx(reference, rel=1e-9)


def test_paired_test_counts_discordant_items_and_bounds_the_difference():
    a = [1, 1, 1, 0, 0, 1, 1, 1]
    b = [1, 0, 0, 0, 1, 1, 1, 1]
    test = stats.paired_test(a, b)
    assert (test.n, test.only_a, test.only_b) == (8, 2, 1)
    assert (test.accuracy_a, test.accuracy_b, test.difference) == (6 / 8, 5 / 8, 1 / 8)
    assert test.p_value == pytest.approx(1.0)  # 2 * (1 + 3) / 8, capped
    low, high = test.interval
    assert low < 0 < test.difference < high  # p = 1: the interval of the difference includes 0
    assert "2 only A right, 1 only B right" in test.line() and "p = 1" in test.line()


def test_paired_test_of_identical_flags_is_zero_and_p_one():
    test = stats.paired_test([1, 0, 1, 1], [1, 0, 1, 1])
    assert test.interval == (0.0, 0.0) and test.p_value == 1.0 and test.difference == 0.0


def test_paired_test_refuses_lists_of_different_length():
    with pytest.raises(ValueError, match="equally long"):
        stats.paired_test([1, 0], [1])


# -- the bootstrap -----------------------------------------------------------------------------------------

def test_a_resample_keeps_every_positions_stratum_and_draws_whole_units():
    rng = np.random.default_rng(1)
    strata = ["seed=0"] * 4 + ["seed=1"] * 4  # ARO-Order's layout: seed-major, caption c at c and 4 + c
    units = [f"caption{c}" for c in range(4)] * 2
    for _ in range(50):
        rows = stats.resample_rows(strata, units, rng)
        assert [strata[r] for r in rows] == strata
        for c in range(4):  # a caption's two seeds come from one drawn caption
            assert units[rows[c]] == units[rows[4 + c]]


def test_a_stratified_resample_never_mixes_subsets():
    rng = np.random.default_rng(0)
    strata = ["add_att"] * 3 + ["swap_obj"] * 5
    for _ in range(50):
        rows = stats.resample_rows(strata, [str(p) for p in range(8)], rng)
        assert set(rows[:3]) <= {0, 1, 2} and set(rows[3:]) <= {3, 4, 5, 6, 7}


def test_a_subset_all_right_or_all_tied_has_a_point_interval():
    task, scores = sugarcrepe_like({"add_att": "wwwwwwww", "swap_obj": "tttttt", "replace_rel": "wlwtwlww"})
    intervals = stats.bootstrap_intervals(task, scores, resamples=300)
    assert intervals["add_att"] == (1.0, 1.0)
    assert intervals["swap_obj"] == (0.0, 0.0)  # exact ties are wrong, in every resample too
    low, high = intervals["replace_rel"]
    assert 0.0 <= low < 5 / 8 < high <= 1.0
    point = sugarcrepe_metrics(scores[:, :, 0], task.items.subtypes)
    assert set(intervals) == set(point)
    for key, (low, high) in intervals.items():
        assert low <= point[key] + 1e-12 and point[key] - 1e-12 <= high, key


def test_the_bootstrap_is_reproducible_and_its_seed_matters():
    task, scores = sugarcrepe_like({"replace_obj": "wlwtwlwwlwwtlwwl" * 3, "swap_att": "wlltwwlw" * 4})
    first = stats.bootstrap_intervals(task, scores, resamples=200)
    assert first == stats.bootstrap_intervals(task, scores, resamples=200)
    assert first != stats.bootstrap_intervals(task, scores, resamples=200, seed=1)


def test_a_pooled_accuracys_interval_agrees_with_wilson():
    """A plain proportion (one stratum): the percentile bootstrap and Wilson agree to about a point at n = 300."""
    outcomes = ("w" * 7 + "l" * 2 + "t") * 30  # 210 of 300 right
    task, scores = sugarcrepe_like({"replace_att": outcomes})
    low, high = stats.bootstrap_intervals(task, scores)["micro"]
    wilson_low, wilson_high = wilson(210, 300)
    assert abs(low - wilson_low) < 0.012 and abs(high - wilson_high) < 0.012


def test_labels_follow_the_resampled_items():
    """MMVP: each pair has its own owner layout; a resampled pair must be judged with its own owners."""
    owner = torch.tensor([[0, 1], [1, 0], [0, 1], [1, 0]])
    patterns = ["color", "color", "state", "state"]
    # pair 0 right, 1 right (owners swapped), 2 wrong, 3 a tie: statement 0 picks image 2 = its own, statement 1
    # ties and picks image 2, which is not its own (owner 0): wrong
    scores = torch.tensor([[[0.3, 0.1], [0.1, 0.3]], [[0.1, 0.3], [0.3, 0.1]],
                           [[0.1, 0.3], [0.1, 0.3]], [[0.1, 0.3], [0.2, 0.2]]])
    assert pair_correct(scores, owner).tolist() == [True, True, False, False]
    metric = LabelledMetric(mmvp_metrics, owner, patterns)
    rows = np.array([1, 1, 3, 2])  # colour: pair 1 twice; state: pairs 3 and 2
    assert metric.take(rows)(scores[torch.from_numpy(rows)]) == {"pair_acc": 0.5, "color/pair_acc": 1.0,
                                                                "state/pair_acc": 0.0}
    rows = np.array([0, 1, 2, 3])
    assert metric.take(rows)(scores) == metric(scores)


def test_aro_order_resamples_captions_with_all_their_seeds():
    """Two seeds x three captions; caption 2 ties its best perturbation under seed 1 (a tie goes to the original)."""
    seeds = [0, 0, 0, 1, 1, 1]
    original = [0.3, 0.1, 0.3, 0.3, 0.1, 0.2]
    best_perturbation = [0.2, 0.2, 0.4, 0.2, 0.2, 0.2]
    scores = torch.tensor([[o, p, p, p, p] for o, p in zip(original, best_perturbation)])[:, :, None]
    units = [f"c{c}" for c in range(3)] * 2
    task = grid_task([[np.zeros((2, 2, 3), np.uint8)]] * 6, [[str(n), "x", "y", "z", "v"] for n in range(6)],
                     LabelledMetric(order_metrics, seeds), subtypes=[f"seed={s}" for s in seeds], units=units,
                     correct=original_not_beaten)
    point = task.metrics(scores)
    assert point["seed=0/accuracy"] == pytest.approx(1 / 3) and point["seed=1/accuracy"] == pytest.approx(2 / 3)
    assert task.units == units
    intervals = stats.bootstrap_intervals(task, scores, resamples=400)
    assert set(intervals) == set(point)
    for key, (low, high) in intervals.items():
        assert 0.0 <= low <= point[key] + 1e-12 and point[key] - 1e-12 <= high, key
    # every draw takes whole captions, so both seeds of a drawn caption come along: the per-seed accuracies of
    # one draw are those of the same three captions (checked on the draws themselves)
    rng = np.random.default_rng(0)
    for _ in range(20):
        rows = stats.resample_rows(task.items.subtypes, units, rng)
        assert [units[r] for r in rows[:3]] == [units[r] for r in rows[3:]]


def test_a_plain_closure_gets_no_interval_rather_than_a_wrong_one():
    task, scores = sugarcrepe_like({"add_obj": "wwlt"})
    closure = Task([], [], lambda s: {"x": 1.0}, items=task.items)
    assert stats.bootstrap_intervals(closure, scores) == {}


# -- into the store, the leaderboard, the CSV and the CLI ---------------------------------------------------

@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, tiny_checkpoints):
    store = Store(tmp_path_factory.mktemp("stats") / "lab.db")
    config = EvaluateConfig(models=["toyworld", tiny_checkpoints.dir_spec], benchmarks=["toy-sugarcrepe"],
                            limit=20, device="cpu", workers=0).validate()
    return store, evaluate_models(config, store)


def test_every_stored_metric_has_its_interval(evaluated):
    store, summaries = evaluated
    for summary, stored in zip(summaries, reversed(results(store, ["toy-sugarcrepe"]))):
        assert set(summary["intervals"]) == set(summary["metrics"]) == set(stored["intervals"])
        for key, value in summary["metrics"].items():
            low, high = stored["intervals"][key]
            assert low <= value + 1e-12 and value - 1e-12 <= high, key
    board = leaderboard(store, ["toy-sugarcrepe"])
    row = board.rows[0]
    assert row["intervals"]["toy-sugarcrepe/overall"] == results(store, ["toy-sugarcrepe"])[-1]["intervals"]["overall"]
    table = {r["model"]: r for r in csv.DictReader(io.StringIO(board.to_csv()))}
    low, high = row["intervals"]["toy-sugarcrepe/overall"]
    assert table[row["model"]]["toy-sugarcrepe/overall 95% low"] == f"{100 * low:.2f}"
    assert table[row["model"]]["toy-sugarcrepe/overall 95% high"] == f"{100 * high:.2f}"


def test_the_paired_test_of_two_stored_results(evaluated):
    store, summaries = evaluated
    first, second = (s["result_id"] for s in summaries)
    test = paired_test(store, first, second)
    assert test.n == 20 * 7  # 20 items per type
    assert test.accuracy_a == pytest.approx(summaries[0]["metrics"]["micro"])
    assert test.accuracy_b == pytest.approx(summaries[1]["metrics"]["micro"])
    assert test.only_a - test.only_b == round(test.n * test.difference)
    assert test.p_value == stats.mcnemar_exact(test.only_a, test.only_b)


def test_the_cli_prints_intervals_and_paired_tests(tmp_path, tiny_checkpoints, capsys, monkeypatch):
    from backend.cli import main

    monkeypatch.setenv("COMPLAB_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    arguments = ["evaluate", "--model", "toyworld", tiny_checkpoints.dir_spec, "--benchmarks", "toy-sugarcrepe",
                 "--limit", "10", "--device", "cpu", "--workers", "0"]
    assert main(arguments) == 0
    table = capsys.readouterr().out
    overall = next(line for line in table.splitlines() if line.startswith("toy-sugarcrepe/overall\t"))
    assert overall.count("[") == 2 and "95% percentile bootstrap" in table
    assert "toy-sugarcrepe: A = toyworld" in table and "exact McNemar p = " in table
    assert main([*arguments, "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    summary = output["results"][0]
    assert set(summary["intervals"]) == set(summary["metrics"])
    test = output["paired_tests"][0]
    assert test["n"] == 70 and test["p_value"] == stats.mcnemar_exact(test["only_a"], test["only_b"])
    ids = [s["result_id"] for s in output["results"]]
    assert main(["compare", str(ids[0]), str(ids[1])]) == 0
    assert f"A = result {ids[0]}, B = result {ids[1]}: 70 items" in capsys.readouterr().out


def retrieval_task(owner: list[int]) -> Task:
    from backend import metrics as M
    from backend.benchmarks.task import QueryMetric

    positives = torch.tensor(owner)
    return Task([], [], QueryMetric(lambda s: M.recall_at_k(s, ks=(1,), positives=positives),
                                    lambda s: M.retrieval_hits(s, ks=(1,), positives=positives)))


def test_retrieval_intervals_redraw_an_image_with_its_captions_and_weigh_every_caption_once():
    """Image 0 has one caption, retrieved both ways; image 1 has three, all missed (image 2 outscores it) and
    misses its own (a tie with image 0's caption counts against);
    image 2 has none: it stays in the gallery and is never a query. A draw of two images gives t2i recall 1
    (0, 0), 1/4 (0 and 1: per caption, not per image) or 0 (1, 1), with chances 1/4, 1/2, 1/4."""
    owner = [0, 1, 1, 1]
    scores = torch.tensor([[0.9, 0.5, 0.5, 0.5],
                           [0.5, 0.5, 0.2, 0.2],
                           [0.0, 0.6, 0.6, 0.6]])
    task = retrieval_task(owner)
    assert task.metrics(scores) == {"i2t_R@1": 0.5, "t2i_R@1": 0.25}
    central = stats.bootstrap_intervals(task, scores, resamples=4000, level=0.4)
    assert central["t2i_R@1"] == (0.25, 0.25)
    assert central["i2t_R@1"] == (0.5, 0.5)
    wide = stats.bootstrap_intervals(task, scores, resamples=4000)
    assert wide == {"i2t_R@1": (0.0, 1.0), "t2i_R@1": (0.0, 1.0)}


def test_retrieval_intervals_are_points_when_every_query_agrees_and_cover_the_estimate_otherwise():
    perfect = torch.eye(4)
    assert stats.bootstrap_intervals(retrieval_task([0, 1, 2, 3]), perfect, resamples=200) == {
        "i2t_R@1": (1.0, 1.0), "t2i_R@1": (1.0, 1.0)}
    generator = torch.Generator().manual_seed(0)
    owner = [n // 2 for n in range(80)]
    scores = torch.rand(40, 80, generator=generator) + 0.8 * (torch.tensor(owner)[None, :] == torch.arange(40)[:, None])
    task = retrieval_task(owner)
    point, intervals = task.metrics(scores), stats.bootstrap_intervals(task, scores, resamples=500)
    for key, value in point.items():
        low, high = intervals[key]
        assert low <= value <= high and low < high
