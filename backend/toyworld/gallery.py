"""Example images for the Probe tab: rendered scenes with complete, true captions."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .captions import complete_caption
from .grammar import realise
from .render import render, to_pil
from .scene import sample_scene


def example_gallery(directory: Path, n: int = 6, seed: int = 7, resolution: int = 64) -> list[list[str]]:
    """Write `n` two-object scenes as PNGs (at the toy model's input size) and return [path, caption] rows."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(n):
        scene = sample_scene(rng, n_objects=2)
        path = directory / f"toyworld-{seed}-{index}.png"
        to_pil(render(scene, resolution)).save(path)
        rows.append([str(path), realise(complete_caption(scene, rng))])
    return rows
