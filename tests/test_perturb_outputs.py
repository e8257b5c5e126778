"""The rule tests read every output a caption can get from one uncapped call (`tests.support.perturb_outputs`):
that is sound only if what a user sees at any seed, at the Probe's cap and with its adversarial refinement, is
among those outputs (with the same subtype and label for one family; as a text for all together, NegCLIP's
swaps included, as a training manifest draws them). ARO's order shuffles are left out: each is one random draw
per seed, by design, and no rule test looks for one."""
import pytest

from backend.perturb import FAMILIES, perturb
from backend.perturb.core import normalized
from tests.support.perturb_outputs import every_variant, made

CAPTIONS = [
    "A man riding a horse next to a red barn.",
    "Two dogs and a cat sleeping on a brown couch in the living room.",
    "A woman holding an umbrella walks past a yellow taxi.",
    "A plate of food with broccoli and rice on a wooden table.",
]


FAMILIES_SEEN = [name for name in FAMILIES if name != "aro_order"]


def _keys(variants, *fields):
    return {(normalized(v.text), v.kind, *(getattr(v, field) for field in fields)) for v in variants}


@pytest.mark.parametrize("caption", CAPTIONS)
def test_what_any_seed_shows_is_among_every_output(caption):
    """Family by family, as the rule tests ask, with subtype and label; all together, text by text (there a
    text two families could make goes to the more specific one, whichever the cap)."""
    for families, fields in [*(([name], ("subtype", "plausible")) for name in FAMILIES_SEEN), (FAMILIES_SEEN, ())]:
        every = _keys(every_variant(caption, families), *fields)
        for seed in range(3):
            shown = _keys(perturb(caption, families, seed=seed), *fields)
            assert shown <= every, (families, sorted(shown - every))


def test_made_filters_by_kind_subtype_and_label():
    caption = CAPTIONS[0]
    variants = every_variant(caption, ["replace", "hard_positive"])
    assert made(caption, ["replace", "hard_positive"], kind=None) == {normalized(v.text) for v in variants}
    objects = made(caption, ["replace"], subtype="object")
    assert objects and objects == {normalized(v.text) for v in variants
                                   if v.kind == "negative" and v.subtype == "object"}
    assert made(caption, ["replace"], shown=True) == {normalized(v.text) for v in variants
                                                      if v.kind == "negative" and v.plausible}
