"""The plausibility rules of issue 21's label round (`plausibility_fit`, `plausibility_scene`, the floor-and-bed case
of `plausibility_use`): each flags a negative judged absurd (impl) in tests/data/perturb-judged*.csv and leaves a
neighbour judged fine (ok) alone, against the caption it was made from, as the Probe labels it.

Neighbours marked "caption" are SugarCrepe captions (true of their photo), used where no judged-ok output was near.
"""
import pytest

from backend.perturb.core import normalized
from backend.perturb.plausibility import implausibilities
from tests.support.perturb_outputs import made

# (rule, caption, judged-absurd output)
FLAGGED = [
    ("neighbour_misfit", "Two brown bears swimming together in the water.",
     "Two brown zebras swimming together in the water."),
    ("neighbour_misfit", "A couple of slices of pizza sitting on white paper.",
     "A couple of slices of soup sitting on white paper."),
    ("neighbour_misfit", "Birds with long orange beaks and black and white feathers in a park.",
     "Cats with long orange beaks and black and white feathers in a park."),
    ("neighbour_misfit", "A man takes a black and white selfie with a phone.",
     "A man takes a black and white selfie with a remote."),
    ("attribute_misfit", "An orange cat laying on a white and brown cat in a bed.",
     "A green cat laying on a white and brown cat in a bed."),
    ("attribute_misfit", "a living room with wooden floors and furniture",
     "a living room with paper floors and furniture"),
    ("sweet_misfit", "A chocolate frosted donut on a plate with a cup of coffee and a penguin napkin holder.",
     "A chocolate frosted pizza on a plate with a cup of coffee and a penguin napkin holder."),
    ("partner_misfit", "A woman is cooking on a large black stove",
     "A woman and a dog are cooking on a large black stove"),
    ("eats_a_drink", "A man drinking a soda from a red bottle.", "A man eating a soda from a red bottle."),
    ("vessel_misfit", "A cutting board with pizza and a glass of wine",
     "A cutting board with wine and a glass of pizza"),
    ("ridden_misfit", "A man is riding a horse in an open field.", "A man is riding a bear in an open field."),
    ("ridden_misfit", "The people are practicing riding their surfboards on the beach.",
     "The people are practicing riding their tennis balls on the beach."),
    ("up_a_tree", "a cat is way up in a tree", "a cat and a dog are way up in a tree"),
    ("through_a_wall", "A woman sits at a counter while a man looks at her through a window.",
     "A woman sits at a counter while a man looks at her through a wall."),
    ("beside_a_kite", "A beach has a grassy area with a park beach.",
     "A beach has a grassy area with a park beach next to a kite."),
    ("flown_misfit", "Several men attempt to fly a kite on a beach.",
     "Several men attempt to fly a tennis ball on a beach."),
    ("handled_in_sky", "The man is flying his kite in the sky.", "The man is carrying his kite in the sky."),
    ("ski_on_sand", "a group of people riding skis on a snowy surface",
     "a group of people riding skis on a sandy surface"),
    ("floor_and_atop", "a woman sitting on the floor next to a bed", "a woman sitting on the floor on a bed"),
    ("joint_filling", "A vase filled with yellow and white flowers.",
     "A vase and a book filled with yellow and white flowers."),
]

# (rule it must not fire, caption, output judged ok, or a caption)
LEFT_ALONE = [
    ("neighbour_misfit", "A couple of slices of pizza sitting on white paper.",
     "A couple of slices of hot dog sitting on white paper."),
    ("neighbour_misfit", "A man taking a photo with his right hand and eating food with his left hand.",  # caption
     "A man taking a photo with his right hand and eating food with his left hand."),
    ("attribute_misfit", "An orange cat laying on a white and brown cat in a bed.",
     "An orange rabbit laying on a white and brown cat in a bed."),
    ("attribute_misfit", "A white dog sitting on red table next to metal object.",
     "A white dog sitting on red table next to concrete object."),
    ("sweet_misfit", "A baby in plaid shirt eating a frosted cake.",
     "A baby in plaid shirt eating a pink frosted cake."),
    ("partner_misfit", "A person walking along the beach with a surfboard.",
     "A person and a dog walking along the beach with a surfboard."),
    ("eats_a_drink", "A man wearing glasses eating a hot dog.", "A man wearing glasses eating a salad."),
    ("vessel_misfit", "A cutting board with pizza and a glass of wine",
     "A cutting board with pizza and a glass of soda"),
    ("ridden_misfit", "A man is riding a horse in an open field.",
     "A man and a woman are riding horses in an open field."),
    ("up_a_tree", "a cat is way up in a tree", "a goat is way up in a tree"),
    ("through_a_wall", "A dog looks out of the window as the car driver goes past a historic town.",
     "A cat looks out of the window as the car driver goes past a historic town."),
    ("beside_a_kite", "A beach has a grassy area with a park beach.",
     "A beach has a grassy area with a park beach next to an umbrella."),
    ("flown_misfit", "Several men attempt to fly a kite on a beach.",
     "A man attempts to fly several kites on a beach."),
    ("handled_in_sky", "The man is flying his kite in the sky.", "The man is flying his green kite in the sky."),
    ("ski_on_sand", "a person riding skis on a snowy slope", "a child riding skis on a snowy slope"),
    ("floor_and_atop", "A man sitting on the floor next to a rug.", "A man sitting on the floor on a rug."),
    # Hidden in the odd-id engine pass by a first version, judged fine there:
    ("neighbour_misfit", "A tan horse with a blond mane inside of a coral.",
     "A dog and a tan horse with a blond mane inside of a coral."),
    ("attribute_misfit", "A chair with a toddler and a big toy bear.",
     "A chair with a toddler and a big pink toy bear."),
    ("partner_misfit", "A man in black carrying a sheep on his shoulders.",
     "A man in black carrying a sheep and a cow on his shoulders."),
    ("joint_filling", "The bowl is full of pasta and vegetables.",
     "The bowl and a mug are full of pasta and vegetables."),
]


def _rules(output: str, caption: str) -> set[str]:
    return {violation.rule for violation in implausibilities(output, caption)}


@pytest.mark.parametrize(("rule", "caption", "absurd"), FLAGGED)
def test_a_judged_absurd_negative_is_flagged_by_its_rule(rule, caption, absurd):
    assert rule in _rules(absurd, caption)


@pytest.mark.parametrize(("rule", "caption", "fine"), LEFT_ALONE)
def test_a_judged_fine_neighbour_is_left_alone(rule, caption, fine):
    assert rule not in _rules(fine, caption)


def test_the_park_beach_next_to_a_kite_is_hidden_from_the_probe():
    """Judged absurd in tests/data/perturb-judged-addition8-natural.csv (caption 275)."""
    caption = "A beach has a grassy area with a park beach."
    assert normalized(f"{caption[:-1]} next to a kite.") not in made(caption, ["addition"], subtype="object",
                                                                      shown=True)
