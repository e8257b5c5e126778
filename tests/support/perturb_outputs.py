"""Everything the perturbation engine can make for a caption, for the tests of its rules.

A test that says "the engine never makes X" must look at every output, not at the few that one seed shows. One
call with no practical cap per subtype (`EVERY`) returns every candidate the families have; what any seed shows
at the Probe's cap is a subset of it (`tests/test_perturb_outputs.py` checks that on real captions), and it costs
one engine pass where the tests used to run one per seed.

`variants_of` is `perturb`'s capped call (every family, seed 0) on each caption, as JSON-ready lists:
`tests/test_perturb_determinism.py` compares them between two processes with different hash seeds.
"""
from __future__ import annotations

from collections.abc import Sequence

from backend.perturb import Variant, perturb
from backend.perturb.core import normalized

EVERY = 1_000  # more variants per subtype than any caption has candidates


def every_variant(caption: str, families: Sequence[str] | None = None, **kwargs) -> list[Variant]:
    """Every variant `families` (all when None) can make for `caption`, each labelled as the Probe labels it.
    The adversarial refinement has nothing to choose when every candidate is kept, so it is off."""
    return perturb(caption, families, seed=0, max_per_subtype=EVERY, scorer=None, **kwargs)


def made(caption: str, families: Sequence[str] | None = None, *, subtype: str | None = None,
         kind: str | None = "negative", shown: bool = False) -> set[str]:
    """Normalized texts of every variant `families` can make, only those of `kind` (None: both kinds) and of
    `subtype` when given, and with `shown` only those labelled plausible (what the Probe shows by default)."""
    return {normalized(variant.text) for variant in every_variant(caption, families)
            if (kind is None or variant.kind == kind) and (subtype is None or variant.subtype == subtype)
            and (variant.plausible or not shown)}


def objects_added(caption: str) -> list[str]:
    """Every addition of an object the engine can make for `caption` (texts as written)."""
    return [v.text for v in every_variant(caption, ["addition"]) if v.subtype == "object"]


def variants_of(captions: list[str]) -> list[list]:
    """Every variant of every caption, all families, seed 0, as JSON-ready lists."""
    return [[[v.text, v.kind, v.family, v.subtype, [[e.before, e.after, e.start, e.end] for e in v.edits]]
             for v in perturb(caption, families=None, seed=0)]
            for caption in captions]
