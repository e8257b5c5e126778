"""Stop 42's lead fixes: an attribute refill that means another modifier of the noun, and a person's companion.

"A grey and white dog sitting in the passenger side of a car." -> "A grey and gray dog ..." (even id 292 of
replace_rel) says grey twice: an attribute refill that is a synonym of a word before the same noun is dropped
(`replace._other_attributes`; spaCy hung "grey" on the verb there, so the words are read off the text before the
noun, not the parse).

Where nobody may join a person as a second subject (they act on one thing), the addition family gives them a
companion ("A surfer rides the face of a wave" -> "A surfer with a dog rides ..."): before a finite verb or at the
caption's end, never in a ball game, never to someone alone, one shared dog for several people
(`addition_companions`).
"""
import pytest

from backend.perturb import perturb
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made


@pytest.mark.parametrize(("caption", "err"), [
    ("A grey and white dog sitting in the passenger side of a car.",
     "A grey and gray dog sitting in the passenger side of a car."),
    ("A gray and white cat on a bed.", "A gray and grey cat on a bed."),
    ("A big white dog on a couch.", "A big white large dog on a couch."),
])
def test_an_attribute_refill_never_repeats_another_modifier_of_its_noun(caption, err):
    assert normalized(err) not in made(caption, ["replace", "ce_clip"])


def test_the_other_attribute_is_still_replaced():
    assert normalized("A grey and brown dog sitting in the passenger side of a car.") in made(
        "A grey and white dog sitting in the passenger side of a car.", ["replace"])


def _objects_added(caption: str) -> list[str]:
    return [v.text for v in perturb(caption, ["addition"]) if v.subtype == "object"]


@pytest.mark.parametrize(("caption", "added"), [
    ("A surfer rides the face of a wave.", "A surfer with a dog rides the face of a wave."),
    ("A man is sleeping with his head on a pillow.", "A man with a dog is sleeping with his head on a pillow."),
])
def test_a_person_who_acts_alone_gets_a_companion(caption, added):
    assert added in _objects_added(caption)


@pytest.mark.parametrize(("caption", "person"), [
    ("a man skiing down a hill by himself", "man"),                     # alone
    ("A lone man is standing on a snowy hill.", "man"),                 # alone
    ("A catcher is ready to catch the ball.", "catcher"),               # a game role
    ("A tennis player is hitting the ball with a racket.", "player"),   # a ball game
    ("The girl with glasses is eating a slice of pizza.", "girl"),      # has a "with" already
    ("A woman holding an umbrella walks down the street.", "woman"),    # a participle: "a dog holding an umbrella"
])
def test_no_companion_where_it_would_misread(caption, person):
    assert not [text for text in _objects_added(caption) if f"{person} with a" in text.lower()]


def test_several_people_share_only_a_dog():
    texts = _objects_added("Many children are sitting around a man in a Santa costume.")
    assert all("with an umbrella" not in text and "with a phone" not in text for text in texts)


def test_a_modifier_of_another_noun_phrase_does_not_bar_a_refill():
    assert normalized("a table with a large cake and big plates of cake") in made(
        "a table with a large cake and small plates of cake", ["replace"])
