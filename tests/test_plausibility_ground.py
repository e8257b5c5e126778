"""Where a body can be (backend/perturb/selection_ground.py) and who kneels: absurd relation refills found in
the replace family's outputs on even ids are flagged when the edit made them, and ordinary captions are not."""
import pytest

from backend.perturb import perturb
from backend.perturb.plausibility import implausibilities, violations

# (negative, the caption it was made from, the rule that flags it): made by the engine before these rules.
ABSURD = [
    ("A large tusked elephant swimming in a wooded area.", "A large tusked elephant walking in a wooded area.",
     "dry_swim"),
    ("A horse swimming in a field.", "A horse running in a field.", "dry_swim"),
    ("A man in white shorts crawling in the air to catch a green Frisbee.",
     "A man in white shorts jumping in the air to catch a green Frisbee.", "walk_on_air"),
    ("A male skater walks in the air at a skate park.", "A male skater jumps in the air at a skate park.",
     "walk_on_air"),
    ("A large jetliner flying under a dry grass field.", "A large jetliner flying over a dry grass field.",
     "under_ground"),
    ("A flock of birds flying under the ocean next to a beach.",
     "A flock of birds flying over the ocean next to a beach.", "under_ground"),
    ("Kites are flying high in the air beneath the beach.", "Kites are flying high in the air above the beach.",
     "under_ground"),
    ("A person repairing a wave on top of a surfboard.", "A person riding a wave on top of a surfboard.",
     "unhandled"),
    ("Several people are washing the waves on their surfboards.",
     "Several people are riding the waves on their surfboards.", "unhandled"),
    ("A brown cat kneeling on a black suitcase.", "A brown cat lying on a black suitcase.", "wrong_subject"),
]

ORDINARY = [
    "A dog swimming in a lake.",
    "People swimming at the beach.",  # a shore: the sea is there
    "A man in swim trunks standing on a lawn.",  # "swim" modifies the trunks
    "A swimming pool next to a house.",
    "A boy jumping in the air on a skateboard.",
    "Birds flying in the air over a field.",
    "A man sitting under a tree.",
    "A car buried under the snow.",  # snow covers things
    "A train passing under the street.",  # a tunnel
    "A man carrying a surfboard to the waves.",
    "A woman kneeling next to her dog.",
    "Two large brown elephants kneeling over a small elephant.",  # judged ok: elephants are trained to kneel
    "A painter painting a mountain.",
]


@pytest.mark.parametrize("negative, original, rule", ABSURD)
def test_a_body_where_it_cannot_be_is_flagged_when_the_edit_put_it_there(negative, original, rule):
    assert rule in {v.rule for v in implausibilities(negative, original)}


@pytest.mark.parametrize("caption", ORDINARY)
def test_ordinary_captions_break_no_ground_rule(caption):
    assert not {v.rule for v in violations(caption)} & {"dry_swim", "walk_on_air", "under_ground", "unhandled",
                                                          "wrong_subject"}


def test_a_caption_that_already_swims_on_land_excuses_its_negatives():
    """The original's own "swimming" without water (a parse, a pun) is not the edit's doing."""
    assert not implausibilities("Two ducks swimming near a bench.", "Two ducks swimming near a tree.")


def test_the_probe_hides_the_absurd_relation_refills_and_keeps_the_others():
    made = {v.text: v.plausible for v in perturb("A dog running through the grass.", families=["replace"], seed=0)
            if v.subtype == "relation"}
    assert made.get("A dog swimming through the grass.") is False
    assert made.get("A dog walking through the grass.") is True
