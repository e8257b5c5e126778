"""The relation replacements of issue 21's eighth replace_rel round: a verb spaCy read as a plural noun, read
again as a verb (backend/perturb/misread_verbs.py). The "makes" captions are even-id SugarCrepe captions (the
tuning set); the "never" cases are the outputs judged invalid in the held-out sample
(tests/data/perturb-judged-rel8.csv) and the shapes the rule must leave alone."""
import pytest

from backend.perturb.core import normalized
from backend.perturb.misread_verbs import misread_verb_slots
from backend.perturb.nlp import parse
from tests.support.perturb_outputs import made


def related(caption: str) -> set[str]:
    """Every replace relation negative, as normalized texts."""
    return made(caption, ["replace"], subtype="relation")


MAKES = [
    # "a" before the plural noun: no noun phrase, so a verb ("stares" NNS -> "is staring")
    ("A squinting tennis player stares at a tennis racket.",
     "A squinting tennis player looks away from a tennis racket."),
    # a state carried back keeps its "is"
    ("A large white airplane flies in the gray sky.", "A large white airplane is parked on a runway."),
    ("A man wearing a tie poses for a photo", "A man wearing a tie takes a photo"),
    ("a zebra grazes on some green grass next to some trees", "a zebra lies in some green grass next to some trees"),
]


@pytest.mark.parametrize(("caption", "expected"), MAKES)
def test_misread_verbs_are_replaced(caption, expected):
    assert normalized(expected) in related(caption)


NEVER = [
    # judged err in the held-out sample: a vehicle waiting in traffic is not driven down it (motion.py)
    ("A school bus waits in traffic behind a car.", "A school bus drives down traffic behind a car."),
    ("A school bus waiting in traffic behind a car.", "A school bus driving down traffic behind a car."),
]


@pytest.mark.parametrize(("caption", "output"), NEVER)
def test_invalid_replacements_are_never_made(caption, output):
    assert normalized(output) not in related(caption)


def _last_words(doc):
    """A finder with one slot, the caption's last two tokens, to see whether a caption is read again at all."""
    return [(doc[-2:], ["x"])]


@pytest.mark.parametrize(("caption", "read_again"), [
    ("A squinting tennis player stares at a tennis racket.", True),
    ("The grey and white cat stares up near a laptop.", True),  # a root right after an animal
    ("The kitchen counters with food on them.", False),  # no "a" before "counters", no person or animal
    ("A bedroom done in animal prints with red and black pillows.", False),  # "prints" is no root
    ("A man stares at a tennis racket.", False),  # spaCy reads the verb already
])
def test_only_the_misread_verb_shape_is_read_again(caption, read_again):
    assert bool(misread_verb_slots(parse(caption), [_last_words])) == read_again
