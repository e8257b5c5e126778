"""The additions' eighth coverage round (issue 21): an outdoor place's curated things after its "with"
(`addition_rooms.PLACE_FURNISHINGS`), a third kind of food in a list of two (`kindred.FOOD_KINDS`), a person joined
in front of one whose dress cannot be passed, town buildings and bathroom fixtures as `kindred` things; and the
outputs judged wrong or absurd (tests/data/perturb-judged-addobj8.csv), which must never be made again.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def objects(caption):
    """Every addition/object negative, as normalized texts."""
    return made(caption, ["addition"], subtype="object")


MAKES = [
    # an outdoor place takes one of its things where the counts know too few
    ("Sheep graze in a lushly green mountain meadow", "Sheep graze in a lushly green mountain meadow with a barn"),
    ("People standing with their luggage on a train platform.",
     "People standing with their luggage on a train platform with a bench."),
    ("A clock on a stand displays the time in a garden.",
     "A clock on a stand displays the time in a garden with a bench."),
    # a list of two kinds of food takes a third
    ("There are meats and vegetables on a flatbread", "There are meats, fruits and vegetables on a flatbread"),
    # a person joins in front of one whose dress would otherwise move
    ("A man in yellow shirt and black shorts playing a game of tennis.",
     "A woman and a man in yellow shirt and black shorts playing a game of tennis."),
    ("A man dressed in black snow gear stands on skis in the snow.",
     "A woman and a man dressed in black snow gear stand on skis in the snow."),
    ("Two small girls wearing blue jackets pose for a photo.",
     "A boy and two small girls wearing blue jackets pose for a photo."),
    # town buildings and bathroom fixtures stand beside their kind
    ("A tall church tower sitting on the side of a road.",
     "A tall church tower and a house sitting on the side of a road."),
    ("A bird standing on a wooden post near a house.", "A bird standing on a wooden post near a house and a tower."),
    ("an odd looking toilet is against a wall", "an odd looking toilet and a bathtub are against a wall"),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_additions_are_made(caption, expected):
    assert normalized(expected) in objects(caption)


NEVER = [
    # no dog joins in front of a person's dress: it would wear it too
    ("A man in yellow shirt and black shorts playing a game of tennis.",
     "A dog and a man in yellow shirt and black shorts playing a game of tennis."),
    # a place or a held thing is no dress: the joined person would share it
    ("A girl in a hospital bed with an IV and monitors.",
     "A boy and a girl in a hospital bed with an IV and monitors."),
    ("A young boy with a spoon looking at a birthday cupcake.",
     "A woman and a young boy with a spoon looking at a birthday cupcake."),
    # a verb spaCy read as a noun would be left singular
    ("A man wearing a tie poses for a photo", "A woman and a man wearing a tie poses for a photo"),
    # no bathroom fixture beside a sink, which is mostly a kitchen's
    ("Utensils and containers line the sink in a kitchen.",
     "Utensils and containers line the sink and a toilet in a kitchen."),
    ("A small, white formica kitchen with a refrigerator, sink and small electrical appliances",
     "A small, white formica kitchen with a refrigerator, sink, toilet and small electrical appliances"),
    # judged absurd (tests/data/perturb-judged-addobj8.csv): a building on or above something shares the place
    ("A clock tower on top of a tall historic building.",
     "A house and a clock tower on top of a tall historic building."),
    ("Clock tower on top of a building outside on a sunny day.",
     "A house and clock tower on top of a building outside on a sunny day."),
    ("A large, ornate clock tower rises above another skyscraper.",
     "A large, ornate clock tower and a house rise above another skyscraper."),
    # one clock fixed to two buildings
    ("A large clock fixed to a building as vehicles pass by.",
     "A large clock fixed to a building and a church as vehicles pass by."),
    ("A large clock fixed to a building as vehicles pass by.",
     "A large clock fixed to a building and a house as vehicles pass by."),
    # no church beside giraffes; no house beside a building, which it is
    ("Two giraffes are standing next to a building.", "Two giraffes are standing next to a building and a church."),
    ("A bird standing on a wooden post near a house.", "A bird standing on a wooden post near a house and a building."),
    # a person joined in front of a dressed one shares nothing they act on, and bats alone
    ("A male baseball player wearing red and white is up to bat.",
     "A child and a male baseball player wearing red and white are up to bat."),
    ("A man in a black hat, white shirt and black pants jumping a skateboard off a bench.",
     "A girl and a man in a black hat, white shirt and black pants jumping a skateboard off a bench."),
    ("A woman with a hat, tie and striped halter smoking a long cigarette.",
     "A boy and a woman with a hat, tie and striped halter smoking a long cigarette."),
    ("A woman with a hat, tie and striped halter smoking a long cigarette.",
     "A girl and a woman with a hat, tie and striped halter smoking a long cigarette."),
    ("A man with thick black glasses eats a hotdog.", "A woman and a man with thick black glasses eat a hotdog."),
    # no snowman beside a mountain hike, no tractor on a ball field
    ("A man hiking on a mountain.", "A man hiking on a mountain with a snowman."),
    ("A batter swings at the ball on a baseball field in a pasture.",
     "A batter swings at the ball on a baseball field in a pasture with a tractor."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_never_made(caption, never):
    assert normalized(never) not in objects(caption)
