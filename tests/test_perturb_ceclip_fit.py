"""CE-CLIP's object refills must fit their slot (backend/perturb/refill_fit.py): the absurd refills of the
judged natural sample (tests/data/perturb-judged-natural-3-families.csv, family ce_clip) are never shown, and
refills of the same size and use still are.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def shown_objects(caption):
    """Every ce_clip object refill the Probe would show (labelled plausible)."""
    return made(caption, ["ce_clip"], subtype="object", shown=True)


NEVER = [
    ("The people are practicing riding their surfboards on the beach.",
     "The people are practicing riding their tennis balls on the beach."),
    ("A street scene with a horse pulling a white carriage.", "A street scene with a cat pulling a white carriage."),
    ("Men race on wheeled vehicles towed by a group of husky dogs.",
     "Men race on wheeled vehicles towed by a group of husky monkeys."),
    ("A cow grazing on the grass on the side of a side walk.",
     "A cat grazing on the grass on the side of a side walk."),
    ("A cat has its front paws on a toilet seat.", "A horse has its front paws on a toilet seat."),
    ("A man looking in the refrigerator with a cat also looking inside",
     "A man looking in the refrigerator with a cow also looking inside"),
    ("A white bus driving down a street next to a building.", "A white boat driving down a street next to a building."),
    ("A man is riding a horse in an open field.", "A man is riding a bear in an open field."),
    ("One apple and several oranges sit in a bowl.", "One apple and several watermelons sit in a bowl."),
    ("a guy inside a car taking a picture through the mirror in a remote area",
     "a guy inside a motorcycle taking a picture through the mirror in a remote area"),
    ("Two people are riding elephants beside some trees.", "Two people are riding pigs beside some trees."),
    ("a cat sitting in the sink in the bathroom", "a horse sitting in the sink in the bathroom"),
    ("two people riding horses on a rock path", "two people riding squirrels on a rock path"),
    ("A group of cows grazing in a grassy field.", "A group of cats grazing in a grassy field."),
    ("a man is riding a surfboard at the beach", "a man is riding a tennis ball at the beach"),
    ("A cute cat laying down in a sink.", "A cute horse laying down in a sink."),
    ("Several men attempt to fly a kite on a beach.", "Several men attempt to fly a tennis ball on a beach."),
    ("A woman is riding a horse as it jumps over a bar.", "A woman is riding a bear as it jumps over a bar."),
    ("A white bed in a bedroom next to a table on a lamp.", "A white bed in a bedroom next to a table on a candle."),
    # found while tuning on even ids
    ("Several people are riding the waves on their surfboards.",
     "Several people are riding the waves on their snowboards."),
    ("Many skiers are walking and skiing around the snow.", "Many skiers are walking and skiing around the sand."),
    # judged absurd in a first held-out sample (seed 4242): a wild animal for a pet
    ("A man using his laptop computer while a cat sits on his lap.",
     "A man using his laptop computer while a squirrel sits on his lap."),
    ("A dog catching a purple Frisbee in it's mouth on a green grass covered field.",
     "A squirrel catching a purple Frisbee in it's mouth on a green grass covered field."),
    ("A small dog with a chain collar looking at another dog.",
     "A small squirrel with a chain collar looking at another dog."),
    # judged absurd in a second held-out sample (seed 5151): a ridden bear, a beach's things in a desert
    ("Two men and a woman riding on the back of an elephant.", "Two men and a woman riding on the back of a bear."),
    ("a man is riding a surfboard at the beach", "a man is riding a surfboard at the desert"),
    ("There is a tractor next to some boats on the beach", "There is a tractor next to some boats on the desert"),
]


@pytest.mark.parametrize(("caption", "absurd"), NEVER)
def test_absurd_refill_is_never_shown(caption, absurd):
    assert normalized(absurd) not in shown_objects(caption)


MAKES = [
    ("A man is riding a horse in an open field.", "A man is riding an elephant in an open field."),
    ("a cat sitting in the sink in the bathroom", "a dog sitting in the sink in the bathroom"),
    ("A white bus driving down a street next to a building.",
     "A white truck driving down a street next to a building."),
    ("A street scene with a horse pulling a white carriage.", "A street scene with a cow pulling a white carriage."),
    ("One apple and several oranges sit in a bowl.", "One apple and several bananas sit in a bowl."),
]


@pytest.mark.parametrize(("caption", "fitting"), MAKES)
def test_fitting_refill_is_shown(caption, fitting):
    assert normalized(fitting) in shown_objects(caption)


def test_hyphenated_word_is_not_split_by_a_noun_swap():
    # judged err in the first held-out sample (seed 4242)
    caption = "A close-up of a plate of food containing meat and beans."
    swaps = made(caption, ["ce_clip"], subtype="relation")
    assert normalized("A close-plate of an up of food containing meat and beans.") not in swaps
