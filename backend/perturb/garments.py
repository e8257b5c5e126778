"""Wearing and holding a garment, as a relation: "A man in a red shirt standing next to a car" -> "A man holding
a red shirt standing next to a car" (SugarCrepe's replace_rel changes how a thing relates to a person, and the
lexicon's action groups already turn "wearing a hat" into "holding a hat"; "in a red shirt" says the same
wearing without a verb, so the word slots leave it alone).

Only one garment named with "a" ("in shorts and a long sleeve shirt" would need both held), worn by a person who
does nothing with their hands: "Women in fancy hats serving cakes" -> "holding fancy hats serving cakes" asks
for a third hand, so a person with any act beyond standing, sitting, posing or looking keeps the garment on.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma, verb_lemma
from backend.perturb.wearing import actor, wearer

# What a person can do holding a garment in their hands.
HANDS_FREE = frozenset({
    "stand", "sit", "pose", "smile", "wait", "walk", "look", "lean", "be", "talk", "laugh", "stare", "gaze",
    "watch", "lie", "lay", "rest", "stroll", "chat",
})
HOLDING = "holding"


def _one_garment(word: Token) -> Token | None:
    """The single garment "in" names: one noun with "a"/"an", no other garment joined to it."""
    objects = [child for child in word.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
    if len(objects) != 1 or not lexicon().is_worn(noun_lemma(objects[0])):
        return None
    garment, doc = objects[0], word.doc
    single = any(child.dep_ == "det" and child.lower_ in ("a", "an") for child in garment.children)
    joined = any(child.dep_ == "conj" for child in garment.children) or (
        garment.i + 1 < len(doc) and doc[garment.i + 1].lower_ in ("and", ",", "&"))  # "a jacket and hat"
    return garment if single and not joined else None


def _doer_of(verb: Token) -> Token | None:
    """Who does `verb`, past a garment spaCy hung a participle on ("a man in a shirt standing")."""
    return wearer(verb.head) if verb.dep_ == "acl" and verb.head.tag_ in NOUN_TAGS else actor(verb)


def _hands_free(person: Token) -> bool:
    """No act of this person, nor of no one the parse can name ("is about to catch a frisbee"), but standing,
    sitting, posing, looking and the like."""
    doers = {verb: _doer_of(verb) for verb in person.doc if verb.pos_ == "VERB"}
    acts = [verb for verb, doer in doers.items() if doer is None or doer.i == person.i]
    if any(child.lower_ == "on" for child in person.children):
        return False  # "a person in a snow suit on a pair of skis": riding or standing on gear
    return all(verb_lemma(verb) in HANDS_FREE for verb in acts)


def held_garment_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"in a <garment>" on a person whose hands are free -> "holding a <garment>"."""
    slots = []
    for word in doc:
        if word.lower_ != "in" or word.dep_ != "prep" or word.head.tag_ not in NOUN_TAGS:
            continue
        person = word.head
        if _one_garment(word) is not None and lexicon().is_person(noun_lemma(person)) and _hands_free(person):
            slots.append((doc[word.i : word.i + 1], [HOLDING]))
    return slots
