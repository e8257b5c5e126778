"""Pinned toy benchmarks in the formats of the real ones.

Each builder is a pure function of its ``BenchmarkSpec`` (seed, size,
resolution) and returns plain dataclasses with uint8 images and texts; the
evaluator (elsewhere) scores them with the rules of the real benchmark.
Change ``BENCHMARK_VERSION`` whenever any builder's output changes, so that
results computed on different versions are never compared; ``BENCHMARK_SHA256``
pins the content itself (`content_sha256`: every text and every image byte of
every benchmark), so a change that forgot the version fails a test. Each type or
subset draws from its own ``default_rng([seed, index])`` stream, so types
are independent of each other's sizes.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .captions import complete_caption, dense_caption, pick
from .datasets import ZeroShotSet, zero_shot_set
from .grammar import Caption, NounPhrase, realise
from .negative_images import negative_scene
from .oracle import evaluate
from .order import order_perturbations
from .render import render_batch
from .scene import Scene, SceneObject, sample_scene, scene_relations
from .variants import negative_caption, positive_caption, replace_pair

BENCHMARK_VERSION = "toyworld-bench-1"
BENCHMARK_SHA256 = "01987aa4678093486a8bbb3ae19aa7ed8f94fe67d46069a3a52d2a036d6a0f4d"


@dataclass(frozen=True)
class BenchmarkSpec:
    """Seed, size (per type or subset where the benchmark has them) and resolution."""

    seed: int
    size: int
    resolution: int = 64


BENCHMARK_SPECS: dict[str, BenchmarkSpec] = {
    "sugarcrepe": BenchmarkSpec(seed=1001, size=200),       # per type
    "hard_positives": BenchmarkSpec(seed=1002, size=200),   # per subset
    "bivlc": BenchmarkSpec(seed=1003, size=200),            # per type
    "aro_order": BenchmarkSpec(seed=1004, size=500),
    "retrieval": BenchmarkSpec(seed=1005, size=500),
    "zeroshot_shape": BenchmarkSpec(seed=1006, size=100),   # per class
    "zeroshot_colour": BenchmarkSpec(seed=1007, size=100),  # per class
}

SUGARCREPE_TYPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # type: (negative kinds, caption kinds it applies to)
    "replace_att": (("replace_colour", "replace_size"), ("object", "and", "relation")),
    "replace_obj": (("replace_shape",), ("object", "and", "relation")),
    "replace_rel": (("replace_rel",), ("relation",)),
    "swap_att": (("swap_att",), ("and", "relation")),
    "swap_rel": (("swap_rel",), ("relation",)),
    "add_obj": (("add_obj",), ("object",)),
    "add_att": (("add_att",), ("object", "and", "relation")),
}
BIVLC_TYPES: tuple[str, ...] = tuple(t for t in SUGARCREPE_TYPES if not t.startswith("add_"))
"""add_* negatives entail their positive, so no image shows one without the other."""
HARD_POSITIVE_SUBSETS: tuple[str, ...] = ("replace", "swap")


@dataclass(frozen=True)
class PairItem:
    """SugarCrepe format: one image, a true and a false caption."""

    image: np.ndarray
    positive: str
    negative: str
    type: str
    scene: Scene


@dataclass(frozen=True)
class HardPositiveItem:
    """Kamath et al. format: caption c, hard positive c_p, hard negative c_n."""

    image: np.ndarray
    caption: str
    positive: str
    negative: str
    subset: str  # "replace" or "swap"
    scene: Scene


@dataclass(frozen=True)
class BivlcItem:
    """BiVLC 2x2: caption0 is true of image0 only, caption1 of image1 only."""

    image0: np.ndarray
    image1: np.ndarray
    caption0: str
    caption1: str
    type: str
    scene0: Scene
    scene1: Scene


@dataclass(frozen=True)
class OrderItem:
    """ARO COCO-Order format: the caption and its four order perturbations."""

    image: np.ndarray
    caption: str
    perturbations: tuple[str, ...]
    scene: Scene


@dataclass(frozen=True)
class RetrievalSet:
    """Image i matches caption i and no other caption of the set (checked)."""

    images: np.ndarray
    captions: list[str]
    scenes: list[Scene]


def _rng(spec: BenchmarkSpec, index: int) -> np.random.Generator:
    return np.random.default_rng([spec.seed, index])


def _scene_and_caption(rng: np.random.Generator, caption_kinds: tuple[str, ...]) -> tuple[Scene, Caption]:
    kind = pick(rng, caption_kinds)
    scene = sample_scene(rng, n_objects=int(rng.integers(1 if kind == "object" else 2, 4)))
    caption = dense_caption(scene, rng, kind=kind)
    assert evaluate(caption, scene), "captions are built from the scene graph"
    return scene, caption


def pair_for_type(type_: str, rng: np.random.Generator) -> tuple[Scene, Caption, Caption]:
    """A scene, a true dense caption and a ``type_`` negative (redrawn until one exists)."""
    negative_kinds, caption_kinds = SUGARCREPE_TYPES[type_]
    while True:
        scene, caption = _scene_and_caption(rng, caption_kinds)
        for k in rng.permutation(len(negative_kinds)):
            negative = negative_caption(caption, scene, negative_kinds[k], rng)
            if negative is not None:
                return scene, caption, negative


def build_sugarcrepe(spec: BenchmarkSpec = BENCHMARK_SPECS["sugarcrepe"]) -> dict[str, list[PairItem]]:
    """``spec.size`` (image, positive, negative) items for each SugarCrepe-style type."""
    out = {}
    for index, type_ in enumerate(SUGARCREPE_TYPES):
        rng = _rng(spec, index)
        triples = [pair_for_type(type_, rng) for _ in range(spec.size)]
        images = render_batch([t[0] for t in triples], spec.resolution)
        out[type_] = [PairItem(im, realise(c), realise(n), type_, s)
                      for im, (s, c, n) in zip(images, triples)]
    return out


def _hard_positive_item(subset: str, rng: np.random.Generator) -> tuple[Scene, Caption, Caption, Caption]:
    """REPLACE: synonym vs replaced word at one slot; SWAP: reordered conjuncts vs swapped attributes."""
    while True:
        if subset == "replace":
            scene, caption = _scene_and_caption(rng, ("object", "and", "relation"))
            pair = replace_pair(caption, scene, rng)
        else:
            scene, caption = _scene_and_caption(rng, ("and",))
            positive = positive_caption(caption, scene, "reorder", rng)
            negative = negative_caption(caption, scene, "swap_att", rng)
            pair = None if positive is None or negative is None else (positive, negative)
        if pair is not None:
            return scene, caption, pair[0], pair[1]


def build_hard_positives(spec: BenchmarkSpec = BENCHMARK_SPECS["hard_positives"]
                         ) -> dict[str, list[HardPositiveItem]]:
    """``spec.size`` (image, c, c_p, c_n) items for the REPLACE and SWAP subsets."""
    out = {}
    for index, subset in enumerate(HARD_POSITIVE_SUBSETS):
        rng = _rng(spec, index)
        quads = [_hard_positive_item(subset, rng) for _ in range(spec.size)]
        images = render_batch([q[0] for q in quads], spec.resolution)
        out[subset] = [HardPositiveItem(im, realise(c), realise(p), realise(n), subset, s)
                       for im, (s, c, p, n) in zip(images, quads)]
    return out


def build_bivlc(spec: BenchmarkSpec = BENCHMARK_SPECS["bivlc"]) -> dict[str, list[BivlcItem]]:
    """``spec.size`` 2x2 instances per type, with a constructed negative image."""
    out = {}
    for index, type_ in enumerate(BIVLC_TYPES):
        rng = _rng(spec, index)
        quads: list[tuple[Scene, Scene, Caption, Caption]] = []
        while len(quads) < spec.size:
            scene0, caption0, caption1 = pair_for_type(type_, rng)
            scene1 = negative_scene(caption0, caption1, rng)
            if scene1 is not None:
                quads.append((scene0, scene1, caption0, caption1))
        images0 = render_batch([q[0] for q in quads], spec.resolution)
        images1 = render_batch([q[1] for q in quads], spec.resolution)
        out[type_] = [BivlcItem(i0, i1, realise(c0), realise(c1), type_, s0, s1)
                      for i0, i1, (s0, s1, c0, c1) in zip(images0, images1, quads)]
    return out


def build_aro_order(spec: BenchmarkSpec = BENCHMARK_SPECS["aro_order"]) -> list[OrderItem]:
    """``spec.size`` complete two-object captions with ARO's four order perturbations."""
    rng = _rng(spec, 0)
    rows: list[tuple[Scene, str, tuple[str, ...]]] = []
    while len(rows) < spec.size:
        scene = sample_scene(rng, n_objects=2)
        text = realise(complete_caption(scene, rng))
        try:
            rows.append((scene, text, tuple(order_perturbations(text, rng))))
        except ValueError:  # identical objects: some shuffle cannot change the text
            continue
    images = render_batch([r[0] for r in rows], spec.resolution)
    return [OrderItem(im, text, perturbed, scene) for im, (scene, text, perturbed) in zip(images, rows)]


def _object_key(obj: SceneObject) -> tuple[str, str, str]:
    return (obj.shape, obj.colour, obj.size)


def _phrase_key(np_: NounPhrase) -> tuple[str | None, str | None, str | None]:
    return (np_.shape, np_.colour, np_.size_meaning)


def _satisfied_keys(scene: Scene) -> set[tuple]:
    """Keys (object, relation, object) of every complete caption true of a two-object scene."""
    objs = scene.objects
    return {(_object_key(objs[i]), r, _object_key(objs[j])) for i, r, j in scene_relations(scene)}


def build_retrieval(spec: BenchmarkSpec = BENCHMARK_SPECS["retrieval"]) -> RetrievalSet:
    """``spec.size`` two-object images, each with a complete caption true of it alone.

    A complete caption names every attribute of both objects, so it is true
    of a two-object scene exactly when its key is among the scene's
    satisfied keys; scenes that would create a second match are redrawn.
    """
    rng = _rng(spec, 0)
    scenes: list[Scene] = []
    captions: list[Caption] = []
    caption_keys: set[tuple] = set()
    satisfied: set[tuple] = set()
    while len(scenes) < spec.size:
        scene = sample_scene(rng, n_objects=2)
        caption = complete_caption(scene, rng)
        assert caption.second is not None  # a complete caption of two objects relates them
        key = (_phrase_key(caption.first), caption.relation_meaning,
               _phrase_key(caption.second))
        keys = _satisfied_keys(scene)
        if key in satisfied or keys & caption_keys:
            continue
        scenes.append(scene)
        captions.append(caption)
        caption_keys.add(key)
        satisfied |= keys
    return RetrievalSet(render_batch(scenes, spec.resolution), [realise(c) for c in captions], scenes)


def build_zero_shot(attribute: str, spec: BenchmarkSpec | None = None) -> ZeroShotSet:
    """The pinned zero-shot "shape" or "colour" classification set."""
    spec = spec or BENCHMARK_SPECS[f"zeroshot_{attribute}"]
    return zero_shot_set(attribute, spec.size, spec.seed, spec.resolution)


def build_all() -> dict[str, object]:
    """Every pinned benchmark, by its `BENCHMARK_SPECS` name."""
    return {"sugarcrepe": build_sugarcrepe(), "hard_positives": build_hard_positives(), "bivlc": build_bivlc(),
            "aro_order": build_aro_order(), "retrieval": build_retrieval(),
            "zeroshot_shape": build_zero_shot("shape"), "zeroshot_colour": build_zero_shot("colour")}


def content_sha256(built: dict[str, object] | None = None) -> str:
    """SHA-256 over every text and image byte of the benchmarks (`build_all()` unless given), in a fixed order:
    what `BENCHMARK_SHA256` pins."""
    digest = hashlib.sha256()

    def feed(value: object) -> None:
        if isinstance(value, np.ndarray):
            digest.update(f"array{value.shape}{value.dtype}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                digest.update(f"key:{key}".encode())
                feed(value[key])
        elif isinstance(value, (list, tuple)):
            digest.update(f"list:{len(value)}".encode())
            for entry in value:
                feed(entry)
        elif hasattr(value, "__dataclass_fields__"):
            feed({name: getattr(value, name) for name in value.__dataclass_fields__})
        else:
            digest.update(f"{type(value).__name__}:{value!r}".encode())

    feed(build_all() if built is None else built)
    return digest.hexdigest()
