"""Toy world: procedural scenes, exact captions, benchmarks and a tiny CLIP.

A small world of coloured shapes in spatial relations whose captions come
from a grammar with exact semantics (``holds``), so every label is known to
be right. It is the offline default world of the app and a testbed for
training, sweeps and annotation.

``create_toy_model`` and ``MODEL_NAME`` are loaded on first access, because
importing open_clip takes seconds and most users only need scenes and texts;
loading them (or ``import backend.toyworld.model``) registers the
``toyclip-v1`` config with open_clip.
"""
from typing import Any

from .benchmarks import (BENCHMARK_SPECS, BENCHMARK_VERSION, BIVLC_TYPES, HARD_POSITIVE_SUBSETS,
                         SUGARCREPE_TYPES, BenchmarkSpec, BivlcItem, HardPositiveItem, OrderItem,
                         PairItem, RetrievalSet, build_aro_order, build_bivlc, build_hard_positives,
                         build_retrieval, build_sugarcrepe, build_zero_shot)
from .captions import complete_caption, dense_caption, sparse_caption
from .datasets import (IMAGEABLE_NEGATIVE_KINDS, CaptionedImages, FinetuneSet, ZeroShotSet,
                       finetuning_set, pretraining_pairs, zero_shot_prompt, zero_shot_set)
from .grammar import KINDS, Caption, CaptionParseError, NounPhrase, parse, realise
from .negative_images import negative_scene, scene_for_caption
from .oracle import evaluate, holds
from .order import PERTURBATIONS, order_perturbations
from .render import render, render_batch, to_pil
from .scene import (COLOURS, RELATION_MARGIN, RELATIONS, SHAPES, SIZES, Scene, SceneObject, sample_scene,
                    scene_relations)
from .tokenizer import ToyTokenizer
from .variants import (NEGATIVE_KINDS, POSITIVE_KINDS, hard_negative, hard_positive,
                       negative_caption, positive_caption, replace_pair)

__all__ = [
    "BENCHMARK_SPECS", "BENCHMARK_VERSION", "BIVLC_TYPES", "HARD_POSITIVE_SUBSETS", "SUGARCREPE_TYPES",
    "BenchmarkSpec", "BivlcItem", "HardPositiveItem", "OrderItem", "PairItem", "RetrievalSet",
    "build_aro_order", "build_bivlc", "build_hard_positives", "build_retrieval", "build_sugarcrepe",
    "build_zero_shot", "complete_caption", "dense_caption", "sparse_caption",
    "KINDS", "IMAGEABLE_NEGATIVE_KINDS", "CaptionedImages", "FinetuneSet", "ZeroShotSet", "finetuning_set",
    "pretraining_pairs", "zero_shot_prompt", "zero_shot_set", "Caption", "CaptionParseError",
    "NounPhrase", "parse", "realise", "MODEL_NAME", "create_toy_model", "negative_scene",
    "scene_for_caption", "evaluate", "holds", "PERTURBATIONS", "order_perturbations", "render",
    "render_batch", "to_pil", "COLOURS", "RELATION_MARGIN", "SHAPES", "SIZES", "Scene", "SceneObject",
    "sample_scene", "scene_relations", "RELATIONS", "ToyTokenizer", "NEGATIVE_KINDS", "POSITIVE_KINDS", "hard_negative",
    "hard_positive", "negative_caption", "positive_caption", "replace_pair",
]


def __getattr__(name: str) -> Any:
    """Lazy access to the open_clip-dependent names (PEP 562)."""
    if name in ("MODEL_NAME", "create_toy_model"):
        from . import model
        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
