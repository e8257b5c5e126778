"""How many: numbers and group words as replaceable attributes (SugarCrepe's replace_att changes them:
"Three men are skiing" -> "Two men are skiing", "A herd of elephants" -> "A solitary elephant").

A number bound to a plural noun becomes its neighbour ("three" -> "two" or "four", "2" -> "3"), so the
noun and its verb stay plural. A group word ("a herd of", "a group of", "several", "many") becomes "two":
a photo of a herd does not show two elephants. Left alone: "one" and "a" (the noun and its verb would
have to turn plural), ages and measures ("two years old", "5 minutes"), ranges ("two or three"), and
captions that restate the number elsewhere ("both", "a pair", "twins"), which would then contradict it.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.count_checks import MANY, NUMBERS

NUMBER = "NUM"
WORD_NUMBERS = tuple(word for word, value in NUMBERS.items() if 2 <= value <= 10)  # "two" ... "ten"
_VALUES = {word: value for value, word in enumerate(WORD_NUMBERS, 2)}
# Group words that count a plural noun loosely; each becomes "two". "couple" and "pair" are left alone:
# they already say two.
GROUP_NOUNS = frozenset({
    "group", "herd", "flock", "bunch", "crowd", "pack", "team", "fleet", "row", "line", "trio", "assortment",
    "collection", "lot", "variety", "pile", "stack",
})
# Nouns a number measures rather than counts, and words that restate a count.
MEASURES = frozenset({
    "year", "month", "week", "day", "hour", "minute", "second", "time", "inch", "foot", "feet", "mile", "meter",
    "percent", "dollar", "cent", "degree", "pound", "ounce", "story", "storey", "way", "o'clock", "am", "pm",
})
RESTATING_WORDS = frozenset({"both", "pair", "pairs", "twin", "twins", "couple", "duo", "either", "neither"})
INVARIANT_PLURALS = frozenset({"sheep", "deer", "fish", "moose", "bison", "cattle", "elk", "people"})
_RANGE_WORDS = frozenset({"or", "to", "-", "and", "/"})


def _counted_plural(noun: Token) -> bool:
    """A countable noun in the plural: "men", "zebras", "sheep" after a group word."""
    lemma = noun.lemma_.lower()
    if lemma in MEASURES or noun.lower_ in MEASURES:
        return False
    misread = noun.tag_ == "NNP" and noun.lower_.endswith("s") and not noun.lower_.endswith("ss")  # "zebras"
    return noun.tag_ in ("NNS", "NNPS") or misread or noun.lower_ in INVARIANT_PLURALS


def _value(token: Token) -> int | None:
    word = token.lower_
    if word in _VALUES:
        return _VALUES[word]
    return int(word) if word.isdigit() and 2 <= int(word) <= 20 and not token.text.startswith("0") else None


def _in_range(token: Token) -> bool:
    """"two or three", "2-3", "five to ten": a range, not one count."""
    doc = token.doc
    neighbours = [doc[i] for i in (token.i - 2, token.i - 1, token.i + 1, token.i + 2) if 0 <= i < len(doc)]
    near = [word for word in neighbours if abs(word.i - token.i) == 1]
    return any(word.lower_ in _RANGE_WORDS for word in near) and any(_value(word) for word in neighbours)


def _number_slots(doc: Doc) -> list[tuple[Span, int]]:
    found = []
    for token in doc:
        value = _value(token)
        if value is None or token.dep_ != "nummod" or _in_range(token):
            continue
        if token.head.i > token.i and _counted_plural(token.head):
            found.append((doc[token.i : token.i + 1], value))
    return found


def _group_span(token: Token) -> Span | None:
    """"A large group of" or "several" in front of the plural noun it counts, with nothing but
    adjectives between the determiner and the group word."""
    doc = token.doc
    if token.lower_ in MANY and token.head.i > token.i and _counted_plural(token.head):
        return doc[token.i : token.i + 1]
    if token.lemma_.lower() not in GROUP_NOUNS or token.tag_ != "NN":
        return None
    after = token.i + 1
    if after + 1 >= len(doc) or doc[after].lower_ != "of":
        return None
    counted = _counted_after(doc, after + 1)
    if counted is None or not _counted_plural(counted) or _sings_for(token):
        return None
    start = token.i
    while start > 0 and doc[start - 1].dep_ == "amod" and doc[start - 1].head == token:
        start -= 1
    if start == 0 or doc[start - 1].lower_ not in ("a", "an"):
        return None
    if start > 1 and doc[start - 2].lower_ in ("is", "'s", "was"):  # "There is a group of sheep": "is two sheep"
        return None
    return doc[start - 1 : after + 1]


def _counted_after(doc: Doc, start: int) -> Token | None:
    """The noun after "of", past its adjectives and noun modifiers ("of young men", "of tennis players")."""
    for token in doc[start : start + 4]:
        if token.pos_ in ("NOUN", "PROPN") and (token.i + 1 == len(doc) or doc[token.i + 1].pos_ not in ("NOUN",)):
            return token
        if token.pos_ not in ("ADJ", "NOUN", "PROPN"):
            return None
    return None


def _sings_for(group: Token) -> bool:
    """A singular verb agrees with the group ("A group of zebras is standing"): "two" would break it."""
    verb = group.head
    if group.dep_ not in ("nsubj", "nsubjpass"):
        return False
    return verb.tag_ == "VBZ" or any(child.tag_ == "VBZ" or child.lower_ in ("was", "has")
                                     for child in verb.children if child.dep_ in ("aux", "auxpass"))


def count_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each number or group word with the counts that would replace it, best first."""
    if any(token.lower_ in RESTATING_WORDS for token in doc):
        return []
    slots = []
    for span, value in _number_slots(doc):
        numbers = [n for n in (value + 1, value - 1) if n >= 2]
        digits = span[0].lower_.isdigit()
        words = [str(n) if digits else WORD_NUMBERS[n - 2] for n in numbers if digits or n <= 10]
        slots.append((span, words))
    for token in doc:
        group = _group_span(token)
        if group is not None:
            slots.append((group, ["two"]))
    return sorted(slots, key=lambda slot: slot[0].start)
