"""Any adjectives traded between two things of one kind (SugarCrepe's swap_att beyond the visual table).

"A green chair is next to a long bench" -> "A long chair is next to a green bench"; "A skillet contains diced
meat and mixed vegetables" -> "... mixed meat and diced vegetables". `attributes.attribute_swaps` trades only
words of the curated visual table; SugarCrepe's swap_att trades any adjective. Between two things of one
curated kind (`object_swaps.kind`: two pieces of furniture, two dishes, two vehicles, two animals) an
adjective that suits one suits the other, so the swap stays a scene a photo could show:

* each noun carries exactly one adjective before it (with two, which one moves is a guess), a whole word
  (`units.is_whole_adjective`: not "light blue", not "red and white") that is no count or vague word ("several",
  "other") and not part of a name ("hot dog", "polar bear");
* never people (a "pregnant man"), never two nouns of one kind of object ("a black goat and a white goat");
* a colour or size must suit its new noun (`visual_classes.visual_values`: no "green cat"; no colour for food
  or plants, `colour_phrases.UNCOLOURED_KINDS`), and no other word
  of the visual table moves here (`attributes` decides where a material may go: no "wooden microwave");
* the adjective stands alone right before its noun and is no "-ing" word ("stir fry vegetables", "white
  steamed rice", "a serving tray").
"""
from __future__ import annotations

import itertools

from spacy.tokens import Token

from backend.perturb.attributes import FAMILY, same_object
from backend.perturb.colour_phrases import UNCOLOURED_KINDS
from backend.perturb.core import Request, Variant, build, swapped, take_distinct
from backend.perturb.count_checks import MANY, NUMBER_WORDS
from backend.perturb.lexicon import lexicon, wordnet
from backend.perturb.nlp import token_span
from backend.perturb.nouns import animacy, is_describable
from backend.perturb.object_swaps import VAGUE_WORDS, kind
from backend.perturb.parse_reading import in_fixed_phrase
from backend.perturb.units import is_whole_adjective
from backend.perturb.visual_classes import visual_values

SUBTYPE = "kind_attribute"


def _adjective(noun: Token) -> Token | None:
    """The noun's one attributive adjective, when it is a plain describing word."""
    modifiers = [child for child in noun.children if child.dep_ == "amod" and child.i < noun.i]
    if len(modifiers) != 1 or any(child.dep_ == "compound" for child in noun.children):
        return None
    word = modifiers[0]
    before = noun.doc[word.i - 1] if word.i else None
    if word.i != noun.i - 1 or word.lower_.endswith("ing") or list(word.children):
        return None  # "a serving tray": part of a name, not a description
    governed = before is not None and before.pos_ == "VERB" and before.i == noun.head.i  # "contains diced meat"
    if before is not None and before.pos_ in ("NOUN", "PROPN", "ADJ", "VERB") and not governed:
        return None  # "stir fry vegetables", "white steamed rice": the word is not alone
    if word.tag_ not in ("JJ", "VBN") or not word.is_alpha or not is_whole_adjective(word):
        return None
    known = wordnet().synsets(word.lower_, pos="a") + wordnet().synsets(word.lower_, pos="s")
    if word.tag_ == "JJ" and not known and not word.lower_.endswith("ed"):
        return None  # "a tub boat": a noun spaCy took for an adjective
    if word.lower_ in VAGUE_WORDS | MANY | NUMBER_WORDS or in_fixed_phrase(word, lexicon().fixed_phrases):
        return None
    return word


def _suits(word: Token, noun: Token) -> bool:
    """A colour or size must suit the new noun, and no material moves (`attributes` decides those: "a wooden
    microwave"); any other word is taken to suit a thing of the same kind."""
    classes = visual_values(word.lower_, None)
    if not classes:
        return True
    if "colour" in classes and kind(noun) in UNCOLOURED_KINDS:
        return False  # "green flowers", "a blue sandwich": their colour is their nature
    return set(classes) <= {"colour", "size"} and bool(visual_values(word.lower_, animacy(noun), noun.lemma_.lower()))


def _tradeable(first: Token, second: Token) -> bool:
    found = kind(first)
    if found is None or found == "person" or found != kind(second) or same_object(first, second):
        return False
    a, b = _adjective(first), _adjective(second)
    return (a is not None and b is not None and a.lower_ != b.lower_ and _suits(a, second) and _suits(b, first))


def kind_attribute_swaps(request: Request) -> list[Variant]:
    nouns = [token for token in request.doc if token.tag_ in ("NN", "NNS") and is_describable(token)]
    pairs = [(_adjective(a), _adjective(b)) for a, b in itertools.combinations(nouns, 2) if _tradeable(a, b)]
    request.rng.shuffle(pairs)
    variants = (build(request, swapped(request, token_span(a), token_span(b)), FAMILY, SUBTYPE)
                for a, b in pairs if a is not None and b is not None)
    return list(take_distinct(request, variants))
