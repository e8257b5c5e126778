"""The `addition` family's kindred additions: a thing seen with another joins it where the counts are too few.

Three sites (a subject join, a third list member, a second object after a verb or a nearby preposition), each
drawing only from `kindred` words, and the guards that keep them valid: the form a list gives, verbs that take
one object, no mass noun with an article, no stray animal, no farm animal beside a toy.
"""
import pytest

from backend.perturb.kindred import kindred
from tests.support.perturb_outputs import objects_added


def test_kindred_is_symmetric_and_leaves_the_word_out():
    assert "cow" in kindred("sheep") and "sheep" in kindred("cow")
    assert "sheep" not in kindred("sheep")
    assert not kindred("lion") & kindred("zebra")  # a predator is never added beside its prey
    assert kindred("unheard-of-thing") == frozenset()


def test_an_animal_the_counts_never_paired_joins_a_farm_animal():
    joins = [text for text in objects_added("A pig standing in a dry grass field.") if text.startswith("A pig and")]
    added = {text.split()[4] for text in joins}
    assert added and added <= kindred("pig")
    assert all(text.endswith(" standing in a dry grass field.") for text in joins)


def test_a_plural_verb_after_a_group_stays_as_it_is():
    joins = [text for text in objects_added("A herd of sheep are grazing in a green field.") if " and a" in text]
    assert joins and all(text.startswith("A herd of sheep and a") and " are grazing " in text for text in joins)


@pytest.mark.parametrize(("caption", "expected"), [
    ("A truck and a car make their way through town.", "A truck, a bus and a car make their way through town."),
    ("A plate is filled with broccoli and noodles.", "A plate is filled with broccoli, carrots and noodles."),
    ("A cat and dog napping together on the couch.", "A cat, rabbit and dog napping together on the couch."),
])
def test_a_list_gains_a_third_member_in_its_own_form(caption, expected):
    assert expected in objects_added(caption)


def test_a_list_naming_a_kind_is_not_extended():
    assert not any("cheese," in text for text in objects_added("A cheese and pepperoni pizza on a plate."))


def test_a_second_object_joins_after_a_nearby_preposition():
    outputs = objects_added("A cup of coffee next to a laptop.")
    assert "A cup of coffee next to a laptop and a phone." in outputs
    assert not any(text.startswith("A cup and") for text in outputs)  # "a cup of coffee" stays whole


@pytest.mark.parametrize("caption", ["A man riding a horse on a beach.", "A woman driving a car down a road."])
def test_no_second_object_for_a_verb_that_takes_one(caption):
    noun = caption.split()[4].rstrip(".")
    assert not any(f"{noun} and a" in text for text in objects_added(caption))


def test_no_mass_noun_joins_a_mass_subject():
    texts = objects_added("The broccoli is being cooked with ham.")
    assert not any(" and a" in text.split(" is ")[0] for text in texts)


def test_no_stray_animal_is_added_to_a_street_scene():
    animals = ("giraffe", "elephant", "bear", "zebra", "cow", "horse", "sheep", "bird")
    outputs = objects_added("A car is parked in front of a building.")
    assert outputs and not any(animal in text for text in outputs for animal in animals)


def test_a_toy_animal_gets_no_farm_partner():
    """A toy takes a toy's kindred (a doll, `kindred.TOY_MARKS`), never an animal's."""
    outputs = objects_added("A stuffed dog sitting on a bed.")
    joined = [text for text in outputs if text.startswith("A stuffed dog and")]
    assert joined and all(text.startswith("A stuffed dog and a doll ") for text in joined)


def test_a_compound_is_not_read_as_its_head():
    """Judged on the held-out sample: "next to home plate and a cup" took a baseball plate for a dish."""
    outputs = objects_added("A baseball player holding a bat next to home plate.")
    assert not any("plate and a" in text for text in outputs)


@pytest.mark.parametrize(("caption", "barred"), [
    # the held-out sample's err and fixed impls (tests/data/perturb-judged-addition-new-since.csv)
    ("A double decker bus is shown that is not in service.", "bus and a"),
    ("A lone bicycle parked in a parking lot with cars parked on a street.", "bicycle and a"),
    ("A man sitting at a bar being served by a woman", "woman and a"),
    ("A man that has glasses and a hat.", "glasses, a mug"),  # worn kindred may join: "glasses, a scarf and a hat"
    ("A group of people paddle a long canoe in a clear lake bordered by pine woods.", "canoe and a"),
    # tests/data/perturb-judged-natural-addition-6.csv: "a book and a candle about the topic fun"
    ("A woman holding a book about the topic fun.", "book and a"),
])
def test_judged_faults_are_not_made_again(caption, barred):
    assert not any(barred in text for text in objects_added(caption))
