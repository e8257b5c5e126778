"""The `addition` family's young-animal joins and room fixtures (issue 21, branch cov-addobj3).

A grown bear takes a cub ("Two brown bears and a cub interacting"), which the caption counts name too rarely
to vouch for; a bear that is young itself or a toy takes none, nor does a lion cub. The errs judged in
`tests/data/perturb-judged-addobj3-scenes-dropped.csv` came from Visual Genome scene counts tried as a second
fit source and dropped; they must stay unmade (the kitchen's stove was made by the caption counts too, deeper
in the list: a room's fixtures are never added to it now).
"""
import pytest

from tests.support.perturb_outputs import objects_added


@pytest.mark.parametrize(("caption", "expected"), [
    ("Two brown bears interacting in a rocky area.", "Two brown bears and a cub interacting in a rocky area."),
    ("A bear sleeps in a hammock made of heavy canvas.", "A bear and a cub sleep in a hammock made of heavy canvas."),
])
def test_a_grown_bear_takes_a_cub(caption, expected):
    assert expected in objects_added(caption)


def test_a_bear_takes_no_other_animal_the_counts_do_not_vouch_for():
    joins = [text for text in objects_added("a black bear walking toward a rock") if " and a " in text]
    assert joins and set(joins) == {"a black bear and a cub walking toward a rock"}


@pytest.mark.parametrize("caption", [
    "A baby brown bear standing on top of a rock.",  # a cub already: one cub twice
    "A young bear walking in the grass.",
    "A stuffed bear sitting on a chair.",  # a toy: a cub beside it is absurd
    "Two girls are holding a huge stuffed bear near a crowd of kids.",
    "A lion cub lying in the grass.",
])
def test_no_cub_beside_a_young_or_toy_bear(caption):
    assert not [text for text in objects_added(caption) if " cub" in text]


@pytest.mark.parametrize(("caption", "judged"), [
    ("A man and a woman are posing for a picture in a kitchen.", "in a kitchen with a stove"),
    ("A man holding open an oven door in a kitchen.", "in a kitchen with a stove"),
    ("A lush green valley surrounded by tall mountains.", "mountains with a tree"),
    ("A bunch of people skiing at a lodge right in the mountains.", "mountains with a tree"),
])
def test_a_judged_err_of_the_dropped_scene_counts_is_not_made(caption, judged):
    assert not [text for text in objects_added(caption) if judged in text]


@pytest.mark.parametrize(("caption", "subject"), [
    ("A vase filled with yellow and white flowers.", "A vase and"),
    ("A plate topped with a sandwich.", "A plate and"),
])
def test_no_thing_joins_one_that_holds_something(caption, subject):
    """Judged impl in `tests/data/perturb-judged-addobj3-natural.csv`: "A vase and a lamp filled with ..."."""
    assert not [text for text in objects_added(caption) if text.startswith(subject)]
