"""Stop 43's lead fix: a list spaCy splits is read whole.

spaCy often hangs the second member of "with X and Y" on what X hangs on: in "A white plate topped with broccoli
and a dumpling." (even id 410 of add_obj) "dumpling" is a conjunct of "topped", so the list was not read and the
caption got no object addition. Where both members are things and Y ends its phrase, X and Y are the list
(`lists._misattached_conjunct`): a third member goes between them as in any list.
"""
import pytest

from backend.perturb.kindred import kindred
from backend.perturb.lists import list_sites
from backend.perturb.nlp import parse
from tests.support.perturb_outputs import objects_added


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
