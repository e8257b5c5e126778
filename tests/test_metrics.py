"""Metrics on hand-made scores; every expected value is worked out by hand or
by an explicit loop written here, never by the formula under test."""

import math

import numpy as np
import pytest
import torch

from backend.metrics import (
    DEFAULT_SYMMETRIC_RELATIONS,
    aro_attribution_accuracy,
    aro_order_correct,
    aro_relation_accuracy,
    caption_probe_metrics,
    group_accuracy,
    group_scores,
    hard_positive_metrics,
    mean_std,
    pairwise_correct,
    recall_at_k,
    sugarcrepe_summary,
)


def test_pairwise_correct_tie_and_nan_are_wrong():
    pos = [0.9, 0.5, 0.2, float("nan"), 0.4]
    neg = [0.1, 0.5, 0.3, 0.1, float("nan")]
    assert pairwise_correct(pos, neg).tolist() == [True, False, False, False, False]
    half = torch.tensor([0.25, 0.25], dtype=torch.float16)
    assert pairwise_correct(half, half.clone()).tolist() == [False, False]
    assert pairwise_correct(np.array([2.0]), np.array([1.0])).dtype == torch.bool


def test_sugarcrepe_micro_macro_overall():
    subsets = {
        "replace_obj": [1, 1, 1, 0],  # 3/4
        "replace_att": [1, 0],  # 1/2
        "replace_rel": [0, 0, 0, 0, 0, 0, 0, 1],  # 1/8
        "swap_obj": [1, 0, 0, 0],  # 1/4
        "swap_att": [1, 1],  # 1
        "add_obj": [1],  # 1
        "add_att": [0, 1, 1],  # 2/3
    }
    out = sugarcrepe_summary({k: torch.tensor(v, dtype=torch.bool) for k, v in subsets.items()})
    assert out["subsets"]["replace_rel"] == pytest.approx(1 / 8)
    # micro pools the items: replace 3+1+1 of 4+2+8, swap 1+2 of 4+2, add 1+2 of 1+3
    assert out["micro"] == pytest.approx({"replace": 5 / 14, "swap": 3 / 6, "add": 3 / 4})
    assert out["macro"] == pytest.approx(
        {"replace": (3 / 4 + 1 / 2 + 1 / 8) / 3, "swap": (1 / 4 + 1) / 2, "add": (1 + 2 / 3) / 2})
    assert out["overall"] == pytest.approx((3 / 4 + 1 / 2 + 1 / 8 + 1 / 4 + 1 + 1 + 2 / 3) / 7)


def test_sugarcrepe_rejects_unknown_and_empty_subsets():
    with pytest.raises(ValueError):
        sugarcrepe_summary({"shuffle_obj": [True]})
    with pytest.raises(ValueError):
        sugarcrepe_summary({"add_obj": []})


def test_default_symmetric_list_is_aros_filter():
    assert len(DEFAULT_SYMMETRIC_RELATIONS) == 157  # ARO's list, no duplicates
    for rel in ("near", "next to", "beside", "by", "with", "of", "around", "on the side of",
                "adjusting", "wrapped in", "close to"):
        assert rel in DEFAULT_SYMMETRIC_RELATIONS
    for rel in ("on", "above", "below", "holding", "wearing", "left of", "behind", "in front of"):
        assert rel not in DEFAULT_SYMMETRIC_RELATIONS


def test_aro_relation_macro_drops_symmetric_and_counts_ties_wrong():
    relations = ["on", "on", "on", "above", "near", "near", "next to"]
    pos = [0.9, 0.5, 0.1, 0.7, 0.1, 0.1, 0.1]
    neg = [0.2, 0.5, 0.4, 0.3, 0.9, 0.9, 0.9]
    correct = pairwise_correct(pos, neg)  # on: 1/3 (the tie is wrong), above: 1/1
    assert aro_relation_accuracy(correct, relations) == pytest.approx((1 / 3 + 1) / 2)
    # without the filter the two always-wrong relations count
    assert aro_relation_accuracy(correct, relations, symmetric=()) == pytest.approx((1 / 3 + 1 + 0 + 0) / 4)
    with pytest.raises(ValueError):
        aro_relation_accuracy(correct[4:], relations[4:])


def test_aro_attribution_skips_small_groups():
    pairs, correct = [], []
    pairs += ["white_black"] * 25
    correct += [True] * 10 + [False] * 15  # 10/25
    pairs += ["red_blue"] * 30
    correct += [True] * 27 + [False] * 3  # 27/30
    pairs += ["big_small"] * 24
    correct += [False] * 24  # too small: skipped
    assert aro_attribution_accuracy(torch.tensor(correct), pairs) == pytest.approx((10 / 25 + 27 / 30) / 2)
    assert aro_attribution_accuracy(torch.tensor(correct), pairs, min_items=1) == pytest.approx(
        (10 / 25 + 27 / 30 + 0) / 3)
    with pytest.raises(ValueError):
        aro_attribution_accuracy(torch.tensor(correct), pairs, min_items=31)


def test_group_accuracy_counts():
    out = group_accuracy([True, False, True, True], ["a", "b", "a", "b"])
    assert out == {"a": (1.0, 2), "b": (0.5, 2)}


def test_aro_order_tie_goes_to_original():
    scores = torch.tensor([
        [0.9, 0.1, 0.2, 0.3, 0.4],  # original best
        [0.5, 0.5, 0.1, 0.1, 0.1],  # tie with a perturbation: original wins
        [0.5, 0.1, 0.6, 0.6, 0.1],  # two perturbations tied above the original
        [0.3, 0.3, 0.3, 0.3, 0.3],  # all tied: original wins
        [float("nan"), 0.1, 0.1, 0.1, 0.1],  # NaN original: wrong
        [0.9, 0.1, float("nan"), 0.1, 0.1],  # NaN perturbation: wrong
    ], dtype=torch.float16)
    assert aro_order_correct(scores).tolist() == [True, True, False, True, False, False]


def test_mean_std_sample_std():
    mean, std = mean_std([0.5, 0.7, 0.6])
    assert mean == pytest.approx(0.6)
    assert std == pytest.approx(math.sqrt((0.01 + 0.01 + 0.0) / 2))
    assert mean_std([0.42]) == (pytest.approx(0.42), 0.0)


def test_hard_positive_metrics_fraction_of_all_items():
    #   s(c), s(c_n), s(c_p), original, augmented, brittle (worked out by hand)
    rows = [
        (0.9, 0.1, 0.8, True, True, False),
        (0.9, 0.5, 0.1, True, False, True),  # c > n > p
        (0.1, 0.5, 0.9, False, False, True),  # p > n > c
        (0.5, 0.5, 0.9, False, False, False),  # c ties n: not original, not brittle
        (0.9, 0.5, 0.5, True, False, False),  # p ties n: not augmented, not brittle
        (0.1, 0.9, 0.2, False, False, False),
        (0.9, 0.1, 0.9, True, True, False),  # c ties p: irrelevant
        (0.7, 0.2, float("nan"), True, False, False),
    ]
    c, n, p, orig, aug, brit = zip(*rows)
    out = hard_positive_metrics(torch.tensor(c), torch.tensor(n), torch.tensor(p))
    assert out == pytest.approx({
        "original_acc": sum(orig) / 8, "augmented_acc": sum(aug) / 8, "brittleness": sum(brit) / 8})
    assert out["original_acc"] == pytest.approx(5 / 8)


def test_caption_probe_over_all_positive_negative_pairs():
    out = caption_probe_metrics(0.5, [0.3, 0.5, 0.7], [0.6, 0.2, 0.9])
    # negatives beaten: only 0.3 (0.5 is a tie)
    assert out["accuracy"] == pytest.approx(1 / 3)
    # augmented pairs (p, n): (0.6, 0.3), (0.9, 0.3); brittle: (0.2, 0.3) c>n>p, (0.9, 0.7) p>n>c
    assert out["augmented_acc"] == pytest.approx(2 / 9)
    assert out["brittleness"] == pytest.approx(2 / 9)
    assert (out["n_negatives"], out["n_positives"]) == (3, 3)


def test_caption_probe_missing_variants_give_none():
    no_pos = caption_probe_metrics(0.5, [0.1, 0.9], [])
    assert no_pos["accuracy"] == pytest.approx(0.5)
    assert no_pos["augmented_acc"] is None and no_pos["brittleness"] is None
    no_neg = caption_probe_metrics(0.5, [], [0.4])
    assert no_neg["accuracy"] is None and no_neg["augmented_acc"] is None and no_neg["brittleness"] is None


def test_group_scores_table():
    s = torch.tensor([
        [[0.9, 0.2], [0.1, 0.8]],  # everything right
        [[0.5, 0.2], [0.5, 0.8]],  # s00 == s10: Ipos2T wrong
        [[0.9, 0.8], [0.1, 0.8]],  # s11 == s01: Ineg2T wrong
        [[0.9, 0.9], [0.1, 0.8]],  # s00 == s01 and s01 > s11: Tpos2I and Ineg2T wrong
        [[0.9, 0.2], [0.7, 0.7]],  # s11 == s10: Tneg2I wrong
        [[0.1, 0.9], [0.9, 0.1]],  # everything wrong
    ])
    want = {  # columns: items 0..5
        "Ipos2T": [1, 0, 1, 1, 1, 0],
        "Ineg2T": [1, 1, 0, 0, 1, 0],
        "Tpos2I": [1, 1, 1, 0, 1, 0],
        "Tneg2I": [1, 1, 1, 1, 0, 0],
        "I2T": [1, 0, 0, 0, 1, 0],
        "T2I": [1, 1, 1, 0, 0, 0],
        "Group": [1, 0, 0, 0, 0, 0],
    }
    out = group_scores(s)
    assert set(out) == set(want)
    for key, flags in want.items():
        assert out[key].tolist() == [bool(f) for f in flags], key
    with pytest.raises(ValueError):
        group_scores(torch.zeros(3, 2, 3))


def test_recall_several_captions_per_image_and_pessimistic_ties():
    # 3 images x 5 texts; texts 0,1 -> image 0, texts 2,3 -> image 1, text 4 -> image 2
    sim = torch.tensor([
        [0.50, 0.90, 0.90, 0.10, 0.20],
        [0.40, 0.30, 0.60, 0.60, 0.70],
        [0.50, 0.30, 0.20, 0.60, 0.80],
    ])
    out = recall_at_k(sim, ks=(1, 2, 3), positives=[0, 0, 1, 1, 2])
    # image->text: image 0 best right 0.90 ties wrong text 2 -> rank 2;
    # image 1 best right 0.60 (two right ones tie), wrong 0.70 above -> rank 2;
    # image 2 right 0.80 is the top -> rank 1
    assert out["i2t_R@1"] == pytest.approx(1 / 3)
    assert out["i2t_R@2"] == pytest.approx(1.0)
    # text->image ranks, by column: t0 right 0.50 tied by image 2 -> 2; t1 0.90 -> 1;
    # t2 0.60 below image 0's 0.90 -> 2; t3 0.60 tied by image 2 -> 2; t4 0.80 -> 1
    assert out["t2i_R@1"] == pytest.approx(2 / 5)
    assert out["t2i_R@2"] == pytest.approx(1.0)
    assert out["t2i_R@3"] == pytest.approx(1.0)


def test_recall_square_default_loop_reference():
    gen = torch.Generator().manual_seed(0)
    sim = torch.randint(0, 4, (6, 6), generator=gen).float()  # many ties
    out = recall_at_k(sim, ks=(1, 3))
    for k in (1, 3):
        hits_i2t = hits_t2i = 0
        for q in range(6):
            rank_i = 1 + sum(1 for j in range(6) if j != q and sim[q, j] >= sim[q, q])
            rank_t = 1 + sum(1 for i in range(6) if i != q and sim[i, q] >= sim[q, q])
            hits_i2t += rank_i <= k
            hits_t2i += rank_t <= k
        assert out[f"i2t_R@{k}"] == pytest.approx(hits_i2t / 6)
        assert out[f"t2i_R@{k}"] == pytest.approx(hits_t2i / 6)


def test_recall_nan_and_uncaptioned_image():
    sim = torch.tensor([
        [float("nan"), 0.1],
        [0.2, 0.9],
        [0.9, float("nan")],  # image 2 has no caption: only a text->image distractor
    ])
    out = recall_at_k(sim, ks=(1, 3), positives=[0, 1])
    assert out["i2t_R@1"] == pytest.approx(1 / 2)  # image 0's caption is NaN: never retrieved
    assert out["i2t_R@3"] == pytest.approx(1 / 2)
    # t0: right score NaN -> not retrieved; t1: 0.9 top (NaN distractor outranks nothing)
    assert out["t2i_R@1"] == pytest.approx(1 / 2)
