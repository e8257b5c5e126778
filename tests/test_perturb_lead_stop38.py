"""Stop 38's lead fixes to the perturbation engine.

spaCy reads "A dog kneeling on the grass" as one noun, "kneeling" with "dog" its compound, so no verb had the dog
for its agent and the rule that only elephants and camels (of the animals) kneel never saw it: "A dog kneeling on
the grass next to a ball" was shown as a plausible relation negative of the common "A dog laying on ..." captions.
`selection._misread_participles` reads such a doer for the posture verbs of `selection.POSTURE_AGENTS`; no
SugarCrepe caption is flagged by it (three have the shape: a child kneeling, zebras' company and a hillside
grazing).

Food that is no sweet takes only the colours food comes in (`attribute_fit.FOOD_COLOURS`, a few foods one more:
purple onions, pink ham), a few vegetables only their own (`visual_classes.NATURAL_COLOURS`: peas are green): "a
pizza with a blue crust" and "purple peas" were made. Attribute additions pass `attribute_fit` too: "A man sitting
at a leather table" and "a cardboard bench" were made.
"""
import re

import pytest

from backend.perturb import plausibility
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


@pytest.mark.parametrize(("caption", "absurd"), [
    ("A dog laying on the grass next to a ball.", "A dog kneeling on the grass next to a ball."),
    ("A brown dog laying on a couch.", "A brown dog kneeling on a couch."),
])
def test_a_dog_kneeling_is_never_shown(caption, absurd):
    assert normalized(absurd) not in made(caption, shown=True)


@pytest.mark.parametrize("text", ["Dog kneeling near a bench.", "A cat kneeling on a bed.", "Cat grazing in a field."])
def test_an_animal_read_as_a_compound_of_its_participle_is_its_doer(text):
    assert [v.rule for v in plausibility.violations(text)] == ["wrong_subject"]


@pytest.mark.parametrize("caption", [
    "A child kneeling in front of an open refrigerator and looking in at an empty lower shelf.",
    "Two zebras and another animal grazing in the grass.",
    "A flock of sheep walking along a grassy hillside grazing.",
    "An elephant kneeling on the grass.",
    "A dog squatting on a couch.",
])
def test_real_and_fine_captions_of_that_shape_are_not_flagged(caption):
    assert plausibility.violations(caption) == ()


@pytest.mark.parametrize(("caption", "absurd"), [
    ("A pizza with a brown crust on a plate.", "A pizza with a blue crust on a plate."),
    ("A pizza with a brown crust on a plate.", "A pizza with a silver crust on a plate."),
    ("A bowl of white rice with green peas.", "A bowl of white rice with purple peas."),
    ("A bowl of white rice with green peas.", "A bowl of white rice with red peas."),
    ("A plate with purple onions and ham.", "A plate with blue onions and ham."),
])
def test_food_that_is_no_sweet_takes_no_colour_food_never_has(caption, absurd):
    assert normalized(absurd) not in made(caption)


@pytest.mark.parametrize(("caption", "fine"), [
    ("A white cake with pink frosting.", "A white cake with blue frosting."),  # sweets are coloured at will
    ("A plate with purple onions and ham.", "A plate with red onions and ham."),
    ("A blue plate of food on a table.", "A purple plate of food on a table."),  # the plate's colour, not the food's
])
def test_sweets_plates_and_food_colours_still_change(caption, fine):
    assert normalized(fine) in made(caption)


@pytest.mark.parametrize(("caption", "absurd"), [
    ("A man sitting at a table.", "A man sitting at a leather table."),
    ("A man sitting at a table.", "A man sitting at a cardboard table."),
    ("A blue plate of food on a table.", "A blue plate of food on a ceramic table."),
    ("A cat on a bench.", "A cat on a cardboard bench."),
])
def test_an_added_material_suits_the_thing(caption, absurd):
    assert normalized(absurd) not in made(caption, ["addition"])
    assert normalized(caption.replace("a table", "a glass table").replace("a bench", "a stone bench")) in made(
        caption, ["addition"])


def test_a_bath_room_in_two_words_has_its_fixtures():
    """Found by addobj8: "in a bath room near a toilet with a bathtub" was made (a bathroom's photo shows one)."""
    outputs = made("A cat sitting in a bath room near a toilet.", ["addition"], subtype="object")
    assert outputs and not any("bathtub" in text or "shower" in text for text in outputs)


@pytest.mark.parametrize("caption", [
    "School boys sit cross legged in front of a chalkboard sign in a vintage black and white photo.",
    "A black and white photo of a girl on a bench.",
])
def test_no_colour_is_added_in_a_black_and_white_picture(caption):
    """Stop 38's natural sample: "... in front of a blue chalkboard sign in a vintage black and white photo" (judged
    absurd, shown)."""
    added = made(caption, ["addition"], subtype="attribute")
    assert added and not any(re.search(r"\b(blue|green|red|brown|gray|yellow)\b", text) for text in added)


def test_a_black_and_white_animal_still_gets_a_coloured_bench():
    assert normalized("A black and white cat sitting on a green bench.") in made(
        "A black and white cat sitting on a bench.", ["addition"], subtype="attribute")
