"""The seventh round of attribute swaps (issue 21): a predicate adjective in a relative clause, a split "multi
colored", a phrase of several colours trading with a word of another class, a shape landing on furniture,
tableware or a container, and the size of a group of things. What each rule makes, and the outputs it must never
make (first drafts' absurd trades and the judged held-out sample, tests/data/perturb-judged-swapatt7.csv).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

MAKES = [
    # "that is blue" describes the bus, as "a blue bus" would
    ("A red car parked next to a bus that is blue.", "attribute", "A blue car parked next to a bus that is red."),
    # "multi colored" written as two words is one colour phrase, and moves whole
    ("A white plate served on a multi colored table cloth", "attribute_phrase",
     "A multi colored plate served on a white table cloth"),
    # a phrase of several colours trades with a size on a thing of another kind
    ("Three people are in a small boat in a lake and one woman holds a red and yellow umbrella.",
     "attribute_phrase",
     "Three people are in a red and yellow boat in a lake and one woman holds a small umbrella."),
    # a shape lands on tableware
    ("Square pastries are assorted on a white platter.", "attribute",
     "White pastries are assorted on a square platter."),
    # a group's size is how many, and trades with a thing's size
    ("Small horse standing behind a large group of horses eating.", "attribute",
     "Large horse standing behind a small group of horses eating."),
    ("A small dog next to a large group of people.", "attribute", "A large dog next to a small group of people."),
]


@pytest.mark.parametrize(("caption", "subtype", "expected"), MAKES)
def test_new_swaps_are_made(caption, subtype, expected):
    assert normalized(expected) in made(caption, ["binding_swap"], subtype=subtype)


NEVER = [
    # a shape lands only on furniture, tableware or a container: no "round building"
    ("A round clock on a white building.", "A white clock on a round building."),
    ("A square pizza on a white banana.", "A white pizza on a square banana."),
    # a group takes only a size: no "red group"
    ("A red bus near a large group of people.", "A large bus near a red group of people."),
    # a phrase's colours must suit the new noun: no "red and yellow dog", no "multi colored grass"
    ("A small dog next to a red and yellow umbrella.", "A red and yellow dog next to a small umbrella."),
    ("A multi colored kite flies over green grass.", "A green kite flies over multi colored grass."),
]


@pytest.mark.parametrize(("caption", "output"), NEVER)
def test_absurd_swaps_are_never_made(caption, output):
    assert normalized(output) not in made(caption, ["binding_swap"])
