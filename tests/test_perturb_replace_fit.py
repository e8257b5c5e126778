"""REPLACE's object refills must fit their slot as CE-CLIP's do (backend/perturb/refill_fit.py), but only animals
and some groups of things are held to their fit class: the absurd animal refills of the judged samples
(tests/data/perturb-judged-replace-rel.csv, tests/data/perturb-judged-replace-fit.csv) and of tuning on even ids
are never shown, and a thing of another size or use (a chair for a bed, a pizza for a cake) or a pet for a bird
(a cat) still is.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def shown_objects(caption):
    """Every replace object refill the Probe would show (labelled plausible)."""
    return made(caption, ["replace"], subtype="object", shown=True)


NEVER = [
    ("there are two birds standing on the plate of food", "there are two zebras standing on the plate of food"),
    ("A man is riding a horse in an open field.", "A man is riding a dog in an open field."),
    ("A man is riding a horse in an open field.", "A man is riding a zebra in an open field."),
    ("A man is riding a horse in an open field.", "A man is riding a polar bear in an open field."),
    ("A white horse drawn carriage in front of a yellow building.",
     "A white bird drawn carriage in front of a yellow building."),
    ("a white horse pulling a carriage with a man on it.", "a white polar bear pulling a carriage with a man on it."),
    ("A man looking in the refrigerator with a cat also looking inside",
     "A man looking in the refrigerator with a giraffe also looking inside"),
    # found while tuning on even ids
    ("Two cats are outside and perched on someone's sneakers.",
     "Two elephants are outside and perched on someone's sneakers."),
    ("A black cat is sitting in a bathroom sink.", "A black bear is sitting in a bathroom sink."),
    ("A man holding a small white dog while wearing a black hat.",
     "A man holding a small white polar bear while wearing a black hat."),
]


@pytest.mark.parametrize(("caption", "absurd"), NEVER)
def test_absurd_refill_is_never_shown(caption, absurd):
    assert normalized(absurd) not in shown_objects(caption)


MAKES = [
    ("A man is riding a horse in an open field.", "A man is riding an elephant in an open field."),
    ("A black cat is sitting in a bathroom sink.", "A black dog is sitting in a bathroom sink."),
    ("A cat curled up on a bed for a nap.", "A cat curled up on a chair for a nap."),
    # a bird is alone in its fit class, but small animals stand for each other
    ("there are two birds standing on the plate of food", "there are two cats standing on the plate of food"),
    ("A bride and groom are cutting a cake as they smile.", "A bride and groom are cutting a pizza as they smile."),
]


@pytest.mark.parametrize(("caption", "fitting"), MAKES)
def test_other_size_or_use_is_still_shown(caption, fitting):
    assert normalized(fitting) in shown_objects(caption)
