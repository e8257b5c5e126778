"""The fifth round of binding swaps for SugarCrepe's swap_att and swap_obj (issue 21): pronouns that follow a
count swap, expanses that hold any number, colours and materials onto compound nouns, a seat and the thing
beside "it", a left and a right. What each rule makes, and the outputs of first drafts or of the judged held-out sample
(tests/data/perturb-judged-swapatt5.csv) that must never come back.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def binding(caption, subtype=None):
    """Every binding_swap negative, as normalized texts, optionally of one subtype."""
    return made(caption, ["binding_swap"], subtype=subtype)


MAKES = [
    # a pronoun that can refer only to the noun whose number changes follows it: "their" -> "its" for an animal
    ("Two giraffes have a big log in their enclosure.", "count", "A giraffe has two big logs in its enclosure."),
    # ... and "her" -> "them"; standing in the grass is no seat, so two girls may stand there
    ("A little girl standing in the grass with two soccer balls in front of her.", "count",
     "Two little girls standing in the grass with a soccer ball in front of them."),
    # a dirt field is an expanse: any number stands on it
    ("A man standing behind two brown horses on a dirt field.", "count",
     "Two men standing behind a brown horse on a dirt field."),
    # a chromatic colour moves onto a compound noun
    ("A street with orange cones and a work truck on it.", "attribute_move",
     "A street with cones and an orange work truck on it."),
    # a material noun that spaCy hangs on a compound's head is an attribute
    ("A wooden bench next to a metal trash can.", "attribute", "A metal bench next to a wooden trash can."),
    # a left and a right trade places, however the parser reads "left arm"
    ("A man taking a photo with his right hand and eating food with his left hand.", "attribute",
     "A man taking a photo with his left hand and eating food with his right hand."),
    ("A tennis player poses, racket in his right hand, left arm behind him.", "attribute",
     "A tennis player poses, racket in his left hand, right arm behind him."),
    # a seat and the thing beside "it" trade places: the swap moves the seat
    ("A little boy sits on a bed with a chair next to it.", "object",
     "A little boy sits on a chair with a bed next to it."),
]


@pytest.mark.parametrize(("caption", "subtype", "expected"), MAKES)
def test_new_swaps_are_made(caption, subtype, expected):
    assert normalized(expected) in binding(caption, subtype)


NEVER = [
    # a pronoun that names a support does not follow its noun: one dish on several tables (first draft)
    ("A table with several dishes on it with a television.",
     "Several tables with a dish on them with a television."),
    # the first word of a compound with a colour of its own: "a green fuchsia umbrella" (first draft)
    ("A man in a florescent green hoodie holding a fuchsia umbrella.",
     "A man in a florescent hoodie holding a green fuchsia umbrella."),
    # a colour moved off a body part leaves "a cat with eyes"
    ("Black cat with green eyes sitting in a bathroom sink.", "Black cat with eyes sitting in a green bathroom sink."),
    ("A cat with green eyes sitting next to a work truck.", "A cat with eyes sitting next to a green work truck."),
    # a taxi is usually yellow: the moved colour may well be true of the photo
    ("a couple of yellow signs are near a taxi", "a couple of signs are near a yellow taxi"),
    # one plate is no ring "around" someone (judged held-out sample, doubt)
    ("a guy at a table with 6 plates of food around him", "6 guys at a table with a plate of food around them"),
    # a thing and what stands beside it, where nobody sits on either: the swap says the same
    ("A wooden table with a chair next to it.", "A wooden chair with a table next to it."),
    ("A table with a chair next to it.", "A chair with a table next to it."),
    # one part's left and right in one list: the swap says the same
    ("Cars parked on the left side and right side of the road.",
     "Cars parked on the right side and left side of the road."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_invalid_swaps_are_never_made(caption, never):
    assert normalized(never) not in binding(caption)


def test_body_part_keeps_its_colour():
    """No binding swap leaves a bare body part behind, whatever it moves the colour to."""
    assert not [text for text in binding("A cat with green eyes sitting next to a work truck.")
                if "with eyes" in text]
