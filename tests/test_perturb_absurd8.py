"""Negatives judged absurd in the stop-36 natural samples (tests/data/perturb-judged-replace8-natural.csv,
perturb-judged-binding-swap8-natural.csv), each barred at its cause, with what the same rules must still make
or show.

* labelled implausible, so the Probe hides them (`plausibility_use`, `selection._is_inedible`): cooking with a knife,
  eating a beverage, food under a plate, on the floor and on top of a toilet at once, standing on top of the people
  just named, "a photographer and wife" (an apple with meat is now never made: tests/test_perturb_swap6.py);
* never made: a wave ridden along a park (a refill the selectional rules flag is dropped for the next), a refill
  of a noun that a later mention is compared with (`refill_fit._mentioned_again`), and a count swap that leaves
  several stands holding one banana (`count_checks.holders_of`).
"""
import pytest

from backend.perturb.core import normalized
from tests.support.perturb_outputs import made

HIDDEN = [
    ("A woman in a red dress cutting a cake with a knife.", "replace", "relation",
     "A woman in a red dress cooking a cake with a knife."),
    ("Crackers coated with spread, sitting on a plate, ready to eat.", "replace", "relation",
     "Crackers coated with spread, sitting under a plate, ready to eat."),
    ("A woman laying on a bathroom floor next to a toilet.", "replace", "relation",
     "A woman laying on a bathroom floor on top of a toilet."),
    ("a girl holds a baby eating a bagel with a boy standing next to them", "replace", "relation",
     "a girl holds a baby eating a bagel with a boy standing on top of them"),
    ("A new husband and wife feeding each other wedding cake as a photographer takes pictures.", "binding_swap",
     "object", "A new photographer and wife feeding each other wedding cake as a husband takes pictures."),
]

NEVER = [
    ("the surfer is riding the wave sideways along the beach.", "replace", "object",
     "the surfer is riding the wave sideways along the park."),
    ("People watch from a large boat as a smaller boat is lowered into the ocean.", "replace", "object",
     "People watch from a large jet ski as a smaller boat is lowered into the ocean."),
    ("A green stand holding several bananas for sale.", "binding_swap", "count",
     "Several green stands holding a banana for sale."),
    ("A cat looking at another cat on the television.", "replace", "object",
     "A dog looking at another cat on the television."),
    ("A cat looking at another cat on the television.", "replace", "object",
     "A cat looking at another rabbit on the television."),
    ("a man pets a horse attached to other horses", "replace", "object", "a man pets a cow attached to other horses"),
    # labelled implausible until stop 48, no longer made: a drink is not eaten (`verb_fit`)
    ("A man drinking a beverage from a red bottle.", "replace", "relation",
     "A man eating a beverage from a red bottle."),
]

STILL_SHOWN = [
    ("the surfer is riding the wave sideways along the beach.", "replace", "object",
     "the kayaker is riding the wave sideways along the beach."),
    ("People watch from a large boat as a smaller boat is lowered into the ocean.", "replace", "object",
     "People watch from a large boat as a smaller jet ski is lowered into the ocean."),
    ("A cat sitting on a plate.", "replace", "relation", "A cat sitting under a plate."),
    ("A boy sitting next to them on a bench.", "replace", "relation", "A boy sitting on top of them on a bench."),
    ("A woman cutting a pizza with a knife on a table.", "replace", "relation",
     "A woman cutting a pizza with a knife next to a table."),
    ("A wooden shelf holding many books next to two lamps.", "binding_swap", "count",
     "A wooden shelf holding two books next to many lamps."),
    ("Two men sitting on three chairs.", "binding_swap", "count", "Three men sitting on two chairs."),
]


@pytest.mark.parametrize(("caption", "family", "subtype", "absurd"), HIDDEN)
def test_a_judged_absurd_negative_is_hidden(caption, family, subtype, absurd):
    assert normalized(absurd) in made(caption, [family], subtype=subtype)
    assert normalized(absurd) not in made(caption, [family], subtype=subtype, shown=True)


@pytest.mark.parametrize(("caption", "family", "subtype", "absurd"), NEVER)
def test_a_judged_absurd_negative_is_never_made(caption, family, subtype, absurd):
    assert normalized(absurd) not in made(caption, [family], subtype=subtype)


@pytest.mark.parametrize(("caption", "family", "subtype", "kept"), STILL_SHOWN)
def test_the_same_rules_still_show_these(caption, family, subtype, kept):
    assert normalized(kept) in made(caption, [family], subtype=subtype, shown=True)
