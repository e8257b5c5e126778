"""Caption generators: true captions of a scene, sparse or dense.

Two regimes, mirroring web pretraining versus curated finetuning data:

* ``sparse_caption``: incomplete and attribute-sparse (colour named rarely,
  often one object only, "shape" as a wildcard noun, location phrases), the
  kind of caption that leaves compositional structure under-determined;
* ``dense_caption``: two objects whenever the scene has two, colour always,
  a relation most of the time;
* ``complete_caption``: every attribute of both objects and a relation.

Captions are built from the scene graph, so they are true by construction;
callers that need certainty still check them with the oracle.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from .grammar import LOCATION_MEANING, RELATION_MEANING, SIZE_MEANING, Caption, NounPhrase, words_for
from .scene import LOCATIONS, Scene, SceneObject, location_holds, scene_relations

T = TypeVar("T")


def pick(rng: np.random.Generator, options: Sequence[T]) -> T:
    """A uniformly chosen element of a non-empty sequence."""
    return options[int(rng.integers(len(options)))]


def size_word(size: str, rng: np.random.Generator) -> str:
    """A random synonym for a canonical size (big -> big/large)."""
    return pick(rng, words_for(size, SIZE_MEANING))


def relation_phrase(relation: str, rng: np.random.Generator) -> str:
    """A random surface phrase for a canonical relation (left -> "left of"/...)."""
    return pick(rng, words_for(relation, RELATION_MEANING))


def location_phrase(location: str) -> str:
    """The phrase for a canonical location (left -> "on the left")."""
    return words_for(location, LOCATION_MEANING)[0]


def describe(obj: SceneObject, rng: np.random.Generator, p_colour: float, p_size: float,
             p_wildcard: float = 0.0) -> NounPhrase:
    """A noun phrase true of ``obj`` naming each attribute with the given probability.

    The wildcard noun "shape" is only used when a colour or size is named, so
    a phrase always says something about the object.
    """
    colour = obj.colour if rng.random() < p_colour else None
    size = size_word(obj.size, rng) if rng.random() < p_size else None
    wildcard = (colour or size) is not None and rng.random() < p_wildcard
    return NounPhrase(shape=None if wildcard else obj.shape, colour=colour, size=size)


def related_pair(scene: Scene, rng: np.random.Generator) -> tuple[int, str, int]:
    """A random edge (i, relation, j) of the scene graph.

    Objects occupy distinct grid cells, so every pair is related somehow.
    """
    return pick(rng, scene_relations(scene))


def relation_caption(scene: Scene, rng: np.random.Generator, p_colour: float, p_size: float,
                     p_wildcard: float = 0.0) -> Caption:
    """"X <rel> Y" about a random related pair of objects."""
    i, relation, j = related_pair(scene, rng)
    objs = scene.objects
    return Caption("relation", describe(objs[i], rng, p_colour, p_size, p_wildcard),
                   describe(objs[j], rng, p_colour, p_size, p_wildcard),
                   relation=relation_phrase(relation, rng))


def sparse_caption(scene: Scene, rng: np.random.Generator) -> Caption:
    """An incomplete, attribute-sparse true caption (pretraining regime)."""
    objs = scene.objects
    p_colour, p_size, p_wildcard = 0.25, 0.3, 0.15
    kinds = ["object", "location"] + (["and", "relation"] if len(objs) > 1 else [])
    kind = pick(rng, kinds)
    if kind == "relation":
        return relation_caption(scene, rng, p_colour, p_size, p_wildcard)
    if kind == "and":
        i, j = (int(k) for k in rng.choice(len(objs), size=2, replace=False))
        return Caption("and", describe(objs[i], rng, p_colour, p_size, p_wildcard),
                       describe(objs[j], rng, p_colour, p_size, p_wildcard))
    obj = pick(rng, objs)
    np_ = describe(obj, rng, p_colour, p_size, p_wildcard)
    places = [loc for loc in LOCATIONS if location_holds(loc, obj)]
    if kind == "location" and places:
        return Caption("location", np_, location=location_phrase(pick(rng, places)))
    return Caption("object", np_)


def dense_caption(scene: Scene, rng: np.random.Generator, kind: str | None = None,
                  p_size: float = 0.5) -> Caption:
    """A dense true caption: colours always, two objects when there are two.

    ``kind`` forces "object", "and" or "relation"; by default a multi-object
    scene gets a relation three times in four, else a conjunction.
    """
    objs = scene.objects
    if kind is None:
        kind = "object" if len(objs) == 1 else ("relation" if rng.random() < 0.75 else "and")
    if kind == "object":
        return Caption("object", describe(pick(rng, objs), rng, 1.0, p_size))
    if len(objs) < 2:
        raise ValueError(f"a {kind!r} caption needs two objects")
    if kind == "relation":
        return relation_caption(scene, rng, 1.0, p_size)
    i, j = (int(k) for k in rng.choice(len(objs), size=2, replace=False))
    return Caption("and", describe(objs[i], rng, 1.0, p_size), describe(objs[j], rng, 1.0, p_size))


def complete_caption(scene: Scene, rng: np.random.Generator) -> Caption:
    """Every attribute of two objects and one relation between them."""
    return relation_caption(scene, rng, 1.0, 1.0)
