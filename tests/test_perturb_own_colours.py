"""REPLACE's and CE-CLIP's colour refills keep to the colours a thing can have (`visual_classes.NATURAL_COLOURS`,
read by `attribute_fit.attribute_fits`): the ce_clip impl rows of the judged natural sample
tests/data/perturb-judged-ceclip6-natural.csv and what the same rule removed on even ids are never shown, and the
colour of a thing that only holds, names or sits beside such a thing is still refilled.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

FAMILIES = ("replace", "ce_clip")


def attribute_refills(caption, family):
    """Every attribute refill of `family` the Probe would show (labelled plausible)."""
    return made(caption, [family], subtype="attribute", shown=True)


NEVER = [
    # judged impl in perturb-judged-ceclip6-natural.csv
    ("A number of red and green traffic lights on a wide highway.",
     "A number of red and blue traffic lights on a wide highway."),
    ("A white bowl of green granny smith apples.", "A white bowl of pink granny smith apples."),
    ("A jet airplane coming in to land in a cloudy blue sky", "A jet airplane coming in to land in a cloudy tan sky"),
    # made by main cbb2121 on even ids
    ("A herd of cattle grazing on a lush green field.", "A herd of cattle grazing on a lush blue field."),
    ("Several zebras eat the green grass in the pasture.", "Several zebras eat the white grass in the pasture."),
    ("An airplane is letting off white smoke against a blue sky.",
     "An airplane is letting off white smoke against a brown sky."),
    ("a black woman standing over a bushel of green bananas", "a black woman standing over a bushel of blue bananas"),
    ("A black traffic light suspended above a street.", "A blue traffic light suspended above a street."),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("caption", "absurd"), NEVER)
def test_a_colour_the_thing_cannot_have_is_never_shown(caption, absurd, family):
    assert normalized(absurd) not in attribute_refills(caption, family)


@pytest.mark.parametrize(("caption", "kept"), [
    ("A red apple on a table.", "A green apple on a table."),
    ("A jet airplane coming in to land in a cloudy blue sky", "A jet airplane coming in to land in a cloudy gray sky"),
    ("A black traffic light suspended above a street.", "A yellow traffic light suspended above a street."),
])
def test_a_colour_the_thing_can_have_is_still_a_refill(caption, kept):
    assert normalized(kept) in attribute_refills(caption, "replace") | attribute_refills(caption, "ce_clip")


@pytest.mark.parametrize(("caption", "word"), [
    ("A large white bowl of many green apples.", "bowl"),  # the bowl's colour, not the apples'
    ("A man has a blue water bottle up to his mouth.", "bottle"),  # "water" only names the bottle
    ("a black orange and yellow train on its track", "train"),  # "orange" is a colour here, not the fruit
])
def test_the_colour_of_what_only_holds_or_names_such_a_thing_is_still_refilled(caption, word):
    original = normalized(caption)
    changed = [text for text in attribute_refills(caption, "replace")
               if text.split(word)[0] != original.split(word)[0]]
    assert changed, f"no colour refill of the {word}"
