"""From a batch to a loss: encode what the chosen loss needs, gather across ranks, call `backend.losses`.

Each loss of the five papers takes different extra texts and images; this module
is the one place that knows which, so the training loop stays loss-agnostic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

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

    def _texts(self, model, texts: list[str]) -> torch.Tensor:
        return F.normalize(model.encode_text(self.tokenizer(texts).to(self.device)), dim=-1)

    def _images(self, model, images: torch.Tensor) -> torch.Tensor:
        return F.normalize(model.encode_image(images.to(self.device)), dim=-1)

    def _gather(self, *tensors):
        if self.world_size == 1:
            return tensors
        return losses.gather_features(*tensors, rank=self.rank, world_size=self.world_size)

    def __call__(self, model, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        core = model.module if hasattr(model, "module") else model
        s = core.logit_scale.exp()
        I, T = self._images(model, batch.images), self._texts(model, batch.captions)
        kind = self.config.loss
        if kind == "clip":
            return losses.clip_loss(*self._gather(I, T), s)
        if kind == "trohn_img":
            I_neg = self._images(model, batch.negative_images)
            T_neg = self._texts(model, batch.negative_image_captions)
            return losses.trohn_img_loss(*self._gather(I, T, I_neg, T_neg), s)
        if kind == "negclip":
            return self._negclip(model, batch, I, T, s)
        if kind == "hp_hn":
            N, P = self._texts(model, batch.negatives), self._texts(model, batch.positives)
            return losses.hp_hn_loss(*self._gather(I, T, N, P), s, w_hn=self.weights["w_hn"],
                                     w_hp=self.weights["w_hp"])
        return self._ce_clip(model, batch, I, T, s)

    def _negclip(self, model, batch, I, T, s):
        N = self._texts(model, batch.negatives)
        if batch.neighbour_images is None:
            return losses.negclip_loss(*self._gather(I, T, N), s)
        I_nn = self._images(model, batch.neighbour_images)
        T_nn, N_nn = self._texts(model, batch.neighbour_captions), self._texts(model, batch.neighbour_negatives)
        I, T, N, I_nn, T_nn, N_nn = self._gather(I, T, N, I_nn, T_nn, N_nn)
        return losses.negclip_loss(I, T, N, s, I_nn=I_nn, T_nn=T_nn, N_nn=N_nn)

    def _ce_clip(self, model, batch, I, T, s):
        flat = [text or caption for row, caption in zip(batch.typed_negatives, batch.captions) for text in row]
        N = self._texts(model, flat).view(len(batch.captions), len(losses.CE_CLIP_TYPES), -1)
        valid = batch.typed_valid.to(self.device)
        I, T, N, valid = self._gather(I, T, N, valid)
        w = self.weights
        total, parts = losses.ce_clip_loss(I, T, N, valid, s, self.thresholds.value, alpha=w["alpha"],
                                           beta=w["beta"], imc=w["imc"], u=w["u"])
        self.thresholds.update(*losses.pair_scores(I.detach(), T.detach(), N.detach(), s.detach()), valid)
        return total, parts
