"""The text-only (blind) baseline as a leaderboard row: planted text scores through each benchmark's own rule
(ties included), which benchmarks it applies to, and the row a user sees after `evaluate --model blind:ngram`."""
import csv
import io
import json
from dataclasses import dataclass

import numpy as np
import pytest

from backend.benchmarks import prepare
from backend.benchmarks.blind import blind_scores, not_applicable, run_blind
from backend.benchmarks.job import EvaluateConfig, evaluate_models
from backend.benchmarks.order import order_metrics
from backend.benchmarks.results import leaderboard, results
from backend.benchmarks.sugarcrepe import sugarcrepe_metrics
from backend.benchmarks.task import LabelledMetric, first_caption_wins, grid_task, group_correct, original_not_beaten
from backend.core.store import Store
from backend.perturb.blind import NgramScorer, blind_accuracy

PIXELS = np.zeros((2, 2, 3), np.uint8)


@dataclass
class Planted:
    """A text scorer with planted numbers (what a language model's per-word log probability would be)."""

    table: dict
    name: str = "planted"

    def score(self, texts):
        return [self.table[text] for text in texts]


def test_the_blind_row_reads_planted_likelihoods_with_sugarcrepes_strict_rule():
    """Four replace_att items and two swap_obj items: right, wrong, and an exact tie (wrong)."""
    rows = [("replace_att", "a red car", "a blue car"), ("replace_att", "a tall man", "a short man"),
            ("replace_att", "a wet dog", "a dry dog"), ("replace_att", "an old hat", "a new hat"),
            ("swap_obj", "a cat on a mat", "a mat on a cat"), ("swap_obj", "a cup by a pot", "a pot by a cup")]
    table = {"a red car": -2.0, "a blue car": -2.5,      # caption more likely: right
             "a tall man": -3.0, "a short man": -2.0,    # wrong
             "a wet dog": -4.0, "a dry dog": -4.0,       # tie: wrong (strict)
             "an old hat": -1.0, "a new hat": -1.5,      # right
             "a cat on a mat": -2.0, "a mat on a cat": -3.0,
             "a cup by a pot": -3.0, "a pot by a cup": -3.0}
    subsets = [subset for subset, _, _ in rows]
    task = grid_task([[PIXELS]] * len(rows), [[pos, neg] for _, pos, neg in rows],
                     LabelledMetric(lambda s, labels: sugarcrepe_metrics(s[:, :, 0], labels), subsets),
                     subtypes=subsets, correct=first_caption_wins)
    result = run_blind(task, Planted(table), intervals=True)
    assert result.metrics["replace_att"] == 2 / 4 and result.metrics["swap_obj"] == 1 / 2
    assert result.metrics["micro"] == 3 / 6 and result.metrics["overall"] == (2 / 4 + 1 / 2) / 2
    assert result.correct.tolist() == [True, False, False, True, True, False]
    assert set(result.intervals) == set(result.metrics)


def test_aro_order_gives_a_tie_to_the_original_for_the_blind_model_too():
    captions = [["the dog on the sofa", "sofa the on dog the", "the sofa on the dog", "dog the sofa on the",
                 "on the dog the sofa"],
                ["a man with a hat", "hat a with man a", "a hat with a man", "man a hat a with", "with a man a hat"]]
    table = {text: -5.0 for row in captions for text in row}
    table["the dog on the sofa"] = -2.0                  # the original wins
    table["a man with a hat"] = table["a hat with a man"] = -2.0  # a perturbation ties the original: right (ARO)
    task = grid_task([[PIXELS]] * 2, captions, LabelledMetric(order_metrics, [0, 0]), correct=original_not_beaten)
    assert run_blind(task, Planted(table)).metrics["accuracy"] == 1.0
    table["a hat with a man"] = -1.0
    assert run_blind(task, Planted(table)).metrics["accuracy"] == 0.5


def test_a_text_scorer_cannot_choose_between_images():
    two_by_two = grid_task([[PIXELS, PIXELS + 1]], [["a b", "b a"]], lambda s: {}, correct=group_correct)
    assert "choose between images" in not_applicable(two_by_two)
    with pytest.raises(ValueError, match="cannot take this benchmark"):
        run_blind(two_by_two, Planted({"a b": 0.0, "b a": 1.0}))
    assert "gallery" in not_applicable(prepare("toy-retrieval", 4))
    assert not_applicable(prepare("toy-sugarcrepe", 4)) is None


def test_blind_scores_use_each_distinct_text_once():
    calls = []

    class Counting(Planted):
        def score(self, texts):
            calls.append(list(texts))
            return super().score(texts)

    task = grid_task([[PIXELS]] * 3, [["x", "y"], ["x", "z"], ["y", "x"]], lambda s: {})
    scores = blind_scores(task, Counting({"x": 1.0, "y": 2.0, "z": 3.0}))
    assert calls == [["x", "y", "z"]]
    assert scores[:, :, 0].tolist() == [[1.0, 2.0], [1.0, 3.0], [2.0, 1.0]]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("blind") / "lab.db")
    config = EvaluateConfig(models=["blind:ngram", "toyworld"], benchmarks=["toy-sugarcrepe", "toy-bivlc"],
                            limit=15, device="cpu", workers=0).validate()
    return store, evaluate_models(config, store)


def test_the_blind_row_in_the_leaderboard_equals_the_shipped_scorers_own_accuracy(evaluated):
    store, summaries = evaluated
    blind = [s for s in summaries if s["model"] == "blind:ngram"]
    assert [s["benchmark"] for s in blind] == ["toy-sugarcrepe"]  # toy-bivlc: items choose between images
    assert any("skipped toy-bivlc" in note for note in blind[0]["notes"])
    task = prepare("toy-sugarcrepe", 15)
    pairs = [(task.texts[i], task.texts[j]) for i, j in task.text_index.tolist()]
    assert blind[0]["metrics"]["micro"] == pytest.approx(blind_accuracy(NgramScorer(), pairs))
    row = next(r for r in leaderboard(store).rows if r["model"].startswith("blind:ngram"))
    assert row["source"] == "text-only baseline, evaluated here"
    assert row["model"] == "blind:ngram (text only, fp32) [first 15 items]"
    assert row["toy-sugarcrepe/overall"] == blind[0]["metrics"]["overall"]
    assert set(row["intervals"]) == {f"toy-sugarcrepe/{k}" for k in blind[0]["metrics"]}
    stored = next(r for r in results(store, ["toy-sugarcrepe"]) if r["model"] == "blind:ngram")
    assert stored["activation"] == "text only" and stored["n_items"] == task.n_items


def test_the_cli_evaluates_the_blind_model(tmp_path, capsys, monkeypatch):
    from backend.cli import main

    monkeypatch.setenv("COMPLAB_WORKSPACE", str(tmp_path / "ws"))
    assert main(["evaluate", "--model", "blind:ngram", "--benchmarks", "toy-sugarcrepe", "--limit", "5",
                 "--json"]) == 0
    output = json.loads(capsys.readouterr().out)["results"][0]
    assert output["model"] == "blind:ngram" and output["activation"] == "text only"
    assert main(["leaderboard"]) == 0
    rows = {row["model"]: row for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    row = rows["blind:ngram (text only, fp32) [first 5 items]"]
    assert row["source"] == "text-only baseline, evaluated here"
    assert row["toy-sugarcrepe/micro"] == f"{100 * output['metrics']['micro']:.2f}"
