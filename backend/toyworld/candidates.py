"""Candidate images from the built-in world's renderer: exact scenes of a negative caption, and near misses.

Why a second generator: it needs no download and no GPU, so a campaign can
be tried end to end offline, and it knows the truth of every image. Gold
items (annotators' attention checks) are drawn by it in every campaign: the
oracle, not a person, says which candidate shows the caption.

Diffusion candidates are noisy (BiVLC dropped 61% of its instances in steps
3-4), so annotators must often answer "none" and tell near misses from exact
images. To look like that, each item gets a plan from its own seeded stream: with probability `p_none` no slot is exact
(the right answer is "none"), otherwise one slot is (each other slot also with
probability `p_more`). An exact slot is a scene where the negative caption
holds and the original caption does not (BiVLC's negative image,
`negative_scene`). The other slots are that scene with one defect:

* ``wrong_colour``: an object the caption names in a colour gets another colour;
* ``missing_object``: an object the caption names is removed, or replaced by one it does not describe;
* ``relation_flipped``: the two related objects trade places (relation captions whose two noun phrases
  differ: trading two objects one phrase describes changes nothing), or the located object moves to the
  mirrored side (location captions).

Each flawed scene is checked with the oracle and redrawn until the negative
caption is false in it (a distractor can otherwise happen to satisfy it), and
every record's ``shows_caption`` is the oracle's verdict on the drawn scene.

A record holds what `regenerate` needs: the negative caption (``prompt``), the
original caption (``negative_prompt``: what the exact image must not show, as
a diffusion negative prompt is what the image is steered away from), the
image's seed and its defect. Images are drawn at 256 px directly (the renderer
works at any resolution), big enough to judge.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from PIL import Image

from backend.toyworld.grammar import Caption, NounPhrase, parse
from backend.toyworld.negative_images import negative_scene
from backend.toyworld.oracle import evaluate, matches
from backend.toyworld.render import render, to_pil
from backend.toyworld.scene import COLOUR_NAMES, GRID, Scene, SceneObject, make_object

RENDERER_VERSION = "toyworld-candidates-1"  # change whenever a seed would draw a different image
MODEL = "toyworld-renderer"
RESOLUTION = 256  # drawn at this size directly (sharp edges, big enough to judge)
DEFECTS = ("wrong_colour", "missing_object", "relation_flipped")
MAX_TRIES = 200


def _cell(obj: SceneObject) -> int:
    return min(int(obj.y * GRID), GRID - 1) * GRID + min(int(obj.x * GRID), GRID - 1)


def _named(scene: Scene, caption: Caption, rng: np.random.Generator, need_colour: bool = False) -> int | None:
    """Index of a scene object one of the caption's noun phrases describes (one naming a colour if asked)."""
    phrases = [np_ for np_ in caption.noun_phrases if np_.colour is not None or not need_colour]
    found = [i for i, obj in enumerate(scene.objects) if any(matches(np_, obj) for np_ in phrases)]
    return int(found[rng.integers(len(found))]) if found else None


def _with_object(scene: Scene, index: int, obj: SceneObject | None) -> Scene:
    objects = list(scene.objects)
    if obj is None:
        del objects[index]
    else:
        objects[index] = obj
    return replace(scene, objects=tuple(objects))


def _wrong_colour(scene: Scene, caption: Caption, rng: np.random.Generator) -> Scene | None:
    index = _named(scene, caption, rng, need_colour=True)
    if index is None:
        return None
    obj = scene.objects[index]
    colours = [c for c in COLOUR_NAMES if c != obj.colour]
    return _with_object(scene, index, replace(obj, colour=colours[rng.integers(len(colours))]))


def _missing_object(scene: Scene, caption: Caption, rng: np.random.Generator) -> Scene | None:
    index = _named(scene, caption, rng)
    if index is None:
        return None
    if len(scene.objects) > 1 and rng.random() < 0.5:
        return _with_object(scene, index, None)
    old = scene.objects[index]
    for _ in range(MAX_TRIES):  # a random object in the same cell that no noun phrase describes
        new = make_object(rng, _cell(old))
        if not any(matches(np_, new) for np_ in caption.noun_phrases):
            return _with_object(scene, index, new)
    return None


def _relation_flipped(scene: Scene, caption: Caption, rng: np.random.Generator) -> Scene | None:
    objects = list(scene.objects)
    if caption.kind == "relation":
        assert caption.second is not None  # a relation caption names two objects
        firsts = [i for i, o in enumerate(objects) if matches(caption.first, o)]
        seconds = [j for j, o in enumerate(objects) if matches(caption.second, o)]
        pairs = [(i, j) for i in firsts for j in seconds if i != j]
        if not pairs:
            return None
        i, j = pairs[rng.integers(len(pairs))]
        objects[i], objects[j] = (replace(objects[i], x=objects[j].x, y=objects[j].y),
                                  replace(objects[j], x=objects[i].x, y=objects[i].y))
        return replace(scene, objects=tuple(objects))
    if caption.kind == "location":
        index = _named(scene, caption, rng)
        if index is None:
            return None
        obj = objects[index]
        horizontal = caption.location_meaning in ("left", "right")
        moved = replace(obj, x=1 - obj.x) if horizontal else replace(obj, y=1 - obj.y)
        other = next((k for k, o in enumerate(objects) if k != index and _cell(o) == _cell(moved)), None)
        if other is not None:  # the mirrored cell is taken: trade places with its object (objects never overlap)
            objects[other] = replace(objects[other], x=obj.x, y=obj.y)
        objects[index] = moved
        return replace(scene, objects=tuple(objects))
    return None


EDITS: dict[str, Callable[[Scene, Caption, np.random.Generator], Scene | None]] = {
    "wrong_colour": _wrong_colour, "missing_object": _missing_object, "relation_flipped": _relation_flipped}


def _parse(text: str, what: str) -> Caption:
    try:
        return parse(text)
    except ValueError as error:
        raise ValueError(f"the toyworld generator draws only captions of the built-in world's grammar; "
                         f"the {what} is not one: {error}") from None


def _same_meaning(first: NounPhrase, second: NounPhrase) -> bool:
    return (first.shape, first.colour, first.size_meaning) == (second.shape, second.colour, second.size_meaning)


def applicable_defects(negative: str | Caption) -> tuple[str, ...]:
    """The defects that can make a scene of `negative` wrong (a colour only where the caption names one)."""
    caption = _parse(negative, "negative caption") if isinstance(negative, str) else negative
    found = ["missing_object"]
    if any(np_.colour is not None for np_ in caption.noun_phrases):
        found.insert(0, "wrong_colour")
    if caption.kind == "location" or (caption.kind == "relation" and not _same_meaning(*caption.noun_phrases)):
        found.append("relation_flipped")
    return tuple(found)


def plan_item(negative: str, item_seed: int, slots: int, p_none: float = 0.25,
              p_more: float = 0.0) -> list[str | None]:
    """The defect of each slot, None for an exact one: no exact slot with probability `p_none`, else one
    (each other slot also exact with probability `p_more`); flawed slots get an applicable defect at random."""
    if not 0 <= p_none <= 1 or not 0 <= p_more <= 1:
        raise ValueError(f"p_none and p_more are probabilities, not {p_none} and {p_more}")
    rng = np.random.default_rng(item_seed)
    exact = set()
    if rng.random() >= p_none:
        first = int(rng.integers(slots))
        exact = {first} | {slot for slot in range(slots) if slot != first and rng.random() < p_more}
    defects = applicable_defects(negative)
    return [None if slot in exact else defects[rng.integers(len(defects))] for slot in range(slots)]


def draw_scene(positive: str, negative: str, seed: int, defect: str | None) -> Scene:
    """The scene of one candidate: exact (defect None) or with `defect`, from `default_rng(seed)` alone."""
    original, wanted = _parse(positive, "original caption"), _parse(negative, "negative caption")
    if defect is not None and defect not in applicable_defects(wanted):
        raise ValueError(f"defect {defect!r} does not apply to {negative!r}; "
                         f"applicable: {', '.join(applicable_defects(wanted))}")
    rng = np.random.default_rng(seed)
    for _ in range(MAX_TRIES):
        scene = negative_scene(original, wanted, rng)
        if scene is None:
            break
        if defect is None:
            return scene
        flawed = EDITS[defect](scene, wanted, rng)
        if flawed is not None and not evaluate(wanted, flawed):
            return flawed
    raise ValueError(f"no scene shows {negative!r} without {positive!r}"
                     + (f" and with the defect {defect!r}" if defect else ""))


def candidate(positive: str, negative: str, seed: int, defect: str | None) -> tuple[Image.Image, dict]:
    """One candidate image and its record (``shows_caption`` is the oracle's verdict on the drawn scene)."""
    scene = draw_scene(positive, negative, seed, defect)
    image = to_pil(render(scene, RESOLUTION))
    return image, {
        "generator": "toyworld", "model": MODEL, "unet": None, "revision": RENDERER_VERSION, "prompt": negative,
        "negative_prompt": positive, "seed": int(seed), "steps": None, "guidance": None, "dtype": None,
        "width": image.width, "height": image.height, "defect": defect,
        "shows_caption": evaluate(_parse(negative, "negative caption"), scene)}


def candidates(positive: str, negative: str, item_seed: int, seeds: Sequence[int], p_none: float = 0.25,
               p_more: float = 0.0) -> list[tuple[Image.Image, dict]]:
    """All candidates of one item, slot k drawn from `seeds[k]` with the defect the item's plan gives it."""
    plan = plan_item(negative, item_seed, len(seeds), p_none, p_more)
    return [candidate(positive, negative, seed, defect) for seed, defect in zip(seeds, plan)]


def regenerate(record: dict) -> Image.Image:
    """Draw a toy candidate again from its record; pixel-identical (numpy's generator is platform-stable)."""
    if record.get("generator") != "toyworld":
        raise ValueError(f"not a toyworld record (generator {record.get('generator')!r})")
    if record.get("revision") != RENDERER_VERSION:
        raise ValueError(f"the record was drawn by renderer {record.get('revision')!r}; this is "
                         f"{RENDERER_VERSION!r}, which draws other images from the same seed")
    scene = draw_scene(record["negative_prompt"], record["prompt"], record["seed"], record.get("defect"))
    image = to_pil(render(scene, RESOLUTION))
    return image if image.size == (record["width"], record["height"]) else \
        image.resize((record["width"], record["height"]), Image.Resampling.NEAREST)


def draw_slot(caption: str, negative: str, item_seed: int, slots: int, slot: int, seed: int,
              p_none: float) -> tuple[Image.Image, dict]:
    """Image `slot` of an item's `slots` (the generator hook of `backend.plugins`): the item's plan, which
    depends on `item_seed` alone, says whether this slot is exact or which defect it has."""
    return candidate(caption, negative, seed, plan_item(negative, item_seed, slots, p_none)[slot])
