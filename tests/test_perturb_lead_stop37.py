"""Stop 37's lead fixes to the perturbation engine, each from an output a person would read as absurd.

A garment only women wear is no refill where a man may wear it, however the parse hangs the garment on him
(`refill_fit._worn_by_a_man`; the old check read only "in"): all six outputs below were made on odd SugarCrepe
ids before the fix. A noun only plural ("scissors") has the kind of its WordNet sense (`object_kinds.kind`).
"""
import re

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
