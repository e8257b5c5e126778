"""Stop 49: the addition family over counts of 20,977 COCO captions instead of 2,779.

The larger counts vouch for many more things beside a noun, and with them came outputs the small counts had
never reached: each err and impl of stop 49's judged samples
(`tests/data/perturb-judged-addition-stop49-first-pass.csv`, `tests/data/perturb-judged-addition-stop49-natural.csv`)
and of the census read before them is barred here, with what still must be made.
"""
import pytest

from backend.perturb.addition_sites import counted_lemma
from backend.perturb.nlp import parse
from backend.perturb.plausibility import is_plausible
from tests.support.perturb_outputs import every_variant, objects_added


def _attributes_added(caption: str) -> list[str]:
    return [v.text for v in every_variant(caption, ["addition"]) if v.subtype == "attribute"]


@pytest.mark.parametrize(("caption", "never"), [
    # "woods" counted as the material: "wood" is named with toilets (seats) and plates far more than with deer
    ("A baby deer and a large deer are standing in the woods.", "in the woods with a toilet"),
    ("A man sitting on a bench in a wood.", "in a wood with a toilet"),
    ("Two men stand in the woods as one of them throws a Frisbee.", "in the woods with a plate"),
    # a photo of a wooded, hilly or green place shows trees (judged err: still true)
    ("A lush green valley surrounded by tall mountains.", "mountains with a tree"),
    ("A little girl laughs and runs with a kite in a grassy park.", "park with a tree"),
    # a bathroom's fixture beside a "bowl", a "tub" or a "counter" that is no bathroom's (judged impl)
    ("One apple and several oranges sit in a bowl.", "with a toilet"),
    ("A pizza with several vegetable toppings sitting on a storage tub.", "with a shower"),
    ("A woman sits at a counter while a man looks at her through a window.", "with a toilet"),
    # what the caption names by another word (judged err: still true)
    ("A couple sits on a couch while playing wii.", "with a remote"),
    ("A table with three plates with food and a man and a woman both holding utensil near plates.", "with a fork"),
    # no animal beside someone on skis or a snowboard (judged impl)
    ("A snowboarder is flying in the air over snow.", "a dog"),
    ("A woman is skiing down a snowy hill.", "next to a dog"),
])
def test_an_object_judged_wrong_is_not_added(caption, never):
    assert not [text for text in objects_added(caption) if never in text]


@pytest.mark.parametrize(("caption", "thing"), [
    ("two elephants in a zoo behind a wire fence", "wire fence"),  # "a metal wire fence": a wire fence is metal
    ("Bunch of flowers sitting in vase filled with water and rocks on bottom", "vase"),  # "glass vase": seen through
])
def test_a_thing_whose_material_the_caption_shows_takes_none(caption, thing):
    """Both were judged err (still true)."""
    added = _attributes_added(caption)
    assert added and not [text for text in added if f" {thing}" in text and text.split(f" {thing}")[0].split()[-1]
                          in ("metal", "wooden", "wood", "plastic", "steel", "glass", "ceramic")]


@pytest.mark.parametrize(("caption", "made"), [
    ("A small bathroom with a bathtub.", "A small bathroom with a bathtub and a plant."),
    ("A man is surfing on a wave.", "A man and a dog are surfing on a wave."),  # a dog may still surf
    ("A little girl laughs and runs with a kite in a grassy park.",
     "A little girl laughs and runs with a kite in a grassy park with a dog."),
    ("A snowboarder is flying in the air over snow.", "A snowboarder and a skier are flying in the air over snow."),
])
def test_what_still_fits_is_added(caption, made):
    assert made in objects_added(caption)


def test_woods_are_counted_as_a_forest_and_wood_as_a_material():
    doc = parse("A deer in the woods next to a wood fence, and a man in a wood.")
    words = [token.lower_ for token in doc]
    assert counted_lemma(doc[words.index("woods")]) == "forest"
    assert counted_lemma(doc[words.index("wood")]) == "wood"  # "a wood fence"
    assert counted_lemma(doc[len(words) - 2]) == "forest"  # "in a wood"


def test_a_water_bottle_may_still_take_a_material():
    assert "A hand holding a metal water bottle in front of a cat." in _attributes_added(
        "A hand holding a water bottle in front of a cat.")


def test_what_grazes_from_a_place_is_refilled_by_a_verb_that_takes_from_it():
    """"Two giraffes sleeping from a tree in a field." was made from "grazing from a tree" (err: ungrammatical)."""
    texts = [v.text for v in every_variant("Two giraffes grazing from a tree in a field.", ["replace", "ce_clip"])]
    assert texts and not [text for text in texts if " from a tree" in text
                          and text.split(" from a tree")[0].split()[-1] in ("sleeping", "standing", "sitting", "walking")]


@pytest.mark.parametrize("text", [
    "A park bench on top of a tree in grassy field.",  # a relation refill of "under a tree"
    "A bike in view in a Christmas Tree with a living room in the background.",  # a NegCLIP swap
    "A car in a tree.",
])
def test_a_heavy_made_thing_up_in_a_tree_is_labelled_implausible(text):
    assert not is_plausible(text)


@pytest.mark.parametrize("text", [
    "A bicycle leaning on a tree.", "A bike chained to a tree.", "A bench under a tree in a park.",
    "A kite stuck in a tree.", "A swing hanging on a tree.",
])
def test_a_thing_beside_under_or_fixed_to_a_tree_is_plausible(text):
    assert is_plausible(text)
