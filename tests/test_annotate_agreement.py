"""Agreement, resolution and gold quality on hand-made answers; every expected
number is worked out by hand in the comments, never by the formula under test."""

import pytest

from backend.annotate.agreement import (
    AnnotatorQuality,
    Answer,
    PairKappa,
    Resolution,
    chosen_image,
    cohen_kappa,
    flagged,
    gold_accuracy,
    krippendorff_alpha,
    pairwise_kappa,
    picked_or_none,
    resolve,
    wilson_interval,
)

# Two annotators, ten select-stage items (image slot or none).
ANN_A = ["1", "2", "3", "none", "1", "2", "none", "4", "3", "1"]
ANN_B = ["1", "3", "3", "none", "2", "2", "1", "4", "none", "1"]


def select_answers(*columns: tuple[str, list[str]]) -> list[Answer]:
    return [Answer(item, name, "select", choice)
            for name, choices in columns for item, choice in enumerate(choices, start=1)]


def test_kappa_two_raters_ten_items_both_views():
    # picked_or_none: A = I I I N I I N I I I (8 I, 2 N), B = I I I N I I I I N I (8 I, 2 N)
    # disagreements on items 7 (N vs I) and 9 (I vs N): p_o = 8/10
    # p_e = 0.8 * 0.8 + 0.2 * 0.2 = 0.68;  kappa = (0.8 - 0.68) / (1 - 0.68) = 0.12 / 0.32 = 0.375
    picked = [(picked_or_none(a), picked_or_none(b)) for a, b in zip(ANN_A, ANN_B)]
    assert cohen_kappa(picked) == pytest.approx(0.375)
    # chosen image: equal on items 1, 3, 4, 6, 8, 10: p_o = 6/10
    # A counts: 1:3  2:2  3:2  4:1  none:2;  B counts: 1:3  2:2  3:2  4:1  none:2
    # p_e = (3*3 + 2*2 + 2*2 + 1*1 + 2*2) / 100 = 22/100
    # kappa = (0.60 - 0.22) / (1 - 0.22) = 0.38 / 0.78 = 19/39
    assert cohen_kappa(list(zip(ANN_A, ANN_B))) == pytest.approx(19 / 39)


def test_picked_vs_none_kappa_differs_from_chosen_image_kappa():
    # Both annotators pick an image on items 1 and 2 but never the same one.
    answers = select_answers(("ann", ["1", "2", "none"]), ("bob", ["2", "1", "none"]))
    [picked] = pairwise_kappa(answers, "select", picked_or_none)
    [chosen] = pairwise_kappa(answers, "select", chosen_image)
    # picked view: (I,I) (I,I) (N,N): p_o = 1, p_e = (2/3)^2 + (1/3)^2 = 5/9 -> kappa 1
    assert picked == PairKappa("ann", "bob", 3, pytest.approx(1.0))
    # chosen view: only item 3 agrees: p_o = 1/3; p_e = (1*1 + 1*1 + 1*1) / 9 = 1/3 -> kappa 0
    assert chosen == PairKappa("ann", "bob", 3, pytest.approx(0.0))


def test_kappa_hand_example_on_two_labels():
    # p_o = 4/5, p_e = 3/5*2/5 + 2/5*3/5 = 12/25 -> (20/25 - 12/25) / (13/25) = 8/13
    assert cohen_kappa(list(zip("yynny", "ynnny"))) == pytest.approx(8 / 13)


def test_kappa_degenerate_cases():
    assert cohen_kappa([]) is None
    # one label for everything from both: p_e = 1, 0/0, reported as 1.0 (documented convention)
    assert cohen_kappa([("none", "none")] * 4) == 1.0
    # constant but different labels: p_o = 0, p_e = 0 -> 0.0, not the degenerate branch
    assert cohen_kappa([("image", "none")] * 3) == pytest.approx(0.0)
    # systematic swap on two balanced labels: p_o = 0, p_e = 1/2 -> -1
    assert cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)


def test_pairwise_kappa_uses_shared_items_stage_and_last_answer():
    answers = select_answers(("ann", ANN_A), ("bob", ANN_B))
    answers += [
        Answer(1, "cat", "select", "none"),
        Answer(2, "cat", "select", "1"),
        Answer(2, "cat", "select", "2"),  # a correction: the later answer counts
        Answer(1, "dan", "ambiguity", "both"),  # other stage: ignored
        Answer(99, "eve", "select", "1"),  # shares no item with anyone: no pair
    ]
    pairs = pairwise_kappa(answers, "select", picked_or_none)
    assert [(p.annotator_a, p.annotator_b, p.n_items) for p in pairs] == [
        ("ann", "bob", 10), ("ann", "cat", 2), ("bob", "cat", 2)]
    assert pairs[0].kappa == pytest.approx(0.375)
    # ann-cat on items 1, 2: (I,N) (I,I): p_o = 1/2; ann all I, cat 1 I 1 N: p_e = 1 * 1/2 -> kappa 0
    assert pairs[1].kappa == pytest.approx(0.0)
    chosen = pairwise_kappa(answers, "select", chosen_image)
    # ann-cat chosen: (1,none) (2,2): p_o = 1/2; p_e per label (ann count x cat count) / 2^2:
    # "1": 1*0, "2": 1*1, "none": 0*1 -> 1/4; kappa = (1/2 - 1/4) / (3/4) = 1/3
    assert chosen[1].kappa == pytest.approx(1 / 3)
    assert pairwise_kappa(answers, "ambiguity", chosen_image) == []


def test_picked_or_none_rejects_other_stages_answers():
    assert [picked_or_none(c) for c in ("1", "4", "none")] == ["image", "image", "none"]
    with pytest.raises(ValueError, match="original"):
        picked_or_none("original")


def test_krippendorff_alpha_published_nominal_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers x 12 units,
    # None = missing.                 units 1..12
    observers = [
        ["1", "2", "3", "3", "2", "1", "4", "1", "2", None, None, None],  # A
        ["1", "2", "3", "3", "2", "2", "4", "1", "2", "5", None, "3"],   # B
        [None, "3", "3", "3", "2", "3", "4", "2", "2", "5", "1", None],  # C
        ["1", "2", "3", "3", "2", "4", "4", "1", "2", "5", "1", None],   # D
    ]
    units = {u: [row[u] for row in observers if row[u] is not None] for u in range(12)}
    # Unit 12 has one value: not pairable. Pairable values n = 40 with n_1 = 9, n_2 = 13,
    # n_3 = 10, n_4 = 5, n_5 = 3.  sum_{c != k} n_c n_k = 40^2 - (81 + 169 + 100 + 25 + 9) = 1216.
    # Disagreeing ordered pairs per unit, / (m_u - 1): unit 2 (2,2,3,2): (16 - 9 - 1)/3 = 2;
    # unit 6 (1,2,3,4): (16 - 4)/3 = 4; unit 8 (1,1,2,1): (16 - 9 - 1)/3 = 2; others 0 -> 8.
    # alpha = 1 - (40 - 1) * 8 / 1216 = 1 - 312/1216 = 0.74342  (paper: 0.743)
    alpha = krippendorff_alpha(units)
    assert alpha == pytest.approx(1 - 312 / 1216)
    assert round(alpha, 3) == 0.743


def test_krippendorff_alpha_small_cases():
    assert krippendorff_alpha({1: ["a", "a"], 2: ["b", "b", "b"], 3: ["a"]}) == pytest.approx(1.0)
    # two units, two coders, total disagreement on two labels:
    # n = 4, n_a = n_b = 2; disagreeing ordered pairs per unit (m = 2): (2^2 - 1 - 1)/1 = 2 -> 4
    # sum n_c n_k (c != k) = 16 - 8 = 8; alpha = 1 - 3 * 4 / 8 = -0.5
    assert krippendorff_alpha({1: ["a", "b"], 2: ["b", "a"]}) == pytest.approx(-0.5)
    # one unit agreeing (a,a), one disagreeing (a,b): n = 4, n_a = 3, n_b = 1
    # disagreeing = 0 + (4 - 2)/1 = 2; expected = 16 - 10 = 6; alpha = 1 - 3 * 2 / 6 = 0
    assert krippendorff_alpha({1: ["a", "a"], 2: ["a", "b"]}) == pytest.approx(0.0)


def test_krippendorff_alpha_degenerate_cases():
    assert krippendorff_alpha({}) is None
    assert krippendorff_alpha({1: ["a"], 2: ["b"]}) is None  # nothing pairable
    # every pairable value identical: D_e = 0 (and D_o = 0), reported as 1.0
    assert krippendorff_alpha({1: ["none", "none"], 2: ["none", "none", "none"], 3: ["1"]}) == 1.0


def test_resolve_majority():
    assert resolve(["2", "2", "none"], "majority", 3) == Resolution("2", False, {"2": 2, "none": 1},
                                                                    "majority: 2 of 3 answers")
    tie = resolve(["1", "none"], "majority", 2)
    assert (tie.decision, tie.needs_more, tie.votes) == (None, False, {"1": 1, "none": 1})
    assert "no majority" in tie.reason
    # 2 of 4 is not more than half
    assert resolve(["1", "1", "2", "none"], "majority", 4).decision is None
    pending = resolve(["1"], "majority", 2)
    assert (pending.decision, pending.needs_more, pending.reason) == (None, True, "1 of 2 answers so far")


def test_resolve_third_calls_another_annotator_on_a_tie():
    tie = resolve(["1", "none"], "third", 2)
    assert (tie.decision, tie.needs_more) == (None, True)
    assert "one more answer" in tie.reason
    assert resolve(["1", "none", "1"], "third", 2).decision == "1"
    # 1-1-1 after three answers (cap overlap + 2 = 4): a 4th answer gives at most 2 of 4 -> stop
    assert resolve(["1", "none", "2"], "third", 2) == Resolution(
        None, False, {"1": 1, "none": 1, "2": 1}, "no majority in 3 answers")
    # overlap 3, cap 5: 1-1-1 can still become 3 of 5 -> ask; 2-1-1 after four -> ask the fifth
    assert resolve(["1", "2", "none"], "third", 3).needs_more
    assert resolve(["1", "2", "none", "1"], "third", 3).needs_more
    assert resolve(["1", "2", "none", "1", "1"], "third", 3).decision == "1"
    assert not resolve(["1", "2", "none", "2", "1"], "third", 3).needs_more  # cap reached
    for stage_choice in (["original", "both"], ["negative", "original"]):
        assert resolve(stage_choice, "third", 2).needs_more


def test_resolve_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rule"):
        resolve(["1"], "plurality", 1)
    with pytest.raises(ValueError, match="overlap"):
        resolve(["1"], "majority", 0)


def test_gold_accuracy_and_flagging():
    answers = [("ann", True)] * 9 + [("ann", False)] + [("bob", True), ("bob", False), ("bob", False)]
    quality = gold_accuracy(answers)
    assert quality == {"ann": AnnotatorQuality(10, 9, 0.9), "bob": AnnotatorQuality(3, 1, pytest.approx(1 / 3))}
    assert not flagged(quality["ann"], threshold=0.8, min_gold=5)
    assert not flagged(quality["bob"], threshold=0.8, min_gold=5)  # only 3 gold items: not judged yet
    assert flagged(quality["bob"], threshold=0.8, min_gold=3)
    assert not flagged(AnnotatorQuality(5, 4, 0.8), threshold=0.8, min_gold=5)  # at threshold is fine


def test_wilson_interval_hand_values():
    # 8/10, z = 1.96: centre = (0.8 + 3.8415/20) / (1 + 3.8415/10) = 0.99207 / 1.38415 = 0.71674
    # half = 1.96 * sqrt(0.016 + 3.8415/400) / 1.38415 = 1.96 * 0.16001 / 1.38415 = 0.22658
    low, high = wilson_interval(8, 10)
    assert (low, high) == (pytest.approx(0.4902, abs=1e-4), pytest.approx(0.9433, abs=1e-4))
    # 5/5: centre = 1.38415 / 1.76830 = 0.78276, half = 1.96 * 0.19600 / 1.76830 = 0.21725
    low, high = wilson_interval(5, 5)
    assert low == pytest.approx(0.5655, abs=1e-4) and high == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert AnnotatorQuality(10, 8, 0.8).interval == wilson_interval(8, 10)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
