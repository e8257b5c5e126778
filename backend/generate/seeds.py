"""Seeds of a campaign's images: a pure function of (base seed, item id, slot), the same on every machine.

Why derived and not drawn in sequence: a resumed or sharded job generates
items in a different order, or on another rank, and must still give every
image the seed it would have had in one uninterrupted run. numpy's
`SeedSequence` hashes the integers (a specified algorithm, stable across
platforms and numpy versions), so neighbouring items and slots get unrelated
seeds. Seeds are 63-bit so that they fit SQLite's signed INTEGER and
`torch.Generator.manual_seed`.
"""
from __future__ import annotations

import numpy as np

_ITEM_STREAM = 2**31 - 1  # a slot number no item has: the stream for per-item decisions (which slot is exact)


def _derive(*keys: int) -> int:
    high, low = np.random.SeedSequence([int(k) for k in keys]).generate_state(2, dtype=np.uint32)
    return ((int(high) << 32) | int(low)) & (2**63 - 1)


def image_seed(base_seed: int, item_id: int, slot: int) -> int:
    """The seed of candidate image `slot` (0-based) of item `item_id` in a job with `base_seed`."""
    if min(base_seed, item_id, slot) < 0:
        raise ValueError(f"seeds are derived from non-negative numbers, not {(base_seed, item_id, slot)}")
    return _derive(base_seed, item_id, slot)


def item_seed(base_seed: int, item_id: int) -> int:
    """The seed of per-item choices that concern all its slots (the toy generator's exact slots)."""
    if min(base_seed, item_id) < 0:
        raise ValueError(f"seeds are derived from non-negative numbers, not {(base_seed, item_id)}")
    return _derive(base_seed, item_id, _ITEM_STREAM)
