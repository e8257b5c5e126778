"""The absurd REPLACE negatives judged in the stop-37 natural samples (tests/data/perturb-judged-replace7-natural.csv,
perturb-judged-replace-absurd6.csv) are never made (`refill_neighbours`, `attribute_fit`) or are labelled implausible
(`selection`, `selection_ground`), while refills and relations of the same kind that make sense stay."""
import pytest

from backend.perturb.core import normalized
from backend.perturb.nlp import parse
from backend.perturb.plausibility import implausibilities
from backend.perturb.refill_fit import fits_slot
from tests.support.perturb_outputs import made


def made_by_replace(caption: str) -> set[str]:
    """Every replace negative the caption can get."""
    return made(caption, ["replace"])


def fits(caption: str, noun: str, word: str, original: str | None = None) -> bool:
    """Whether REPLACE may refill the first `noun` of `caption` with `word`."""
    token = next(token for token in parse(caption) if token.lower_ == noun)
    return fits_slot(token, original or token.lemma_.lower(), word, all_groups=False)


@pytest.mark.parametrize(("caption", "never"), [
    # a colour the new noun never has
    ("Two brown bears swimming in a lake next to green and yellow plants.",
     "Two brown zebras swimming in a lake next to green and yellow plants."),
    ("A man with graying hair looks down at a stand full of yellow bananas.",
     "A man with graying hair looks down at a stand full of yellow oranges."),
    # a fixture the new room has not
    ("A bathroom with a toilet, a plant, a stand and several footwear on the floor. ",
     "A bedroom with a toilet, a plant, a stand and several footwear on the floor. "),
    # a colour the cultivar never has
    ("A white bowl of green granny smith apples.", "A white bowl of yellow granny smith apples."),
    # a part the new being has not
    ("An office view shows cubicles and overhead lights in the background, and to the front ,  a serious looking "
     "man with a beard, vest and colorful tie. ",
     "An office view shows cubicles and overhead lights in the background, and to the front ,  a serious looking "
     "girl with a beard, vest and colorful tie. "),
    ("a little black bird with a big colorful beak sitting on a branch ",
     "a little black rabbit with a big colorful beak sitting on a branch "),
    # a taste kept from the old noun
    ("A white frosted cake sitting in front of some white flowers.",
     "A white frosted hot dog sitting in front of some white flowers."),
    ("a single slice of pizza with ham slices on it  on a plate",
     "a single slice of cake with ham slices on it  on a plate"),
    # a slice of what comes in no slices
    ("A young woman is holding a slice of pizza with her mouth.",
     "A young woman is holding a slice of soup with her mouth."),
    # an opening that is none
    ("A dog looks out of the window as the car driver goes past a historic town.",
     "A dog looks out of the roof as the car driver goes past a historic town."),
    # grass on what grows none
    ("A young child holding onto a kite while standing on a green grass covered field.",
     "A young child holding onto a kite while standing on a green grass covered street."),
    ("A sheep is on a field of grass with two men walking around it.",
     "A sheep is on a beach of grass with two men walking around it."),
    ("A blue frisbee sitting on top of a lush green field.", "A blue frisbee sitting on top of a lush green street."),
])
def test_a_judged_absurd_refill_is_never_made(caption, never):
    assert normalized(never) not in made_by_replace(caption)


@pytest.mark.parametrize(("caption", "noun", "word"), [
    ("People gathered taking pictures with a cell phone.", "phone", "remote"),
    ("A man in a crowd taking pictures with a cell phone.", "phone", "remote"),
    ("A young woman is holding a slice of pizza with her mouth.", "pizza", "donut"),
    ("a little black bird with a big colorful beak sitting on a branch ", "bird", "dog"),
    ("A man with a beard sitting on a bench.", "man", "woman"),
    # a dress does not sit: the woman in it does
    ("A woman in a dress sitting on a bench next to a dog.", "bench", "shelf"),
])
def test_a_refill_that_misfits_its_neighbours_is_refused(caption, noun, word):
    assert not fits(caption, noun, word)


@pytest.mark.parametrize(("caption", "noun", "word"), [
    ("A man in a crowd taking pictures with a cell phone.", "phone", "camera"),
    ("A man holding a cell phone.", "phone", "remote"),
    ("A young woman is holding a slice of pizza with her mouth.", "pizza", "cake"),
    ("A young woman is holding a piece of pizza.", "pizza", "sandwich"),
    ("A white frosted cake sitting in front of some white flowers.", "cake", "donut"),
    ("A slice of cake on a plate.", "cake", "pizza"),
    ("A man with a beard sitting on a bench.", "man", "guy"),
    ("A bathroom with a toilet and a sink.", "bathroom", "restroom"),
    ("A bedroom with a bed and a lamp.", "bedroom", "office"),
    ("A toilet with a shower next to it.", "toilet", "sink"),  # WordNet's first toilet is a room
    ("A man taking a bite of a doughnut while wearing glasses.", "doughnut", "salad"),
    ("A woman in a dress sitting on a bench next to a dog.", "bench", "chair"),
    ("A woman with a hat sitting on a bench.", "woman", "girl"),
    ("A black dog with a red collar sitting on a bench.", "dog", "cat"),
    ("A dog looks out of the window of a car.", "window", "door"),
    ("A cat jumps out of the box.", "box", "bag"),
    ("A young child standing on a green grass covered field.", "field", "park"),
    ("A young child standing on a green grass covered field.", "field", "mountain"),
    ("A young child standing on a field.", "field", "street"),
    ("Two brown bears swimming in a lake.", "bears", "deer"),
    ("A man looks down at a stand full of bananas.", "bananas", "oranges"),
])
def test_a_refill_of_the_same_kind_that_fits_stays(caption, noun, word):
    assert fits(caption, noun, word)


def test_a_colour_a_plain_apple_can_have_stays():
    assert normalized("A white bowl of red apples.") in made_by_replace("A white bowl of green apples.")


def test_a_colour_word_parsed_as_a_compound_names_no_cultivar():
    assert normalized("A street with blue cones and a work truck on it.") in made_by_replace(
        "A street with orange cones and a work truck on it.")


@pytest.mark.parametrize(("original", "absurd", "rule"), [
    ("A street scene with a horse pulling a white carriage.",
     "A street scene with a horse pushing a white carriage.", "wrong_subject"),
    ("A man on a skateboard is coming up a ramp.", "A man under a skateboard is coming up a ramp.", "under_a_board"),
    ("A person on a skateboard does a flip in a parking lot.",
     "A person under a skateboard does a flip in a parking lot.", "under_a_board"),
])
def test_a_judged_absurd_relation_is_labelled(original, absurd, rule):
    assert rule in {violation.rule for violation in implausibilities(absurd, original)}


@pytest.mark.parametrize(("original", "plausible"), [
    ("A street scene with a horse and a carriage.", "A street scene with a horse pulling a white carriage."),
    ("A street scene with a man pulling a white carriage.", "A street scene with a man pushing a white carriage."),
    ("A man on a car.", "A man under a car."),
    ("A dog on a skateboard.", "A dog under a skateboard."),
    ("A man next to a skateboard.", "A man on a skateboard."),
])
def test_a_plausible_neighbour_stays_unlabelled(original, plausible):
    assert not implausibilities(plausible, original)
