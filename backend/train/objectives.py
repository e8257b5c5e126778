"""From a batch to a loss: encode what the chosen loss needs, gather across ranks, call `backend.train.losses`.

Each loss of the five papers takes different extra texts and images; this module
is the one place that knows which, so the training loop stays loss-agnostic.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from backend.train import losses, losses_later
from backend.train.config import NEGATIVE_IMAGE_LOSSES, TrainConfig
from backend.train.data import Batch, TrainData


def check_data(loss: str, data: TrainData) -> None:
    """Refuse, before the first step, data that lacks what `loss` trains on (TROHN-Img, TripletCLIP, EqSim:
    negative images)."""
    if loss in NEGATIVE_IMAGE_LOSSES and data.negative_images is None:
        raise ValueError(f"loss {loss} trains on negative images, and this data has none: a manifest needs a "
                         "negative_image (and negative_caption) on every row")


@dataclass
class Objective:
    """Computes one step's loss; holds CE-CLIP's lagged thresholds between steps."""

    config: TrainConfig
    tokenizer: Callable
    device: str
    rank: int = 0
    world_size: int = 1
    thresholds: losses.AdaptiveThresholds = field(default_factory=losses.AdaptiveThresholds)

    def __post_init__(self) -> None:
        self.weights = self.config.weights
        if self.config.loss == "ce_clip":
            self.thresholds = losses.AdaptiveThresholds(u=self.weights["u"])

    def _gather(self, *tensors):
        if self.world_size == 1:
            return tensors
        return losses.gather_features(*tensors, rank=self.rank, world_size=self.world_size)

    def _encode(self, model, images: list[torch.Tensor], texts: list[list[str]]):
        """One forward call for every image and text the loss needs, split back into pieces.

        Going through ``model(...)`` (not ``encode_image``) is what DDP needs to
        synchronise gradients, logit_scale included; one call per tower is also faster.
        """
        flat = [text for group in texts for text in group]
        image_features, text_features, s = model_outputs(model(torch.cat(images).to(self.device),
                                                               self.tokenizer(flat).to(self.device)))
        image_parts = image_features.split([len(x) for x in images])
        text_parts = text_features.split([len(group) for group in texts])
        return image_parts, text_parts, s

    def _mask(self, valid: torch.Tensor) -> torch.Tensor:
        return valid.to(self.device, torch.bool)

    def __call__(self, model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        kind, captions = self.config.loss, batch.captions
        if kind == "clip":
            (I,), (T,), s = self._encode(model, [batch.images], [captions])
            I, T = self._gather(I, T)
            return losses.clip_loss(I, T, s)
        if kind in NEGATIVE_IMAGE_LOSSES or (kind == "countercurate" and batch.negative_images is not None):
            return self._negative_images(model, batch, captions)
        if kind == "countercurate":  # grouped batches (a manifest's group column): CLIP over whole groups
            (I,), (T,), s = self._encode(model, [batch.images], [captions])
            I, T = self._gather(I, T)
            return losses.clip_loss(I, T, s)
        if kind == "fsc_clip":
            valid = self._mask(batch.negatives_valid)
            (I,), (T, N), s = self._encode(model, [batch.images], [captions, only_valid(batch.negatives, valid)])
            I, T, N, valid = self._gather(I, T, scatter_valid(N, valid), valid)
            w = self.weights
            return losses_later.fsc_clip_loss(I, T, N, s, weight=w["weight"], gamma=w["gamma"],
                                              smoothing=w["smoothing"], valid=valid)
        if kind == "hp_hn":
            valid = self._mask(batch.negatives_valid)
            (I,), (T, N, P), s = self._encode(model, [batch.images],
                                              [captions, only_valid(batch.negatives, valid), batch.positives])
            I, T, N, P, valid = self._gather(I, T, scatter_valid(N, valid), P, valid)
            return losses.hp_hn_loss(I, T, N, P, s, w_hn=self.weights["w_hn"], w_hp=self.weights["w_hp"],
                                     valid=valid)
        if kind == "negclip":
            return self._negclip(model, batch, captions)
        return self._ce_clip(model, batch, captions)

    def _negative_images(self, model, batch, captions):
        """The losses over each pair and its negative pair (negative image + its caption)."""
        if batch.negative_images is None:  # `check_data` refuses such a manifest; a shard set is checked here
            raise ValueError(f"loss {self.config.loss!r} trains on negative images: its data needs them (a "
                             "manifest's negative_image and negative_caption columns)")
        (I, I_neg), (T, T_neg), s = self._encode(model, [batch.images, batch.negative_images],
                                                 [captions, batch.negative_image_captions])
        I, T, I_neg, T_neg = self._gather(I, T, I_neg, T_neg)
        kind, w = self.config.loss, self.weights
        if kind == "tripletclip":
            return losses_later.tripletclip_loss(I, T, I_neg, T_neg, s)
        if kind == "eqsim":
            return losses_later.eqsim_loss(I, T, I_neg, T_neg, s, weight=w["weight"], margin=w["margin"],
                                           pre_softmax=w["pre_softmax"])
        return losses.trohn_img_loss(I, T, I_neg, T_neg, s)  # CounterCurate's grouping with one negative pair

    def _negclip(self, model, batch, captions):
        valid = self._mask(batch.negatives_valid)
        if batch.neighbour_images is None:
            (I,), (T, N), s = self._encode(model, [batch.images], [captions, only_valid(batch.negatives, valid)])
            I, T, N, valid = self._gather(I, T, scatter_valid(N, valid), valid)
            return losses.negclip_loss(I, T, N, s, valid=valid)
        valid_nn = self._mask(batch.neighbour_negatives_valid)
        (I, I_nn), (T, N, T_nn, N_nn), s = self._encode(
            model, [batch.images, batch.neighbour_images],
            [captions, only_valid(batch.negatives, valid), batch.neighbour_captions,
             only_valid(batch.neighbour_negatives, valid_nn)])
        I, T, N, I_nn, T_nn, N_nn, valid, valid_nn = self._gather(
            I, T, scatter_valid(N, valid), I_nn, T_nn, scatter_valid(N_nn, valid_nn), valid, valid_nn)
        return losses.negclip_loss(I, T, N, s, I_nn=I_nn, T_nn=T_nn, N_nn=N_nn, valid=valid, valid_nn=valid_nn)

    def _ce_clip(self, model, batch, captions):
        valid = self._mask(batch.typed_valid)
        (I,), (T, N), s = self._encode(model, [batch.images], [captions, only_valid(batch.typed_negatives, valid)])
        I, T, N, valid = self._gather(I, T, scatter_valid(N, valid), valid)
        w = self.weights
        total, parts = losses.ce_clip_loss(I, T, N, valid, s, self.thresholds.value, alpha=w["alpha"],
                                           beta=w["beta"], imc=w["imc"], u=w["u"],
                                           aux_types=w["aux_types"])
        self.thresholds.update(*losses.pair_scores(I.detach(), T.detach(), N.detach(), s.detach()), valid)
        return total, parts


def model_outputs(output) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(image_features, text_features, logit_scale) from an open_clip forward.

    open_clip models return a tuple ``(image, text, logit_scale, ...)`` by
    default and a dict with those keys when built with ``output_dict=True``.
    """
    if isinstance(output, dict):
        return output["image_features"], output["text_features"], output["logit_scale"]
    return tuple(output[:3])


def only_valid(texts: list, valid: torch.Tensor) -> list[str]:
    """The texts (a list, or a list of rows) whose mask entry is set, row-major.

    Only these are tokenized and encoded: a missing negative is never sent
    through the text tower as a placeholder, which also saves its encoding.
    """
    flat = [t for row in texts for t in row] if valid.dim() == 2 else list(texts)
    return [text for text, keep in zip(flat, valid.reshape(-1).tolist(), strict=True) if keep]


def scatter_valid(features: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """(V, D) features of the valid slots -> ``valid.shape + (D,)``, zeros in the invalid slots.

    The loss needs one row per slot (and every rank the same shape to gather);
    the zeros are placeholders the losses mask out, not negatives.
    """
    out = features.new_zeros(*valid.shape, features.shape[-1])
    return out.index_put((valid,), features)
