"""Contrastive finetuning losses (docs/REFERENCE.md, "Losses").

Conventions shared by every loss, in the style of open_clip's ``loss.py``:

* Embeddings are L2-normalised, so ``a @ b.T`` is a cosine similarity.
* ``logit_scale`` is the multiplier ``s``, already exponentiated (what an
  open_clip model returns, about 100 for OpenAI CLIP). The trainer clamps the
  underlying parameter so that ``s <= 100`` after each optimiser step; the
  losses do not clamp it.
* Each loss returns ``(total, parts)``: ``total`` is what gets
  back-propagated, ``parts`` maps names to its 0-dim components for logging.
* Under DDP, call ``gather_features`` first and feed the global batch: every
  rank then computes the same global loss (open_clip's ``local_loss=False``).

Hard-negative captions ``N`` are either (B, D), one per caption, or
(B, K, D), K per caption; row i always belongs to caption i. A validity mask
of shape ``N.shape[:-1]`` says which exist (a caption may have no negative):
an invalid slot is never a column, a term or a gradient path, whatever the
caller put in it (``None``: all valid).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.distributed as dist
import torch.distributed.nn as dist_nn
import torch.nn.functional as F
from torch import Tensor

CE_CLIP_TYPES = ("relation", "attribute", "action", "object")

Scale = Tensor | float


def _ce(logits: Tensor, labels: Tensor | None = None) -> Tensor:
    """Mean cross-entropy; default labels ``ar(rows)``: row i's positive is column i."""
    if labels is None:
        labels = torch.arange(logits.shape[0], device=logits.device)
    return F.cross_entropy(logits, labels)


def _first_column_ce(pos: Tensor, neg: Tensor) -> Tensor:
    """Mean CE of rows ``[pos_i, neg_i1, ...]`` with target 0 (the positive)."""
    logits = torch.cat([pos[:, None], neg], dim=1)
    return _ce(logits, torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device))


def _flat_negatives(negatives: Tensor) -> Tensor:
    """(B, D) or (B, K, D) -> (B*K, D), caption-major, for use as extra columns."""
    return negatives.reshape(-1, negatives.shape[-1])


def _per_caption_negatives(negatives: Tensor) -> Tensor:
    """(B, D) or (B, K, D) -> (B, K, D)."""
    return negatives[:, None] if negatives.dim() == 2 else negatives


def _mask_for(negatives: Tensor, valid: Tensor | None) -> Tensor:
    """The bool mask of ``negatives``' slots (shape ``negatives.shape[:-1]``); ``None`` means all valid."""
    if valid is None:
        return torch.ones(negatives.shape[:-1], dtype=torch.bool, device=negatives.device)
    if valid.shape != negatives.shape[:-1]:
        raise ValueError(f"mask {tuple(valid.shape)} does not match negatives {tuple(negatives.shape)}")
    return valid.bool()


def _valid_columns(negatives: Tensor, valid: Tensor | None) -> Tensor:
    """(M, D) the valid negatives, caption-major, as extra columns.

    Dropping an invalid negative's row removes its column for every image,
    the same as masking its logit to -inf, and gives its embedding exactly
    zero gradient.
    """
    flat = _flat_negatives(negatives)
    return flat if valid is None else flat[_mask_for(negatives, valid).reshape(-1)]


def _contrastive_terms(images: Tensor, texts: Tensor, extra_texts: Tensor, s: Scale) -> tuple[Tensor, Tensor]:
    """NegCLIP's two directions: extra caption columns on the image->text side only.

    Row i of ``images`` pairs with row i of ``texts``; ``extra_texts`` (M, D)
    are negatives for every image (M may be 0, which gives plain CLIP).
    """
    i2t = _ce(s * images @ torch.cat([texts, extra_texts]).T)
    t2i = _ce(s * texts @ images.T)
    return i2t, t2i


def _total_of(i2t: Tensor, t2i: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    return (i2t + t2i) / 2, {"i2t": i2t, "t2i": t2i}


def clip_loss(I: Tensor, T: Tensor, s: Scale) -> tuple[Tensor, dict[str, Tensor]]:
    """Symmetric InfoNCE: ``(CE(s I T^T, ar) + CE(s T I^T, ar)) / 2``."""
    return _total_of(*_contrastive_terms(I, T, T[:0], s))


def negclip_loss(
    I: Tensor,
    T: Tensor,
    N: Tensor,
    s: Scale,
    I_nn: Tensor | None = None,
    T_nn: Tensor | None = None,
    N_nn: Tensor | None = None,
    valid: Tensor | None = None,
    valid_nn: Tensor | None = None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """NegCLIP: hard-negative captions are extra columns for image->text only.

    Every image sees all B*K negatives of the batch (B x B(1+K) logits); the
    text->image side is plain B x B. With hard-negative images (``I_nn`` with
    their captions ``T_nn`` and negatives ``N_nn``, all or none), the batch is
    ``[I; I_nn]`` against ``[T; T_nn; N; N_nn]`` (2B x 4B for K=1) and the
    text side is ``[T; T_nn]`` against ``[I; I_nn]`` (2B x 2B).

    ``valid`` / ``valid_nn`` (shape ``N.shape[:-1]`` / ``N_nn.shape[:-1]``,
    default all valid) mark which negatives exist. A caption without one has
    no column at all: encoding a placeholder (e.g. the empty string) would add
    a fake "negative" every image is trained away from. With no valid negative
    in the batch the loss is plain CLIP.
    """
    extras = (I_nn, T_nn, N_nn)
    if any(x is None for x in extras) != all(x is None for x in extras):
        raise ValueError("I_nn, T_nn and N_nn go together")
    if valid_nn is not None and N_nn is None:
        raise ValueError("valid_nn needs N_nn")
    negatives = _valid_columns(N, valid)
    if I_nn is not None and T_nn is not None and N_nn is not None:  # all three or none, as checked above
        I, T = torch.cat([I, I_nn]), torch.cat([T, T_nn])
        negatives = torch.cat([negatives, _valid_columns(N_nn, valid_nn)])
    return _total_of(*_contrastive_terms(I, T, negatives, s))


def pair_scores(I: Tensor, T: Tensor, N: Tensor, s: Scale) -> tuple[Tensor, Tensor]:
    """Logit-scaled ``S(I_i, T_i)`` (B,) and ``S(I_i, N_ik)`` (B, K) for N (B, K, D).

    CE-CLIP's trainer passes them (with ``valid``) to
    ``AdaptiveThresholds.update`` after computing the loss, so the thresholds
    lag one step.
    """
    return s * (I * T).sum(-1), s * torch.einsum("bd,bkd->bk", I, N)


class AdaptiveThresholds:
    """CE-CLIP's per-type CMR thresholds ``Th_k`` (Eq. 5 and 7).

    ``value`` (4,) starts at 0. ``update`` sets each type's threshold to the
    batch mean of ``S(I,T) - S(I,T_k)`` over the items whose type-k negative is
    valid, detached and clamped to [0, u] (u = 10 logit units = 0.1 cosine at
    s = 100). A type with no valid item in the batch, or whose mean is NaN
    (e.g. an fp16 overflow), keeps its previous value. Using ``value`` before
    ``update`` in each step gives the paper's lag: step t uses step t-1.
    """

    def __init__(self, u: float = 10.0) -> None:
        self.u = u
        self.value = torch.zeros(len(CE_CLIP_TYPES))

    @torch.no_grad()
    def update(self, S_pos: Tensor, S_neg: Tensor, valid: Tensor) -> Tensor:
        valid = valid.bool()
        gap = torch.where(valid, S_pos[:, None] - S_neg, 0.0)
        count = valid.sum(dim=0)
        mean = gap.sum(dim=0) / count.clamp(min=1)
        fresh = (count > 0) & ~torch.isnan(mean)
        self.value = torch.where(fresh, mean.clamp(0.0, self.u), self.value.to(mean))
        return self.value


def _imc_eq3(T: Tensor, N: Tensor, valid: Tensor, s: Scale) -> Tensor:
    """Paper Eq. 3: mean over captions of ``log sum_k exp(S(T, T_k))`` over the
    caption's own valid negatives; captions with none are left out."""
    rows = valid.any(dim=1)
    if not rows.any():
        return T.new_zeros(())
    sims = s * torch.einsum("bd,bkd->bk", T[rows], N[rows])
    return sims.masked_fill(~valid[rows], float("-inf")).logsumexp(dim=1).mean()


def _imc_contrastive(I: Tensor, T: Tensor, valid_negatives: Tensor, s: Scale) -> Tensor:
    """Authors' Jan 2024 code: ``CE([S(I_i,T_i), S(T_i, every valid negative
    in the batch)], 0)``, pushing each caption away from all hard negatives."""
    return _first_column_ce(s * (I * T).sum(-1), s * T @ valid_negatives.T)


def _cmr(S_pos: Tensor, S_neg: Tensor, valid: Tensor, thresholds: Tensor) -> Tensor:
    """Mean over valid (item, type) of ``relu(S(I,T_k) - S(I,T) + Th_k)`` (Eq. 6); 0 if none."""
    hinge = F.relu(S_neg - S_pos[:, None] + thresholds)
    return torch.where(valid, hinge, 0.0).sum() / valid.sum().clamp(min=1)


def ce_clip_loss(
    I: Tensor,
    T: Tensor,
    N: Tensor,
    valid: Tensor,
    s: Scale,
    thresholds: Tensor,
    alpha: float = 0.2,
    beta: float = 0.4,
    imc: str = "contrastive",
    u: float = 10.0,
    aux_types: Sequence[str] = CE_CLIP_TYPES,
) -> tuple[Tensor, dict[str, Tensor]]:
    """CE-CLIP: ``L_itc(hn) + alpha * L_imc + beta * L_cmr`` (Eq. 8).

    ``N`` (B, 4, D) holds the relation/attribute/action/object negatives
    (``CE_CLIP_TYPES``) and ``valid`` (B, 4) says which exist. Invalid slots
    are zeroed before use, so whatever the caller put there (the authors
    encoded a placeholder string and kept it as a negative) never reaches the
    loss or the gradients. ``L_itc(hn)`` is NegCLIP with the valid negatives
    as extra columns: an invalid column is dropped for every image, which is
    the same as masking it to -inf. ``thresholds`` (4,) are the lagged values
    from ``AdaptiveThresholds``; they are detached and clamped to [0, u] here
    as well. ``imc`` is "contrastive" (the authors' Jan 2024 code, which
    docs/REFERENCE.md ("Losses") judges closest to the paper's intent) or "eq3" (Eq. 3 as
    printed). The paper's optimum is alpha=0.2,
    beta=0.4; the authors' script used 0.3 / 0.2. The paper's extra
    ``-S(T, T_rel)`` CMR term is not included.

    ``aux_types`` (default: all four) limits IMC and CMR to some types while
    ``L_itc(hn)`` keeps every valid negative: the ablation that separates what
    the extra terms do per type from what the extra negatives do.
    """
    if N.shape[1] != len(CE_CLIP_TYPES) or valid.shape != N.shape[:2]:
        raise ValueError(f"expected N (B, 4, D) and valid (B, 4), got {tuple(N.shape)}, {tuple(valid.shape)}")
    unknown = sorted(set(aux_types) - set(CE_CLIP_TYPES))
    if unknown:
        raise ValueError(f"aux_types must be among {CE_CLIP_TYPES}, got {unknown}")
    valid = valid.bool()
    N = N.masked_fill(~valid[..., None], 0.0)
    thresholds = thresholds.detach().to(N).clamp(0.0, u)
    itc, _ = _total_of(*_contrastive_terms(I, T, N[valid], s))
    aux = valid & torch.tensor([t in aux_types for t in CE_CLIP_TYPES], device=valid.device)
    if imc == "contrastive":
        imc_loss = _imc_contrastive(I, T, N[aux], s)
    elif imc == "eq3":
        imc_loss = _imc_eq3(T, N, aux, s)
    else:
        raise ValueError(f"imc must be 'contrastive' or 'eq3', got {imc!r}")
    cmr = _cmr(*pair_scores(I, T, N, s), aux, thresholds)
    parts = {"itc": itc, "imc": imc_loss, "cmr": cmr}
    parts.update({f"th_{name}": th for name, th in zip(CE_CLIP_TYPES, thresholds)})
    return itc + alpha * imc_loss + beta * cmr, parts


def _hard_negative_ce(S_pos: Tensor, S_neg: Tensor, valid: Tensor) -> Tensor:
    """Mean over the items with a valid negative of ``CE([S_pos, S_neg valid...], 0)``; 0 if none.

    Invalid columns are -inf (softmax weight 0). An item with no valid
    negative would score CE([S_pos], 0) = 0 and only dilute the mean, so it
    is left out of the denominator; a batch with none gives 0, not NaN.
    """
    logits = torch.cat([S_pos[:, None], S_neg.masked_fill(~valid, float("-inf"))], dim=1)
    per_item = F.cross_entropy(logits, torch.zeros_like(S_pos, dtype=torch.long), reduction="none")
    has_negative = valid.any(dim=1)
    return torch.where(has_negative, per_item, 0.0).sum() / has_negative.sum().clamp(min=1)


def hp_hn_loss(
    I: Tensor,
    T: Tensor,
    N: Tensor,
    P: Tensor,
    s: Scale,
    w_hn: float = 1.0,
    w_hp: float = 1.0,
    valid: Tensor | None = None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Kamath et al. (following SVLC): ``L_clip + w_hn L_hn + w_hp L_hp``.

    ``L_hn``: per image, CE over [its caption, its own negative(s)] with
    target the caption (no in-batch columns), averaged over the images whose
    caption has a valid negative (``valid``, shape ``N.shape[:-1]``, default
    all): a missing negative is no evidence either way, so it neither counts
    as an easy win nor enters the gradient. ``L_hp`` (SVLC's analogy loss):
    ``(CE(s I P^T, ar) + CE(s T P^T, ar)) / 2`` with P (B, D) the hard
    positives. The paper's ablation sweeps w_hn in 0..1 with w_hp fixed.
    """
    negatives = _per_caption_negatives(N)
    mask = _mask_for(N, valid).reshape(negatives.shape[:-1])
    # zeroed, so that whatever sits in an invalid slot (even NaN) reaches neither loss nor gradients
    negatives = negatives.masked_fill(~mask[..., None], 0.0)
    clip, _ = clip_loss(I, T, s)
    hn = _hard_negative_ce(*pair_scores(I, T, negatives, s), mask)
    hp = (_ce(s * I @ P.T) + _ce(s * T @ P.T)) / 2
    return clip + w_hn * hn + w_hp * hp, {"clip": clip, "hn": hn, "hp": hp}


def trohn_img_loss(
    I: Tensor, T: Tensor, I_neg: Tensor, T_neg: Tensor, s: Scale
) -> tuple[Tensor, dict[str, Tensor]]:
    """BiVLC TROHN-Img: symmetric CLIP over ``[I; I_neg]`` and ``[T; T_neg]`` (2B x 2B).

    A negative image is the positive of its negative caption, so both are
    ordinary pairs of a twice-larger batch.
    """
    return clip_loss(torch.cat([I, I_neg]), torch.cat([T, T_neg]), s)


def _gather_one(x: Tensor, rank: int, world_size: int, gather_with_grad: bool) -> Tensor:
    if gather_with_grad and x.is_floating_point():
        return torch.cat(dist_nn.all_gather(x), dim=0)
    shards = [torch.empty_like(x) for _ in range(world_size)]
    dist.all_gather(shards, x.contiguous())
    shards[rank] = x  # keep the autograd link to the local shard
    return torch.cat(shards, dim=0)


def gather_features(
    *tensors: Tensor | None, rank: int, world_size: int, gather_with_grad: bool = True
) -> tuple[Tensor | None, ...]:
    """All-gather per-rank batches along dim 0 so every rank sees the global batch.

    Like open_clip's ``gather_features(local_loss=False)``. Concatenating along
    dim 0 keeps (B, K, D) negatives and (B, 4) masks attached to their caption.
    Every rank must hold the same local batch size; ``None`` passes through.

    Gradients: with ``gather_with_grad`` (``torch.distributed.nn.all_gather``)
    the backward sums every rank's gradient into each shard, so after DDP's
    gradient averaging each rank holds exactly the gradient of the single-
    process loss on the global batch. Without it, only the local shard keeps
    its autograd link (plain all_gather, own slot replaced), so each rank gets
    its shard's part of that gradient and DDP's average is the global gradient
    divided by world_size (open_clip's default). Non-float tensors (masks) are
    gathered without gradient.
    """
    if world_size == 1:
        return tensors
    return tuple(None if x is None else _gather_one(x, rank, world_size, gather_with_grad) for x in tensors)
