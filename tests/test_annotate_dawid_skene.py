"""Dawid-Skene on hand-made answer sets whose answer is known, one EM step computed by hand, and parity with
crowd-kit's DawidSkene (the reference implementation, a test-only dependency)."""
from __future__ import annotations

import random

import pandas as pd
import pytest

from backend.annotate.dawid_skene import estimate

BINARY = ("x", "y")


def _crowd(truth: dict[int, str], behaviour: dict[str, str], rng: random.Random | None = None) -> list[tuple]:
    """Every annotator answers every item: "right", "wrong" (the other label) or "random"."""
    answers = []
    for item, label in truth.items():
        other = BINARY[label == "x"]
        for who, how in behaviour.items():
            answers.append((item, who, {"right": label, "wrong": other}.get(how) or (rng or random).choice(BINARY)))
    return answers


def test_one_em_step_by_hand():
    # Item 1: A and B say x. Item 2: A says x, B says y. Majority-vote start: T1 = (1, 0), T2 = (.5, .5), prior
    # (.75, .25). M-step: A always said x, so pi_A[c] = (1, 0) for both truths; B: pi_B[x] = (1, .5)/1.5 =
    # (2/3, 1/3), pi_B[y] = (0, .5)/.5 = (0, 1). E-step: item 1: x .75*1*2/3 = .5, y .25*1*0 = 0 -> (1, 0);
    # item 2: x .75*1*1/3 = .25, y .25*1*1 = .25 -> (.5, .5): a tie, so no decision.
    est = estimate([(1, "A", "x"), (1, "B", "x"), (2, "A", "x"), (2, "B", "y")], BINARY, max_iter=1)
    assert est.posterior[1]["x"] == pytest.approx(1.0)
    assert est.posterior[2] == pytest.approx({"x": 0.5, "y": 0.5})
    assert est.decision(1) == "x" and est.decision(2) is None
    assert est.entropy(2) == pytest.approx(1.0)
    assert est.prior == pytest.approx({"x": 0.75, "y": 0.25})
    assert est.confusion["B"][0] == pytest.approx([2 / 3, 1 / 3])
    # competence = sum_c p_c pi[c, c]: A .75*1 + .25*0; B .75*2/3 + .25*1
    assert est.competence["A"] == pytest.approx(0.75, abs=1e-6)
    assert est.competence["B"] == pytest.approx(0.75)
    again = estimate([(1, "A", "x"), (1, "B", "x"), (2, "A", "x"), (2, "B", "y")], BINARY)
    assert again.converged and again.iterations == 1 and again.decision(2) is None  # the start is a fixed point


def test_an_always_wrong_annotator_gets_low_competence_and_flips_nothing():
    truth = {item: BINARY[item % 3 == 0] for item in range(30)}
    est = estimate(_crowd(truth, {"a": "right", "b": "right", "c": "right", "bad": "wrong"}), BINARY, smoothing=0.5)
    assert est.competence["bad"] < 0.05
    assert all(est.competence[who] > 0.95 for who in "abc")
    assert all(est.decision(item) == label for item, label in truth.items())


def test_a_random_annotator_sits_near_chance():
    rng = random.Random(7)
    truth = {item: rng.choice(BINARY) for item in range(300)}
    est = estimate(_crowd(truth, {"a": "right", "b": "right", "coin": "random"}, rng), BINARY, smoothing=0.5)
    assert 0.4 < est.competence["coin"] < 0.6
    assert est.competence["a"] > 0.95
    assert all(est.decision(item) == label for item, label in truth.items())


def test_gold_anchors_beat_a_colluding_majority():
    truth = {item: BINARY[item % 2] for item in range(40)}
    answers = _crowd(truth, {"honest": "right", "liar1": "wrong", "liar2": "wrong"})
    plain = estimate(answers, BINARY)
    assert sum(plain.decision(item) == label for item, label in truth.items()) == 0  # the majority lies
    anchored = estimate(answers, BINARY, {item: [truth[item]] for item in range(10)})
    assert all(anchored.decision(item) == label for item, label in truth.items())
    assert anchored.competence["honest"] > 0.95 and anchored.competence["liar1"] < 0.05


def test_a_two_way_tie_has_no_decision_and_a_set_anchor_spreads():
    est = estimate([(1, "a", "x"), (1, "b", "y")], BINARY)
    assert est.decision(1) is None and est.posterior[1]["x"] == pytest.approx(0.5)
    spread = estimate([(1, "a", "x")], BINARY, {1: ["x", "y"]})
    assert spread.posterior[1] == pytest.approx({"x": 0.5, "y": 0.5})


def test_unknown_labels_are_refused_and_nothing_is_fine():
    with pytest.raises(ValueError, match="outside"):
        estimate([(1, "a", "maybe")], BINARY)
    empty = estimate([], BINARY)
    assert empty.posterior == {} and empty.competence == {} and empty.converged


STEPS = 30  # crowd-kit's pandas EM takes ~0.1 s an iteration here: 318 to converge cost 34 s on a loaded machine


def test_matches_crowd_kit():
    """The same EM, step for step: run for the same number of iterations (no tolerance), both give the same
    posteriors and confusion matrices, so they also share every fixed point. crowd-kit is imported here, not at
    the top: it costs every test process about 1.7 s of CPU at collection, and only this test needs it."""
    from crowdkit.aggregation import DawidSkene

    rng = random.Random(0)
    labels = ("a", "b", "c")
    truth = {item: rng.choice(labels) for item in range(80)}
    accuracy = {"w1": 0.9, "w2": 0.8, "w3": 0.6, "w4": 0.4, "w5": 0.95}
    answers = []
    for item, label in truth.items():
        for who in rng.sample(sorted(accuracy), 3):
            wrong = rng.choice([other for other in labels if other != label])
            answers.append((item, who, label if rng.random() < accuracy[who] else wrong))
    frame = pd.DataFrame(answers, columns=["task", "worker", "label"])
    ours = estimate(answers, labels, tol=0, max_iter=STEPS)
    theirs = DawidSkene(n_iter=STEPS, tol=0).fit(frame)
    for item in truth:
        for label in labels:
            assert ours.posterior[item][label] == pytest.approx(theirs.probas_.loc[item, label], abs=1e-9)
    for who in accuracy:
        for c, truth_label in enumerate(labels):
            for k, answer in enumerate(labels):
                assert ours.confusion[who][c][k] == pytest.approx(theirs.errors_.loc[(who, answer), truth_label],
                                                                  abs=1e-9)
    gold = {item: [truth[item]] for item in range(20)}
    anchored = estimate(answers, labels, gold, tol=0, max_iter=STEPS)
    reference = DawidSkene(n_iter=STEPS, tol=0).fit(frame, true_labels=pd.Series({i: truth[i] for i in range(20)}))
    assert all(anchored.posterior[item][label] == pytest.approx(reference.probas_.loc[item, label], abs=1e-9)
               for item in truth for label in labels)
