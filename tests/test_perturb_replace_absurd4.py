"""REPLACE's object and attribute refills that read as absurd (issue 21): the impl rows of the judged natural sample
tests/data/perturb-judged-replace3-natural.csv and what tuning on even ids found are never shown
(backend/perturb/refill_fit.py, backend/perturb/attribute_fit.py), and a refill of the same kind still is.
"""
import pytest

from backend.perturb import perturb
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def shown(caption, subtype):
    """Every replace refill of `subtype` the Probe would show (labelled plausible)."""
    return made(caption, ["replace"], subtype=subtype, shown=True)


NEVER = [
    # judged impl in perturb-judged-replace3-natural.csv
    ("A formation of airplanes flying through a  blue sky.", "A formation of boats flying through a  blue sky."),
    ("A line of neon colored motorcycles parked in front of a bar.",
     "A line of neon colored boats parked in front of a bar."),
    ("Two people standing in a field flying a kite", "Two people standing in a field flying a soccer ball"),
    ("Three zebras look towards the camera in their habitat.",
     "Three zebras look towards the keyboard in their habitat."),
    ("Three zebras look towards the camera in their habitat.",
     "Three zebras look towards the remote in their habitat."),
    ("A bus stopped at a curb to allow people to board the bus.",
     "A train stopped at a curb to allow people to board the bus."),
    ("A baby tabby cat walking behind a bicycle leaning against a wall",
     "A baby tabby dog walking behind a bicycle leaning against a wall"),
    ("A guy in a green shirt holding his cell phone to take a picture.",
     "A guy in a green dress holding his cell phone to take a picture."),
    ("Someone holding a hot dog cut in half on some bread.", "Someone holding a cookie cut in half on some bread."),
    ("A hot dog sitting on top of a bun in a wrapper.", "A donut sitting on top of a bun in a wrapper."),
    ("A meal of meat and corn and veggies on a white plate.", "A meal of meat and corn and veggies on a white cup."),
    ("A woman holding a book about the topic fun.", "A woman holding a mirror about the topic fun."),
    ("A woman holding a book about the topic fun.", "A woman holding a candle about the topic fun."),
    ("Several people holding umbrellas and standing next to deer.",
     "Several people holding vases and standing next to deer."),
    # found while tuning on even ids
    ("A copse of men sitting next to each other at a table.",
     "A copse of men sitting next to each other at a shelf."),
    ("A triple decker sandwich is sitting on a desk.", "A triple decker sandwich is sitting on a couch."),
    ("a number of people sitting on benches", "a number of people sitting on cabinets"),
    ("A man riding a skateboard down a snow covered slope.", "A man riding a baseball bat down a snow covered slope."),
    ("A red bike with white handles is locked to a black pole on a sidewalk.",
     "A red bus with white handles is locked to a black pole on a sidewalk."),
    ("A man, two kids and a dog are playing Frisbee.", "A man, two kids and a goat are playing Frisbee."),
    ("Several white birds standing in a puddle in a parking lot.",
     "Several white monkeys standing in a puddle in a parking lot."),
    ("A bird perched on a branch.", "A dog perched on a branch."),
    ("A blue bird sitting on top of a bowl of seed.", "A blue rabbit sitting on top of a bowl of seed."),
    ("Motorcyclists are riding down the street with each other.",
     "Motorcyclists are riding down the river with each other."),
    ("A bus is stopped on a dark road.", "A bus is stopped on a dark forest."),
    ("A herd of cattle grazing on a lush green field.", "A herd of cattle grazing on a lush green desert."),
    ("A herd of cattle grazing on a lush green field.", "A herd of cattle grazing on a lush green river."),
]


@pytest.mark.parametrize(("caption", "absurd"), NEVER)
def test_absurd_object_refill_is_never_shown(caption, absurd):
    assert normalized(absurd) not in shown(caption, "object")


NEVER_ATTRIBUTES = [
    # judged impl in perturb-judged-replace3-natural.csv
    ("White sheep standing in front of a colorful wall in a building.",
     "Red sheep standing in front of a colorful wall in a building."),
    ("people on the beach playing with a brown cow", "people on the beach playing with a blue cow"),
    # found while tuning on even ids
    ("A woman sitting on a wooden bench viewing some beautiful trees.",
     "A woman sitting on a paper bench viewing some beautiful trees."),
    ("Two slices of pizza sitting on a paper plate.", "Two slices of pizza sitting on a brick plate."),
    ("A dog laying on a bed in a bedroom with wood floors.", "A dog laying on a bed in a bedroom with paper floors."),
    ("Overview of a pot of vegetable soup with wooden spoon on a stainless steel stove top.",
     "Overview of a pot of vegetable soup with leather spoon on a stainless steel stove top."),
]


@pytest.mark.parametrize(("caption", "absurd"), NEVER_ATTRIBUTES)
def test_absurd_attribute_refill_is_never_shown(caption, absurd):
    assert normalized(absurd) not in shown(caption, "attribute")


MAKES = [
    ("object", "A formation of airplanes flying through a  blue sky.",
     "A formation of helicopters flying through a  blue sky."),
    ("object", "A line of neon colored motorcycles parked in front of a bar.",
     "A line of neon colored bicycles parked in front of a bar."),
    ("object", "Someone holding a hot dog cut in half on some bread.",
     "Someone holding a hamburger cut in half on some bread."),
    ("object", "A plate with a slice of pizza sits on a table.", "A plate with a slice of cake sits on a table."),
    ("object", "a number of people sitting on benches", "a number of people sitting on chairs"),
    ("object", "A cat curled up on a bed for a nap.", "A cat curled up on a chair for a nap."),
    ("object", "A family are playing frisbee on the beach.", "A family are playing frisbee on the field."),
    ("object", "A red bike with white handles is locked to a black pole on a sidewalk.",
     "A red scooter with white handles is locked to a black pole on a sidewalk."),
    ("object", "Several white birds standing in a puddle in a parking lot.",
     "Several white cats standing in a puddle in a parking lot."),
    ("attribute", "White sheep standing in front of a colorful wall in a building.",
     "Black sheep standing in front of a colorful wall in a building."),
    ("attribute", "A woman sitting on a wooden bench viewing some beautiful trees.",
     "A woman sitting on a stone bench viewing some beautiful trees."),
    ("attribute", "Two slices of pizza sitting on a paper plate.", "Two slices of pizza sitting on a plastic plate."),
    # SugarCrepe's own kind of refill ("boats" -> "jetskis"): a boat and a train no longer stand alone
    ("object", "Some very nice looking boats in the water.", "Some very nice looking jet skis in the water."),
    ("object", "A train on the tracks with its lights on", "A tram on the tracks with its lights on"),
]


@pytest.mark.parametrize(("subtype", "caption", "fitting"), MAKES)
def test_a_refill_of_the_same_kind_is_still_shown(subtype, caption, fitting):
    assert normalized(fitting) in shown(caption, subtype)


def test_ce_clip_shows_no_attribute_that_replace_refuses():
    """CE-CLIP's attribute refills are held to the same fit, or REPLACE's refused texts come back as CE-CLIP's."""
    shown_ce = {normalized(variant.text) for variant in perturb("a white horse that is standing next to a fence",
                                                                ["ce_clip"], seed=0, max_per_subtype=20, scorer=None)
                if variant.subtype == "attribute"}
    assert normalized("a brown horse that is standing next to a fence") in shown_ce
    assert normalized("an orange horse that is standing next to a fence") not in shown_ce

