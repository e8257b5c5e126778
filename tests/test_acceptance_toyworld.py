"""Acceptance on the built-in world (slow: minutes of CPU training each).

Starting from the shipped model, the papers' effects must show up:
NegCLIP raises swap accuracy by >= 15 points over the starting model, CE-CLIP
reaches at least NegCLIP's level (it does not with the paper's weights: an
expected failure, with the evidence in docs/TOYWORLD.md; its ITC(hn) part alone
does), and hard positives lower brittleness against hard-negative-only training
at similar accuracy. Thresholds leave room for noise; the measured values are in
docs/TOYWORLD.md.
"""
import pytest

from backend.benchmarks import evaluate_many
from backend.models.loading import load_model
from backend.patching.sweep import sweep
from backend.toyworld.recipes import finetune_config
from backend.train.loop import train

pytestmark = pytest.mark.slow
BENCHMARKS = ["toy-sugarcrepe", "toy-hard-positives"]


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory):
    root = tmp_path_factory.mktemp("acceptance")
    results = {"start": evaluate_many(BENCHMARKS, load_model("toyworld", device="cpu"))}
    runs = {recipe: finetune_config(recipe, output_dir=str(root), eval_benchmarks=BENCHMARKS)
            for recipe in ("negclip", "ce_clip", "hp_hn", "hn_only")}
    runs["ce_clip itc"] = finetune_config("ce_clip", output_dir=str(root), eval_benchmarks=BENCHMARKS,
                                              name="ce_clip-itc", loss_weights={"alpha": 0.0, "beta": 0.0})
    for name, config in runs.items():
        run = train(config)
        results[name] = evaluate_many(BENCHMARKS, load_model(f"local-dir:{run['best']}", device="cpu"))
        results[f"{name} checkpoint"] = f"local-dir:{run['best']}"
    return results


def _swap(metrics):
    return metrics["toy-sugarcrepe/swap_att"]


def test_negclip_raises_swap_accuracy_by_15_points(finetuned):
    assert _swap(finetuned["negclip"]) - _swap(finetuned["start"]) >= 0.15


@pytest.mark.xfail(strict=True, reason="measured 53.0 +- 1.5 vs NegCLIP 73.2 +- 4.1 (3 seeds) with the paper's "
                   "weights: CE-CLIP's IMC term stops binding from being learned in this world, at every weight "
                   "tried (docs/TOYWORLD.md, ablations)")
def test_ce_clip_reaches_negclip_level(finetuned):
    assert _swap(finetuned["ce_clip"]) >= _swap(finetuned["negclip"]) - 0.03


def test_ce_clip_contrastive_part_reaches_negclip_level(finetuned):
    """CE-CLIP's ITC(hn) alone (alpha = beta = 0): 70.0 vs NegCLIP 75.0 at seed 0, 71.5 vs 73.2 over
    3 seeds. The typed negatives and their columns work; the gap above is the extra terms'."""
    assert _swap(finetuned["ce_clip itc"]) >= _swap(finetuned["negclip"]) - 0.08
    assert _swap(finetuned["ce_clip itc"]) - _swap(finetuned["start"]) >= 0.10


def test_hard_positives_lower_brittleness_at_similar_accuracy(finetuned):
    hp, hn = finetuned["hp_hn"], finetuned["hn_only"]
    key = "toy-hard-positives/swap/brittleness"
    assert hp[key] < hn[key]
    assert abs(_swap(hp) - _swap(hn)) <= 0.08


def test_patching_trades_plain_retrieval_for_compositionality(finetuned):
    """CLOVe's curve on the world: swap accuracy rises with alpha, pretraining-style retrieval falls."""
    rows = sweep(load_model("toyworld", device="cpu"), load_model(finetuned["negclip checkpoint"], device="cpu"),
                 [0.0, 0.5, 1.0], ["toy-sugarcrepe", "toy-pretrain-retrieval"])
    swap = [row["toy-sugarcrepe/swap_att"] for row in rows]
    retrieval = [row["toy-pretrain-retrieval/i2t_R@5"] for row in rows]
    assert swap[0] < swap[1] < swap[2]
    assert retrieval[2] < retrieval[0]
