"""The subject joins added for SugarCrepe's add_obj in its fifth round (issue 21): relative clauses on the subject,
a close up's "of", listed compounds and toys that take a stand-in's kindred things, and the partners a joined
subject may no longer take. The "never" cases were judged err or absurd while tuning on even-id captions or in the
judged held-out sample (tests/data/perturb-judged-addobj5.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def objects(caption):
    """Every addition/object negative, as normalized texts."""
    return made(caption, ["addition"], subtype="object")


MAKES = [
    # a relative clause on the subject: its verb is made plural with the subject's
    ("A cat that is laying on a couch.", "A cat and a rabbit that are laying on a couch."),
    ("A fire hydrant that is sitting in the grass.", "A fire hydrant and a bench that are sitting in the grass."),
    ("there is a very beautiful zebra that is standing in the shade",
     "there are a very beautiful zebra and an elephant that are standing in the shade"),
    ("A group of dogs that are standing in the grass.", "A group of dogs and a cat that are standing in the grass."),
    # a close up shows what follows its "of"
    ("a close up of a plate of food on a carpeted floor",
     "a close up of a bowl and a plate of food on a carpeted floor"),
    ("a close up of sheep on hay ground indoors", "a close up of a goat and sheep on hay ground indoors"),
    # listed compounds and toys take a stand-in's kindred things
    ("Two cooked hot dogs on a plate with parsley.", "A hamburger and two cooked hot dogs on a plate with parsley."),
    ("A teddy bear is next to a goldfish toy.", "A teddy bear and a doll are next to a goldfish toy."),
    ("A stuffed animal sitting in front of a tooth brush.",
     "A stuffed animal and a doll sitting in front of a tooth brush."),
    ("A pretty red white and blue parking meter by some shrubs.",
     "A pretty red white and blue parking meter and a bench by some shrubs."),
]

NEVER = [
    # judged err: a second present verb, through its auxiliary, left singular
    ("A man that has ski's and is standing in the snow.",
     "A man and a woman that have ski's and is standing in the snow."),
    ("A man has skis and is standing in the snow.", "A man and a woman have skis and is standing in the snow."),
    # judged absurd: a dog sharing what only the person does, holds or acts on, also inside a relative clause
    ("A man who is about to hit  tennis ball with a racket.",
     "A man and a dog who are about to hit  tennis ball with a racket."),
    ("THERE ARE WOMEN THAT ARE LAUGHING UNDER THE UMBRELLA",
     "THERE ARE WOMEN AND A DOG THAT ARE LAUGHING UNDER THE UMBRELLA"),
    ("A woman is cooking on a large black stove", "A woman and a dog are cooking on a large black stove"),
    ("A man that is standing in the dirt with a bat.", "A man and a dog that are standing in the dirt with a bat."),
    # judged absurd: a thing joined to one in its own holder, or fixed in place
    ("A hot dog sitting on top of a bun in a wrapper.",
     "A hot dog and a sandwich sitting on top of a bun in a wrapper."),
    ("A stop sign that is attached to a broken wooden pole.",
     "A stop sign and a bench that are attached to a broken wooden pole."),
    ("A stop sign that is hanging upside down.", "A stop sign and a bench that are hanging upside down."),
    ("Two hot dogs are sandwiched between two slices of bread",
     "Two hot dogs and a hamburger are sandwiched between two slices of bread"),
    # judged unsure: a hot dog is a sausage
    ("A hot dog is on a plate with macaroni and cheese.",
     "A hot dog and a sausage are on a plate with macaroni and cheese."),
    # the relative word names no subject here: the join is still refused
    ("A box that has doughnuts inside of it.", "A box and a bag that have doughnuts inside of it."),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_new_joins_are_made(caption, expected):
    assert normalized(expected) in objects(caption)


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_judged_outputs_are_never_made(caption, never):
    assert normalized(never) not in objects(caption)
