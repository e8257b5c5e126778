"""What a perturbation family makes for a caption over a few seeds, for the tests of its rules."""
from __future__ import annotations

from backend.perturb import perturb
from backend.perturb.core import normalized


def family_texts(caption: str, family: str, subtype: str | None = None, seeds=range(3)) -> set[str]:
    """Every negative `family` makes for `caption` over `seeds` (20 per subtype, no adversarial refinement), as
    normalized texts, optionally only those of one subtype."""
    found = set()
    for seed in seeds:
        for variant in perturb(caption, [family], seed=seed, max_per_subtype=20, scorer=None):
            if subtype is None or variant.subtype == subtype:
                found.add(normalized(variant.text))
    return found
