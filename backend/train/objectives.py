"""From a batch to a loss: encode what the chosen loss needs, gather across ranks, call `backend.losses`.

Each loss of the five papers takes different extra texts and images; this module
is the one place that knows which, so the training loop stays loss-agnostic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from backend import losses
from backend.train.config import TrainConfig
from backend.train.data import Batch


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
        image_features, text_features, s = model(torch.cat(images).to(self.device),
                                                 self.tokenizer(flat).to(self.device))[:3]
        image_parts = image_features.split([len(x) for x in images])
        text_parts = text_features.split([len(group) for group in texts])
        return image_parts, text_parts, s

    def __call__(self, model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        kind, captions = self.config.loss, batch.captions
        if kind == "clip":
            (I,), (T,), s = self._encode(model, [batch.images], [captions])
            return losses.clip_loss(*self._gather(I, T), s)
        if kind == "trohn_img":
            (I, I_neg), (T, T_neg), s = self._encode(model, [batch.images, batch.negative_images],
                                                     [captions, batch.negative_image_captions])
            return losses.trohn_img_loss(*self._gather(I, T, I_neg, T_neg), s)
        if kind == "hp_hn":
            (I,), (T, N, P), s = self._encode(model, [batch.images], [captions, batch.negatives, batch.positives])
            return losses.hp_hn_loss(*self._gather(I, T, N, P), s, w_hn=self.weights["w_hn"],
                                     w_hp=self.weights["w_hp"])
        if kind == "negclip":
            return self._negclip(model, batch, captions)
        return self._ce_clip(model, batch, captions)

    def _negclip(self, model, batch, captions):
        if batch.neighbour_images is None:
            (I,), (T, N), s = self._encode(model, [batch.images], [captions, batch.negatives])
            return losses.negclip_loss(*self._gather(I, T, N), s)
        (I, I_nn), (T, N, T_nn, N_nn), s = self._encode(
            model, [batch.images, batch.neighbour_images],
            [captions, batch.negatives, batch.neighbour_captions, batch.neighbour_negatives])
        I, T, N, I_nn, T_nn, N_nn = self._gather(I, T, N, I_nn, T_nn, N_nn)
        return losses.negclip_loss(I, T, N, s, I_nn=I_nn, T_nn=T_nn, N_nn=N_nn)

    def _ce_clip(self, model, batch, captions):
        flat = [text or caption for row, caption in zip(batch.typed_negatives, captions) for text in row]
        (I,), (T, N), s = self._encode(model, [batch.images], [captions, flat])
        N = N.view(len(captions), len(losses.CE_CLIP_TYPES), -1)
        valid = batch.typed_valid.to(self.device)
        I, T, N, valid = self._gather(I, T, N, valid)
        w = self.weights
        total, parts = losses.ce_clip_loss(I, T, N, valid, s, self.thresholds.value, alpha=w["alpha"],
                                           beta=w["beta"], imc=w["imc"], u=w["u"],
                                           aux_types=w["aux_types"])
        self.thresholds.update(*losses.pair_scores(I.detach(), T.detach(), N.detach(), s.detach()), valid)
        return total, parts
