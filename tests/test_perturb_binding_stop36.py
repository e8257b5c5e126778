"""Binding swaps judged absurd in the stop-35 natural sample (tests/data/perturb-judged-binding-swap7-natural.csv),
each barred at its cause, with what the same rule must still make.

* count swaps never seat fewer people than the seats they sit on (`count_checks.swap_outnumbers_sitters`);
* an object swap never puts a body "in" a thing one sits on, not in (`object_kinds.sat_in`);
* a relation swap around "be" keeps the subject's other place ("is on a plate") only where both fit it (`roles`);
* a drink is no food (`object_kinds.WORDNET_KINDS`): their adjectives and places do not trade.
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

NEVER = [
    ("Many people are sitting on two benches next to a light pole.",
     "Two people are sitting on many benches next to a light pole."),
    ("A man sitting in a chair across from a table topped with food.",
     "A man sitting in a table across from a chair topped with food."),
    ("A ham pizza with grated parmesan is on a plate in front of a TV.",
     "A TV is on a plate in front of a ham pizza with grated parmesan."),
    ("A pressed sandwich on a plate next to an iced coffee at Starbucks.",
     "An iced sandwich on a plate next to a pressed coffee at Starbucks."),
    ("A pressed sandwich on a plate next to an iced coffee at Starbucks.",
     "A pressed coffee on a plate next to an iced sandwich at Starbucks."),
]

STILL_MADE = [
    ("Two men sitting on three chairs.", "Three men sitting on two chairs."),
    ("Two giraffes and a zebra are standing in a field.", "A giraffe and two zebras are standing in a field."),
    ("A cat sitting on a chair next to a table.", "A cat sitting on a table next to a chair."),
]


@pytest.mark.parametrize(("caption", "never"), NEVER)
def test_a_judged_absurd_binding_swap_is_never_made(caption, never):
    assert normalized(never) not in made(caption, ["binding_swap"])


@pytest.mark.parametrize(("caption", "swap"), STILL_MADE)
def test_the_same_rules_still_make_these(caption, swap):
    assert normalized(swap) in made(caption, ["binding_swap"])
