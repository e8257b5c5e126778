"""The later methods' losses: TripletCLIP, FSC-CLIP's hard-negative focal loss, EqSim (docs/REFERENCE.md, "Losses").

Same conventions as `backend.train.losses` (L2-normalised embeddings, ``s`` the
exponentiated logit scale, ``(total, parts)`` returned, a validity mask where a
caption may lack a negative). CounterCurate's method is a batch layout, not a new
loss: its grouping sampler (`backend.train.data.make_batch` with a manifest's
``group`` column) puts a positive pair and its counterfactual pairs in one batch,
and the loss is CLIP's over that batch (`losses.clip_loss`).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from backend.train.losses import Scale, _mask_for, _per_caption_negatives, clip_loss, negclip_loss


def tripletclip_loss(I: Tensor, T: Tensor, I_neg: Tensor, T_neg: Tensor, s: Scale,
                     valid: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """TripletCLIP (Patel et al., NeurIPS 2024), the symmetric negative-image term:

    ``L = L_NegCLIP(I, T; T') + L_NegCLIP(I', T'; T)``

    where ``T'`` is each caption's hard negative, ``I'`` the image generated for
    ``T'``, and ``L_NegCLIP(X, Y; Z) = (CE(s X [Y; Z]^T, ar) + CE(s Y X^T, ar)) / 2``:
    the negative pairs are trained as positives of their own, each side's
    captions being the other side's extra columns. The sum is not halved (the
    authors' ``tripletclip_loss`` adds the two terms). ``valid`` (B,) marks the
    items that have a negative image and caption: the others are left out of
    both terms' negative sides (the second term's batch then has only the valid
    negative pairs).
    """
    mask = _mask_for(T_neg, valid)
    first, first_parts = negclip_loss(I, T, T_neg, s, valid=mask)
    second = negclip_loss(I_neg[mask], T_neg[mask], T, s)[0] if mask.any() else first.new_zeros(())
    return first + second, {"positive": first, "negative": second, "i2t": first_parts["i2t"],
                            "t2i": first_parts["t2i"]}


def _smoothed_targets(valid: Tensor, smoothing: float) -> Tensor:
    """FSC-CLIP's label smoothing over [positive, negatives]: ``eps / (n + 1)`` to each of the n valid negatives,
    ``1 - eps + eps / (n + 1)`` to the positive, 0 to an invalid slot."""
    share = smoothing / (valid.sum(dim=1, keepdim=True) + 1)
    targets = torch.cat([1 - smoothing + share, share.expand_as(valid) * valid], dim=1)
    return targets


def fsc_clip_loss(I: Tensor, T: Tensor, N: Tensor, s: Scale, weight: float = 0.5, gamma: float = 2.0,
                  smoothing: float = 0.02, valid: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """FSC-CLIP (Oh et al., EMNLP 2024), its global hard-negative loss with focal modulation and label smoothing:

    ``L = L_CLIP(I, T) + w * mean_i sum_c y_ic (1 - p_ic)^gamma (-log p_ic)``

    with ``p_i = softmax(s [I_i T_i, I_i N_i1, ..., I_i N_iK])`` over the image's own
    caption and its own hard negatives (no in-batch columns), and targets
    ``y_i0 = 1 - eps + eps/(n_i+1)``, ``y_ik = eps/(n_i+1)`` for each of its n_i
    valid negatives. The CLIP term sees the positive captions only. The mean runs
    over the images with at least one valid negative. The paper's settings:
    gamma 2, eps 0.02, w 0.5 (COCO; 1.0 on CC3M). Unlike the authors' code,
    where a missing negative is a zero vector whose logit 0 stays in the softmax,
    an invalid slot here is no column at all (as in every loss of this lab); with
    every negative valid the two agree. The paper's local (token-level) term is
    not included.
    """
    negatives = _per_caption_negatives(N)
    mask = _mask_for(N, valid).reshape(negatives.shape[:-1])
    negatives = negatives.masked_fill(~mask[..., None], 0.0)
    clip, _ = clip_loss(I, T, s)
    rows = mask.any(dim=1)
    logits = s * torch.cat([(I * T).sum(-1, keepdim=True), torch.einsum("bd,bkd->bk", I, negatives)], dim=1)
    columns = torch.cat([torch.ones_like(mask[:, :1]), mask], dim=1)[rows]
    log_p = F.log_softmax(logits[rows].masked_fill(~columns, float("-inf")), dim=1).masked_fill(~columns, 0.0)
    focal = -(1 - log_p.exp()).pow(gamma) * log_p  # an absent column: log p := 0, so its term and gradient are 0
    targets = _smoothed_targets(mask[rows].to(log_p.dtype), smoothing)
    per_image = (targets * focal).sum(dim=1)
    hard = per_image.mean() if len(per_image) else clip.new_zeros(())
    return clip + weight * hard, {"clip": clip, "hard_negative": hard}


def _eqsim_scores(I: Tensor, T: Tensor, I_neg: Tensor, T_neg: Tensor, s: Scale,
                  pre_softmax: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per group, S(I0,T0), S(I0,T1), S(I1,T0), S(I1,T1): image rows against the whole batch's captions,
    softmaxed per image row first (the authors' ``score_pre_softmax``)."""
    images, texts = torch.cat([I, I_neg]), torch.cat([T, T_neg])
    scores = s * images @ texts.T
    if pre_softmax:
        scores = scores.softmax(dim=1)
    b = len(I)
    own, partner = torch.arange(b, device=I.device), torch.arange(b, 2 * b, device=I.device)
    return scores[own, own], scores[own, partner], scores[partner, own], scores[partner, partner]


def eqsim_loss(I: Tensor, T: Tensor, I_neg: Tensor, T_neg: Tensor, s: Scale, weight: float = 0.5,
               margin: float = 0.1, pre_softmax: bool = True) -> tuple[Tensor, dict[str, Tensor]]:
    """CLIP over the 2x2 groups' batch plus the EqSim regulariser (Wang et al., ICCV 2023, "Equivariant Similarity
    for Vision-Language Foundation Models").

    Each group is a pair and its counterfactual, (I0, T0) and (I1, T1) = (I', T').
    With S(I, T) the batch's similarity (softmaxed per image row), the change a
    semantic edit makes must be the same seen from either side:

    ``L_eq = w * max(0, MSE(S00 - S01, S11 - S10) - m) + w * max(0, MSE(S00 - S10, S11 - S01) - m)``

    (text side, then image side; ``Sij = S(I_i, T_j)``; the MSE runs over the
    groups). ``L = L_CLIP([I; I'], [T; T']) + L_eq``. The paper's settings: w 0.5,
    m 0.1, scores softmaxed before the regulariser.
    """
    s00, s01, s10, s11 = _eqsim_scores(I, T, I_neg, T_neg, s, pre_softmax)
    text_side = weight * (F.mse_loss(s00 - s01, s11 - s10) - margin).clamp(min=0.0)
    image_side = weight * (F.mse_loss(s00 - s10, s11 - s01) - margin).clamp(min=0.0)
    clip, _ = clip_loss(torch.cat([I, I_neg]), torch.cat([T, T_neg]), s)
    return clip + text_side + image_side, {"clip": clip, "eq_text": text_side, "eq_image": image_side}
