"""Binding swaps added for SugarCrepe's swap_att (issue 21, fourth round): an expanse's colour traded with a
thing's size, the coats of dogs, cats and birds, building materials between structures, colour words spaCy read
as compounds, counts hung on a compound's first word, and words that ask only for a plural; with the checks that
keep them ordinary scenes."""
import pytest

from backend.perturb import perturb


def _swaps(caption: str, subtype: str) -> list[str]:
    return [v.text for v in perturb(caption, families=["binding_swap"], seed=0) if v.subtype == subtype]


@pytest.mark.parametrize(("caption", "text"), [
    ("A yellow work truck parked in tall grass.", "A tall work truck parked in yellow grass."),
    ("An old dog sniffs a red fire hydrant.", "A red dog sniffs an old fire hydrant."),
    ("A large dog tied to a yellow fire hydrant.", "A yellow dog tied to a large fire hydrant."),
    ("An orange cat is laying on a grey sofa.", "A grey cat is laying on an orange sofa."),
    ("A yellow bird sits on a blue fence.", "A blue bird sits on a yellow fence."),
    ("A kitchen has wooden cabinets and black countertops.", "A kitchen has black cabinets and wooden countertops."),
    ("A brick building with a tall clock tower beside it.", "A tall building with a brick clock tower beside it."),
])
def test_new_attribute_swaps(caption, text):
    assert text in _swaps(caption, "attribute")


@pytest.mark.parametrize(("caption", "text"), [
    # an expanse takes only a colour: no "small grass", no "small water"
    ("A small truck parked in green grass.", "A green truck parked in small grass."),
    ("A small boat floating on blue water.", "A blue boat floating on small water."),
    # coats: no green cat, no yellow horse
    ("A yellow cat is sitting on a green blanket.", "A green cat is sitting on a yellow blanket."),
    ("A white horse stands next to a yellow truck.", "A yellow horse stands next to a white truck."),
    # structures take building materials only, and furniture no brick
    ("A glass table near a white house.", "A white table near a glass house."),
    ("A brick house behind a white chair.", "A white house behind a brick chair."),
    # a branch has a plant's colours
    ("A red bird perched on a brown branch.", "A brown bird perched on a red branch."),
])
def test_absurd_attribute_swaps_stay_out(caption, text):
    assert text not in _swaps(caption, "attribute")


def test_a_colour_read_as_a_compound_still_describes_its_noun():
    # spaCy reads "orange" as a compound of "shirts"
    swaps = _swaps("A little league team wears orange shirts and black caps.", "attribute")
    assert "A little league team wears black shirts and orange caps." in swaps


@pytest.mark.parametrize(("caption", "text"), [
    ("A red stop sign sitting under a couple of street signs.",
     "A couple of red stop signs sitting under a street sign."),
    ("Two large giraffes inside a fenced area stand together near many rocks",
     "Many large giraffes inside a fenced area stand together near two rocks"),
])
def test_new_count_swaps(caption, text):
    assert text in _swaps(caption, "count")


def test_a_plural_only_word_still_blocks_a_count_of_one():
    caption = "Two giraffes stand together near a rock."
    assert _swaps(caption, "count") == []


def test_coat_colours_are_for_swaps_only():
    # an addition put them on any dog or cat, next to coat words the table does not know ("an orange calico cat")
    texts = [v.text for v in perturb("A calico cat is sitting on the roof of a car.", families=["addition"], seed=0)]
    assert "An orange calico cat is sitting on the roof of a car." not in texts
