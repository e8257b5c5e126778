"""Scenes that make a caption true: BiVLC-style negative images.

BiVLC pairs each negative caption with an image that shows it. Here that
image is constructed: ``scene_for_caption`` places objects with exactly the
named attributes (the rest random) in grid cells chosen so the relation or
location holds, and ``negative_scene`` keeps drawing until the oracle says
the negative caption holds and the positive one does not. Negatives that
entail their positive (add_obj, add_att) have no such image.
"""
from __future__ import annotations

import numpy as np

from .grammar import Caption, NounPhrase
from .oracle import evaluate
from .scene import GRID, MAX_OBJECTS, Scene, SceneObject, location_holds, make_object, relation_holds, sample_background


def _cell_centre(cell: int) -> SceneObject:
    """A placeholder object at a cell centre, for testing where relations hold.

    Jitter is far below the relation margin, so a relation between cell
    centres holds between any objects placed in those cells.
    """
    row, col = divmod(cell, GRID)
    return SceneObject("circle", "red", "small", (col + 0.5) / GRID, (row + 0.5) / GRID)


def _cells_for(caption: Caption, rng: np.random.Generator) -> list[int]:
    """Cells for the caption's noun phrases such that its relation/location holds."""
    cells = range(MAX_OBJECTS)
    if caption.kind == "object":
        return [int(rng.integers(MAX_OBJECTS))]
    if caption.kind == "location":
        where = caption.location_meaning
        options = [c for c in cells if location_holds(where, _cell_centre(c))]
        return [options[int(rng.integers(len(options)))]]
    pairs = [(p, q) for p in cells for q in cells if p != q]
    if caption.kind == "relation":
        relation = caption.relation_meaning
        pairs = [(p, q) for p, q in pairs if relation_holds(relation, _cell_centre(p), _cell_centre(q))]
    return list(pairs[int(rng.integers(len(pairs)))])


def _instantiate(np_: NounPhrase, cell: int, rng: np.random.Generator) -> SceneObject:
    return make_object(rng, cell, shape=np_.shape, colour=np_.colour, size=np_.size_meaning)


def scene_for_caption(caption: Caption, rng: np.random.Generator, extra_objects: int = 0) -> Scene:
    """A scene in which ``caption`` is true, plus ``extra_objects`` random distractors."""
    cells = _cells_for(caption, rng)
    objects = [_instantiate(np_, cell, rng) for np_, cell in zip(caption.noun_phrases, cells)]
    free = [c for c in range(MAX_OBJECTS) if c not in cells]
    for cell in rng.choice(free, size=min(extra_objects, len(free)), replace=False):
        objects.append(make_object(rng, int(cell)))
    order = rng.permutation(len(objects))  # object order must not leak which were named
    return Scene(tuple(objects[k] for k in order), sample_background(rng))


def negative_scene(positive: Caption, negative: Caption, rng: np.random.Generator,
                   max_extra: int = 1, tries: int = 200) -> Scene | None:
    """A scene where ``negative`` holds and ``positive`` does not, or None.

    Distractor objects (0..``max_extra``) keep the image from showing only
    what the caption names; they are redrawn with everything else on failure.
    """
    for _ in range(tries):
        scene = scene_for_caption(negative, rng, int(rng.integers(max_extra + 1)))
        if evaluate(negative, scene) and not evaluate(positive, scene):
            return scene
    return None

