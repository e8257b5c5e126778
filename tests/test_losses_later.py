"""The later methods' losses against transcriptions of their authors' public code (torch, as written there).

Each `authors_*` function below is the authors' code, transcribed with only its logging (accuracy) dropped:
  TripletCLIP  tripletclip/TripletCLIP        src/openclip/src/loss.py            negclip_loss, tripletclip_loss
  FSC-CLIP     ytaek-oh/fsc-clip              src/training/losses/loss.py         _focal_loss_with_nsr, Global_HNLoss
  EqSim        Wangt-CN/EqBen                 EqSim/FIBER/.../modules/objectives.py  pairloss_criterion,
                                                                                     get_pairloss_itc_hard
  CounterCurate HanSolo9682/CounterCurate     train/grouping/train.py             the batch: cat([images, neg_images])
                                                                                  then open_clip's ClipLoss
"""
import open_clip
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from backend.train.losses import clip_loss
from backend.train.losses_later import eqsim_loss, fsc_clip_loss, tripletclip_loss

S = 5.0


def unit(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(*shape, generator=gen, dtype=torch.float64), dim=-1)


# ---------- TripletCLIP (src/openclip/src/loss.py) ----------

def authors_negclip_loss(img_embs, text_embs, neg_text_embs, logit_scale):
    batch_size = img_embs.shape[0]
    labels = torch.arange(batch_size, device=img_embs.device).long()
    img_text_similarity = logit_scale * img_embs @ text_embs.t()
    text_img_similarity = logit_scale * text_embs @ img_embs.t()
    img_negtext_similarity = logit_scale * img_embs @ neg_text_embs.t()
    loss = (
        F.cross_entropy(torch.cat([img_text_similarity, img_negtext_similarity], dim=-1), labels)
        + F.cross_entropy(text_img_similarity, labels)
    ).div(2)
    return loss


def authors_tripletclip_loss(img_embs, text_embs, neg_img_embs, neg_text_embs, logit_scale):
    loss_1 = authors_negclip_loss(img_embs, text_embs, neg_text_embs, logit_scale)
    loss_2 = authors_negclip_loss(neg_img_embs, neg_text_embs, text_embs, logit_scale)
    return loss_1 + loss_2


def test_tripletclip_matches_the_authors_code():
    I, T, I_neg, T_neg = (unit(5, 8, seed=k) for k in range(4))
    total, parts = tripletclip_loss(I, T, I_neg, T_neg, S)
    assert total.item() == pytest.approx(authors_tripletclip_loss(I, T, I_neg, T_neg, S).item(), rel=1e-12)
    assert parts["negative"].item() == pytest.approx(authors_negclip_loss(I_neg, T_neg, T, S).item(), rel=1e-12)


def test_tripletclip_leaves_out_items_without_a_negative_pair():
    I, T, I_neg, T_neg = (unit(5, 8, seed=k) for k in range(4))
    valid = torch.tensor([True, False, True, True, False])
    total, _ = tripletclip_loss(I, T, I_neg, T_neg, S, valid=valid)
    want = (authors_negclip_loss(I, T, T_neg[valid], S) + authors_negclip_loss(I_neg[valid], T_neg[valid], T, S))
    assert total.item() == pytest.approx(want.item(), rel=1e-12)
    none, _ = tripletclip_loss(I, T, I_neg, T_neg, S, valid=torch.zeros(5, dtype=torch.bool))
    assert none.item() == pytest.approx(clip_loss(I, T, S)[0].item(), rel=1e-12)


# ---------- FSC-CLIP (src/training/losses/loss.py) ----------

def authors_focal_loss_with_nsr(logits, labels, gamma=2.0, label_smoothing=0.1, valid_neg_mask=None,
                                use_sigmoid=False, reduction="mean"):
    assert use_sigmoid is False
    assert labels.ndim == 1 and torch.all(labels == 0)
    num_cls_per_row = valid_neg_mask.sum(dim=-1) + 1
    num_batch, num_cls = logits.size(0), logits.size(1)
    labels_2d = torch.zeros((num_batch, num_cls), device=logits.device).float()
    labels_2d[:, 0] = (1.0 - label_smoothing) + label_smoothing / num_cls_per_row
    labels_2d[:, 1:] = label_smoothing / num_cls_per_row.unsqueeze(-1)
    labels_2d[:, 1:] *= valid_neg_mask
    celoss_2d = -1.0 * F.log_softmax(logits, dim=-1)  # -log(p)
    celoss_2d *= torch.pow(1.0 - torch.exp(-celoss_2d), gamma)  # -(1-p)^r log(p)
    loss = torch.sum(labels_2d * celoss_2d, dim=-1)
    if reduction == "mean":
        return loss.mean()
    raise NotImplementedError


def authors_global_hn_loss(image_features, text_features, neg_text_features, neg_text_masks, logit_scale,
                           neg_loss_weight, focal_gamma, neg_label_smoothing):
    """Global_HNLoss.forward on one process: text_features (B, D); neg_text_features (N*B, D) type-major with
    zeros where neg_text_masks (N*B,) is 0 (what _fill_empty_negatives leaves)."""
    lbs = image_features.size(0)
    labels = torch.arange(lbs)
    logits_per_image = logit_scale * image_features @ text_features.T
    clip = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_image.T, labels)) / 2
    neg_text_features = torch.stack(neg_text_features.split(lbs, dim=0), dim=1)
    neg_logits_per_img = logit_scale * (torch.einsum(
        "bkd,bld->bkl", image_features.unsqueeze(1),
        torch.cat((text_features.unsqueeze(1), neg_text_features), dim=1)).squeeze(1))
    neg_labels = torch.zeros(lbs, dtype=torch.long)
    valid_neg_mask = torch.stack(neg_text_masks.split(lbs, dim=0), dim=1)
    valid_neg_weight = torch.any(valid_neg_mask > 0, dim=1)
    hn = authors_focal_loss_with_nsr(neg_logits_per_img[valid_neg_weight], neg_labels[valid_neg_weight],
                                     gamma=focal_gamma, label_smoothing=neg_label_smoothing,
                                     valid_neg_mask=valid_neg_mask[valid_neg_weight])
    return clip, neg_loss_weight * hn


@pytest.mark.parametrize("k", [1, 3])
def test_fsc_clip_matches_the_authors_code_when_every_negative_exists(k):
    I, T, N = unit(4, 6, seed=0), unit(4, 6, seed=1), unit(4, k, 6, seed=2)
    type_major = N.transpose(0, 1).reshape(-1, 6)  # the authors' (N*B, D) layout
    clip, hn = authors_global_hn_loss(I, T, type_major, torch.ones(4 * k), S, 0.5, 2.0, 0.02)
    total, parts = fsc_clip_loss(I, T, N if k > 1 else N[:, 0], S, weight=0.5, gamma=2.0, smoothing=0.02)
    assert parts["clip"].item() == pytest.approx(clip.item(), rel=1e-12)
    assert 0.5 * parts["hard_negative"].item() == pytest.approx(hn.item(), rel=1e-6)  # their labels are float32
    assert total.item() == pytest.approx((clip + hn).item(), rel=1e-6)


def test_fsc_clip_drops_missing_negatives_where_the_authors_keep_a_zero_logit():
    """A missing negative is no column here; in the authors' code it is a zero vector whose logit 0 stays in
    the softmax. Row by row, ours equals theirs given only the negatives that exist."""
    I, T, N = unit(4, 6, seed=0), unit(4, 6, seed=1), unit(4, 3, 6, seed=2)
    valid = torch.tensor([[1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=torch.bool)
    _, parts = fsc_clip_loss(I, T, N, S, weight=1.0, gamma=2.0, smoothing=0.1, valid=valid)
    per_row = []
    for i in range(4):
        if valid[i].any():
            kept = N[i, valid[i]]
            logits = S * torch.cat([(I[i] * T[i]).sum()[None], kept @ I[i]])[None]
            per_row.append(authors_focal_loss_with_nsr(logits, torch.zeros(1, dtype=torch.long), gamma=2.0,
                                                       label_smoothing=0.1,
                                                       valid_neg_mask=torch.ones(1, len(kept))))
    assert parts["hard_negative"].item() == pytest.approx(torch.stack(per_row).mean().item(), rel=1e-6)
    zeroed = N.masked_fill(~valid[..., None], 0.0).transpose(0, 1).reshape(-1, 6)
    _, theirs = authors_global_hn_loss(I, T, zeroed, valid.T.reshape(-1).double(), S, 1.0, 2.0, 0.1)
    assert abs(theirs.item() - parts["hard_negative"].item()) > 1e-4  # the documented difference is real


def test_fsc_clip_gradients_are_finite_with_missing_negatives():
    I, T = unit(3, 6, seed=0).requires_grad_(), unit(3, 6, seed=1).requires_grad_()
    N = unit(3, 2, 6, seed=2).requires_grad_()
    valid = torch.tensor([[1, 0], [0, 0], [1, 1]], dtype=torch.bool)
    total, _ = fsc_clip_loss(I, T, N, S, valid=valid)
    total.backward()
    assert all(torch.isfinite(x.grad).all() for x in (I, T, N))
    assert (N.grad[~valid] == 0).all() and (N.grad[valid].abs().sum(-1) > 0).all()


# ---------- EqSim (EqSim/FIBER/coarse_grained/fiber/modules/objectives.py) ----------

class authors_pairloss_criterion(nn.Module):
    def __init__(self, text_side=False, img_side=False, group_side=False, pos_reg=False, norm=False, weight=1.0,
                 margin=0.0):
        super().__init__()
        self.text_side, self.img_side, self.group_side = text_side, img_side, group_side
        self.pos_reg, self.norm, self.weight, self.margin = pos_reg, norm, weight, margin
        self.mseloss = nn.MSELoss()
        self.relu = nn.ReLU(inplace=False)

    def __call__(self, c0_i0, c1_i0, c0_i1, c1_i1):
        loss = 0.
        if self.text_side:
            loss += self.weight * (self.mseloss((c0_i0 - c1_i0), (c1_i1 - c0_i1)) - self.margin).clamp(min=0.)
        if self.img_side:
            loss += self.weight * (self.mseloss((c0_i0 - c0_i1), (c1_i1 - c1_i0)) - self.margin).clamp(min=0.)
        return loss


def authors_get_pairloss_itc_hard(loss_criterion, score_matrix, t2i_neg_idx, i2t_neg_idx, bsz, sample_num):
    score_matrix_size = bsz
    caption0_image0_score, caption0_imagei_score, captioni_image0_score, captioni_imagei_score = [], [], [], []
    for idx in range(score_matrix_size):
        if sample_num > 0:
            idx_combine = torch.cat([t2i_neg_idx[idx], i2t_neg_idx[idx]])
        else:
            idx_combine = [t2i_neg_idx[idx], i2t_neg_idx[idx]]
        caption0_image0_score.append(score_matrix[idx, idx].unsqueeze(0).expand(len(idx_combine)))
        caption0_imagei_score.append(score_matrix[idx_combine, idx])
        captioni_image0_score.append(score_matrix[idx, idx_combine])
        captioni_imagei_score.append(score_matrix.diag()[idx_combine])
    caption0_image0_score = torch.cat(caption0_image0_score, dim=-1).unsqueeze(1)
    caption0_imagei_score = torch.cat(caption0_imagei_score, dim=-1).unsqueeze(1)
    captioni_image0_score = torch.cat(captioni_image0_score, dim=-1).unsqueeze(1)
    captioni_imagei_score = torch.cat(captioni_imagei_score, dim=-1).unsqueeze(1)
    return loss_criterion(caption0_image0_score, captioni_image0_score, caption0_imagei_score,
                          captioni_imagei_score)


@pytest.mark.parametrize("pre_softmax, margin", [(True, 0.0), (False, 0.0), (False, 0.01), (True, 0.1)])
def test_eqsim_matches_the_authors_pair_loss_on_2x2_groups(pre_softmax, margin):
    """The authors' hard variant with each item's negative set to its counterfactual (index i + B)."""
    B = 4
    I, T, I_neg, T_neg = (unit(B, 6, seed=k) for k in range(4))
    images, texts = torch.cat([I, I_neg]), torch.cat([T, T_neg])
    score = S * images @ texts.T
    if pre_softmax:
        score = F.softmax(score, dim=1)
    partner = [torch.tensor([i + B]) for i in range(B)]  # what torch.multinomial(weights, 1) returns
    criterion = authors_pairloss_criterion(text_side=True, img_side=True, weight=0.5, margin=margin)
    theirs = authors_get_pairloss_itc_hard(criterion, score, partner, partner, bsz=B, sample_num=1)
    total, parts = eqsim_loss(I, T, I_neg, T_neg, S, weight=0.5, margin=margin, pre_softmax=pre_softmax)
    assert (parts["eq_text"] + parts["eq_image"]).item() == pytest.approx(float(theirs), rel=1e-12, abs=1e-15)
    assert parts["clip"].item() == pytest.approx(clip_loss(images, texts, S)[0].item(), rel=1e-12)
    assert total.item() == pytest.approx(parts["clip"].item() + float(theirs), rel=1e-12)


def test_eqsim_is_zero_for_equivariant_scores_and_positive_otherwise():
    """Hand-made scores: S00-S01 = S11-S10 and S00-S10 = S11-S01 give 0; breaking one side gives its MSE."""
    I = torch.eye(4, dtype=torch.float64)[:2]
    T = I.clone()
    _, parts = eqsim_loss(I[:1], T[:1], I[1:], T[1:], 1.0, weight=1.0, margin=0.0, pre_softmax=False)
    assert parts["eq_text"].item() == 0.0 and parts["eq_image"].item() == 0.0
    T_neg = F.normalize(torch.tensor([[0.6, 0.8, 0.0, 0.0]], dtype=torch.float64), dim=-1)  # S(I0,T1)=0.6
    _, parts = eqsim_loss(I[:1], T[:1], I[1:], T_neg, 1.0, weight=1.0, margin=0.0, pre_softmax=False)
    # S00=1, S01=0.6, S10=0, S11=0.8: text side (0.4 - 0.8)^2, image side (1 - 0.2)^2
    assert parts["eq_text"].item() == pytest.approx(0.16) and parts["eq_image"].item() == pytest.approx(0.64)


# ---------- CounterCurate (train/grouping/train.py: cat the negatives onto the batch, open_clip's ClipLoss) ----------

def test_countercurate_grouped_batch_loss_is_the_authors_concatenated_clip_loss():
    """The grouping sampler lays a batch out group by group ([pos0, neg0, pos1, neg1, ...]); the authors
    concatenate all positives then all negatives. CLIP's loss is the same for both orders."""
    B = 3
    I, T, I_neg, T_neg = (unit(B, 6, seed=k) for k in range(4))
    theirs = open_clip.ClipLoss()(torch.cat([I, I_neg]), torch.cat([T, T_neg]), S)
    grouped_images = torch.stack([I, I_neg], dim=1).reshape(2 * B, 6)
    grouped_texts = torch.stack([T, T_neg], dim=1).reshape(2 * B, 6)
    ours, _ = clip_loss(grouped_images, grouped_texts, S)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
