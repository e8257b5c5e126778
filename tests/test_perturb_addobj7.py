"""The additions' seventh coverage round (issue 21): a furnishing for the room, table or street a caption is
about (`addition_rooms`), a squirrel beside a bird on land and water birds together, subjects read through a
portion ("slices of pizza") or with a predicative adjective ("asleep"); and the outputs judged wrong or absurd
while tuning, which must never be made again (tests/data/perturb-judged-addobj7-new.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def objects(caption):
    """Every addition/object negative, as normalized texts."""
    return made(caption, ["addition"], subtype="object")


MAKES = [
    # a room's one listed thing takes a furnishing after it; its list takes one as a member
    ("A corner of a kitchen with a big fridge.", "A corner of a kitchen with a big fridge and a blender."),
    ("A hotel room with a small television and a work desk.",
     "A hotel room with a small television, a plant and a work desk."),
    ("A residential bathroom with sink, tub, and toilet setting in it.",
     "A residential bathroom with sink, tub, basket, and toilet setting in it."),
    ("The bathroom has very white appliances in it.", "The bathroom has very white appliances and a plant in it."),
    # a room that lists nothing takes a "with" phrase, before its own verb or a place
    ("The kitchen is clean and ready for us to see.", "The kitchen with a clock is clean and ready for us to see."),
    ("A bedroom in an old house that is being renovated",
     "A bedroom with a painting in an old house that is being renovated"),
    # a table's things
    ("A table with food and a drink on it", "A table with food, a vase and a drink on it"),
    # birds: a squirrel on land (no bear: its counts come from teddy bears), a swan on the water beside a duck
    ("Three birds walking around a dry grass field.", "Three birds and a squirrel walking around a dry grass field."),
    ("A bird is sitting on a bowl of birdseed.", "A bird and a squirrel are sitting on a bowl of birdseed."),
    ("A duck floating in the water near a bunch of grass and rocks",
     "A duck and a swan floating in the water near a bunch of grass and rocks"),
    # a portion's "of" names the subject; a predicative adjective and an NN-tagged participle stay shared
    ("Two slices of pizza are sitting on a paper plate.",
     "Two slices of pizza and a sandwich are sitting on a paper plate."),
    ("A big brown bear asleep in a hammock.", "A big brown bear and a cub asleep in a hammock."),
    ("A giraffe standing in tall grass with trees.", "A giraffe and an elephant standing in tall grass with trees."),
    # "empty" bars a join only on its own noun
    ("a white yellow and blue train at an empty train station",
     "a white yellow and blue train and a tram at an empty train station"),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_additions_are_made(caption, expected):
    assert normalized(expected) in objects(caption)


NEVER = [
    # a phrase or list after the room's thing would be the added thing's too
    ("The small bathroom has a toilet with a black seat.",
     "The small bathroom has a toilet and a painting with a black seat."),
    ("A room with a fire extinguisher, mugs hanging from a shelf and several lights.",
     "A room with a fire extinguisher and a clock, mugs hanging from a shelf and several lights."),
    ("A room with a couch, table set with dinnerware and a television.",
     "A room with a couch, table and a clock set with dinnerware and a television."),
    ("A marble table with white plate holding a pizza.", "A marble table with white plate and a book holding a pizza."),
    ("A bathroom with a toilet, a plant, a stand and several footwear on the floor.",
     "A bathroom with a toilet and a vase, a plant, a stand and several footwear on the floor."),
    # "with a X" right after the room, where the room's phrase goes on or spaCy read a noun as a verb
    ("The view of a bathroom with a wall mounted sink.",
     "The view of a bathroom with a vase with a wall mounted sink."),
    ("A bathroom sink beside a toilet and blue trashcan.",
     "A bathroom with a vase sink beside a toilet and blue trashcan."),
    ("Interior bathroom shot of a glass shower and white sink fixtures.",
     "Interior bathroom with a vase shot of a glass shower and white sink fixtures."),
    ("A view of a bathroom that needs to be fixed up.", "A view of a bathroom with a vase that needs to be fixed up."),
    # a room said to be bare or empty takes nothing
    ("The bathroom has a wall sink, medicine cabinet, toothbrush holder, and bare walls.",
     "The bathroom has a wall sink, medicine cabinet, toothbrush holder, painting, and bare walls."),
    ("An empty room with a chair and a table.", "An empty room with a chair, a clock and a table."),
    # "with a stylish feel": no thing to list beside
    ("A brightly decorated living room with a stylish feel.",
     "A brightly decorated living room with a stylish feel and a clock."),
    # an adjective with its own phrase is the subject's: the joined thing would be full of flowers too
    ("A vase full of flowers is sitting on display.", "A vase and a mirror full of flowers are sitting on display."),
    ("A bowl full of marshmallows, chocolate, and other delicious treats.",
     "A bowl and a mug full of marshmallows, chocolate, and other delicious treats."),
    # no squirrel on a lake or in a puddle, nor in flight
    ("A white bird sitting on top of a lake.", "A white bird and a squirrel sitting on top of a lake."),
    ("Several white birds standing in a puddle in a parking lot.",
     "Several white birds and a squirrel standing in a puddle in a parking lot."),
    ("A flock of birds flying over the ocean next to a beach.",
     "A flock of birds and a squirrel flying over the ocean next to a beach."),
    # a furnishing the caption may name otherwise (judged err on held-out ids: the carpet may be the rug)
    ("A living room with a white carpet and black furniture.",
     "A living room with a white carpet, rug and black furniture."),
    ("A room with a desktop computer and a picture of a mummy.",
     "A room with a desktop computer, a painting and a picture of a mummy."),
    ("Three birds walking around a dry grass field.", "Three birds and a bear walking around a dry grass field."),
    # a piece of one thing: the join would be a piece of it too
    ("A piece of a broken car on the road.", "A piece of a broken car and a bike on the road."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_invalid_additions_are_not_made(caption, never):
    assert normalized(never) not in objects(caption)
