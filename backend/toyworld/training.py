"""The built-in world as training data (the data-source hook of `backend.plugins`) and its model built from
scratch (the model-builder hook: ``toyworld:random``, what ``toyworld pretrain`` starts from).

``toyworld-pretrain`` is sparse captioned scenes; ``toyworld-finetune`` the dense finetuning set with its
ground-truth negatives, positives and rendered negative images, each perturbation family standing for the
negative kinds it would produce on these captions (`FAMILY_KINDS`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from backend.toyworld.datasets import finetuning_set, pretraining_pairs
from backend.toyworld.variants import hard_negative
from backend.train.data import ImageBank, TrainData
from backend.train.losses import CE_CLIP_TYPES
from backend.train.transforms import TrainTransform

RESOLUTION = 64  # the built-in world's images are rendered at the toy model's input size
# Which ground-truth negative kinds each perturbation family stands for.
FAMILY_KINDS = {
    "negclip_swap": ("swap_att", "swap_rel"),
    "binding_swap": ("swap_att", "swap_rel"),
    "replace": ("replace_colour", "replace_size", "replace_shape", "replace_rel"),
    "aro_order": ("swap_rel", "flip_rel"),
    "ce_clip": ("swap_rel", "replace_colour", "replace_size", "replace_shape"),
}
# CE-CLIP's types on the world's captions. "relation" = swap two nouns: around a relation that is
# swap_rel, in "X and Y" it moves each attribute set to the other shape, i.e. swap_att. The world
# has no verbs, so "action" is never valid (masked, as CE-CLIP masks a missing type).
CE_CLIP_KINDS = {"relation": ("swap_att", "swap_rel"), "attribute": ("replace_colour", "replace_size"),
                     "action": (), "object": ("replace_shape",)}


def pretrain_data(config, loaded, augment: TrainTransform | None) -> TrainData:
    """``toyworld-pretrain``: `config.dataset_size` sparse captioned scenes."""
    return world_data("toyworld-pretrain", config.dataset_size, config.seed, loaded.preprocess, config.families,
                       _exact_normalisation(loaded), augment)


def finetune_data(config, loaded, augment: TrainTransform | None) -> TrainData:
    """``toyworld-finetune``: the dense finetuning set, negatives from the families `config.families` names."""
    return world_data("toyworld-finetune", config.dataset_size, config.seed, loaded.preprocess, config.families,
                       _exact_normalisation(loaded), augment)


def _exact_normalisation(loaded) -> tuple | None:
    """(mean, std) when rendered images need only normalising (the model's input is the render size)."""
    cfg = loaded.architecture.get("preprocess_cfg", {})
    size = loaded.architecture.get("model_cfg", {}).get("vision_cfg", {}).get("image_size")
    if size == RESOLUTION and "mean" in cfg and "std" in cfg:
        return cfg["mean"], cfg["std"]
    return None


def world_data(kind: str, size: int, seed: int, preprocess: Callable, families: Sequence[str],
                mean_std: tuple | None = None, augment: TrainTransform | None = None) -> TrainData:
    """The built-in world: sparse pretraining pairs, or the dense finetuning set with ground truth.

    `augment` is the training transform (None: training reads the eval preprocess).
    """
    if kind == "toyworld-pretrain":
        pairs = pretraining_pairs(size, seed, resolution=RESOLUTION)
        return TrainData(ImageBank(preprocess, pairs.images, mean_std=mean_std, augment=augment),
                         list(pairs.captions), [[] for _ in pairs.captions])
    ft = finetuning_set(size, seed, resolution=RESOLUTION)
    kinds = {k for family in families for k in FAMILY_KINDS.get(family, ())}
    rng = np.random.default_rng(seed + 1)
    positive_negatives = []
    for scene, positives in zip(ft.scenes, ft.positives):
        built = {}
        for text in positives.values():
            candidates = (hard_negative(text, scene, k, rng) for k in sorted(kinds))
            built[text] = [c for c in candidates if c]
        positive_negatives.append(built)
    return TrainData(
        images=ImageBank(preprocess, ft.images, mean_std=mean_std, augment=augment), captions=list(ft.captions),
        # an item none of the chosen families applies to (e.g. one object: nothing to swap)
        # falls back to its other ground-truth negatives rather than an empty text
        negatives=[[text for k, text in sorted(n.items()) if k in kinds] or [text for _, text in sorted(n.items())]
                   for n in ft.negatives],
        positives=[list(p.values()) for p in ft.positives], positive_negatives=positive_negatives,
        typed_negatives=[{t: [n[k] for k in CE_CLIP_KINDS[t] if k in n] for t in CE_CLIP_TYPES}
                         for n in ft.negatives],
        negative_images=ImageBank(preprocess, ft.negative_images, mean_std=mean_std, augment=augment),
        negative_image_captions=list(ft.negative_image_captions))


def fresh_model(seed: int) -> tuple:
    """``toyworld:random``: the toy CLIP freshly initialised from `seed`, as (model, preprocess, tokenizer,
    architecture record)."""
    from backend.toyworld.model import IMAGE_MEAN, IMAGE_STD, MODEL_NAME, create_toy_model, model_config

    model, preprocess, tokenizer = create_toy_model(seed)
    architecture = {"model_cfg": model_config(), "architecture": MODEL_NAME, "tokenizer": MODEL_NAME,
                    "activation": "gelu", "preprocess_cfg": {"mean": list(IMAGE_MEAN), "std": list(IMAGE_STD)}}
    return model, preprocess, tokenizer, architecture
