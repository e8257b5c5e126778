"""Scene graphs of the toy world and their random sampling.

A scene is a handful of coloured shapes on a plain, lightly tinted background.
Objects sit in the cells of a 3x3 grid with a small jitter, which buys two
properties the rest of the package relies on: objects never overlap, and every
spatial relation is unambiguous (centres in different columns differ by far
more than ``RELATION_MARGIN``, centres in the same column by far less).
Coordinates are normalised to [0, 1] so a scene renders at any resolution.
"""
from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 200, 30),
    "purple": (140, 60, 190),
    "orange": (245, 130, 20),
}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "cross")
SIZES: dict[str, float] = {"small": 0.08, "big": 0.13}
"""Half extent of an object's bounding box, as a fraction of the image side."""
COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)
SIZE_NAMES: tuple[str, ...] = tuple(SIZES)

GRID = 3
CELL = 1.0 / GRID
JITTER = 0.03
RELATION_MARGIN = 1.0 / 6.0
"""Centre offset (normalised) needed for left/right/above/below to hold."""

MAX_OBJECTS = GRID * GRID


@dataclass(frozen=True)
class SceneObject:
    """One shape; ``x``/``y`` are the centre, normalised, y pointing down."""

    shape: str
    colour: str
    size: str
    x: float
    y: float


@dataclass(frozen=True)
class Scene:
    """A scene graph: objects plus the RGB background they are drawn on."""

    objects: tuple[SceneObject, ...]
    background: tuple[int, int, int]


def relation_holds(relation: str, a: SceneObject, b: SceneObject) -> bool:
    """Whether ``a`` is ``relation`` (left/right/above/below) of ``b``.

    Defined on centres with ``RELATION_MARGIN`` so that objects roughly in
    line (same grid column or row) are in neither relation.
    """
    if relation == "left":
        return a.x < b.x - RELATION_MARGIN
    if relation == "right":
        return a.x > b.x + RELATION_MARGIN
    if relation == "above":
        return a.y < b.y - RELATION_MARGIN
    if relation == "below":
        return a.y > b.y + RELATION_MARGIN
    raise ValueError(f"unknown relation {relation!r}")


def location_holds(location: str, a: SceneObject) -> bool:
    """Whether ``a`` is on the left/right or at the top/bottom of the image."""
    if location == "left":
        return a.x < 0.5 - RELATION_MARGIN
    if location == "right":
        return a.x > 0.5 + RELATION_MARGIN
    if location == "top":
        return a.y < 0.5 - RELATION_MARGIN
    if location == "bottom":
        return a.y > 0.5 + RELATION_MARGIN
    raise ValueError(f"unknown location {location!r}")


RELATIONS: tuple[str, ...] = ("left", "right", "above", "below")
LOCATIONS: tuple[str, ...] = ("left", "right", "top", "bottom")
OPPOSITE: dict[str, str] = {
    "left": "right", "right": "left", "above": "below", "below": "above",
    "top": "bottom", "bottom": "top",
}


def sample_background(rng: np.random.Generator) -> tuple[int, int, int]:
    """A light tint: low saturation, high value, so never an object colour.

    Every palette colour has a channel <= 60 while every tint has all
    channels >= 200, which keeps objects and background separable.
    """
    hue = rng.random()
    saturation = 0.04 + 0.1 * rng.random()
    value = 0.92 + 0.08 * rng.random()
    r, g, b = colorsys.hsv_to_rgb(hue, saturation, value)
    return (round(r * 255), round(g * 255), round(b * 255))


def cell_position(cell: int, rng: np.random.Generator) -> tuple[float, float]:
    """Jittered centre of grid cell ``cell`` (row-major)."""
    row, col = divmod(cell, GRID)
    jx, jy = rng.uniform(-JITTER, JITTER, size=2)
    return ((col + 0.5) * CELL + jx, (row + 0.5) * CELL + jy)


def make_object(rng: np.random.Generator, cell: int, shape: str | None = None,
                colour: str | None = None, size: str | None = None) -> SceneObject:
    """An object in ``cell``; attributes left as None are drawn uniformly."""
    x, y = cell_position(cell, rng)
    return SceneObject(
        shape=shape if shape is not None else SHAPES[rng.integers(len(SHAPES))],
        colour=colour if colour is not None else COLOUR_NAMES[rng.integers(len(COLOUR_NAMES))],
        size=size if size is not None else SIZE_NAMES[rng.integers(len(SIZE_NAMES))],
        x=float(x), y=float(y),
    )


def sample_scene(rng: np.random.Generator, n_objects: int | None = None,
                 max_objects: int = 3) -> Scene:
    """A random scene with ``n_objects`` (default: 1..``max_objects``) objects."""
    if n_objects is None:
        n_objects = int(rng.integers(1, max_objects + 1))
    if not 1 <= n_objects <= MAX_OBJECTS:
        raise ValueError(f"n_objects must be in 1..{MAX_OBJECTS}, got {n_objects}")
    cells = rng.choice(MAX_OBJECTS, size=n_objects, replace=False)
    objects = tuple(make_object(rng, int(c)) for c in cells)
    return Scene(objects=objects, background=sample_background(rng))


def scene_relations(scene: Scene) -> list[tuple[int, str, int]]:
    """The scene graph's edges: (i, relation, j) for every relation that holds."""
    objs = scene.objects
    return [(i, r, j) for i, a in enumerate(objs) for j, b in enumerate(objs)
            if i != j for r in RELATIONS if relation_holds(r, a, b)]
