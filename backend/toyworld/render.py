"""Fast deterministic rendering of scenes to uint8 RGB arrays.

Shape masks are computed once per (shape, size, resolution) and cached, as
boolean masks and as flat pixel offsets. A batch is drawn with one numpy
scatter per (shape, size) group and channel; Python touches each object only
to compute its box corner, never a pixel. Objects never overlap (see
``scene``), so the drawing order does not matter.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
from PIL import Image

from .scene import COLOURS, SIZES, Scene

_COLOUR_INDEX = {name: i for i, name in enumerate(COLOURS)}
_PALETTE = np.array(list(COLOURS.values()), dtype=np.uint8)


def box_side(size: str, resolution: int) -> int:
    """Side in pixels of an object's bounding box."""
    return max(3, round(2 * SIZES[size] * resolution))


def shape_mask(shape: str, side: int) -> np.ndarray:
    """Boolean (side, side) mask of ``shape`` sampled at pixel centres."""
    t = (np.arange(side) + 0.5) / side * 2 - 1
    v, u = np.meshgrid(t, t, indexing="ij")  # v: down, u: right, both in (-1, 1)
    if shape == "circle":
        return u * u + v * v <= 1.0
    if shape == "square":
        return (np.abs(u) <= 0.85) & (np.abs(v) <= 0.85)
    if shape == "triangle":  # apex up, base at the bottom
        return np.abs(u) <= (v + 1) / 2
    if shape == "cross":
        return (np.abs(u) <= 0.34) | (np.abs(v) <= 0.34)
    raise ValueError(f"unknown shape {shape!r}")


@cache
def _mask(shape: str, size: str, resolution: int) -> np.ndarray:
    """Cached mask of a (shape, size) at a resolution."""
    return shape_mask(shape, box_side(size, resolution))


@cache
def _mask_offsets(shape: str, size: str, resolution: int) -> np.ndarray:
    """Flat offsets (row * resolution + column) of a mask's pixels from its box corner."""
    rows, cols = np.nonzero(_mask(shape, size, resolution))
    return (rows * resolution + cols).astype(np.intp)


def box_corners(centres: np.ndarray, sides: np.ndarray | int, resolution: int) -> np.ndarray:
    """First pixels of boxes of ``sides`` pixels centred at normalised ``centres``.

    Clamped inside the image: at odd resolutions rounding could push a border
    object out by a pixel; shifting it keeps its shape exact.
    """
    return np.clip(np.rint(centres * resolution - sides / 2), 0, resolution - sides).astype(np.intp)


def _fill_backgrounds(backgrounds: np.ndarray, resolution: int) -> np.ndarray:
    """(N, R, R, 3) images filled with their (N, 3) background colours.

    One image row is tiled first so the broadcast copies whole rows; a
    per-pixel broadcast of 3-byte colours is ~30x slower.
    """
    n = len(backgrounds)
    out = np.empty((n, resolution, resolution * 3), dtype=np.uint8)
    out[:] = np.tile(backgrounds, (1, resolution))[:, None, :]
    return out.reshape(n, resolution, resolution, 3)


def render_batch(scenes: Sequence[Scene], resolution: int = 64) -> np.ndarray:
    """Render scenes to a (N, resolution, resolution, 3) uint8 array."""
    out = _fill_backgrounds(np.array([s.background for s in scenes], dtype=np.uint8).reshape(-1, 3),
                            resolution)
    flat = out.reshape(-1)
    groups: dict[tuple[str, str], list[tuple[int, float, float, int]]] = {}
    for i, scene in enumerate(scenes):
        for obj in scene.objects:
            groups.setdefault((obj.shape, obj.size), []).append(
                (i, obj.x, obj.y, _COLOUR_INDEX[obj.colour]))
    for (shape, size), items in groups.items():
        offsets, side = _mask_offsets(shape, size, resolution), box_side(size, resolution)
        arr = np.array(items, dtype=np.float64)
        x0, y0 = box_corners(arr[:, 1], side, resolution), box_corners(arr[:, 2], side, resolution)
        corners = (arr[:, 0].astype(np.intp) * resolution + y0) * resolution + x0
        index = 3 * (corners[:, None] + offsets).ravel()
        colours = _PALETTE[arr[:, 3].astype(np.intp)]
        for channel in range(3):  # one 1-D scatter per channel beats a 3-byte subspace scatter
            flat[index + channel] = np.repeat(colours[:, channel], len(offsets))
    return out


def render(scene: Scene, resolution: int = 64) -> np.ndarray:
    """Render one scene to a (resolution, resolution, 3) uint8 array.

    Same pixels as ``render_batch([scene])[0]``; slicing per object is cheaper
    than the batch's grouping when there is a single scene.
    """
    image = _fill_backgrounds(np.array([scene.background], dtype=np.uint8), resolution)[0]
    objs = scene.objects
    sides = np.array([box_side(o.size, resolution) for o in objs])
    xs = box_corners(np.array([o.x for o in objs]), sides, resolution)
    ys = box_corners(np.array([o.y for o in objs]), sides, resolution)
    for obj, side, x0, y0 in zip(objs, sides, xs, ys):
        image[y0:y0 + side, x0:x0 + side][_mask(obj.shape, obj.size, resolution)] = COLOURS[obj.colour]
    return image


def to_pil(image: np.ndarray) -> Image.Image:
    """A rendered uint8 array as a PIL image (what open_clip transforms expect)."""
    return Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8))

