"""The built-in world as a campaign source: BiVLC-style items whose original images are rendered here, and
gold items (the same kind of item, drawn by `backend.toyworld.candidates`, which knows what each image shows)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from backend.annotate.campaigns import ItemSpec
from backend.toyworld.benchmarks import BIVLC_TYPES, pair_for_type
from backend.toyworld.candidates import RESOLUTION
from backend.toyworld.grammar import realise
from backend.toyworld.render import render, to_pil


def toy_items(n: int, seed: int, folder: Path, gold: bool = False) -> list[ItemSpec]:
    """`n` BiVLC-style toy instances over the BiVLC types (add_* excluded: no image shows such a negative
    without the original), their original images rendered into ``folder/originals``."""
    rng = np.random.default_rng([seed, int(gold)])
    (folder / "originals").mkdir(parents=True, exist_ok=True)
    items = []
    for index in range(n):
        type_ = BIVLC_TYPES[index % len(BIVLC_TYPES)]
        scene, caption, negative = pair_for_type(type_, rng)
        image = to_pil(render(scene, RESOLUTION))
        digest = hashlib.sha256(image.tobytes()).hexdigest()[:16]
        relative = f"originals/{digest}.png"
        image.save(folder / relative)
        kind, _, subtype = type_.partition("_")
        items.append(ItemSpec(realise(caption), realise(negative), kind, subtype, relative, gold=gold))
    return items


def gold_items(n: int, seed: int, folder: Path) -> list[ItemSpec]:
    """`n` gold items (the gold hook of `backend.plugins`): toy items flagged gold, from their own stream."""
    return toy_items(n, seed, folder, gold=True)
