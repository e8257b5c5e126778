"""Outputs judged wrong (audits of issue 21 and the judged samples) that the engine must never produce again.

Each case names the caption, the text that was produced, and whether it came as a negative (still true, or
broken) or as a positive (its meaning changed). Every family runs, so no family may bring one back.
"""
import pytest

from backend.perturb import PROBE_DEFAULT_FAMILIES
from backend.perturb.plausibility import is_plausible
from tests.support.perturb_outputs import every_variant

NEVER = [
    # (caption, text, kind)
    ("A baseball player swinging a ball at a bat.", "A baseball player swinging a bat at a ball.", "negative"),
    ("there is a large building under construction and many parking meters",
     "there is a large building beneath construction and many parking meters", "positive"),
    ("Two guys on the ski slope while one holds his snow board behind his back.",
     "Two guys on the ski slope while one holds his snow board to the rear of his back.", "positive"),
    ("A bathroom with a frame on wall and sink", "A bathroom with a frame on sink and wall", "positive"),
    ("An old truck with several years of paint schemes sits parked as if artwork.",
     "Several old trucks with a year of paint schemes sits parked as if artwork.", "negative"),
    ("Two men riding mopeds, one with a woman and boy riding along.",
     "A man riding mopeds, one with two women and boy riding along.", "negative"),
    ("A little girl that is on the beach in the daytime.",
     "A little girl that is on the daytime in the beach.", "negative"),
    ("Cat sitting on wood framed mirror looking down at own reflection.",
     "Cat sitting on reflection framed mirror looking down at own wood.", "negative"),
    ("A banana peel laying next to a glass bottle.", "A banana peel sitting next to a glass bottle.", "negative"),
    ("A banana peel laying next to a glass bottle.", "A banana peel kneeling next to a glass bottle.", "negative"),
    ("A banana peel laying next to a glass bottle.", "A banana peel squatting next to a glass bottle.", "negative"),
    ("a plate full of food with some greens on top", "some plates full of food with a green on top", "negative"),
    # errs of the natural-distribution sample (tests/data/perturb-judged-natural.csv)
    ("A room with a couch, chair, table and television in it. ",
     "A room with a couch, table, chair and television in it. ", "negative"),
    ("A roasting pan full with apples, carrots, potatoes, and meat",
     "A roasting pan full with potatoes, carrots, apples, and meat", "negative"),
    ("A double-decker bus is parked in a large field.", "A double-blue decker bus is parked in a large field.",
     "negative"),
    ("People sunbathing near a beach under colorful umbrellas",
     "People sunbathing near a beach under colorful black umbrellas", "negative"),
    ("A variety of street signs on a light post in front of a tall building. ",
     "A variety of street signs on a light plastic post in front of a tall building. ", "negative"),
    ("A bathroom with a toilet, a plant, a stand and several footwear on the floor. ",
     "A bathroom with a toilet, a plant, several stands and a footwear on the floor. ", "negative"),
    ("Children look over the wrought iron fence into the brick archways.",
     "Children look over the wrought brick fence into the iron archways.", "negative"),
    # errs of the subject-join additions' tuning sample (tests/data/perturb-judged-addition-subject-even.csv)
    ("A cat sits in front of a TV and watches.", "A cat and a dog sit in front of a TV and watches.", "negative"),
    ("An old doctors office with two windows with curatins.",
     "An old doctors and a dog office with two windows with curatins.", "negative"),
    # errs of the addition family's held-out sample (tests/data/perturb-judged-natural-addition-3.csv)
    ("A husky dog sitting on the front seat of a car", "A husky dog sitting on the front green seat of a car",
     "negative"),
    ("A double decker bus is shown that is not in service.",
     "A double white decker bus is shown that is not in service.", "negative"),
    ("a two tier cake with some frosting and strawberries in the middle",
     "a two black tier cake with some frosting and strawberries in the middle", "negative"),
    ("a tub boat pulling a small barge through the water", "a tub blue boat pulling a small barge through the water",
     "negative"),
    ("There is a banana and two pieces of cheese on a plate.",
     "There is a banana and two pieces of cheese on a plate with a table.", "negative"),
    ("A semi truck pulling a chain of three trailers.", "A semi orange truck pulling a chain of three trailers.",
     "negative"),
    # errs of the hard positives' held-out sample drawn at 9859c7e (tests/data/perturb-judged-natural-3-families.csv)
    ("An old style kitchen with baby blue cabinets.", "An old style kitchen with baby sapphire cabinets.", "positive"),
    ("A man standing next to a  green hillside.", "A man standing next to a  emerald hillside.", "positive"),
]
# NegCLIP's faithful swaps (not a default family) may still make these; the Probe's families may not.
NEVER_BY_DEFAULT = [
    ("A man with a top hat and a red tie.", "A man with a top tie and a red hat.", "negative"),
]


@pytest.mark.parametrize("caption, text, kind", NEVER, ids=[f"{i}" for i in range(len(NEVER))])
def test_the_output_is_never_produced_again(caption, text, kind):
    produced = every_variant(caption)
    assert not [v for v in produced if v.text == text and v.kind == kind], f"{kind} {text!r} came back"


@pytest.mark.parametrize("caption, text, kind", NEVER_BY_DEFAULT)
def test_the_probe_families_never_produce_it_again(caption, text, kind):
    produced = every_variant(caption, PROBE_DEFAULT_FAMILIES)
    assert not [v for v in produced if v.text == text and v.kind == kind], f"{kind} {text!r} came back"


@pytest.mark.parametrize("text, original", [
    ("A small child is drinking a donut fed by another hand.", "A small child is eating a donut fed by another hand."),
    ("An umbrella holding up a woman near a stage.", "A woman holding up an umbrella near a stage."),
])
def test_absurd_negatives_are_labelled_implausible(text, original):
    assert not is_plausible(text, original)


@pytest.mark.parametrize("text", ["A bus carrying people.", "A man drinking a cup of coffee.",
                                  "A plate holding a sandwich.", "A woman drinking water."])
def test_ordinary_captions_stay_plausible(text):
    assert is_plausible(text)
