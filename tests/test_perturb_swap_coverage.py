"""The binding swaps added for SugarCrepe's swap_att and swap_obj (issue 21): what each new rule makes, and
what it must never make. The "never" cases are outputs that were judged invalid or absurd while tuning on
even-id SugarCrepe captions or in the judged held-out sample (tests/data/perturb-judged-natural-swap-*.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


def binding(caption, subtype=None):
    """Every binding_swap negative, as normalized texts, optionally of one subtype."""
    return made(caption, ["binding_swap"], subtype=subtype)


MAKES = [
    # colour phrases trade places across a relation
    ("A red car next to a gas station sign and parked blue and silver motorcycles.", "attribute_phrase",
     "A blue and silver car next to a gas station sign and parked red motorcycles."),
    ("A cow standing next to a white wall and bright blue door.", "attribute_phrase",
     "A cow standing next to a bright blue wall and white door."),
    ("A colorful umbrella sitting outside of a pink building.", "attribute_phrase",
     "A pink umbrella sitting outside of a colorful building."),
    # a chromatic colour moves to a bare thing of another kind
    ("A plate holding a sandwich on a blue mat.", "attribute_move", "A blue plate holding a sandwich on a mat."),
    ("An orange car parked by a bench.", "attribute_move", "A car parked by an orange bench."),
    # two small things of different kinds in slots that do not care which
    ("A baby holding a spoon looking at a cupcake and candle.", "object",
     "A baby holding a cupcake looking at a spoon and candle."),
    # a noun no lexicon group lists takes its WordNet kind ("cupcake": food)
    ("A cupcake sits on a plate behind a sandwich.", "object", "A sandwich sits on a plate behind a cupcake."),
    # people of different number, as whole phrases, where no verb agrees
    ("People sitting in the stands watching a man play tennis.", "object",
     "A man sitting in the stands watching people play tennis."),
]


@pytest.mark.parametrize(("caption", "subtype", "expected"), MAKES)
def test_new_swaps_are_made(caption, subtype, expected):
    assert normalized(expected) in binding(caption, subtype)


NEVER = [
    # a man and a woman trade places while "her" still points at the woman (found reading the blind gap's rows)
    ("A woman sits at a counter while a man looks at her through a window.",
     "A man sits at a counter while a woman looks at her through a window."),
    # a thing holding another: the slot cares which ("a plate holding food")
    ("A plate holding a sandwich on a blue mat.", "A sandwich holding a plate on a blue mat."),
    # a sex word lands on a sexed noun
    ("A male skier is posing for the camera while a young girl is in the background.",
     "A male girl is posing for the camera while a young skier is in the background."),
    # a phrase swap inside a list, or after a group's "of"
    ("A man sitting at a wooden bench and table with an open umbrella sitting on the table.",
     "A man sitting at the table and table with an open umbrella sitting on a wooden bench."),
    ("A group of people watching a woman cutting a cake.", "A group of a woman watching people cutting a cake."),
    # a thing on top of a small thing of another kind
    ("A cupcake sits on a plate behind a sandwich.", "A plate sits on a cupcake behind a sandwich."),
    # across "next to", both things stay where they were
    ("A laptop sitting on a desk next to a cup.", "A cup sitting on a desk next to a laptop."),
    # "colorful" moved onto a plate of food may describe the food; a room's colour is its walls'
    ("A plate of food with a fried egg and colorful vegetables.",
     "A colorful plate of food with a fried egg and vegetables."),
    ("Blue bathroom with two white towels hanging by the shower.",
     "Bathroom with two white towels hanging by the blue shower."),
    # a colour taken from a bare noun leaves "in shirt"
    ("A man in red shirt looking at cellphone next to white truck.",
     "A man in shirt looking at red cellphone next to white truck."),
    # neutral colours do not move: a bench is often white anyway
    ("A white bus sitting next to a bench.", "A bus sitting next to a white bench."),
    # from the judged held-out sample (seed 31): synonyms, a bare pair across "next to", a vague "other",
    # a WordNet "person" that is a seat, containers and their contents
    ("A little powder room with a blue toilet, multicolored tile floor, and a colorful towel.",
     "A little powder room with a blue toilet, colorful tile floor, and a multicolored towel."),
    ("A toilet in a bathroom next to a sink.", "A sink in a bathroom next to a toilet."),
    ("A sandwich has cilantro, carrots, and other vegetables.", "A sandwich has cilantro, vegetables, and other carrots."),
    ("A tennis court has a few people in the bleachers.", "A tennis court has the bleachers in a few people."),
    ("Four bowls of snacks of vegetables and crackers.", "Four bowls of crackers of vegetables and snacks."),
    ("A plate of noodles with sauce and a fork.", "A fork of noodles with sauce and a plate."),
    ("A cutting board with pizza and a glass of wine", "A cutting board with wine and a glass of pizza"),
    ("A chocolate frosted donut on a plate with a cup of coffee and a penguin napkin holder.",
     "A chocolate frosted coffee on a plate with a cup of donut and a penguin napkin holder."),
    ("A table with a napkin, doughnut on a plate, and a cup of coffee.",
     "A table with a napkin, doughnut on a cup, and a plate of coffee."),
    # a child holding an adult (judged absurd, seed 31)
    ("A man holding a baby taking a picture.", "A baby holding a man taking a picture."),
    ("A man holding a baby while standing in front of a mirror.",
     "A baby holding a man while standing in front of a mirror."),
    ("A woman holds a sick child who is getting her temperature taken.",
     "A child holds a sick woman who is getting her temperature taken."),
    ("A man holding a baby girl while seated in a cafe.", "A baby girl holding a man while seated in a cafe."),
    # no colour lands where it is absurd
    ("A black and white cat sits on a red cloth.", "A red cat sits on a black and white cloth."),
]


@pytest.mark.parametrize(("caption", "output"), NEVER)
def test_invalid_swaps_are_never_made(caption, output):
    assert normalized(output) not in binding(caption)


def test_postnominal_adjective_is_not_swapped():
    """Judged err in tests/data/perturb-judged-natural-swap-2.csv (the older attribute subtype)."""
    caption = "A man with graying hair looks down at a stand full of yellow bananas."
    assert normalized("A man with graying hair looks down at a stand yellow of full bananas.") not in binding(caption)
