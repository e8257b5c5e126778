"""The fourth round of object and role swaps for SugarCrepe's swap_obj (issue 21): a portion that moves whole and
trades with a handheld thing, an "and" joining two verbs that is no conjunct of the nouns, conjuncts that each do
their own thing, spatial role swaps of
two numbers with their verbs made to agree, on a ground both things fit, around a verb of motion between two
vehicles, and piles as arguments. What each makes, and what it must never make (outputs judged invalid or absurd
while tuning on even ids or in the judged held-out outputs, tests/data/perturb-judged-swapobj4-new.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def swaps(caption, subtype):
    """Every binding_swap negative of one subtype, as normalized texts."""
    return made(caption, ["binding_swap"], subtype=subtype)


MAKES = [
    # a portion moves whole; the "and" joins the verbs, so each noun keeps its own
    ("A woman holding a fork and reaching for a slice of pizza.",
     "A woman holding a slice of pizza and reaching for a fork.", "object"),
    ("A child holds a spoon and looks at a cupcake.", "A child holds a cupcake and looks at a spoon.", "object"),
    # conjuncts that each do their own thing
    ("A man sitting and a woman standing on a beach.", "A woman sitting and a man standing on a beach.", "object"),
    # two numbers, the verb made to agree; a wall both hang on
    ("Two clocks are hung on a wall behind a glass sign.", "A glass sign is hung on a wall behind two clocks.",
     "relation_arguments"),
    # two vehicles of different number in a place (an object swap of the third round, made here first)
    ("A motorcycle parked behind two vans in a parking lot.", "Two vans parked behind a motorcycle in a parking lot.",
     "relation_arguments"),
    # a pile as an argument, its verb agreeing with what takes its place
    ("A teddy bear sitting in front of a pile of boxes.", "A pile of boxes sitting in front of a teddy bear.",
     "relation_arguments"),
    ("A stack of random books are placed in front of a computer.",
     "A computer is placed in front of a stack of random books.", "relation_arguments"),
    # two vehicles around a verb of motion, down a road both travel
    ("A bus traveling down a curvy road behind a black car.", "A black car traveling down a curvy road behind a bus.",
     "relation_arguments"),
    # a shelf both stand on
    ("A toaster sits on a kitchen shelf in front of a blender.",
     "A blender sits on a kitchen shelf in front of a toaster.", "relation_arguments"),
]


@pytest.mark.parametrize(("caption", "expected", "subtype"), MAKES)
def test_new_swaps_are_made(caption, expected, subtype):
    assert normalized(expected) in swaps(caption, subtype)


NEVER = [
    # read with no verb ("legged"), a person and a thing of two numbers: the sign would sit cross legged
    ("School boys sit cross legged in front of a chalkboard sign in a vintage black and white photo.",
     "A chalkboard sign sits cross legged in front of school boys in a vintage black and white photo.",
     "relation_arguments"),
    # two numbers around "over": the small one over the large ones
    ("Two large brown elephants standing over a small elephant.",
     "A small elephant standing over two large brown elephants.", "relation_arguments"),
    # a portion of food between food: what sandwiches what
    ("Two hot dogs are sandwiched between two slices of bread",
     "Two slices of bread are sandwiched between two hot dogs", "object"),
    # a teacher and students of two numbers: only spatial phrases trade numbers
    ("a surfing instructor teaches students with surfboards on a beach in front of large hotel buildings.",
     "students with surfboards on a beach teach a surfing instructor in front of large hotel buildings.",
     "relation_arguments"),
    # a saucer fits a cup, not a laptop
    ("A cup sitting on a saucer in front of a laptop.", "A laptop sitting on a saucer in front of a cup.",
     "relation_arguments"),
]


@pytest.mark.parametrize(("caption", "never", "subtype"), NEVER)
def test_invalid_swaps_are_never_made(caption, never, subtype):
    assert normalized(never) not in swaps(caption, subtype)
