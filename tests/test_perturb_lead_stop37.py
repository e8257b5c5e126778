"""Stop 37's lead fixes to the perturbation engine, each from an output a person would read as absurd.

A garment only women wear is no refill where a man may wear it, however the parse hangs the garment on him
(`refill_fit._worn_by_a_man`; the old check read only "in"): all six outputs below were made on odd SugarCrepe
ids before the fix. A noun only plural ("scissors") has the kind of its WordNet sense (`object_kinds.kind`).
The errs and shown absurd rows of stop 37's natural sample are barred or labelled, and a caption whose root is
an adverb or a preposition no longer loops in the plausibility rules.
"""
import re
import threading

import pytest

from backend.perturb.core import normalized
from backend.perturb.nlp import parse
from backend.perturb.object_kinds import kind
from tests.support.perturb_outputs import made

WOMENS = re.compile(r"\b(dress|dresses|skirt|skirts|gown|bikini)\b")


@pytest.mark.parametrize(("caption", "never"), [
    ("A man with dark hair, a shirt and a tie posing for a picture.",
     "A man with dark hair, a dress and a tie posing for a picture."),
    ("a male tennis player in a white shirt is holding his racket",
     "a male tennis player in a white dress is holding his racket"),
    ("A man wearing a shirt and a pixilated looking neck tie.", "A man wearing a dress and a pixilated looking neck tie."),
    ("A man has a checked shirt and striped tie.", "A man has a checked dress and striped tie."),
    ("Two men wearing bright yellow construction jackets eating and standing under an orange umbrella",
     "Two men wearing bright yellow dresses eating and standing under an orange umbrella"),
    ("A man wearing a gray vest and a red stripe tie.", "A man wearing a gray dress and a red stripe tie."),
])
def test_no_womens_garment_on_a_man(caption, never):
    outputs = made(caption)
    assert normalized(never) not in outputs
    assert not any(WOMENS.search(text) for text in outputs)


def test_a_man_and_a_woman_in_shirts_are_not_put_in_dresses():
    assert not any(WOMENS.search(text) for text in made("A man and a woman in shirts standing on a beach."))


@pytest.mark.parametrize(("caption", "expected"), [
    ("A girl in a blue shirt holding a kite.", "a girl in a blue dress holding a kite"),
    ("A woman in a shirt standing next to a man.", "a woman in a dress standing next to a man"),
])
def test_a_woman_may_still_be_refilled_into_a_dress(caption, expected):
    assert expected in made(caption, ["replace"], subtype="object")


@pytest.mark.parametrize(("caption", "word", "expected"), [
    ("Scissors with orange handles are in a container with pens.", "Scissors", "tool"),
    ("A knife on a cutting board.", "knife", "tableware"),
])
def test_a_noun_only_plural_has_the_kind_of_its_wordnet_sense(caption, word, expected):
    """`object_kinds.kind` looked "scissor" up in WordNet, which has only "scissors": no kind, so no swap."""
    noun = next(token for token in parse(caption) if token.text == word)
    assert kind(noun) == expected


# The errs of stop 37's natural sample (seed 39), each barred at its cause.
@pytest.mark.parametrize(("caption", "families", "never"), [
    # a multi-word noun whose last word the parse reads as a verb took its number from it (slots.object_slots)
    ("Three teddy bears laying in bed under the covers.", ["replace"], "Three doll laying in bed under the covers."),
    # a colour on a word that is no noun (a parse slip): "in black" is dressed in black (positives)
    ("A woman in black sits on a park bench.", ["hard_positive"], "A woman in ebony sits on a park bench."),
    # a table's photo shows its seats (kindred.ROOM_FIXTURES)
    ("A plate of food attractively arranged on a table.", ["addition"],
     "A plate of food attractively arranged on a table with a chair."),
])
def test_the_stop37_samples_errs_are_not_made(caption, families, never):
    assert normalized(never) not in made(caption, families, kind=None)


def test_a_teddy_bear_read_as_a_noun_is_still_refilled():
    assert made("Two teddy bears sitting on a bed.", ["replace"], subtype="object")


@pytest.mark.parametrize(("caption", "never"), [
    # stop 37's sample, judged absurd and shown by default
    ("A brown crust of pie with strawberry filing.", "A brown crust of salad with strawberry filing."),
    ("A woman laying on a bathroom floor next to a toilet.", "A woman laying next to a bathroom floor next to a toilet."),
    ("A snowboarder is flying in the air over snow.", "A snowboarder is flying in the air under snow."),
])
def test_the_stop37_samples_shown_absurd_rows_are_not_shown(caption, never):
    assert normalized(never) not in made(caption, shown=True)


@pytest.mark.parametrize(("caption", "expected"), [
    ("A woman laying on a bathroom floor next to a toilet.", "a woman sitting on a bathroom floor next to a toilet"),
    ("A bird flying over a bridge.", "a bird flying under a bridge"),
])
def test_their_neighbours_are_still_shown(caption, expected):
    assert expected in made(caption, shown=True)


@pytest.mark.parametrize("caption", ["Up in a tree next to a kite.", "Outside next to a kite on the beach."])
def test_a_caption_whose_root_is_a_preposition_or_an_adverb_ends(caption):
    """`plausibility_scene` climbed from a preposition to its head while `token.head is not token`, which spaCy
    never makes true (each `.head` is a new object): a root that is an adverb or a preposition looped forever,
    and so would the Probe's worker. The engine runs on a thread here so that a loop fails the test."""
    outputs: list[set[str]] = []
    worker = threading.Thread(target=lambda: outputs.append(made(caption)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive() and outputs and outputs[0]
