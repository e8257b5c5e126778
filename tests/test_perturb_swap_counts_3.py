"""Binding swaps added for SugarCrepe's swap_att (issue 21, third round): counts of "people" and "a couple
of", counts after a picture's "of", counts of one kind told apart by modifiers, a place's colour or size, and
garments of one kind told apart by their owners; with the checks that keep them ordinary scenes."""
import pytest

from backend.perturb import perturb


def _swaps(caption: str, subtype: str) -> list[str]:
    return [v.text for v in perturb(caption, families=["binding_swap"], seed=0) if v.subtype == subtype]


@pytest.mark.parametrize(("caption", "text"), [
    ("Three people try to guide a horse into a trailer.", "A person tries to guide three horses into a trailer."),
    ("A couple of people are standing near a bus.", "A person is standing near a couple of buses."),
    ("A couple of people that are standing near a train.", "A person that is standing near a couple of trains."),
    ("A couple of children sitting in front of a blanket.", "A child sitting in front of a couple of blankets."),
    ("A view of several billboards and two traffic signs on one pole.",
     "A view of two billboards and several traffic signs on one pole."),
    ("A baby elephant stands near to four larger adult elephants.",
     "Four baby elephants stand near to a larger adult elephant."),
    ("Two men herding a pack of elephants across a field.", "Several men herding two elephants across a field."),
    ("A group of people are standing near a bus.", "A person is standing near several buses."),
    ("Two women sitting on ledge looking at a cellphone.", "A woman sitting on ledge looking at two cellphones."),
])
def test_new_count_swaps(caption, text):
    assert text in _swaps(caption, "count")


@pytest.mark.parametrize(("caption", "text"), [
    # one person on two benches, one person in black shirts
    ("Many people are sitting on two benches next to a light pole.",
     "A person is sitting on two benches next to many light poles."),
    ("Three people in black shirts playing with a white frisbee.",
     "A person in black shirts playing with three white frisbees."),
])
def test_one_person_neither_sits_on_two_seats_nor_wears_shirts(caption, text):
    assert text not in _swaps(caption, "count")


@pytest.mark.parametrize(("caption", "text"), [
    # judged impl (tests/data/perturb-judged-swapatt3-natural.csv): one wearer in two suits
    ("Two men standing on the street wearing a suit and tie",
     "A man standing on the street wearing two suits and tie"),
    # judged impl (tests/data/perturb-judged-swapatt3-new.csv): one person paddling several canoes
    ("A group of people paddle a long canoe in a clear lake bordered by pine woods.",
     "A person paddles several long canoes in a clear lake bordered by pine woods."),
])
def test_a_worn_or_steered_thing_does_not_multiply(caption, text):
    assert text not in _swaps(caption, "count")


def test_a_count_that_counts_off_a_group_keeps_the_group_whole():
    caption = "A group of people on a street with one person holding a multicolored umbrella over head."
    assert _swaps(caption, "count") == []


def test_a_couple_that_counts_no_noun_is_left_alone():
    assert _swaps("a couple is sitting on a statue of a horse and some plants", "count") == []


def test_one_kind_without_a_modifier_on_each_keeps_its_counts():
    assert _swaps("A goat and two white goats in a field.", "count") == []


def test_a_place_trades_its_colour_or_size_with_a_thing():
    assert "A person with big skis skiing down a green hill." in _swaps(
        "A person with green skis skiing down a big hill.", "attribute")


def test_garments_of_one_kind_trade_colours_between_two_kinds_of_owner():
    assert _swaps("A man in a red shirt and a woman in a blue shirt.", "attribute") == [
        "A man in a blue shirt and a woman in a red shirt."]
    assert _swaps("A man in a red shirt and a man in a blue shirt.", "attribute") == []
