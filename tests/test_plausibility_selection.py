"""Selectional plausibility (backend/perturb/selection.py): the absurd negatives users met are flagged
when the edit made them, and the ordinary captions each rule could misread are not."""
import pytest

from backend.perturb import Variant
from backend.perturb.order import FAMILY as ORDER_FAMILY
from backend.perturb.plausibility import implausibilities, is_plausible, mark_plausibility

# (negative, the caption it was made from, the rule that flags it): judged absurd (impl) in tests/data.
ABSURD = [
    ("A horse is staring while sitting in a sink.", "A cat is staring while sitting in a sink.", "too_big_for"),
    ("An elephant relaxes on an armchair in a living room.", "A dog relaxes on an armchair in a living room.",
     "too_big_for"),
    ("A group of monkeys grazing in a grassy field.", "A group of cows grazing in a grassy field.", "wrong_subject"),
    ("Man grazing in his bedroom next to a cat.", "Man sleeping in his bedroom next to a cat.", "wrong_subject"),
    ("A monkey pulling a carriage on a narrow path.", "A horse pulling a carriage on a narrow path.",
     "wrong_subject"),
    ("A man walking down a street next to a river filled with cars.",
     "A man walking down a street next to a road filled with cars.", "misfilled"),
    ("A vase filled with yellow and white trees.", "A vase filled with yellow and white flowers.", "misfilled"),
    ("A boat is driving down the road near some road signs.", "A car is driving down the road near some road signs.",
     "boat_on_road"),
    ("A toilet in a living room next to a sink.", "A toilet in a bathroom next to a sink.", "wrong_room"),
    ("A shirt in a green guy holding his cell phone.", "A guy in a green shirt holding his cell phone.",
     "inside_living"),
    ("A man eating a frisbee in a park.", "A man throwing a frisbee in a park.", "inedible"),
    ("Two birds and a bear walking down the road.", "Two birds walking down the road.", "wild_company"),
]

ORDINARY = [
    "A cat is sitting in a sink.",
    "A dog relaxes on an armchair in a living room.",
    "A group of cows grazing in a grassy field.",
    "A herd of animals grazing on a dry grass field.",  # "animals" may be cows
    "A horse pulling a carriage on a narrow path.",
    "Sled dogs pulling a sled through the snow.",
    "A giraffe behind a fence reaches for the hay in the basket.",  # the hay is in the basket
    "A vase filled with yellow and white flowers.",
    "A parking lot filled with cars.",
    "A boat on a trailer parked on the street.",
    "A large boat on a city street.",  # without motion it may sit on a trailer
    "Several scooters travelling on a street.",  # WordNet's first scooter is a water scooter
    "A toilet in a bathroom next to a sink.",
    "A man in a green shirt holding his cell phone.",
    "People outside at a table eating cake on plates.",  # "cake" is first a cake of soap in WordNet
    "A man eating a plate of food.",
    "A dog or bear in a controlled area.",
    "A dog and a teddy bear on a bed.",
]


@pytest.mark.parametrize("text, original, rule", ABSURD)
def test_selectional_absurdities_are_flagged(text, original, rule):
    assert rule in {violation.rule for violation in implausibilities(text, original)}
    assert not is_plausible(text, original)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_captions_fit(text):
    assert implausibilities(text) == []


def test_an_aro_shuffle_is_left_plausible():
    # word salad by design: its parse finds "agents" at random
    shuffle = Variant("a couch sits on a wii while playing couple", "negative", ORDER_FAMILY, "x", ())
    other = Variant("a couch sits on a wii while playing couple", "negative", "ce_clip", "x", ())
    marked = mark_plausibility("a couple sits on a couch while playing wii", [shuffle, other])
    assert [variant.plausible for variant in marked] == [True, False]


def test_only_an_edit_that_makes_the_misfit_counts():
    text = "A horse is sitting in a sink next to a cat."
    start = text.index("cat")
    assert not is_plausible(text, changed=[(text.index("horse"), text.index("horse") + 5)])
    assert is_plausible(text, changed=[(start, start + 3)])
