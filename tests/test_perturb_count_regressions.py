"""Count swaps (binding_swap's "count") judged wrong on held-out captions must not come back, and the rules
that stop them must leave the ordinary count swaps alone.

The errs come from tests/data/perturb-judged-swap-scene-first.csv and perturb-judged-natural-binding-swap-2.csv.
"""
import pytest

from backend.perturb import perturb
from backend.perturb.counts import counted_nouns
from backend.perturb.nlp import parse

NEVER = [
    # "stand" is the verb of "a ram", read as the compound "a ram stand": it came back as "two ram stands"
    ("Two sheep and a ram stand next to a fence in the yard ",
     "A sheep and two ram stands next to a fence in the yard "),
    # "banana's", a plural spelt with an apostrophe (tagged singular), came back as "a ripe banana's"
    ("A steel strainer with four ripe banana's on a table.",
     "Four steel strainers with a ripe banana's on a table."),
]


@pytest.mark.parametrize(("caption", "text"), NEVER)
def test_judged_count_errs_are_never_made(caption, text):
    assert text not in [variant.text for variant in perturb(caption, families=None, seed=0)]


def _counted(caption: str) -> list[str]:
    return [counted.noun.text for counted in counted_nouns(parse(caption))]


def test_a_possessive_noun_keeps_its_count():
    assert "banana" not in _counted("A steel strainer with four ripe banana's on a table.")
    assert "dogs" not in _counted("Two dogs' bowls and a cat on a mat.")


def test_a_verb_read_as_a_compound_head_keeps_its_count():
    assert "stand" not in _counted("Two sheep and a ram stand next to a fence in the yard ")


def test_real_compounds_and_verbs_still_trade_counts():
    texts = [v.text for v in perturb("Two dogs and a cat stand next to a fence.", families=["binding_swap"])]
    assert "A dog and two cats stand next to a fence." in texts
    assert "stand" in _counted("A man with two dogs next to a music stand.")
    assert "monitors" in _counted("A desk with two computer monitors and a laptop.")
