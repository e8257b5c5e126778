"""Colour phrases that trade places or move (SugarCrepe's swap_att beyond single words).

`attributes.attribute_swaps` trades one visual word for another and leaves whole colour phrases alone ("black
and white", "blue and silver", "bright pink", "colorful"). SugarCrepe's swap_att moves them too, and so do
these two subtypes of `binding_swap`:

* "attribute_phrase": two nouns trade colour phrases, at least one of more than one word or "colorful" ("a red
  car next to parked blue and silver motorcycles" -> "a blue and silver car next to parked red motorcycles"),
  or a phrase of several colours trades with a word of another class under the single-word cross-class checks
  (`attributes.cross_tradeable`: "a small boat ... a red and yellow umbrella" -> "a red and yellow boat ... a
  small umbrella"). A split "multi colored" is one word, "multicolored";
* "attribute_move": a colour phrase leaves its noun for a bare thing of another kind ("a plate holding a
  sandwich on a blue mat" -> "a blue plate holding a sandwich on a mat"). Only chromatic colours move (not
  white, black, gray or brown, which a plate, a bench or a tile often is anyway, so the move would stay true),
  never onto food or plants (whose colour is their ripeness), a person, a place or a picture.

Every colour word must suit its new noun (`visual_classes.visual_values`: no "green cat", no "pink sky"), and
"colorful" goes only on things that are not natural (no "colorful sky", no "colorful grass").
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from backend.perturb.attributes import FAMILY, Attribute, cross_tradeable, same_object, visual_attributes
from backend.perturb.core import Edit, Request, Variant, build, moved, replacement, take_distinct
from backend.perturb.nouns import DEPICTION_NOUNS, animacy, is_describable, is_place, noun_key, noun_senses
from backend.perturb.object_swaps import kind
from backend.perturb.replace import FRAME_NOUNS
from backend.perturb.units import is_hyphenated, noun_unit
from backend.perturb.visual_classes import (
    MANY_COLOURS,
    NATURAL_COLOURS,
    USUALLY_COLOURED,
    VISUAL_CLASSES,
    visual_values,
)
from backend.perturb.without import BODY_PARTS

COLOUR_WORDS = frozenset(word for words in VISUAL_CLASSES["colour"].values() for word in words)
COLOURING_WORDS = COLOUR_WORDS | MANY_COLOURS  # one colour named, or many
SHADES = frozenset({"light", "dark", "bright", "pale", "deep"})
SPLIT_COLOURED = frozenset({"colored", "coloured"})  # "a multi colored table cloth"
NEUTRAL_COLOURS = frozenset({"white", "black", "gray", "grey", "silver", "brown", "tan", "beige"})
# Kinds whose colour is their nature or state: a "blue sandwich" or "pink tulips" is rejected on its face.
UNCOLOURED_KINDS = frozenset({"food", "plant"})
# WordNet senses of a compound's first word that give it a colour of its own ("fuchsia", "wine", "dog").
COLOURED_SENSES = frozenset({"noun.plant", "noun.food", "noun.attribute", "noun.animal", "noun.person"})


@dataclass(frozen=True)
class ColourPhrase:
    """Words before a noun that together state its colour: "black and white", "bright pink", "red"."""

    words: Span
    noun: Token

    @property
    def colours(self) -> tuple[str, ...]:
        """The colour words, a split "multi colored" read as "multicolored"."""
        return tuple("multicolored" if _split_many(word) else word.lower_ for word in self.words
                     if word.lower_ in COLOURING_WORDS or _split_many(word))

    @property
    def values(self) -> frozenset[str]:
        """The colours stated, "colorful" and "multicolored" as one."""
        return frozenset("many" if colour in MANY_COLOURS else colour for colour in self.colours)

    @property
    def is_phrase(self) -> bool:
        return len(self.words) > 1 or any(word.lower_ in MANY_COLOURS for word in self.words)


def _colour_word(token: Token) -> bool:
    return (token.lower_ in COLOURING_WORDS and not is_hyphenated(token)) or _split_many(token)


def _split_many(token: Token) -> bool:
    """"multi" of a "multi colored" written as two words, or that "colored": one word, "multicolored"."""
    doc, i = token.doc, token.i
    if token.lower_ == "multi":
        return i + 1 < len(doc) and doc[i + 1].lower_ in SPLIT_COLOURED
    return token.lower_ in SPLIT_COLOURED and i > 0 and doc[i - 1].lower_ == "multi"


def _head_after(doc: Doc, end: int) -> Token | None:
    """The noun a run of colour words ending before `end` describes: the next noun, through a compound
    ("blue and silver motorcycles", "a multi colored table cloth")."""
    index = end
    while index < len(doc) and doc[index].dep_ == "compound" and doc[index].pos_ == "NOUN":
        index += 1
    if index >= len(doc) or doc[index].pos_ != "NOUN" or doc[index].tag_ not in ("NN", "NNS"):
        return None
    return doc[index]


def colour_phrases(doc: Doc) -> list[ColourPhrase]:
    """Runs of colour words (with "and" and shade words) right before a noun that carries no other colour."""
    found, index = [], 0
    while index < len(doc):
        start = index
        while index < len(doc) and (_colour_word(doc[index]) or doc[index].lower_ in SHADES | {"and"}):
            index += 1
        run = doc[start:index]
        index = max(index, start + 1)
        while len(run) and run[0].lower_ == "and":
            run = run[1:]
        if not len(run) or not _colour_word(run[-1]):
            continue
        noun = _head_after(doc, run.end)
        if noun is None or not is_describable(noun) or noun_key(noun) in DEPICTION_NOUNS | FRAME_NOUNS:
            continue
        before = doc[noun.left_edge.i : run.start]
        if any(_colour_word(word) for word in before) or not all(word.head.i in range(run.start, noun.i + 1)
                                                                 for word in run):
            continue
        found.append(ColourPhrase(run, noun))
    return found


def suits(colours: tuple[str, ...], noun: Token) -> bool:
    """Every colour word could describe `noun` (its animacy, its natural palette)."""
    living, key = animacy(noun), noun_key(noun)
    lemma = key if key in NATURAL_COLOURS else noun.lemma_.lower()  # a "stop sign" is red
    for colour in colours:
        if colour in MANY_COLOURS:
            if living is not None or lemma in NATURAL_COLOURS or kind(noun) in UNCOLOURED_KINDS:
                return False
        elif "colour" not in visual_values(colour, living, lemma):
            return False
    return True


def _tradeable(first: ColourPhrase, second: ColourPhrase) -> bool:
    return ((first.is_phrase or second.is_phrase) and first.noun.i != second.noun.i
            and first.values != second.values and not same_object(first.noun, second.noun)
            and suits(first.colours, second.noun) and suits(second.colours, first.noun))


def _plain_part(word: Token, unit: Span) -> bool:
    """A lower-case noun inside a compound, with nothing of its own outside it: "work" in "a work truck", not
    "Apple" in "an Apple store", "stone" in "a stone wall" (a material), "orange" or "fuchsia" read as a noun,
    nor a thing that has a colour of its own ("a red flower pot", "a brown dog bed", "a red wine glass": whose
    colour is it?). WordNet's senses find the colours and the living or eaten things the lists lack."""
    lexnames = {sense.lexname() for sense in noun_senses(word.lemma_.lower())}
    return (word.pos_ == "NOUN" and word.text == word.lower_ and not is_hyphenated(word)
            and not visual_values(word.lower_, None) and animacy(word) is None and kind(word) not in UNCOLOURED_KINDS
            and not lexnames & COLOURED_SENSES
            and all(child.i in range(unit.start, unit.end) for child in word.children))


def _bare_thing(noun: Token) -> Span | None:
    """The whole noun ("a work truck", "a watering can") of a thing named with no modifier but a determiner or a
    number: where a colour can go. Not a thing of one typical colour ("a stop sign", `NATURAL_COLOURS`) or of a
    usual one ("a fire hydrant", `USUALLY_COLOURED`): a colour moved onto it would be absurd or may stay true."""
    if not (noun.tag_ in ("NN", "NNS") and noun.dep_ != "compound" and is_describable(noun)
            and animacy(noun) is None and kind(noun) not in UNCOLOURED_KINDS | {None} and not is_place(noun)
            and noun_key(noun) not in DEPICTION_NOUNS | FRAME_NOUNS
            and not {noun_key(noun), noun.lemma_.lower()} & (NATURAL_COLOURS.keys() | USUALLY_COLOURED)
            and not is_hyphenated(noun)):
        return None
    unit = noun_unit(noun)  # after the cheap tests: it looks for listed multi-word nouns
    if unit is None or not all(_plain_part(word, unit) for word in unit[:-1]):
        return None
    modifiers = [child for child in noun.children if child.i < unit.start and child.dep_ not in ("det", "nummod")]
    return None if modifiers else unit


def _leaves_a_phrase(noun: Token) -> bool:
    """Without its colour the noun still reads as a phrase: it has a determiner, a number or a possessive, is
    plural, or opens the caption ("a man in red shirt" -> "a man in shirt" does not). Not a room or a place,
    whose colour is its walls' ("a blue bathroom" -> "a blue shower" may stay true)."""
    introduced = any(child.dep_ in ("det", "nummod", "poss") for child in noun.children)
    return (introduced or noun.tag_ == "NNS" or noun.left_edge.i == 0) and not is_place(noun)


def _movable(phrase: ColourPhrase, target: Span) -> bool:
    """A chromatic colour (never "colorful": "a colorful plate of food" may describe the food) to a bare thing
    of another kind with no "of" after it ("a red vase of flowers" reads as the flowers' colour too); never off
    a part of a body ("a cat with green eyes" -> "a cat with eyes")."""
    if (set(phrase.colours) & (NEUTRAL_COLOURS | MANY_COLOURS) or not _leaves_a_phrase(phrase.noun)
            or phrase.noun.lemma_.lower() in BODY_PARTS):
        return False
    noun = target[-1]
    if any(child.dep_ == "prep" and child.lower_ == "of" for child in noun.children):
        return False
    return (phrase.noun.i != noun.i
            and not same_object(phrase.noun, noun) and kind(phrase.noun) != kind(noun)
            and suits(phrase.colours, noun))


def _move(request: Request, phrase: ColourPhrase, target: Span) -> list[Edit]:
    """Take the phrase (and the space after it) off its noun and put it before the noun `target` ("a work
    truck" -> "an orange work truck"). The first edit runs on to the word after the phrase, so "an orange car"
    loses its "n" with the colour."""
    doc = request.doc
    after_phrase = doc[phrase.words.end]
    taken = replacement(request, doc[phrase.words.start : after_phrase.i + 1], after_phrase.text)
    colour = request.text[phrase.words.start_char : phrase.words.end_char].lower()
    first = target[0]
    return [taken, replacement(request, doc[first.i : first.i + 1], f"{colour} {first.text}")]


def _as_attribute(phrase: ColourPhrase) -> Attribute | None:
    """The phrase as one colour attribute of its noun, named by its last word, so that the single-word
    cross-class checks (`attributes.cross_tradeable`) judge it."""
    last = phrase.words[-1]
    values = visual_values(last.lower_, animacy(phrase.noun), phrase.noun.lemma_.lower())
    return Attribute(last, phrase.noun, (("colour", values["colour"]),)) if "colour" in values else None


def _cross_tradeable(phrase: ColourPhrase, other: Attribute) -> bool:
    """A phrase of several colours and a word of another class on a thing of another kind, each fitting the
    other noun ("a small boat ... a red and yellow umbrella" -> "a red and yellow boat ... a small umbrella")."""
    mine = _as_attribute(phrase)
    return (mine is not None and other.word.i not in range(phrase.words.start, phrase.words.end)
            and not same_object(phrase.noun, other.noun) and cross_tradeable(mine, other)
            and suits(phrase.colours, other.noun))


def _phrase_pairs(doc: Doc) -> list[tuple[Span, Span]]:
    """Spans that trade places: two colour phrases, or a phrase of several colours and a word of another
    class."""
    phrases = colour_phrases(doc)
    pairs = [(a.words, b.words) for a, b in itertools.combinations(phrases, 2) if _tradeable(a, b)]
    attributes = [a for a in visual_attributes(doc) if "colour" not in a.by_class]
    return pairs + [(phrase.words, other.span) for phrase in phrases if phrase.is_phrase
                    for other in attributes if _cross_tradeable(phrase, other)]


def _phrase_swaps(request: Request) -> Iterator[Variant]:
    pairs = _phrase_pairs(request.doc)
    request.rng.shuffle(pairs)
    return take_distinct(request, (build(request, [moved(request, b, a), moved(request, a, b)],
                                         FAMILY, "attribute_phrase") for a, b in pairs))


def _moves(request: Request) -> Iterator[Variant]:
    phrases = colour_phrases(request.doc)
    targets = [unit for unit in map(_bare_thing, request.doc) if unit is not None]
    pairs = [(phrase, target) for phrase in phrases for target in targets if _movable(phrase, target)]
    request.rng.shuffle(pairs)
    return take_distinct(request, (build(request, _move(request, phrase, target), FAMILY, "attribute_move")
                                   for phrase, target in pairs))


def colour_phrase_swaps(request: Request) -> list[Variant]:
    return list(_phrase_swaps(request))


def colour_moves(request: Request) -> list[Variant]:
    return list(_moves(request))
