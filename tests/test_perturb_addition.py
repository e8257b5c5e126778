"""The `addition` family's subject joins: "A sheep standing in a field" -> "A sheep and a cow standing ...".

SugarCrepe's add_obj negatives mostly join a second object to the subject; these tests pin what such a join
must keep: the verb agrees with the new plural subject, the joined word is of the subject's kind, and no join
is made where it would change more than the subject.
"""
import pytest

from tests.support.perturb_outputs import every_variant


def _joins(caption: str) -> list[str]:
    return [v.text for v in every_variant(caption, ["addition"]) if v.subtype == "object" and any(e.after.startswith(" and ") for e in v.edits)]


def test_a_singular_subject_gets_a_plural_verb():
    joins = _joins("A woman is sitting with a suitcase on some train tracks.")
    assert joins and all(" are sitting " in text for text in joins)
    assert all(text.startswith("A woman and a") for text in joins)


def test_a_participle_caption_needs_no_verb_change():
    joins = _joins("A woman sitting on a wooden bench on a wall.")
    assert joins
    for text in joins:
        assert text.endswith(" sitting on a wooden bench on a wall.")
        assert text.split(" and ")[1].split()[1] in ("dog", "man", "boy", "girl")


def test_a_group_is_joined_at_its_members():
    joins = _joins("A herd of three horses standing on top of a green field.")
    assert joins and all(text.startswith("A herd of three horses and a") for text in joins)


@pytest.mark.parametrize("caption", [
    "A man swinging a baseball bat at a ball.",  # a dog would swing the bat
    "Two brown horses pull a plow, steered by a man behind.",
])
def test_no_animal_joins_a_subject_acting_on_an_object(caption):
    animals = ("dog", "cat", "horse", "cow", "sheep", "zebra", "giraffe", "elephant", "bird")
    assert not [text for text in _joins(caption) if any(f" and a {word} " in text for word in animals)]


@pytest.mark.parametrize("caption", [
    "A zebra has its nose pressed to the ground.",  # "its" would point at two animals
    "A man is sleeping with his head on a pillow.",
    "The hand of a person picking up the last two pieces of pizza.",  # "hand" is no group
    "A man in white shirt and shorts playing a game of tennis.",  # the shirt would move to both
    "A table topped with a cake covered in berries.",  # things are not joined
])
def test_no_join_where_it_changes_more_than_the_subject(caption):
    assert _joins(caption) == []
