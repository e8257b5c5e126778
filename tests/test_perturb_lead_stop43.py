"""Stop 43's lead fixes: a list spaCy splits is read whole; an adjective moves with its degree word.

spaCy often hangs the second member of "with X and Y" on what X hangs on: in "A white plate topped with broccoli
and a dumpling." (even id 410 of add_obj) "dumpling" is a conjunct of "topped", so the list was not read and the
caption got no object addition. Where both members are things and Y ends its phrase, X and Y are the list
(`lists._misattached_conjunct`): a third member goes between them as in any list.

"A red toilet in a very small bathroom." had no attribute swap: "small" is modified by "very", which would stay
behind. A degree word right before an adjective now moves with it (`units.degree_word`): "A very small toilet in a
red bathroom." A colour does not take one along ("very white appliances" is left alone).
"""
import pytest

from backend.perturb.kindred import kindred
from backend.perturb.lists import list_sites
from backend.perturb.nlp import parse
from backend.perturb.core import normalized
from tests.support.perturb_outputs import made, objects_added


@pytest.mark.parametrize(("caption", "members"), [
    ("A white plate topped with broccoli and a dumpling.", ("broccoli", "dumpling")),
    ("A bright city street with a stop light and a big Christmas tree.", ("light", "tree")),
    ("A kitchen with a stove and a refrigerator.", ("stove", "refrigerator")),  # read before the fix too
])
def test_a_list_is_read_whatever_its_second_member_hangs_on(caption, members):
    assert [tuple(token.text for token in site.members) for site in list_sites(parse(caption))] == [members]


@pytest.mark.parametrize("caption", [
    "A plate topped with rice and a fork on the side.",  # the second member's phrase goes on: no plain list
    "A man with a hat walking down the street and a dog.",  # the first member is no list's end
])
def test_no_list_is_made_up_where_the_members_are_not_a_plain_list(caption):
    assert list_sites(parse(caption)) == []


def test_the_split_list_takes_a_third_member_of_its_kind():
    added = objects_added("A white plate topped with broccoli and a dumpling.")
    thirds = {text.split("broccoli, ")[1].split(" and a dumpling")[0] for text in added if "broccoli, " in text}
    assert thirds, added
    assert {third.split()[-1] for third in thirds} <= kindred("broccoli")


@pytest.mark.parametrize(("caption", "swap"), [
    ("A red toilet in a very small bathroom.", "A very small toilet in a red bathroom."),
    ("A white stove in a very small kitchen.", "A very small stove in a white kitchen."),
    ("A very large white dog next to a small cat.", "A small white dog next to a very large cat."),
])
def test_an_adjective_moves_with_its_degree_word(caption, swap):
    swaps = made(caption, ["binding_swap"], subtype="attribute", shown=True)
    assert normalized(swap) in swaps
    assert not any(" very red" in text or "very bathroom" in text or "very kitchen" in text for text in swaps)


def test_a_colour_keeps_its_degree_word():
    assert made("The bathroom has very white appliances and a blue sink.", ["binding_swap"], subtype="attribute") \
        == set()
