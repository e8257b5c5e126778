"""Where things are, said as a state rather than an act, and the opposite state, replaced whole as a relation
phrase: things "next to each other" set "far from each other", bodies that "stand together" set "far apart", a
thing "filled with" others "empty of" them, things "on display" "packed in boxes", and a toilet seat "up" set
"down" (SugarCrepe: "filled with" -> "empty of", "is on display" -> "is hidden in a cabinet", "is up" -> "is
down"). `verb_phrases.verb_phrase_slots` offers them with its acts.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.parse_reading import NOUN_TAGS, content_noun, noun_lemma, subject_of, verb_lemma
from backend.perturb.without import dropped_count

# Words after which "each other" is close by, and the phrase that says they are apart.
_TOGETHER = (("next", "to"), ("near",), ("beside",), ("close", "to"))
_APART = "far from"
# Verbs of where bodies are, after which "together" says they are close ("zebras stand together"); not verbs that
# are themselves a coming together ("huddled far apart", "gathered far apart").
_PLACED = frozenset({"sit", "stand", "lie", "lay", "walk", "graze", "rest", "wait"})
_QUANTIFIERS = frozenset({"more", "many", "some", "several", "few", "much", "all", "various", "numerous"})
# Words that count what fills a thing: "empty of lots of traffic" reads badly.
_AMOUNTS = frozenset({"lot", "lots", "plenty", "bunch", "variety", "assortment", "number", "pile", "ton", "tons"})


def apart_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"next to each other", "near one another" -> "far from each other"."""
    words, slots = [token.lower_ for token in doc], []
    for i in range(len(doc)):
        for near in _TOGETHER:
            end = i + len(near)
            if tuple(words[i:end]) == near and tuple(words[end : end + 2]) in (("each", "other"), ("one", "another")):
                slots.append((doc[i:end], [_APART]))
    return slots


def spread_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"Zebras stand together" -> "Zebras stand far apart", with the adverb that said how close ("sitting closely
    together"), where the verb (`_PLACED`) says where bodies are."""
    slots = []
    for word in doc:
        if word.lower_ != "together" or word.head.pos_ != "VERB" or verb_lemma(word.head) not in _PLACED:
            continue
        start = word.i - 1 if word.i > 0 and doc[word.i - 1].lower_ in ("closely", "close") else word.i
        slots.append((doc[start : word.i + 1], ["far apart"]))
    return slots


def _counted(noun: Token) -> bool:
    """"lots of traffic", "two apples", "even more flowers", "some food": an amount is said of the noun."""
    return noun_lemma(noun) in _AMOUNTS or any(
        child.dep_ == "nummod" or child.lower_ in _QUANTIFIERS for child in noun.children)


def _one_filling(noun: Token) -> bool:
    """"filled with a soup": one thing named with "a" is a portion, and "empty of a soup" reads wrong."""
    return any(child.dep_ == "det" and child.lower_ in ("a", "an") for child in noun.children)


def emptied_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A plate filled with marshmallows" -> "A plate empty of marshmallows": the participle on a noun only,
    whose filling is named without counting it, or with a count that "empty of" leaves out ("a room filled with
    two beds" -> "a room empty of beds", `without.dropped_count`)."""
    slots = []
    for verb in doc[:-1]:
        word = doc[verb.i + 1]
        if verb.lower_ != "filled" or verb.dep_ != "acl" or word.lower_ != "with" or word.head.i != verb.i:
            continue
        fillings = [child for child in word.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
        if not fillings or _one_filling(fillings[0]):
            continue
        count = dropped_count(word, fillings[0])
        if count is not None or not _counted(fillings[0]):
            slots.append((doc[verb.i : (count or word).i + 1], ["empty of"]))
    return slots


def _one_thing(noun: Token) -> bool:
    """"A brand new motorcycle", not "furniture", "a bunch of cakes" or "a bear and mouse": one box holds it."""
    noun = content_noun(noun)
    return (noun.tag_ == "NN" and not any(child.dep_ == "conj" for child in noun.children)
            and any(child.dep_ == "det" and child.lower_ in ("a", "an", "the", "this") for child in noun.children))


def stored_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Things shown off, and the same things put away, which a photo tells apart: "A group of motorcycles are on
    display" -> "... are packed in boxes" (SugarCrepe: "is on display" ->
    "is hidden in a cabinet"): only after the thing itself or a form of "be", where the new phrase reads as its
    state ("parked packed in boxes", "put packed in boxes" would not)."""
    slots = []
    for on in doc[1:-1]:
        before, display = doc[on.i - 1], doc[on.i + 1]
        if on.lower_ != "on" or display.lower_ != "display":
            continue
        thing = before if before.tag_ in NOUN_TAGS else subject_of(before) if before.lemma_ == "be" else None
        second_place = on.i + 2 < len(doc) and doc[on.i + 2].lower_ in ("on", "in", "inside")
        if thing is not None and not second_place:  # "packed in a box on a plate" was judged absurd
            slots.append((doc[on.i : on.i + 2], ["packed in a box" if _one_thing(thing) else "packed in boxes"]))
    return slots


# A toilet's seat or lid and the state it is left in, which a photo shows: "The lid is up on the toilet bowl" ->
# "The lid is down" (SugarCrepe: "is up" -> "is down"). Open and shut only for a lid.
_LEFT_STATES = {"up": "down", "down": "up"}
_LID_STATES = {"open": "closed", "closed": "open"}
_TOILET_COVERS = frozenset({"seat", "lid"})


def _cover_before(word: Token) -> Token | None:
    """The seat or lid right before `word` ("the seat up"), or before a form of "be" before it ("the lid is up")."""
    doc = word.doc
    before = doc[word.i - 1] if word.i > 0 else None
    if before is not None and before.lemma_ == "be" and word.i > 1:
        before = doc[word.i - 2]
    return before if before is not None and noun_lemma(before) in _TOILET_COVERS else None


def cover_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A toilet seat or lid up <-> down ("A white toilet with the seat up" -> "with the seat down"), a lid open <->
    closed; only where a toilet is named, and not a particle of an act ("lifts the lid up" is no state)."""
    if not any(noun_lemma(token) == "toilet" for token in doc if token.tag_ in NOUN_TAGS):
        return []
    slots = []
    for word in doc[1:]:
        cover = _cover_before(word)
        if cover is None or (word.dep_ == "prt" and word.head.lemma_ != "be"):
            continue
        states = _LEFT_STATES | (_LID_STATES if noun_lemma(cover) == "lid" else {})
        if word.lower_ in states:
            slots.append((doc[word.i : word.i + 1], [states[word.lower_]]))
    return slots
