"""The relation replacements of issue 21's fifth replace_rel round: what each new rule makes, and what it must
never make. The "makes" captions are even-id SugarCrepe captions (the tuning set) or short ones of the same shape;
the "never" cases are guards found while tuning and the outputs judged invalid in the held-out sample
(tests/data/perturb-judged-rel5.csv)."""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

MAKES = [
    # depth: background <-> foreground, the distance brought forward (placement.depth_slots)
    ("relation", "A barge floating down a river with the skyline in the background.",
     "A barge floating down a river with the skyline in the foreground."),
    ("relation", "A bridge in the distance with multiple different colored lights.",
     "A bridge in the foreground with multiple different colored lights."),
    # a thing or body in the air set on the ground (placement.grounded_slots)
    ("relation", "MOTOR CROSS BIKE AND RIDER IN THE AIR DOING TRICKS",
     "MOTOR CROSS BIKE AND RIDER ON THE GROUND DOING TRICKS"),
    ("relation", "a man in mid air while riding a motor bike", "a man on the ground while riding a motor bike"),
    # a thing propped against another lies beside it (placement.leaning_slots)
    ("relation", "A pile of luggage sitting up against a white fence.",
     "A pile of luggage lying next to a white fence."),
    ("relation", "a black bike rests against a brown bed", "a black bike lies next to a brown bed"),
    # a gathering walks away (placement.dispersal_slots)
    ("relation", "Women and children are gathered around a blue cake.",
     "Women and children are walking away from a blue cake."),
    # a body resting on a made thing is beside it (placement.set_beside_slots)
    ("relation", "A cat perches on top of an entertainment center in front of a TV.",
     "A cat perches next to an entertainment center in front of a TV."),
    # aircraft, kites and birds in the sky, and boats in the water (placement.sky_grounded_slots, beached_slots)
    ("relation", "A kite in the blue sky.", "A kite on the ground."),
    ("relation", "several sail boats in the water at night", "several sail boats out of the water at night"),
    ("relation", "The boats are in the water for a peaceful night",
     "The boats are out of the water for a peaceful night"),
    # road vehicles parked by a thing drive past it, and the other way (motion.passing_slots)
    ("relation", "A red car is parked at a traffic light.", "A red car is driving past a traffic light."),
    ("relation", "Food trucks are parked around small oval tables.", "Food trucks are driving past small oval tables."),
    ("relation", "A yellow dump truck driving past a forest.", "A yellow dump truck parked near a forest."),
    # kites and birds in the sky brought down (motion.landed_slots)
    ("relation", "A colorful kite flying high in the sky.", "A colorful kite lying on the ground."),
    ("relation", "A flock of seagulls flying through the air.", "A flock of seagulls perched on branches."),
    # verb phrases (verb_phrases.SWAPS)
    ("relation", "A group of people walking down a sidewalk.", "A group of people running down a sidewalk."),
    ("relation", "Several cows and a horse are eating hay.", "Several cows and a horse are lying in hay."),
    ("relation", "A man on a surfboard surfing a large wave.", "A man on a surfboard wiping out on a large wave."),
    ("relation", "a man talking on a cell phone outside of a fast food place",
     "a man putting away a cell phone outside of a fast food place"),
    ("relation", "There is a man opening the oven door.", "There is a man closing the oven door."),
    ("relation", "Three men are skiing down a snow covered hill.", "Three men are climbing up a snow covered hill."),
    # the doer seen past a garment spaCy hung the verb on (verb_phrases._garment_owner)
    ("relation", "A little boy with a red baseball cap playing tennis.",
     "A little boy with a red baseball cap watching tennis."),
    ("relation", "A man in black shirt and blue shorts playing tennis.",
     "A man in black shirt and blue shorts watching tennis."),
    # corners and middles (lexicon spatial_opposites), "close to" -> "far from"
    ("relation", "A television, couch and chair in the corner of a room.",
     "A television, couch and chair in the middle of a room."),
    ("relation", "Two giraffes in a sanctuary standing close to the wall",
     "Two giraffes in a sanctuary standing far from the wall"),
]


@pytest.mark.parametrize(("subtype", "caption", "expected"), MAKES)
def test_new_replacements_are_made(subtype, caption, expected):
    assert normalized(expected) in made(caption, ["replace"], subtype=subtype)


NEVER = [
    # two depths named: the swap repeats one ("in the foreground ... in the foreground")
    ("relation", "A parasailer in the distance with two surfers in the foreground.",
     "A parasailer in the foreground with two surfers in the foreground."),
    # a gaze "in the distance" is where one looks, not what is far
    ("relation", "A woman talking on the phone looks in the distance.",
     "A woman talking on the phone looks in the foreground."),
    # "in the air" before a place only a thing aloft has, or where a thing is sent
    ("relation", "A frisbee is in the air over a field.", "A frisbee is on the ground over a field."),
    ("relation", "a man in the air with a skateboard above a half pipe",
     "a man on the ground with a skateboard above a half pipe"),
    ("relation", "a boy making a face while running to get his kite in the air",
     "a boy making a face while running to get his kite on the ground"),
    # a body part is no made thing to rest beside; a misparse "on a table drinking water" is no bed for a body
    ("relation", "A toddler in a pink shirt sits on the lap of a woman.",
     "A toddler in a pink shirt sits next to the lap of a woman."),
    ("relation", "a cat stands on a table drinking water out of a glass",
     "a cat stands next to a table drinking water out of a glass"),
    # a run downhill beside a climb uphill; opening for a purpose
    ("relation", "A ski resort with a bunch of people skiing down hill and going up hill.",
     "A ski resort with a bunch of people climbing up hill and going up hill."),
    ("relation", "A woman opening a refrigerator to get a drink.", "A woman closing a refrigerator to get a drink."),
    # judged err, absurd or fixed doubts in the held-out sample (perturb-judged-rel5.csv), removed after judging
    ("relation", "A woman is standing in the middle of the snow with ski sticks as the sun rises in the background.",
     "A woman is standing on the corner of the snow with ski sticks as the sun rises in the background."),
    ("relation", "A man is high in the air as he skateboards on the ramp.",
     "A man is high on the ground as he skateboards on the ramp."),
    ("relation", "A woman is standing in the middle of the snow with ski sticks as the sun rises in the background.",
     "A woman is standing in the middle of the snow with ski sticks as the sun rises in the foreground."),
    ("relation", "A white bus parked next to a sidewalk near a fence.", "A white bus driving past a sidewalk near a fence."),
    ("relation", "A street sign is pictured at the forefront with an ornate building in the background.",
     "A street sign is pictured at the forefront with an ornate building in the foreground."),
    ("relation", "A couple of cows and some birds flying in the sky.",
     "A couple of cows and some birds perched on branches."),
    # a boat that sails or floats is afloat for good; an aircraft doing what only one aloft does
    ("relation", "A boat floating in the water.", "A boat floating out of the water."),
    ("relation", "The airplane in the sky is doing tricks while spitting out smoke.",
     "The airplane on the ground is doing tricks while spitting out smoke."),
    ("relation", "A brightly colored single engine plane is high in the clear sky.",
     "A brightly colored single engine plane is high on the ground."),
    # a bike is not read as driving itself
    ("relation", "A red bike is parked outside of a barred window.",
     "A red bike is driving past a barred window."),
]


@pytest.mark.parametrize(("subtype", "caption", "output"), NEVER)
def test_invalid_replacements_are_never_made(subtype, caption, output):
    assert normalized(output) not in made(caption, ["replace"], subtype=subtype)
