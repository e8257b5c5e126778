"""Training data of the toy world: pretraining pairs, finetuning sets, zero-shot sets.

All generators are pure functions of ``seed`` (numpy ``default_rng``), and
every caption they return has been checked with the oracle, so labels are
exact: captions and positives true of their image, negatives false.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .captions import dense_caption, pick, sparse_caption
from .grammar import Caption, realise
from .negative_images import negative_scene
from .oracle import evaluate
from .render import render_batch
from .scene import COLOURS, SHAPES, Scene, make_object, sample_background, sample_scene
from .variants import NEGATIVE_KINDS, POSITIVE_KINDS, negative_caption, positive_caption

IMAGEABLE_NEGATIVE_KINDS: tuple[str, ...] = tuple(k for k in NEGATIVE_KINDS if not k.startswith("add_"))
"""Negative kinds that admit a negative image (an added object or attribute
entails the original caption, so no image shows the negative without it)."""


@dataclass(frozen=True)
class CaptionedImages:
    """Images (N, H, W, 3) uint8 with one true caption each."""

    images: np.ndarray
    captions: list[str]
    scenes: list[Scene]


@dataclass(frozen=True)
class FinetuneSet:
    """Dense captions with hard negatives, hard positives and negative images.

    ``negatives[i]`` maps each applicable negative kind to a false caption of
    image i, ``positives[i]`` each applicable positive kind to a true
    rewording. ``negative_images[i]`` shows ``negative_image_captions[i]``
    (one of the negatives) and not ``captions[i]`` (BiVLC / TROHN-Img).
    """

    images: np.ndarray
    captions: list[str]
    scenes: list[Scene]
    negatives: list[dict[str, str]]
    positives: list[dict[str, str]]
    negative_images: np.ndarray
    negative_image_captions: list[str]
    negative_scenes: list[Scene]


@dataclass(frozen=True)
class ZeroShotSet:
    """Single-object images labelled by one attribute, with one prompt per class."""

    attribute: str  # "shape" or "colour"
    images: np.ndarray
    labels: np.ndarray  # int64 index into classnames
    classnames: list[str]
    prompts: list[str]


def pretraining_pairs(n: int, seed: int, resolution: int = 64, max_objects: int = 3) -> CaptionedImages:
    """``n`` images with incomplete, attribute-sparse captions (web-like pretraining)."""
    rng = np.random.default_rng(seed)
    scenes = [sample_scene(rng, max_objects=max_objects) for _ in range(n)]
    captions = [sparse_caption(s, rng) for s in scenes]
    assert all(evaluate(c, s) for c, s in zip(captions, scenes))
    return CaptionedImages(render_batch(scenes, resolution), [realise(c) for c in captions], scenes)


def _variants(caption: Caption, scene: Scene, rng: np.random.Generator
              ) -> tuple[dict[str, Caption], dict[str, Caption]]:
    negatives = {k: negative_caption(caption, scene, k, rng) for k in NEGATIVE_KINDS}
    positives = {k: positive_caption(caption, scene, k, rng) for k in POSITIVE_KINDS}
    return ({k: c for k, c in negatives.items() if c is not None},
            {k: c for k, c in positives.items() if c is not None})


def finetuning_set(n: int, seed: int, resolution: int = 64, max_objects: int = 3) -> FinetuneSet:
    """``n`` dense captions (colours always, two objects when present) with variants.

    An item is kept only if one of its imageable negatives has a negative
    image; with dense captions this almost always succeeds at the first try.
    """
    rng = np.random.default_rng(seed)
    items: list[tuple] = []
    while len(items) < n:
        scene = sample_scene(rng, max_objects=max_objects)
        caption = dense_caption(scene, rng)
        negatives, positives = _variants(caption, scene, rng)
        imageable = [k for k in IMAGEABLE_NEGATIVE_KINDS if k in negatives]
        if not imageable:
            continue
        kind = pick(rng, imageable)
        neg_scene = negative_scene(caption, negatives[kind], rng)
        if neg_scene is not None:
            items.append((scene, caption, negatives, positives, negatives[kind], neg_scene))
    scenes = [it[0] for it in items]
    neg_scenes = [it[5] for it in items]
    return FinetuneSet(
        images=render_batch(scenes, resolution),
        captions=[realise(it[1]) for it in items],
        scenes=scenes,
        negatives=[{k: realise(c) for k, c in it[2].items()} for it in items],
        positives=[{k: realise(c) for k, c in it[3].items()} for it in items],
        negative_images=render_batch(neg_scenes, resolution),
        negative_image_captions=[realise(it[4]) for it in items],
        negative_scenes=neg_scenes,
    )


def zero_shot_prompt(attribute: str, value: str) -> str:
    """Class prompt: "a photo of a {shape}" or "a photo of a(n) {colour} shape"."""
    if attribute == "shape":
        return f"a photo of a {value}"
    article = "an" if value[0] in "aeiou" else "a"
    return f"a photo of {article} {value} shape"


def zero_shot_set(attribute: str, n_per_class: int, seed: int, resolution: int = 64) -> ZeroShotSet:
    """Balanced single-object classification set for "shape" or "colour"."""
    classnames = {"shape": list(SHAPES), "colour": list(COLOURS)}[attribute]
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(len(classnames)), n_per_class))
    scenes = [Scene((make_object(rng, int(rng.integers(9)), **{attribute: classnames[k]}),),
                    sample_background(rng)) for k in labels]
    return ZeroShotSet(attribute, render_batch(scenes, resolution), labels.astype(np.int64),
                       classnames, [zero_shot_prompt(attribute, c) for c in classnames])
