"""The `addition` family's attribute additions and its newer object sites (issue 21, add_att and add_obj coverage).

An attribute goes where it splits no compound: after a determiner, a number, a size or age word, or a word
outside the noun phrase ("on red bicycles", "a group of white sheep"), or at the caption's start with its
capital; a person gains a look a typical photo does not show, unless the caption settles it already. People
are joined by a child where they are counted, and nobody joins one who rides a single thing; a list of three
or more gains a member, a thing in a place is joined there, a depiction is read through to what it shows.
"""
import pytest

from backend.perturb.addition_attributes import PERSON_LOOKS
from backend.perturb.addition_rooms import FURNISHINGS
from tests.support.perturb_outputs import every_variant


def _outputs(caption: str, subtype: str) -> list[str]:
    return [v.text for v in every_variant(caption, ["addition"]) if v.subtype == subtype]


def test_a_person_gains_a_look_the_caption_leaves_open():
    added = _outputs("A man standing next to a woman in a gray dress.", "attribute")
    assert "A bearded man standing next to a woman in a gray dress." in added
    assert "A man standing next to an elderly woman in a gray dress." in added


@pytest.mark.parametrize(("caption", "barred"), [
    ("A young man is standing on a snowy hill.", "elderly"),
    ("An old woman standing beside an elephant.", "elderly"),
    ("A bearded man is standing on a snowy hill.", "bearded"),
    ("A blonde woman sitting on a bench.", "red-haired"),
    ("A man with a beard sitting on a bench.", "bearded"),
])
def test_no_look_the_caption_already_settles(caption, barred):
    assert not [text for text in _outputs(caption, "attribute") if barred in text.split()]


def test_every_look_is_one_word_of_its_own_kind():
    for looks in PERSON_LOOKS.values():
        assert len({look for look, _ in looks}) == len(looks)
        assert all(" " not in look for look, _ in looks)


def test_an_attribute_goes_after_a_preposition_where_no_modifier_comes_first():
    added = _outputs("Group of men sitting on bicycles watching a show on stage.", "attribute")
    on_bicycles = [text for text in added if " bicycles watching" in text and " on bicycles" not in text]
    assert on_bicycles
    assert all(text.split(" on ")[1].split()[1] == "bicycles" for text in on_bicycles)


def test_an_attribute_at_the_caption_start_takes_its_capital():
    added = [text for text in _outputs("Flowers neatly arranged in a clear vase filled with water.", "attribute")
             if text.endswith("flowers neatly arranged in a clear vase filled with water.")]
    assert added and all(text[0].isupper() and text.split()[1] == "flowers" for text in added)


@pytest.mark.parametrize(("caption", "compound"), [
    ("A stuffed animal sitting in front of a tooth brush.", "stuffed animal"),
    ("A double decker bus is shown that is not in service.", "double decker"),
    ("The view of a bathroom with a wall mounted sink.", "mounted sink"),
])
def test_no_attribute_splits_a_modifier_from_its_noun(caption, compound):
    assert all(compound in text for text in _outputs(caption, "attribute"))


def test_no_colour_on_greenery():
    added = _outputs("A zebra grazes in a field adjacent to trees.", "attribute")
    assert not [text for text in added if "trees" in text and "adjacent to trees" not in text]


def test_counted_people_are_joined_by_a_child():
    joins = _outputs("Two people sitting at a table eating.", "object")
    assert "Two people and a child sitting at a table eating." in joins


def test_uncounted_people_are_not_joined_by_a_child():
    assert not [text for text in _outputs("People standing with their luggage on a platform.", "object")
                if "a child" in text]


def test_a_person_riding_one_thing_is_joined_only_with_one_each():
    joins = [text for text in _outputs("A person riding a skateboard down a street.", "object")
             if text.startswith("A person and")]
    assert joins and all("riding skateboards" in text for text in joins)


def test_a_skier_is_joined_by_a_snowboarder():
    joins = _outputs("Several skiers glide down a hilly landscape covered in snow.", "object")
    assert "Several skiers and a snowboarder glide down a hilly landscape covered in snow." in joins


@pytest.mark.parametrize(("caption", "expected"), [
    ("A bowl with apples, bananas, and oranges.", "A bowl with apples, bananas, pears, and oranges."),
    ("A street with a car, a bus and a truck.", "A street with a car, a bus, a bicycle and a truck."),
    ("A plate containing potatoes, carrots and onions.", "A plate containing potatoes, carrots, tomatoes and onions."),
])
def test_a_longer_list_gains_a_member_before_its_last_in_its_form(caption, expected):
    assert expected in _outputs(caption, "object")


def test_a_list_of_unkindred_things_gains_no_member():
    """No member kindred to one of them; a bathroom's furnishings (`addition_rooms`) may join its list."""
    furnishings = FURNISHINGS["bathroom"]
    texts = [text for text in _outputs("A bathroom with sink, tub, and toilet.", "object")
             if "tub, " in text and "tub, and" not in text]
    assert all(text.split("tub, ")[1].split(",")[0] in furnishings for text in texts)


def test_a_thing_in_a_place_is_joined_there():
    joins = _outputs("A bus on a city street.", "object")
    assert "A bus and a car on a city street." in joins


def test_a_depiction_is_read_through_to_what_it_shows():
    joins = _outputs("A view of a bus on a city street.", "object")
    assert "A view of a bus and a car on a city street." in joins
    assert not [text for text in _outputs("A picture of a bus is shown.", "object") if "bus and" in text]
