"""The plausibility rules of issue 21's second label round (`plausibility_kinds`, and the rules widened in
`plausibility`, `plausibility_fit`, `plausibility_scene`, `plausibility_parse` and `selection`'s boat_on_road): each
flags a negative judged absurd (impl) on a tuning row of tests/data/perturb-judged*.csv, against the caption it was
made from, and leaves a SugarCrepe caption alone (every one is true of its photo, so any flag there is false).
"""
import pytest

from backend.perturb.plausibility import implausibilities, violations

# (rule, caption, judged-absurd output)
FLAGGED = [
    ("breed_misfit", "A baby tabby cat walking behind a bicycle leaning against a wall",
     "A baby tabby rabbit walking behind a bicycle leaning against a wall"),
    ("breed_misfit", "Men race on wheeled vehicles towed by a group of husky dogs.",
     "Men race on wheeled vehicles towed by a group of husky monkeys."),
    ("wild_handled", "A man walking his dog down a sidewalk.", "A man walking his giraffe down a sidewalk."),
    ("wild_handled", "three people and one is petting an elephant", "three people and one is petting a polar bear"),
    ("cooked_on_cold", "A woman is cooking on a large black stove", "A woman is cooking on a large black refrigerator"),
    ("under_low", "A man sitting on a bed looking at a book", "A man sitting under a bed looking at a book"),
    ("over_shelter", "A person is sitting under a colorful umbrella.", "A person is sitting over a colorful umbrella."),
    ("sat_in_table", "A man sitting in a chair across from a table topped with food.",
     "A man sitting in a table across from a chair topped with food."),
    ("kite_struck", "A man lies on the beach while someone else holds a kite.",
     "A man lies on the beach while someone else kicks a kite."),
    ("flowers_held", "A vase filled with yellow and white flowers.", "A book filled with yellow and white flowers."),
    ("flowers_held", "A vase of flowers are sitting in a sunny window.",
     "An umbrella of flowers are sitting in a sunny window."),
    ("animal_throws", "A black and white dog catching a blue flying disc",
     "A black and white dog throwing a blue flying disc"),
    ("other_kind", "a man pets a horse attached to other horses", "a man pets a horse attached to other birds"),
    ("on_cutlery", "A fork rests on a plate next to a piece of cake.",
     "A plate rests on a fork next to a piece of cake."),
    ("inanimate_agent", "A person on a skateboard does a flip in a parking lot.",
     "A skateboard on a person does a flip in a parking lot."),
    ("attribute_misfit", "Brown and black dog sitting on the brown couch by itself.",
     "Green and black dog sitting on the brown couch by itself."),
    ("attribute_misfit", "A white bowl of green granny smith apples.", "A white bowl of gray granny smith apples."),
    ("attribute_misfit", "A jet airplane coming in to land in a cloudy blue sky",
     "A jet airplane coming in to land in a cloudy tan sky"),
    ("attribute_misfit", "White sheep standing in front of a colorful wall in a building.",
     "Red sheep standing in front of a colorful wall in a building."),
    ("too_big_for", "Brown and black dog sitting on the brown couch by itself.",
     "Brown and black cow sitting on the brown couch by itself."),
    ("boat_on_road", "Searchlights in front view and a plane on a wide runway in the background.",
     "Searchlights in front view and a boat on a wide runway in the background."),
    ("vessel_misfit", "A table with a napkin, doughnut on a plate, and a cup of coffee.",
     "A table with a napkin, soup on a plate, and a cup of coffee."),
    ("vessel_misfit", "A meal of meat and corn and veggies on a white plate.",
     "A meal of meat and corn and veggies on a white cup."),
    ("handled_in_sky", "Some people in a grass field flying a kite in the sky.",
     "Some people in a grass field carrying a kite in the sky."),
]

# (rule, a SugarCrepe caption near the flagged output that the rule must leave alone)
CAPTIONS = [
    ("breed_misfit", "A calico cat is sitting on the roof of a car at night."),
    ("breed_misfit", "A husky dog sitting on the front seat of a car"),
    ("wild_handled", "A child is petting a sheep while another sheep watches."),
    ("cooked_on_cold", "A woman cooking on an old fashioned stove."),
    ("under_low", "A large white dog laying underneath a bed."),
    ("over_shelter", "A light that is sitting underneath a umbrella."),
    ("sat_in_table", "A barefoot woman sitting in a chair relaxing."),
    ("kite_struck", "Some people in a grass field flying a kite in the sky."),
    ("flowers_held", "A kitchen with wooden furniture and a vase filled with red flowers."),
    ("animal_throws", "A dog catching a purple Frisbee in it's mouth on a green grass covered field."),
    ("other_kind", "A child is petting a sheep while another sheep watches."),
    ("on_cutlery", "A fork rests on a plate next to a piece of cake."),
    ("inanimate_agent", "A person on a skateboard does a flip in a parking lot."),
    ("attribute_misfit", "A small black and orange bird is perched on a table with banana peels in it."),
    ("attribute_misfit", "Black and white sheep in hay next to wooden fence."),
    ("too_big_for", "A cat and dog napping together on the couch."),
    ("vessel_misfit", "A chocolate frosted donut on a plate with a cup of coffee and a penguin napkin holder. "),
    ("vessel_misfit", "A plate holding a grilled cheese sandwich and bowl of soup."),
    ("handled_in_sky", "A man flying a kite above a tall building in a cloudy blue sky."),
]

# Judged fine on tuning rows, near a rule's flags.
FINE = [
    ("attribute_misfit", "A number of red and green traffic lights on a wide highway.",
     "A number of silver and green traffic lights on a wide highway."),
    ("attribute_misfit", "A man flying a kite above a tall building in a cloudy blue sky.",
     "A man flying a kite above a tall building in a cloudy gold sky."),
    ("attribute_misfit", "A red and black boat floating on top of water.",
     "A red and orange boat floating on top of water."),
    ("attribute_misfit", "A red stop sign is glowing against the dark sky.",
     "A blue stop sign is glowing against the dark sky."),
    ("other_kind", "a man pets a horse attached to other horses", "a man pets a horse attached to other cows"),  # doubt
]

# Hidden in the odd-id engine pass by a first version, judged fine there.
ENGINE_FINE = [
    ("attribute_misfit", "A man in a black jacket holding a zebra print umbrella.",
     "A man in a black jacket holding a blue zebra print umbrella."),
    ("attribute_misfit", "A plate of finger foods next to a blue and raspberry topped cake.",
     "A plate of finger foods next to a blue and apple topped cake."),
    ("animal_throws", "White horse carrying a man in a black buggy.", "White horse throwing a man in a black buggy."),
    ("under_low", "A boy asleep on a large bed under a mosquito net",
     "A boy asleep under a large bed under a mosquito net"),
    ("flowers_held", "A small vase of flowers sit on a wooden table near magazines.",
     "A lamp and a small vase of flowers sit on a wooden table near magazines."),
]


def _rules(output: str, caption: str) -> set[str]:
    return {violation.rule for violation in implausibilities(output, caption)}


@pytest.mark.parametrize(("rule", "caption", "absurd"), FLAGGED)
def test_a_judged_absurd_negative_is_flagged_by_its_rule(rule, caption, absurd):
    assert rule in _rules(absurd, caption)


@pytest.mark.parametrize(("rule", "caption"), CAPTIONS)
def test_a_real_caption_is_left_alone(rule, caption):
    assert rule not in {violation.rule for violation in violations(caption)}


@pytest.mark.parametrize(("rule", "caption", "fine"), FINE + ENGINE_FINE)
def test_a_judged_fine_neighbour_is_left_alone(rule, caption, fine):
    assert rule not in _rules(fine, caption)


def test_a_replaced_attribute_that_makes_skis_ride_on_sand_is_flagged_where_only_it_changed():
    """ski_on_sand names its snowless mark: the REPLACE edit touches "sandy", not the surface or the verb."""
    caption = "a group of people riding skis on a snowy surface"
    absurd = "a group of people riding skis on a sandy surface"
    start = absurd.index("sandy")
    assert "ski_on_sand" in {v.rule for v in implausibilities(absurd, caption, [(start, start + len("sandy"))])}
