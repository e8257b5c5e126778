"""Toy world: procedural scenes, exact captions, benchmarks and a tiny CLIP, as a plug-in (`plugin.py`).

A small world of coloured shapes in spatial relations whose captions come
from a grammar with exact semantics (``holds``), so every label is known to
be right. It is the offline default world of the app and a testbed for
training, sweeps and annotation; generic code reaches it only through the
hooks it registers (`backend.plugins`).

Every name below is loaded from its module on first access (PEP 562): the
modules that need torch or open_clip (``model``, ``tokenizer``) cost seconds to
import, and registering the plug-in must not pay that.
"""
from __future__ import annotations

import importlib
from typing import Any

# Eager: the function `render` shares its module's name, and once `backend.toyworld.render` is imported the
# package attribute would be the module instead (numpy only: cheap).
from backend.toyworld.render import render, render_batch, to_pil  # noqa: F401  (re-exported in __all__)

_NAMES = {
    **dict.fromkeys(("BENCHMARK_SPECS", "BENCHMARK_VERSION", "BIVLC_TYPES", "BenchmarkSpec", "BivlcItem",
                     "HARD_POSITIVE_SUBSETS", "HardPositiveItem", "OrderItem", "PairItem", "RetrievalSet",
                     "SUGARCREPE_TYPES",
                     "build_aro_order", "build_bivlc", "build_hard_positives", "build_retrieval",
                     "build_sugarcrepe", "build_zero_shot"), "benchmarks"),
    **dict.fromkeys(("complete_caption", "dense_caption", "sparse_caption"), "captions"),
    **dict.fromkeys(("CaptionedImages", "FinetuneSet", "IMAGEABLE_NEGATIVE_KINDS", "ZeroShotSet", "finetuning_set",
                     "pretraining_pairs", "zero_shot_prompt", "zero_shot_set"), "datasets"),
    **dict.fromkeys(("Caption", "CaptionParseError", "KINDS", "NounPhrase", "parse", "realise"), "grammar"),
    **dict.fromkeys(("MODEL_NAME", "create_toy_model"), "model"),
    **dict.fromkeys(("negative_scene", "scene_for_caption"), "negative_images"),
    **dict.fromkeys(("evaluate", "holds"), "oracle"),
    **dict.fromkeys(("PERTURBATIONS", "order_perturbations"), "order"),
    **dict.fromkeys(("COLOURS", "RELATIONS", "RELATION_MARGIN", "SHAPES", "SIZES", "Scene", "SceneObject",
                     "sample_scene", "scene_relations"), "scene"),
    **dict.fromkeys(("ToyTokenizer",), "tokenizer"),
    **dict.fromkeys(("NEGATIVE_KINDS", "POSITIVE_KINDS", "hard_negative", "hard_positive", "negative_caption",
                     "positive_caption", "replace_pair"), "variants"),
}
__all__ = sorted([*_NAMES, "render", "render_batch", "to_pil"])


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
