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
from backend.perturb.parse_reading import NOUN_TAGS, PLURAL_PRONOUNS, noun_lemma

BODY_PARTS = frozenset({
    "hair", "eye", "face", "hand", "arm", "leg", "head", "mouth", "nose", "ear", "tail", "neck", "finger", "foot",
    "feet", "tooth", "teeth", "smile", "beard", "mustache", "body", "back", "horn", "trunk", "tusk", "wing",
    "beak", "paw", "mane", "spot", "stripe", "fur", "skin", "expression", "look", "dozen", "lot", "lots", "lap",
    "shoulder", "knee", "chest", "lip",
})
# Determiners after which "without" reads badly or half true ("without some food", "without many boats").
_VAGUE_DETERMINERS = frozenset({"some", "many", "several", "lots", "lot", "few", "all", "no", "any", "each"})
# Those of them that "without" may drop: it then says the things are absent ("without skis").
_COUNTS_DROPPED = frozenset({"some", "many", "several"})
# Nouns that a "with" phrase often only situates ("a day with clouds", "a view with ..."): left alone.
SETTING_NOUNS = frozenset({
    "day", "night", "view", "picture", "photo", "image", "time", "shot", "scene", "closeup", "close",
})


# Participles of things laid on a noun, whose opposite is the noun without them.
LAID_ON = frozenset({"topped", "covered", "decorated", "loaded", "piled", "garnished", "sprinkled", "smothered"})


def _with_object(word: Token) -> Token | None:
    objects = [child for child in word.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
    return objects[0] if len(objects) == 1 else None


def plain_object(noun: Token, dropped: Token | None = None) -> bool:
    """A thing whose absence a photo shows, named once ("a man with a tennis racket ... swing his racket"
    would contradict itself), not worn ("a girl without a green shirt" is an absurd photo), and not counted or
    someone's ("without two dogs", "without his phone" are half true); `dropped` is a count the caller leaves
    out of the new caption (see `dropped_count`)."""
    lemma = noun_lemma(noun)
    if lemma in BODY_PARTS or not is_physical(lemma) or lexicon().is_worn(lemma):
        return False
    if sum(token.tag_ in NOUN_TAGS and noun_lemma(token) == lemma for token in noun.doc) > 1:
        return False
    return not any(
        child != dropped
        and (child.dep_ in ("nummod", "poss") or (child.dep_ in ("det", "amod") and child.lower_ in _VAGUE_DETERMINERS))
        for child in noun.children
    )


def dropped_count(word: Token, thing: Token) -> Token | None:
    """The count right after "with" (or "covered in", "filled with") that the negative leaves out: "a toilet with
    two sinks" -> "a toilet without sinks", "people with some skis" -> "people without skis" (a count of nothing
    reads as nonsense, and "without two sinks" is half true of a photo with one). Only before things named in the
    plural, or a mass noun after "some"; not before "different" ("without different clocks"), nor where "they" or
    "them" later points back to the things ("a bathroom without sinks with a light above them")."""
    doc = word.doc
    count = doc[word.i + 1] if word.i + 1 < len(doc) else None
    if count is None or count.head != thing or doc[count.i + 1].lower_ == "different":
        return None
    if any(token.lower_ in PLURAL_PRONOUNS for token in doc[thing.i + 1 :]):
        return None
    counted = count.dep_ == "nummod" and count.like_num and count.lower_ != "one"
    vague = count.dep_ in ("det", "amod") and count.lower_ in _COUNTS_DROPPED
    if thing.tag_ == "NNS" and (counted or vague):
        return count
    mass = thing.tag_ == "NN" and thing.lemma_.lower() in lexicon().mass_nouns
    return count if mass and count.lower_ == "some" else None


def _ends_caption(noun: Token) -> bool:
    """The noun's phrase ends the caption and holds no verb: what follows a "topped with" list may belong to the
    owner ("A rack topped with glazed donuts sitting side by side"), and a thing done to the things in it makes
    the new caption hard to read ("without a white plate covered in three donuts")."""
    return (all(token.is_punct for token in noun.doc[noun.right_edge.i + 1 :])
            and not any(token.pos_ == "VERB" for token in noun.subtree))


def bare_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A table topped with apples, oranges and bananas" -> "A table without apples, ...", "a plate of scones
    covered with chocolate sauce" -> "... without chocolate sauce": a participle of laying things on a noun, with
    a plain first thing (`plain_object`; a count left out: "a plate covered in three donuts" -> "a plate without
    donuts"), at the caption's end. Not snow where someone skis ("skiers
    glide down a hilly landscape without snow" is absurd)."""
    slots = []
    for verb in doc[:-1]:
        word = doc[verb.i + 1]
        if verb.lower_ not in LAID_ON or verb.dep_ != "acl" or word.lower_ not in ("with", "in"):
            continue
        thing = _with_object(word) if word.head == verb else None
        count = dropped_count(word, thing) if thing is not None else None
        if thing is None or not plain_object(thing, count) or not _ends_caption(thing):
            continue
        if noun_lemma(thing) == "snow" and any(token.lemma_.lower().startswith("ski") for token in doc):
            continue
        slots.append((doc[verb.i : (count or word).i + 1], ["without"]))
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
        count = dropped_count(word, thing)
        if plain_object(thing, count):
            slots.append((doc[word.i : (count or word).i + 1], ["without"]))
    return slots
