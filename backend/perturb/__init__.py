"""Caption perturbations for probing and training compositional CLIP models.

    from backend.perturb import perturb, FAMILIES, Variant, Edit
    variants = perturb("the brown dog and the white cat", families=["binding_swap"])

Negatives change what the caption claims (ARO order shuffles, NegCLIP
swaps, REPLACE, binding swaps, CE-CLIP); positives keep it true (Kamath et
al.'s hard positives). Output is deterministic in (caption, families,
seed): every family draws from its own `random.Random` seeded by name and
seed, never from Python's per-process hash randomisation.

The family table is defined here and costs nothing to import (forms list it); the engine (`engine.py`)
and the variant types (`core.py`) import spaCy and are loaded on first access of `perturb`, `warm_up`,
`Edit`, `Variant` or `MASK` (PEP 562).
"""
from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any

from backend.core.limits import MAX_CAPTION_CHARS  # re-exported: callers read backend.perturb.MAX_CAPTION_CHARS

__all__ = [
    "FAMILIES", "MASK", "MAX_CAPTION_CHARS", "PROBE_DEFAULT_FAMILIES", "Edit", "Variant", "perturb", "warm_up",
]

FAMILIES = MappingProxyType({
    "aro_order": "ARO order shuffles (negatives): nouns and adjectives, all other words, trigrams, within trigrams",
    "negclip_swap": (
        "NegCLIP swaps (negatives), a faithful replication: two noun phrases, nouns, adjectives, adverbs or verb"
        " phrases, whatever they mean; as noisy as NegCLIP's own (about half of its released negatives are)"
    ),
    "replace": "REPLACE (negatives): one object, attribute or relation becomes a co-hyponym or antonym",
    "binding_swap": (
        "Binding swaps (negatives): objects trade a visual attribute of one class, a relation's subject and"
        " object swap, two objects trade counts, or same-kind groups counted differently trade an attribute"
    ),
    "ce_clip": "CE-CLIP (negatives): two nouns swap; an adjective, verb or noun is refilled",
    "addition": (
        "Additions (negatives, SugarCrepe's add_obj/add_att): an object or attribute that fits the scene but that"
        " a typical photo of the caption does not show, chosen from co-occurrence counts over caption text"
    ),
    "hard_positive": "Hard positives (meaning kept): synonym, reordered conjuncts, spatial converse",
})

# Families the probe offers checked by default: every family whose outputs
# are meant to be valid negatives or positives one by one. NegCLIP's swaps
# are left out: they replicate a training recipe whose negatives are about
# half noise (compounds aside, it swaps any two nouns or adjectives), so a
# model "failing" on them says little. They remain available on request,
# and `perturb(families=None)` (training) still runs every family.
PROBE_DEFAULT_FAMILIES: tuple[str, ...] = tuple(name for name in FAMILIES if name != "negclip_swap")

_LAZY = {"perturb": "engine", "warm_up": "engine", "Edit": "core", "Variant": "core", "MASK": "replace"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
