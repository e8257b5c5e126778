"""Losses against references written as explicit python loops with math.exp /
math.log over plain lists, plus degenerate cases, gradients and a 2-rank DDP step."""

import math
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

from backend.train.losses import (
    CE_CLIP_TYPES,
    AdaptiveThresholds,
    ce_clip_loss,
    clip_loss,
    gather_features,
    hp_hn_loss,
    negclip_loss,
    pair_scores,
    trohn_img_loss,
)

S = 5.0  # logit scale: small enough for the hinge and thresholds to be active


def unit(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(*shape, generator=gen, dtype=torch.float64), dim=-1)


# ---------- plain-python references ----------

def dot(u, v):
    return sum(a * b for a, b in zip(u, v))


def ce_row(logits, target):
    """-log softmax(logits)[target] with math only."""
    return -logits[target] + math.log(sum(math.exp(x) for x in logits))


def ref_directions(images, texts, extra, s):
    """Mean image->text CE over texts + extra columns, mean text->image CE."""
    columns = texts + extra
    i2t = sum(ce_row([s * dot(img, c) for c in columns], i) for i, img in enumerate(images)) / len(images)
    t2i = sum(ce_row([s * dot(txt, img) for img in images], i) for i, txt in enumerate(texts)) / len(texts)
    return i2t, t2i


def ref_clip(I, T, s):
    i2t, t2i = ref_directions(I.tolist(), T.tolist(), [], s)
    return (i2t + t2i) / 2


def ref_ce_clip(I, T, N, valid, s, th, alpha, beta, imc):
    I, T, N, valid, th = I.tolist(), T.tolist(), N.tolist(), valid.tolist(), th.tolist()
    negs = [N[i][k] for i in range(len(I)) for k in range(4) if valid[i][k]]
    i2t, t2i = ref_directions(I, T, negs, s)
    itc = (i2t + t2i) / 2
    if imc == "contrastive":
        imc_val = sum(ce_row([s * dot(I[i], T[i])] + [s * dot(T[i], n) for n in negs], 0)
                      for i in range(len(I))) / len(I)
    else:
        terms = [math.log(sum(math.exp(s * dot(T[i], N[i][k])) for k in range(4) if valid[i][k]))
                 for i in range(len(I)) if any(valid[i])]
        imc_val = sum(terms) / len(terms) if terms else 0.0
    hinges = [max(0.0, s * dot(I[i], N[i][k]) - s * dot(I[i], T[i]) + th[k])
              for i in range(len(I)) for k in range(4) if valid[i][k]]
    cmr = sum(hinges) / len(hinges) if hinges else 0.0
    return itc + alpha * imc_val + beta * cmr, itc, imc_val, cmr


VALID = torch.tensor([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 0]], dtype=torch.bool)


# ---------- CLIP / NegCLIP / TROHN ----------

def test_clip_matches_loop():
    I, T = unit(4, 3, seed=0), unit(4, 3, seed=1)
    total, parts = clip_loss(I, T, S)
    assert total.item() == pytest.approx(ref_clip(I, T, S), rel=1e-9)
    assert set(parts) == {"i2t", "t2i"}


def test_clip_batch_of_one_is_zero():
    total, _ = clip_loss(unit(1, 3, seed=0), unit(1, 3, seed=1), S)
    assert total.item() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("shape", [(3, 4), (3, 1, 4), (3, 2, 4)])
def test_negclip_matches_loop(shape):
    I, T, N = unit(3, 4, seed=0), unit(3, 4, seed=1), unit(*shape, seed=2)
    negs = N.reshape(-1, 4).tolist()
    i2t, t2i = ref_directions(I.tolist(), T.tolist(), negs, S)
    total, parts = negclip_loss(I, T, N, S)
    assert total.item() == pytest.approx((i2t + t2i) / 2, rel=1e-9)
    assert parts["i2t"].item() == pytest.approx(i2t, rel=1e-9)
    assert parts["t2i"].item() == pytest.approx(t2i, rel=1e-9)


def test_negclip_hard_negative_images_layout():
    I, T, N = unit(2, 4, seed=0), unit(2, 4, seed=1), unit(2, 4, seed=2)
    I_nn, T_nn, N_nn = unit(2, 4, seed=3), unit(2, 4, seed=4), unit(2, 4, seed=5)
    images = I.tolist() + I_nn.tolist()  # 2B images, each with its own caption
    texts = T.tolist() + T_nn.tolist()
    i2t, t2i = ref_directions(images, texts, N.tolist() + N_nn.tolist(), S)  # 2B x 4B and 2B x 2B
    total, _ = negclip_loss(I, T, N, S, I_nn=I_nn, T_nn=T_nn, N_nn=N_nn)
    assert total.item() == pytest.approx((i2t + t2i) / 2, rel=1e-9)
    with pytest.raises(ValueError):
        negclip_loss(I, T, N, S, I_nn=I_nn)


def test_negclip_without_negatives_is_clip():
    I, T = unit(3, 4, seed=0), unit(3, 4, seed=1)
    total, _ = negclip_loss(I, T, torch.empty(3, 0, 4, dtype=torch.float64), S)
    assert total.item() == pytest.approx(ref_clip(I, T, S), rel=1e-9)


def test_trohn_img_is_clip_on_doubled_batch():
    I, T, I_neg, T_neg = (unit(2, 3, seed=k) for k in range(4))
    total, _ = trohn_img_loss(I, T, I_neg, T_neg, S)
    images, texts = I.tolist() + I_neg.tolist(), T.tolist() + T_neg.tolist()
    i2t, t2i = ref_directions(images, texts, [], S)
    assert total.item() == pytest.approx((i2t + t2i) / 2, rel=1e-9)


# ---------- hard positives + hard negatives ----------

def test_hp_hn_matches_loop():
    I, T, N, P = (unit(3, 4, seed=k) for k in range(4))
    Il, Tl, Nl, Pl = I.tolist(), T.tolist(), N.tolist(), P.tolist()
    clip = ref_clip(I, T, S)
    hn = sum(ce_row([S * dot(Il[i], Tl[i]), S * dot(Il[i], Nl[i])], 0) for i in range(3)) / 3
    hp_i = sum(ce_row([S * dot(Il[i], p) for p in Pl], i) for i in range(3)) / 3
    hp_t = sum(ce_row([S * dot(Tl[i], p) for p in Pl], i) for i in range(3)) / 3
    total, parts = hp_hn_loss(I, T, N, P, S, w_hn=0.25, w_hp=2.0)
    assert parts["hn"].item() == pytest.approx(hn, rel=1e-9)
    assert parts["hp"].item() == pytest.approx((hp_i + hp_t) / 2, rel=1e-9)
    assert total.item() == pytest.approx(clip + 0.25 * hn + 2.0 * (hp_i + hp_t) / 2, rel=1e-9)


def test_hp_hn_zero_weights_is_clip():
    I, T, N, P = (unit(3, 4, seed=k) for k in range(4))
    total, _ = hp_hn_loss(I, T, N, P, S, w_hn=0.0, w_hp=0.0)
    assert total.item() == pytest.approx(ref_clip(I, T, S), rel=1e-9)


# ---------- CE-CLIP ----------

@pytest.mark.parametrize("imc", ["contrastive", "eq3"])
def test_ce_clip_matches_loop(imc):
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    th = torch.tensor([0.0, 1.5, 4.0, 10.0], dtype=torch.float64)
    total, parts = ce_clip_loss(I, T, N, VALID, S, th, alpha=0.3, beta=0.7, imc=imc)
    want, itc, imc_val, cmr = ref_ce_clip(I, T, N, VALID, S, th, 0.3, 0.7, imc)
    assert parts["itc"].item() == pytest.approx(itc, rel=1e-9)
    assert parts["imc"].item() == pytest.approx(imc_val, rel=1e-9)
    assert parts["cmr"].item() == pytest.approx(cmr, rel=1e-9)
    assert total.item() == pytest.approx(want, rel=1e-9)
    assert [parts[f"th_{t}"].item() for t in CE_CLIP_TYPES] == th.tolist()


def test_ce_clip_thresholds_are_clamped_and_detached():
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    raw = torch.tensor([-3.0, 2.0, 12.0, 50.0], dtype=torch.float64, requires_grad=True)
    total, parts = ce_clip_loss(I, T, N, VALID, S, raw, u=10.0)
    want, *_ = ref_ce_clip(I, T, N, VALID, S, torch.tensor([0.0, 2.0, 10.0, 10.0]), 0.2, 0.4, "contrastive")
    assert total.item() == pytest.approx(want, rel=1e-9)
    assert parts["th_relation"].item() == 0.0 and parts["th_object"].item() == 10.0
    assert not total.requires_grad  # nothing but the thresholds needed a gradient


def test_ce_clip_invalid_slots_never_matter():
    I, T, N = (unit(3, 5, seed=0).requires_grad_(), unit(3, 5, seed=1).requires_grad_(),
               unit(3, 4, 5, seed=2))
    poisoned = N.clone()
    poisoned[~VALID] = float("nan")
    for imc in ("contrastive", "eq3"):
        clean, _ = ce_clip_loss(I, T, N, VALID, S, torch.ones(4), imc=imc)
        dirty, _ = ce_clip_loss(I, T, poisoned.requires_grad_(), VALID, S, torch.ones(4), imc=imc)
        assert dirty.item() == pytest.approx(clean.item(), rel=1e-12)
        dirty.backward()
        assert torch.isfinite(I.grad).all() and torch.isfinite(T.grad).all()
        assert (poisoned.grad[~VALID] == 0).all()
        I.grad = T.grad = poisoned.grad = None


@pytest.mark.parametrize("imc", ["contrastive", "eq3"])
def test_ce_clip_all_invalid_reduces_to_clip(imc):
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    none = torch.zeros(3, 4, dtype=torch.bool)
    total, parts = ce_clip_loss(I, T, N, none, S, torch.full((4,), 3.0), imc=imc)
    assert total.item() == pytest.approx(ref_clip(I, T, S), rel=1e-9)
    assert parts["imc"].item() == 0.0 and parts["cmr"].item() == 0.0


def test_ce_clip_zero_weights_is_negclip():
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    all_valid = torch.ones(3, 4, dtype=torch.bool)
    total, _ = ce_clip_loss(I, T, N, all_valid, S, torch.zeros(4), alpha=0.0, beta=0.0)
    i2t, t2i = ref_directions(I.tolist(), T.tolist(), N.reshape(-1, 5).tolist(), S)
    assert total.item() == pytest.approx((i2t + t2i) / 2, rel=1e-9)


@pytest.mark.parametrize("imc", ["contrastive", "eq3"])
def test_ce_clip_aux_types_limit_imc_and_cmr_but_not_itc(imc):
    """Relation-only IMC/CMR = the reference loss with the other types masked out of those two
    terms, while ITC still gets every valid negative."""
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    th = torch.tensor([0.5, 1.5, 4.0, 10.0], dtype=torch.float64)
    total, parts = ce_clip_loss(I, T, N, VALID, S, th, alpha=0.3, beta=0.7, imc=imc, aux_types=("relation",))
    relation_only = VALID & torch.tensor([True, False, False, False])
    _, itc, _, _ = ref_ce_clip(I, T, N, VALID, S, th, 0.3, 0.7, imc)
    _, _, imc_val, cmr = ref_ce_clip(I, T, N, relation_only, S, th, 0.3, 0.7, imc)
    assert parts["itc"].item() == pytest.approx(itc, rel=1e-9)
    assert parts["imc"].item() == pytest.approx(imc_val, rel=1e-9)
    assert parts["cmr"].item() == pytest.approx(cmr, rel=1e-9)
    assert total.item() == pytest.approx(itc + 0.3 * imc_val + 0.7 * cmr, rel=1e-9)
    with pytest.raises(ValueError, match="aux_types"):
        ce_clip_loss(I, T, N, VALID, S, th, aux_types=("colour",))


def test_ce_clip_batch_of_one_and_bad_inputs():
    I, T, N = unit(1, 5, seed=0), unit(1, 5, seed=1), unit(1, 4, 5, seed=2)
    valid = torch.tensor([[1, 0, 0, 1]], dtype=torch.bool)
    total, _ = ce_clip_loss(I, T, N, valid, S, torch.zeros(4), imc="eq3")
    want, *_ = ref_ce_clip(I, T, N, valid, S, torch.zeros(4), 0.2, 0.4, "eq3")
    assert total.item() == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError):
        ce_clip_loss(I, T, N, valid, S, torch.zeros(4), imc="eq4")
    with pytest.raises(ValueError):
        ce_clip_loss(I, T, N[:, :3], valid[:, :3], S, torch.zeros(4))


def test_adaptive_thresholds_lag_clamp_and_keep():
    th = AdaptiveThresholds(u=10.0)
    assert th.value.tolist() == [0.0, 0.0, 0.0, 0.0]
    S_pos = torch.tensor([20.0, 18.0, 19.0])
    S_neg = torch.tensor([[10.0, 21.0, 14.0, 0.0],
                          [4.0, 20.0, 17.0, 0.0],
                          [99.0, 19.0, 16.0, 0.0]])
    valid = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 0]], dtype=torch.bool)
    th.update(S_pos, S_neg, valid)
    # relation: gaps 10, 14 -> 12 -> clamped to 10; attribute: -1, -2, 0 -> -1 -> 0;
    # action: 6, 1, 3 -> 10/3; object: no valid item -> keeps 0
    assert th.value.tolist() == pytest.approx([10.0, 0.0, 10 / 3, 0.0])
    step2_valid = torch.tensor([[1, 0, 0, 1]], dtype=torch.bool)
    th.update(torch.tensor([5.0]), torch.tensor([[3.0, float("nan"), float("nan"), 1.0]]), step2_valid)
    # relation 2, object 4; attribute and action had no valid item: previous values kept
    assert th.value.tolist() == pytest.approx([2.0, 0.0, 10 / 3, 4.0])
    th.update(torch.tensor([float("nan")]), torch.tensor([[0.0, 0.0, 0.0, 0.0]]), torch.ones(1, 4, dtype=torch.bool))
    assert th.value.tolist() == pytest.approx([2.0, 0.0, 10 / 3, 4.0])  # NaN batch: kept


def test_thresholds_lag_one_step_in_a_training_loop():
    """Step t's loss uses the gaps measured at step t-1, never step t's own."""
    I, T, N = unit(3, 5, seed=0), unit(3, 5, seed=1), unit(3, 4, 5, seed=2)
    th = AdaptiveThresholds()
    used = []
    for step in range(2):
        _, parts = ce_clip_loss(I, T, N, VALID, S, th.value)
        used.append([parts[f"th_{t}"].item() for t in CE_CLIP_TYPES])
        th.update(*pair_scores(I, T, N, S), VALID)
    Il, Tl, Nl = I.tolist(), T.tolist(), N.tolist()
    want = []
    for k in range(4):
        gaps = [S * dot(Il[i], Tl[i]) - S * dot(Il[i], Nl[i][k]) for i in range(3) if VALID[i, k]]
        want.append(min(10.0, max(0.0, sum(gaps) / len(gaps))))
    assert used[0] == [0.0] * 4
    assert used[1] == pytest.approx(want)


# ---------- captions without a hard negative ----------

MISSING = torch.tensor([True, False, True, False])  # captions 1 and 3 have no negative
MISSING_NN = torch.tensor([False, True, True, False])


def ref_hp_hn(I, T, N, P, valid, s, w_hn, w_hp):
    """L_clip + w_hn * (L_hn over the items with a negative, 0 if none) + w_hp * L_hp, with math only."""
    Il, Tl, Nl, Pl, vl = I.tolist(), T.tolist(), N.tolist(), P.tolist(), valid.tolist()
    hn_terms = [ce_row([s * dot(Il[i], Tl[i]), s * dot(Il[i], Nl[i])], 0) for i in range(len(Il)) if vl[i]]
    hn = sum(hn_terms) / len(hn_terms) if hn_terms else 0.0
    hp = sum(ce_row([s * dot(x[i], p) for p in Pl], i) for x in (Il, Tl) for i in range(len(Il))) / (2 * len(Il))
    return ref_clip(I, T, s) + w_hn * hn + w_hp * hp, hn


def kept(N, valid):
    return [row for row, keep in zip(N.tolist(), valid.tolist()) if keep]


def masked_case(name, valid, valid_nn):
    """(loss of the leaf negatives, reference value with the invalid negatives absent, [(leaf, mask)])."""
    I, T, N, P, I_nn, T_nn, N_nn = (unit(4, 5, seed=k) for k in range(7))
    N, N_nn = N.requires_grad_(), N_nn.requires_grad_()
    if name == "negclip":
        i2t, t2i = ref_directions(I.tolist(), T.tolist(), kept(N, valid), S)
        return negclip_loss(I, T, N, S, valid=valid)[0], (i2t + t2i) / 2, [(N, valid)]
    if name == "negclip_nn":
        i2t, t2i = ref_directions(I.tolist() + I_nn.tolist(), T.tolist() + T_nn.tolist(),
                                  kept(N, valid) + kept(N_nn, valid_nn), S)
        total, _ = negclip_loss(I, T, N, S, I_nn=I_nn, T_nn=T_nn, N_nn=N_nn, valid=valid, valid_nn=valid_nn)
        return total, (i2t + t2i) / 2, [(N, valid), (N_nn, valid_nn)]
    if name == "hp_hn":
        want, _ = ref_hp_hn(I, T, N, P, valid, S, 0.5, 2.0)
        return hp_hn_loss(I, T, N, P, S, w_hn=0.5, w_hp=2.0, valid=valid)[0], want, [(N, valid)]
    typed = unit(4, 4, 5, seed=7).requires_grad_()
    typed_valid = valid[:, None] & torch.tensor([True, False, True, True])  # row-wise: no negative at all
    want, *_ = ref_ce_clip(I, T, typed, typed_valid, S, torch.ones(4), 0.2, 0.4, "contrastive")
    return ce_clip_loss(I, T, typed, typed_valid, S, torch.ones(4))[0], want, [(typed, typed_valid)]


@pytest.mark.parametrize("name", ["negclip", "negclip_nn", "hp_hn", "ce_clip"])
def test_missing_negatives_are_absent_from_loss_and_gradient(name):
    """A caption without a negative counts as if its negative did not exist, and its
    placeholder embedding gets exactly zero gradient (valid ones do get one)."""
    total, want, leaves = masked_case(name, MISSING, MISSING_NN)
    assert total.item() == pytest.approx(want, rel=1e-9)
    total.backward()
    for leaf, valid in leaves:
        assert (leaf.grad[~valid] == 0).all()
        assert (leaf.grad[valid].abs().sum(-1) > 0).all()


@pytest.mark.parametrize("name", ["negclip", "negclip_nn", "hp_hn", "ce_clip"])
def test_no_valid_negative_in_the_batch_is_finite(name):
    none = torch.zeros(4, dtype=torch.bool)
    total, want, leaves = masked_case(name, none, none)
    assert torch.isfinite(total) and total.item() == pytest.approx(want, rel=1e-9)
    total.backward()
    assert all((leaf.grad == 0).all() for leaf, _ in leaves)


def test_negclip_with_no_valid_negative_is_clip():
    I, T, N = unit(3, 4, seed=0), unit(3, 4, seed=1), unit(3, 4, seed=2)
    total, _ = negclip_loss(I, T, N, S, valid=torch.zeros(3, dtype=torch.bool))
    assert total.item() == pytest.approx(ref_clip(I, T, S), rel=1e-9)


def test_hp_hn_without_negatives_has_zero_hn_term():
    I, T, N, P = (unit(3, 4, seed=k) for k in range(4))
    _, parts = hp_hn_loss(I, T, N, P, S, valid=torch.zeros(3, dtype=torch.bool))
    assert parts["hn"].item() == 0.0
    _, want_hn = ref_hp_hn(I, T, N, P, MISSING[:3], S, 1.0, 1.0)
    _, parts = hp_hn_loss(I, T, N, P, S, valid=MISSING[:3])
    assert parts["hn"].item() == pytest.approx(want_hn, rel=1e-9)  # mean over the 2 items that have one


@pytest.mark.parametrize("name", ["negclip", "hp_hn"])
def test_invalid_negative_slots_are_never_read(name):
    """NaN in an invalid slot changes nothing: it is dropped or zeroed before use."""
    I, T, N, P = (unit(3, 4, seed=k).requires_grad_() for k in range(4))
    poisoned = N.detach().clone()
    poisoned[~MISSING[:3]] = float("nan")
    call = {"negclip": lambda n: negclip_loss(I, T, n, S, valid=MISSING[:3]),
            "hp_hn": lambda n: hp_hn_loss(I, T, n, P, S, valid=MISSING[:3])}[name]
    clean, _ = call(N)
    dirty, _ = call(poisoned)
    assert dirty.item() == pytest.approx(clean.item(), rel=1e-12)
    dirty.backward()
    assert torch.isfinite(I.grad).all() and torch.isfinite(T.grad).all()


def test_masks_must_match_their_negatives():
    I, T, N = unit(3, 4, seed=0), unit(3, 4, seed=1), unit(3, 2, 4, seed=2)
    with pytest.raises(ValueError, match="mask"):
        negclip_loss(I, T, N, S, valid=torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="valid_nn"):
        negclip_loss(I, T, N[:, 0], S, valid_nn=torch.ones(3, dtype=torch.bool))
    per_slot = torch.tensor([[True, False], [False, False], [True, True]])
    i2t, t2i = ref_directions(I.tolist(), T.tolist(), [N[0, 0].tolist(), N[2, 0].tolist(), N[2, 1].tolist()], S)
    assert negclip_loss(I, T, N, S, valid=per_slot)[0].item() == pytest.approx((i2t + t2i) / 2, rel=1e-9)


# ---------- gradients ----------

LOSSES = {
    "clip": lambda I, T, N, P, s: clip_loss(I, T, s),
    "negclip": lambda I, T, N, P, s: negclip_loss(I, T, N, s),
    "ce_clip": lambda I, T, N, P, s: ce_clip_loss(I, T, N, VALID, s, torch.full((4,), 2.0)),
    "ce_clip_eq3": lambda I, T, N, P, s: ce_clip_loss(I, T, N, VALID, s, torch.full((4,), 2.0), imc="eq3"),
    "hp_hn": lambda I, T, N, P, s: hp_hn_loss(I, T, N[:, 0], P, s),
    "trohn": lambda I, T, N, P, s: trohn_img_loss(I, T, N[:, 0], P, s),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_finite_and_nonzero(name):
    scale = torch.tensor(S, dtype=torch.float64, requires_grad=True)
    gen = torch.Generator().manual_seed(0)
    raw = [torch.randn(*shape, dtype=torch.float64, generator=gen, requires_grad=True)
           for shape in [(3, 5), (3, 5), (3, 4, 5), (3, 5)]]
    total, parts = LOSSES[name](*(F.normalize(x, dim=-1) for x in raw), scale)
    assert all(torch.isfinite(v) for v in parts.values())
    total.backward()
    for x in raw[:2] + [scale]:
        assert torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


# ---------- DDP ----------

B_LOCAL, WORLD, K = 3, 2, 2


class Encoders(torch.nn.Module):
    """Tiny linear image and text towers so gradients reach real parameters."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.image = torch.nn.Linear(6, 4).double()
        self.text = torch.nn.Linear(5, 4).double()

    def forward(self, x_img, x_txt, x_neg):
        return (F.normalize(self.image(x_img), dim=-1), F.normalize(self.text(x_txt), dim=-1),
                F.normalize(self.text(x_neg), dim=-1))


def ddp_inputs():
    gen = torch.Generator().manual_seed(1)
    b = B_LOCAL * WORLD
    valid = torch.rand(b, 4, generator=gen) > 0.3
    x_img, x_txt, x_neg = (torch.randn(b, *shape, generator=gen, dtype=torch.float64)
                           for shape in [(6,), (5,), (4, 5)])
    return x_img, x_txt, x_neg, valid


DDP_LOSSES = {
    "clip": lambda I, T, N, v: clip_loss(I, T, S),
    "negclip_K": lambda I, T, N, v: negclip_loss(I, T, N[:, :K], S),
    "ce_clip": lambda I, T, N, v: ce_clip_loss(I, T, N, v, S, torch.full((4,), 1.0)),
}


def loss_and_grads(name, rank=0, world_size=1, with_grad=True):
    encoders = Encoders()
    x_img, x_txt, x_neg, valid = (x[rank * B_LOCAL:(rank + 1) * B_LOCAL] if world_size > 1 else x
                                  for x in ddp_inputs())
    I, T, N = encoders(x_img, x_txt, x_neg)
    I, T, N, valid = gather_features(I, T, N, valid, rank=rank, world_size=world_size,
                                     gather_with_grad=with_grad)
    total, _ = DDP_LOSSES[name](I, T, N, valid)
    total.backward()
    return total.detach(), [p.grad for p in encoders.parameters()]


def ddp_worker(rank, init_method, out_path):
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=WORLD)
    results = {}
    for name in DDP_LOSSES:
        for with_grad in (True, False):
            total, grads = loss_and_grads(name, rank, WORLD, with_grad)
            for g in grads:
                dist.all_reduce(g)  # SUM over ranks; DDP would then divide by WORLD
            results[(name, with_grad)] = (total, grads)
    if rank == 0:
        torch.save(results, out_path)
    dist.destroy_process_group()


@pytest.fixture(scope="module")
def ddp_results(tmp_path_factory):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out_path = tmp_path_factory.mktemp("ddp") / "rank0.pt"
    mp.spawn(ddp_worker, args=(f"tcp://127.0.0.1:{port}", str(out_path)), nprocs=WORLD, join=True)
    return torch.load(out_path)


@pytest.mark.system
@pytest.mark.parametrize("name", sorted(DDP_LOSSES))
def test_ddp_two_ranks_match_one_rank(ddp_results, name):
    """open_clip's accounting: every rank computes the global loss. With
    gather_with_grad the backward sums all ranks' gradients into each shard,
    so DDP's average equals the single-process gradient; without it each rank
    keeps only its own shard's share, so the SUM over ranks equals it."""
    want_total, want_grads = loss_and_grads(name)
    for with_grad, ranks_to_full in ((True, 1 / WORLD), (False, 1.0)):
        total, summed = ddp_results[(name, with_grad)]
        assert total.item() == pytest.approx(want_total.item(), rel=1e-12)
        for got, want in zip(summed, want_grads):
            torch.testing.assert_close(got * ranks_to_full, want, rtol=1e-10, atol=1e-12)


def test_gather_single_process_is_identity():
    x = torch.randn(2, 3)
    assert gather_features(x, None, rank=0, world_size=1) == (x, None)
