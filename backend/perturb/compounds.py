"""Compound nouns refilled whole, for REPLACE's and CE-CLIP's object negatives: "a pickup truck" -> "a car",
"The freight train is painted ..." -> "The tram is painted ...", "an end table" -> "a shelf" (SugarCrepe's
replace_obj refills such compounds: "A Fedex truck" -> "A school bus", "a city bus" -> "An ambulance").

`slots.object_slots` leaves a noun with a compound modifier alone: refilling the head alone keeps a modifier
that may not suit the refill ("a freight tram"). Refilling the whole compound drops the modifier, which is
right where it names a kind, brand or use of the head only. The refill keeps to the head's fit class
(`Slot.whole_compound`, `refill_fit.fits_slot`): the modifier often made the head a kind ("a wedding cake", "a
work desk") that free refills do not fit ("cutting the soup", "a chair complete with computers" were made).
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.count_checks import MANY
from backend.perturb.lexicon import NOUN, lexicon
from backend.perturb.nouns import INANIMATE_MARKERS, group_kind
from backend.perturb.parse_reading import in_fixed_phrase, noun_lemma
from backend.perturb.plausibility_parse import is_under
from backend.perturb.slots import Slot, clear_noun, taken

# Compounds that name no kind of their head (`_kind_compound`): heads that are mostly parts of something ("a car
# window", "a brick wall") or places the modifier grounds ("a dirt field", "a city street", "a basement
# bathroom"), modifiers that own the head ("a bus seat", "a church tower", "a horse trailer"), are a sport whose
# place or gear the head is ("a tennis court", "a baseball field"; WordNet), or make it a figure ("a toy car").
# Only a vehicle takes a brand ("a Fedex truck"); other names make a landmark ("the Eiffel tower").
PART_GROUPS = frozenset(["building part", "outdoor place", "room"])
OWNER_GROUPS = frozenset(["vehicle", "building", "animal"])
BRANDED_GROUPS = frozenset(["vehicle"])
SPORTS = frozenset(["sport.n.01"])
# Modifiers that place a part on its whole ("a side mirror", "a side car", "a rear window").
POSITIONS = frozenset("side rear back front top".split())
FIGURE_MARKERS = INANIMATE_MARKERS | frozenset(["model", "miniature", "cake", "lego", "replica"])


def compound_slots(doc: Doc) -> list[Slot]:
    """The caption's compounds that name a kind of their head, each a slot refilled whole."""
    _, _, covered = taken(doc)
    return [Slot(span, noun_lemma(span.root), NOUN, whole_compound=True) for span in _compound_spans(doc, covered)]


def _compound_spans(doc: Doc, covered: set[int]) -> list[Span]:
    """Whole compounds whose head the lexicon groups ("a pickup truck", "the freight train", "an end table"), to
    be refilled as one: the refill drops the modifier, which names a kind, brand or use of the old noun only
    ("a freight tram" would not be a thing). Compounds that do not name a kind of their head stay whole (see
    `_kind_compound`), and so do heads whose other words may belong to the modifier ("a two layer cake", "a low
    riding semi trailer truck" were garbled when refilled)."""
    spans = []
    for token in doc:
        modifiers = [child for child in token.children if child.dep_ == "compound"]
        if modifiers and clear_noun(token, covered) and _kind_compound(token, modifiers) and counted(token):
            spans.append(doc[modifiers[0].i : token.i + 1])
    return spans


def _kind_compound(head: Token, modifiers: list[Token]) -> bool:
    """`modifiers` are single words right before `head`, each naming a kind, brand or use of it: not a part of
    something ("a car window", "a brick wall"), a place ("a city street", "a skate park": the modifier says which
    ground), an owner ("a bus seat", "a horse trailer"), a sport whose gear the head is ("a tennis racquet"), a
    figure ("a toy car"), a colour ("orange shirts"), a position ("a side mirror"), a synonym ("a cell phone"),
    part of a set phrase ("old style"), a list spaCy misread
    ("sweaters shirts", "boys coat") or a landmark's name ("the Eiffel tower"; a brand names a vehicle: "a Fedex
    truck"); nor is the head a person."""
    group, lex = _head_group(noun_lemma(head)), lexicon()
    if group is None or group in PART_GROUPS or lex.is_person(noun_lemma(head)):
        return False
    if not lex.may_replace(" ".join([*(m.lower_ for m in modifiers), noun_lemma(head)]), noun_lemma(head)):
        return False  # a synonym of the head ("a cell phone"), refilled as the head would be
    contiguous = [m.i for m in modifiers] == list(range(head.i - len(modifiers), head.i))
    return contiguous and all(
        m.is_alpha and not list(m.children) and m.tag_ != "NNS" and m.lower_ not in FIGURE_MARKERS
        and not in_fixed_phrase(m, lexicon().fixed_phrases) and m.lower_ not in POSITIONS
        and (m.pos_ != "PROPN" or group in BRANDED_GROUPS) and not lexicon().is_attribute_word(m.lower_)
        and not is_under(noun_lemma(m), SPORTS) and _group_of_word(noun_lemma(m)) not in OWNER_GROUPS
        for m in modifiers)


def counted(head: Token) -> bool:
    """A plural head, or a singular one with a determiner, a possessive or a number: a bare singular compound
    is a place or a mass ("crosses home plate", "a box of cheese pizza") that a count noun cannot fill ("crosses
    bowl", "a box of sandwich" were made). A "no" before the compound is the start of its message ("an orange no
    parking sign" -> "an orange no poster" was judged garbled)."""
    determiners = [child.lower_ for child in head.children if child.dep_ in ("det", "poss", "nummod")]
    return "no" not in determiners and (head.tag_ == "NNS" or bool(determiners)) and _rest_fits(head)


def _rest_fits(head: Token) -> bool:
    """The head's words before the compound say what the refill may be too: an attribute the lexicon knows ("an
    older pickup truck" -> "an older car") or a loose count ("several sail boats"), no number above one on a
    singular head ("a two layer cake")."""
    for child in head.children:
        if child.i > head.i or child.dep_ in ("det", "poss", "compound", "predet") or child.lower_ in MANY:
            continue
        if child.dep_ == "nummod":
            if child.lower_ not in ("one", "1") and head.tag_ != "NNS":
                return False
        elif not lexicon().is_attribute_word(child.lemma_.lower()):
            return False
    return True


def _head_group(lemma: str) -> str | None:
    """The object group of a compound's head: its own, or that of the group word it is a kind of (`group_kind`:
    "An Air Force jet" is an airplane, so a vehicle that takes a brand)."""
    kind = group_kind(lemma)
    return _group_of_word(lemma if kind is None else kind)


def _group_of_word(word: str) -> str | None:
    """The lexicon object group that lists `word` itself, None when none does."""
    return next((name for name, words in lexicon().object_groups.items() if word in words), None)
