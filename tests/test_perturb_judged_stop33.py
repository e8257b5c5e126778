"""The errs and the most common absurd kind judged in the natural samples drawn after stop 33's merge
(tests/data/perturb-judged-{replace5,addition5,ceclip5,binding-swap5}-natural.csv), never made again."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


@pytest.mark.parametrize(("caption", "families", "never"), [
    # err: "semi" is a kind of truck, not a word of its own
    ("A semi truck pulling a chain of three trailers.", ["replace", "ce_clip"],
     "A semi bus pulling a chain of three trailers."),
    # err: the join made the misspelt possessive "it's" agree as a verb
    ("A white truck with a red car sitting in it's back.", ["addition"],
     "A bicycle and a white truck with a red car sitting in itbe back."),
    # err: an attribute inside the set phrase "no smoking"
    ("PASSENGER TRAIN IN THE NIGHT HOURS WITH NO SMOKING SIGN, AND TWO WOMEN", ["addition"],
     "PASSENGER TRAIN IN THE NIGHT HOURS WITH NO RED SMOKING SIGN, AND TWO WOMEN"),
    # impl: a black and white picture in colours
    ("A vintage black and white photo of a man on a horse.", ["replace", "ce_clip"],
     "A vintage purple and white photo of a man on a horse."),
    ("A black and white image of people sitting near a santa", ["replace", "ce_clip"],
     "A black and pink image of people sitting near a santa"),
])
def test_a_judged_err_or_absurd_picture_colour_is_never_made(caption, families, never):
    assert normalized(never) not in made(caption, families)


def test_the_judged_captions_keep_their_other_negatives():
    assert made("A semi truck pulling a chain of three trailers.", ["replace"])  # the count still changes
    assert any("red umbrella" not in text for text in made("A man holding a red umbrella.", ["replace"]))


def test_an_adjective_does_not_move_across_next_to_onto_a_thing_of_unknown_colour():
    """Judged err (still true): the shower's colour is unknown, and showers are white too."""
    outputs = made("A white toilet sitting in a bathroom next to a shower.", ["binding_swap"])
    assert normalized("A white shower sitting in a bathroom next to a toilet.") not in outputs
    assert normalized("A red chair next to a brown couch in a living room.") in made(
        "A red couch next to a brown chair in a living room.", ["binding_swap"])  # both described: a true swap
