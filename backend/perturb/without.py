"""Having and lacking as a relation: "A bathroom with blue walls" -> "A bathroom without blue walls"
(SugarCrepe's replace_rel does this often: "with" -> "without", "full of" -> "empty of").

Only a "with" that hangs on a noun and names a thing the noun has, shows or carries ("a man with a
tennis racket", "a pizza with mushrooms"); not one after a verb ("covered with", "playing with a dog"),
where "without" is ungrammatical or says something else, nor one whose object is a body part, a garment, a
count or someone's ("a girl with long hair", "a girl with a green shirt", "a man with two dogs", "with his
cell phone", mostly an instrument), where the negative is absurd or half true.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import is_physical
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma

BODY_PARTS = frozenset({
    "hair", "eye", "face", "hand", "arm", "leg", "head", "mouth", "nose", "ear", "tail", "neck", "finger", "foot",
    "feet", "tooth", "teeth", "smile", "beard", "mustache", "body", "back", "horn", "trunk", "tusk", "wing",
    "beak", "paw", "mane", "spot", "stripe", "fur", "skin", "expression", "look", "dozen", "lot", "lots", "lap",
    "shoulder", "knee", "chest", "lip",
})
# Determiners after which "without" reads badly or half true ("without some food", "without many boats").
_VAGUE_DETERMINERS = frozenset({"some", "many", "several", "lots", "lot", "few", "all", "no", "any", "each"})
# Nouns that a "with" phrase often only situates ("a day with clouds", "a view with ..."): left alone.
SETTING_NOUNS = frozenset({
    "day", "night", "view", "picture", "photo", "image", "time", "shot", "scene", "closeup", "close",
})


# Participles of things laid on a noun, whose opposite is the noun without them.
LAID_ON = frozenset({"topped", "covered", "decorated", "loaded", "piled", "garnished", "sprinkled", "smothered"})


def _with_object(word: Token) -> Token | None:
    objects = [child for child in word.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
    return objects[0] if len(objects) == 1 else None


def plain_object(noun: Token) -> bool:
    """A thing whose absence a photo shows, named once ("a man with a tennis racket ... swing his racket"
    would contradict itself), and not worn ("a girl without a green shirt" is an absurd photo)."""
    lemma = noun_lemma(noun)
    if lemma in BODY_PARTS or not is_physical(lemma) or lexicon().is_worn(lemma):
        return False
    if sum(token.tag_ in NOUN_TAGS and noun_lemma(token) == lemma for token in noun.doc) > 1:
        return False
    return not any(
        child.dep_ in ("nummod", "poss") or (child.dep_ in ("det", "amod") and child.lower_ in _VAGUE_DETERMINERS)
        for child in noun.children
    )


def _ends_caption(noun: Token) -> bool:
    """The noun's phrase ends the caption and holds no verb: what follows a "topped with" list may belong to the
    owner ("A rack topped with glazed donuts sitting side by side"), and a thing done to the things in it makes
    the new caption hard to read ("without a white plate covered in three donuts")."""
    return (all(token.is_punct for token in noun.doc[noun.right_edge.i + 1 :])
            and not any(token.pos_ == "VERB" for token in noun.subtree))


def bare_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A table topped with apples, oranges and bananas" -> "A table without apples, ...", "a plate of scones
    covered with chocolate sauce" -> "... without chocolate sauce": a participle of laying things on a noun, with a
    plain first thing (`plain_object`, not counted), at the caption's end. Not snow where someone skis ("skiers
    glide down a hilly landscape without snow" is absurd)."""
    slots = []
    for verb in doc[:-1]:
        word = doc[verb.i + 1]
        if verb.lower_ not in LAID_ON or verb.dep_ != "acl" or word.lower_ not in ("with", "in") or word.head != verb:
            continue
        things = [child for child in word.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
        if not things or not plain_object(things[0]) or not _ends_caption(things[0]):
            continue
        if noun_lemma(things[0]) == "snow" and any(token.lemma_.lower().startswith("ski") for token in doc):
            continue
        slots.append((doc[verb.i : word.i + 1], ["without"]))
    return slots


def without_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each "with" that can become "without", with that word; things laid on a noun taken off (`bare_slots`)."""
    slots = bare_slots(doc)
    for word in doc:
        if word.lower_ != "with" or word.dep_ != "prep":
            continue
        owner, thing = word.head, _with_object(word)
        if owner.tag_ not in NOUN_TAGS or owner.lemma_.lower() in SETTING_NOUNS or thing is None:
            continue
        if owner.i > word.i or doc[word.i - 1].lower_ in ("along", "together", "filled", "covered"):
            continue
        if plain_object(thing):
            slots.append((doc[word.i : word.i + 1], ["without"]))
    return slots
