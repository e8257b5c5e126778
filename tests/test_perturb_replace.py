"""Replacement negatives and hard positives on real caption shapes.

Each test pins one rule of backend/perturb (replace, ce_clip,
hard_positive): the judged mistakes of the old WordNet-driven version
must never come back, and each guard must still let the good rewrites
through. Captions are written out here (COCO style); nothing is read
from outside the repository.
"""
import re

import pytest

from backend.perturb import perturb
from backend.perturb.counted import WORD_NUMBERS
from backend.perturb.inflect import pluralize, verb_form
from backend.perturb.kind_modifiers import BASEBALL_POSITIONS, ROOMS, SPORTS
from backend.perturb.lexicon import ADJ, NOUN, VERB, lexicon
from backend.perturb.verb_phrases import SWAPS
from tests.support.perturb_outputs import every_variant


def outputs(caption):
    """Every (text, kind) the families can make for the caption."""
    return {(variant.text, variant.kind) for variant in every_variant(caption)}


def texts(caption, family, subtype=None, **kwargs):
    return [
        v.text for v in perturb(caption, [family], max_per_subtype=50, **kwargs) if subtype in (None, v.subtype)
    ]


def replaced_words(caption, family, subtype):
    """(before, after) of every single-edit replacement of one subtype."""
    pairs = []
    for variant in perturb(caption, [family], max_per_subtype=50):
        if variant.subtype == subtype:
            pairs += [(e.before.lower(), e.after.lower()) for e in variant.edits if e.before.lower() not in ("a", "an")]
    return pairs


# --- the audited mistakes ------------------------------------------------------

AUDITED = [
    ("A herd of sheep are blocking the road.", "A herd of sheep are clogging the road.", "negative"),
    (
        "This is a plate holding a double decker sandwich.",
        "This is a plate grasping a double decker sandwich.",
        "positive",
    ),
    ("A man that is standing in the sand.", "A man that is standing within the sand.", "positive"),
    (
        "The restored old time car is parked near a four engine airplane.",
        "The restored aged time car is parked near a four engine airplane.",
        "positive",
    ),
    (
        "a giraffe behind a fence eating grass from a feeder",
        "a fence eating grass from a feeder in front of a giraffe",
        "positive",
    ),
    (
        "A young male sitting on a park bench typing on a laptop.",
        "A young male sitting on a park bench apostrophizing on a laptop.",
        "negative",
    ),
]


# The hard-positive errors of the first judged sample (tests/data/perturb-judged.csv).
JUDGED_ERRORS = [
    ("Two dishes of food and several blue arrows.", "Two dishes of several blue arrows and food.", "positive"),
    ("A man looking through a book on top of a table.", "A man gazing through a book on top of a table.", "positive"),
    ("People look on from behind a steel rail on the sidewalk.",
     "People look on from to the rear of a steel rail on the sidewalk.", "positive"),
    ("Train with lights on, multiple track area, near over/under pass.",
     "Train with lights on, multiple track area, near over/beneath pass.", "positive"),
    # from the second (hard-positive) sample
    ("a urinal hanging on a wall in between two stalls", "a urinal hanging on a wall within between two stalls",
     "positive"),
]


@pytest.mark.parametrize(("caption", "wrong", "kind"), AUDITED + JUDGED_ERRORS)
def test_audited_mistakes_are_never_produced(caption, wrong, kind):
    found = outputs(caption)
    assert (wrong, kind) not in found
    assert found or (caption, wrong, kind) in JUDGED_ERRORS, "the caption still gets other variants"


# --- negatives: curated words only ------------------------------------------------


def _lexicon_words():
    """The lexicon's words, and the closed word lists of the phrase replacements (counts, sports, rooms,
    baseball positions, "without", the verb phrases of `verb_phrases.SWAPS`)."""
    lex = lexicon()
    words = {w for pos in (NOUN, ADJ, VERB) for group in lex.groups[pos] for w in group} | set(WORD_NUMBERS)
    words |= {"without", "children", "modern", *SPORTS, *ROOMS, *BASEBALL_POSITIONS, *(swap.new for swap in SWAPS)}
    return words | {o.word for index in lex.opposites.values() for options in index.values() for o in options}


@pytest.mark.parametrize(
    "caption",
    [
        "A young male sitting on a park bench typing on a laptop.",
        "A kid in a red shirt is playing with a stripling goat.",
        "A herd of sheep are blocking the road.",
        "A baseball player swings at a pitch near the catcher.",
        "A woman stretches out over the counter to reach a cup.",
    ],
)
def test_negative_replacements_come_from_the_curated_lexicon(caption):
    """WordNet proposed "stripling", "jock", "apostrophizing", "inhabits":
    every replacement word of replace and ce_clip is now a lexicon word,
    inflected ("cups", "holding")."""
    known = _lexicon_words()
    inflected = known | {pluralize(w) for w in known} | {verb_form(w, t) for w in known for t in ("VBG", "VBZ", "VBD")}
    subtypes = {"replace": ("object", "attribute", "relation"), "ce_clip": ("attribute", "action", "object")}
    for family in subtypes:
        for subtype in subtypes[family]:
            for before, after in replaced_words(caption, family, subtype):
                assert after in inflected, (family, subtype, before, after)


def test_words_the_lexicon_lacks_are_left_alone():
    # "player", "kid", "typing", "stretches" have no curated sisters; WordNet's
    # ("jock", "stripling", "apostrophizing", "inhabits") are not used.
    caption = "A player stretches near a kid typing."
    assert replaced_words(caption, "replace", "object") == []
    # spaCy reads "typing" as the noun "near" governs: an act, no place, so "near" stays too
    assert replaced_words(caption, "replace", "relation") == []
    assert replaced_words("A player stretches near a kid.", "replace", "relation") == [("near", "far from")]
    assert replaced_words(caption, "ce_clip", "action") == []


def test_no_replacement_is_a_kind_of_or_a_look_alike_of_the_original():
    # a perching bird takes no pet (refill_fit), so the bird sits on a bench
    birds = replaced_words("A bird sitting on a bench.", "replace", "object")
    assert birds and not {after for _, after in birds} & {"duck", "pigeon", "seagull", "owl", "parrot"}
    cups = replaced_words("A cup of coffee on a table.", "replace", "object")
    # a mug is a cup; a bowl or a plate of coffee is out of the cup's fit class (refill_fit), so the table changes
    assert cups and not {after for before, after in cups if before == "cup"}
    computers = {after for _, after in replaced_words("Two computers and a camera on a desk.", "replace", "object")}
    assert computers and not computers & {"laptop", "keyboard", "television"}


def test_verb_forms_of_every_lexicon_verb():
    """Hand-checked forms of every verb the lexicon can put in a caption
    (no "overtoped"). A new verb in lexicon.json needs a row here."""
    expected = {
        "sit": "sitting sits sat", "stand": "standing stands stood", "lie": "lying lies lay",
        "kneel": "kneeling kneels knelt", "squat": "squatting squats squatted", "walk": "walking walks walked",
        "run": "running runs ran", "jump": "jumping jumps jumped", "swim": "swimming swims swam",
        "crawl": "crawling crawls crawled", "graze": "grazing grazes grazed", "sleep": "sleeping sleeps slept",
        "drink": "drinking drinks drank", "surf": "surfing surfs surfed", "ski": "skiing skis skied",
        "skateboard": "skateboarding skateboards skateboarded", "snowboard": "snowboarding snowboards snowboarded",
        "hold": "holding holds held", "throw": "throwing throws threw", "catch": "catching catches caught",
        "kick": "kicking kicks kicked", "hit": "hitting hits hit", "carry": "carrying carries carried",
        "drop": "dropping drops dropped", "push": "pushing pushes pushed", "pull": "pulling pulls pulled",
        "eat": "eating eats ate", "cut": "cutting cuts cut", "cook": "cooking cooks cooked",
        "ride": "riding rides rode", "wash": "washing washes washed", "repair": "repairing repairs repaired",
        "drive": "driving drives drove", "feed": "feeding feeds fed", "pet": "petting pets petted",
        "chase": "chasing chases chased", "hug": "hugging hugs hugged", "wear": "wearing wears wore",
        "smile": "smiling smiles smiled", "frown": "frowning frowns frowned", "cry": "crying cries cried",
        "read": "reading reads read", "write": "writing writes wrote", "draw": "drawing draws drew",
        "watch": "watching watches watched", "photograph": "photographing photographs photographed",
        "paint": "painting paints painted",
    }
    verbs = {verb for group in lexicon().groups[VERB] for verb in group}
    assert verbs == set(expected)
    for verb, forms in expected.items():
        assert " ".join(verb_form(verb, tag) for tag in ("VBG", "VBZ", "VBD")) == forms


def test_plurals_of_lexicon_nouns_with_irregular_forms():
    nouns = {noun for group in lexicon().groups[NOUN] for noun in group}
    expected = {
        "man": "men", "woman": "women", "sheep": "sheep", "deer": "deer", "knife": "knives", "shelf": "shelves",
        "cactus": "cacti", "goose": "geese", "potato": "potatoes", "tomato": "tomatoes", "scarf": "scarves",
        "bus": "buses", "bench": "benches", "box": "boxes", "strawberry": "strawberries", "hot dog": "hot dogs",
    }
    assert set(expected) <= nouns
    assert {noun: pluralize(noun) for noun in expected} == expected


# --- negatives: the sentence must still fit ------------------------------------------


def test_verbs_keep_their_frame():
    # Only people and animals kneel; flowers "sitting" in a vase are just there.
    assert not [t for t in texts("Red flowers sitting in a vase.", "replace", "relation") if "kneeling" in t]
    assert "A cat kneeling on a bed." in texts("A cat sitting on a bed.", "replace", "relation")
    # "holding onto" takes no direct object: no "catching onto", "wearing onto".
    holding = texts("A boy running while holding onto a kite string.", "replace", "relation")
    assert holding and not any(re.search(r"(catching|wearing|throwing) onto", t) for t in holding)
    # Wearing needs something wearable: no "a man wearing a tennis racquet".
    assert not [t for t in texts("A man holding a tennis racquet.", "replace", "relation") if "wearing" in t]
    assert "A man wearing a hat." in texts("A man holding a hat.", "replace", "relation")


def test_no_word_is_doubled_and_no_gendered_pronoun_is_left_behind():
    for text in texts("Cows sitting and standing on hay.", "replace"):
        assert "sitting and sitting" not in text and "standing and standing" not in text
    for text in texts("Blue and silver motorcycles are parked.", "replace"):
        assert "silver and silver" not in text and "blue and blue" not in text
    man = texts("A man sitting on a bench with a bag next to him.", "replace", "object")
    # the person changes only with the pronoun (gendered.py): never "A woman ... next to him"
    assert man and all(t.endswith("next to her.") for t in man if t.startswith(("A woman", "A girl")))
    assert "A woman sitting on a bench with a bag next to her." in man


def test_replacements_suit_the_other_words():
    young = texts("A young boy gets ready to fly a kite.", "replace")
    assert young and "An old boy gets ready to fly a kite." not in young
    door = texts("The cat is laying in the sun by the open door.", "replace", "object")
    assert "The cat is laying in the sun by the open window." in door
    assert not [t for t in door if "open wall" in t or "open roof" in t]
    plural = texts("A plate with some potatoes and meat.", "ce_clip", "object")
    assert plural and not [t for t in plural if re.search(r"broccolis|lettuces|cauliflowers", t)]
    herd = texts("A herd of zebra are grazing on tall dry grass.", "replace", "object")
    assert not [t for t in herd if "herd of dog " in t or "tall dry sand" in t]


def test_spatial_opposites_need_the_right_object():
    assert "A cup under a table." in texts("A cup on a table.", "replace", "relation")
    assert not [t for t in texts("A woman taking a picture on a sunny day.", "replace") if "under a sunny day" in t]
    assert "A cat sitting outside a bathroom sink." in texts("A cat sitting inside a bathroom sink.", "replace")
    assert not [t for t in texts("A giraffe stands in the grass.", "replace", "relation") if "outside" in t]


def test_ce_clip_noun_swaps_skip_symmetric_and_compound_nouns():
    assert texts("A dog next to a cat.", "ce_clip", "relation") == []
    assert not [t for t in texts("A dog or bear in a pen.", "ce_clip", "relation") if "bear or dog" in t.lower()]
    hot_dog = texts("A woman holding a hot dog on the street.", "ce_clip", "relation")
    assert not [t for t in hot_dog if "hot woman" in t]


def test_ce_clip_fill_mask_only_ranks_lexicon_words():
    def fill_mask(masked):
        return ["stripling", "jock", "apostrophizing", "girl", "sofa", "chair", "inhabits"]

    variants = perturb("A boy sitting on a couch.", ["ce_clip"], fill_mask=fill_mask, max_per_subtype=20)
    afters = {e.after for v in variants if v.subtype != "relation" for e in v.edits}
    assert afters == {"girl", "chair"}


# --- hard positives ------------------------------------------------------------------


@pytest.mark.parametrize("place", ["sand", "background", "water", "snow", "air", "grass", "field", "street", "rain"])
def test_in_becomes_within_only_for_bounded_places(place):
    assert not [t for t in texts(f"A dog standing in the {place}.", "hard_positive") if "within" in t]


def test_in_becomes_within_for_rooms_and_containers():
    assert "A cat sleeping within a bathroom sink." in texts("A cat sleeping in a bathroom sink.", "hard_positive")
    assert "Two men within the kitchen." in texts("Two men in the kitchen.", "hard_positive")
    # A direction is not a location: "puts her hand within a dish" is wrong.
    assert not [t for t in texts("A girl puts her hand in a pasta dish.", "hard_positive") if "within" in t]
    assert not [t for t in texts("A girl looking inside the refrigerator.", "hard_positive") if "within" in t]
    behind = texts("Cakes for sale in a bakery, seen behind glass.", "hard_positive")
    assert behind and not [t for t in behind if "rear" in t]


def test_hold_becomes_grasp_only_for_people_and_animals():
    assert texts("This is a plate holding a sandwich.", "hard_positive") == []
    assert "A woman grasping an umbrella." in texts("A woman holding an umbrella.", "hard_positive")
    assert "A dog grasping a frisbee." in texts("A dog holding a frisbee.", "hard_positive")
    assert not [t for t in texts("Someone holding out a hand.", "hard_positive") if "grasping out" in t]


def test_positives_never_double_a_word():
    captions = ["A double decker bus parked near by.", "A cat sits near by the door.", "A bus parked near by a curb."]
    for caption in captions:
        for text in texts(caption, "hard_positive"):
            words = re.findall(r"\w+", text.lower())
            assert all(a != b for a, b in zip(words, words[1:])), text


def test_synonyms_skip_set_phrases_and_people():
    assert not [t for t in texts("A three year old girl eating.", "hard_positive") if "aged" in t]
    assert not [t for t in texts("An old photo of a train.", "hard_positive") if "aged" in t]
    assert "An aged woman on a bench." in texts("An old woman on a bench.", "hard_positive")
    assert not [t for t in texts("A black and white photo of a dog.", "hard_positive") if "ebony" in t or "ivory" in t]
    assert not [t for t in texts("A smiling black man.", "hard_positive") if "ebony" in t]
    assert not [t for t in texts("A man looking for his keys.", "hard_positive") if "gazing" in t]
    assert "A man gazing at his phone." in texts("A man looking at his phone.", "hard_positive")
    assert not [t for t in texts("A man walking his dog.", "hard_positive") if "strolling" in t]


def test_spatial_converse_only_between_simple_noun_phrases():
    assert texts("a giraffe behind a fence eating grass from a feeder", "hard_positive", "spatial_converse") == []
    assert texts("A fire hydrant waits in front of a tall building.", "hard_positive", "spatial_converse") == []
    assert texts("A cat with a hat to the left of a dog.", "hard_positive", "spatial_converse") == []
    assert texts("A cat sits on the bench behind a dog.", "hard_positive", "spatial_converse") == []
    assert texts("a small house in front of a tall tree", "hard_positive", "spatial_converse") == [
        "a tall tree behind a small house"
    ]
    assert texts("A red mug is to the left of a blue bowl.", "hard_positive", "spatial_converse") == [
        "A blue bowl is to the right of a red mug."
    ]
    assert texts("A glass vase is beside a white candle.", "hard_positive", "spatial_converse") == [
        "A white candle is beside a glass vase."
    ]


def test_conjunct_reorder_keeps_a_shared_determiner_in_front():
    assert texts("a man and woman", "hard_positive", "conjunct_reorder") == ["a woman and man"]
    assert texts("A cat and dog napping together on the couch.", "hard_positive", "conjunct_reorder") == [
        "A dog and cat napping together on the couch."
    ]
    assert texts("An apple and banana on a plate.", "hard_positive", "conjunct_reorder") == [
        "A banana and apple on a plate."
    ]


@pytest.mark.parametrize(
    "caption",
    [
        "a table with two laptops and chairs",  # is the number shared?
        "red apples and oranges",  # is the colour shared?
        "A pair of tall black boots and a closed red umbrella in the corner.",  # the pair counts the boots only
        "A bedroom with a bed and a flat screen TV on top of a wooden dresser.",  # the TV is on the dresser
        "A bowl holds soup with broccoli and other vegetables.",  # "other" points back
        "Bride and grooms arms cutting the wedding cake.",  # the pair modifies "arms"
        "A woman and her dog on a beach.",  # "her" points back
    ],
)
def test_conjunct_reorder_skips_pairs_it_cannot_move_safely(caption):
    assert texts(caption, "hard_positive", "conjunct_reorder") == []
