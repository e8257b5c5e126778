"""The caption grammar: syntax tree, parser and realiser.

Grammar (one caption; case, surrounding spaces and a final period are ignored)::

    caption  := np | np "and" np | np RELATION np | np LOCATION
    np       := ("a" | "an") [SIZE] [COLOUR] NOUN
    SIZE     := big | large | small | little
    COLOUR   := red | green | blue | yellow | purple | orange
    NOUN     := circle | square | triangle | cross | shape   ("shape": any)
    RELATION := [to the] left of | [to the] right of | above | over | below | under
    LOCATION := on the left | on the right | at the top | at the bottom

The tree keeps the surface words (``large``, ``left of``) so that synonym
substitutions are plain tree edits; ``SIZE_MEANING`` and friends map words to
meanings for the oracle. The parser is a small recursive descent over words
and raises ``CaptionParseError`` (a ``ValueError``) naming the offending
position, so unparseable text is never silently judged true or false.
"""
from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from .scene import COLOURS, SHAPES

SIZE_MEANING: dict[str, str] = {"big": "big", "large": "big", "small": "small", "little": "small"}
RELATION_MEANING: dict[str, str] = {
    "to the left of": "left", "left of": "left",
    "to the right of": "right", "right of": "right",
    "above": "above", "over": "above",
    "below": "below", "under": "below",
}
LOCATION_MEANING: dict[str, str] = {
    "on the left": "left", "on the right": "right", "at the top": "top", "at the bottom": "bottom",
}
WILDCARD_NOUN = "shape"
NOUNS: tuple[str, ...] = (*SHAPES, WILDCARD_NOUN)
ARTICLES: tuple[str, ...] = ("a", "an")
KINDS: tuple[str, ...] = ("object", "and", "relation", "location")


def words_for(meaning: str, table: dict[str, str]) -> list[str]:
    """All surface forms with the given meaning in a word table."""
    return [word for word, m in table.items() if m == meaning]


class CaptionParseError(ValueError):
    """The text is not a caption of the toy grammar."""


@dataclass(frozen=True)
class NounPhrase:
    """``a [size] [colour] noun``; ``shape`` None is the wildcard noun "shape"."""

    shape: str | None
    colour: str | None = None
    size: str | None = None  # surface word: big/large/small/little

    @property
    def size_meaning(self) -> str | None:
        """Canonical size (big/small) or None when unspecified."""
        return None if self.size is None else SIZE_MEANING[self.size]


@dataclass(frozen=True)
class Caption:
    """A parsed caption. ``relation``/``location`` hold surface phrases."""

    kind: str  # one of KINDS
    first: NounPhrase
    second: NounPhrase | None = None
    relation: str | None = None
    location: str | None = None

    @property
    def noun_phrases(self) -> tuple[NounPhrase, ...]:
        """The one or two noun phrases, in order."""
        return (self.first,) if self.second is None else (self.first, self.second)

    def with_phrases(self, first: NounPhrase, second: NounPhrase | None = None) -> Caption:
        """Same caption with its noun phrases replaced."""
        return replace(self, first=first, second=second)

    def swapped(self) -> Caption:
        """The caption with its two noun phrases exchanged (a "relation" or "and" caption has two)."""
        if self.second is None:
            raise ValueError(f"a {self.kind!r} caption has one noun phrase: nothing to swap")
        return replace(self, first=self.second, second=self.first)

    @property
    def relation_meaning(self) -> str:
        """What a "relation" caption's phrase means (left/right/above/below); the parser always sets one."""
        if self.relation is None:
            raise ValueError(f"a {self.kind!r} caption has no relation")
        return RELATION_MEANING[self.relation]

    @property
    def location_meaning(self) -> str:
        """Where a "location" caption puts its object (left/right/top/bottom); the parser always sets one."""
        if self.location is None:
            raise ValueError(f"a {self.kind!r} caption has no location")
        return LOCATION_MEANING[self.location]


def realise_np(np_: NounPhrase) -> str:
    """Text of a noun phrase, with the article agreeing with the next word."""
    words = [w for w in (np_.size, np_.colour, np_.shape or WILDCARD_NOUN) if w is not None]
    article = "an" if words[0][0] in "aeiou" else "a"
    return " ".join([article, *words])


def realise(caption: Caption) -> str:
    """Text of a caption (lower case, no final period)."""
    first = realise_np(caption.first)
    if caption.kind == "object":
        return first
    if caption.kind == "location":
        return f"{first} {caption.location}"
    assert caption.second is not None
    middle = "and" if caption.kind == "and" else caption.relation
    return f"{first} {middle} {realise_np(caption.second)}"


def tokenize_words(text: str) -> list[str]:
    """Lower-case words of a caption, dropping a final period and extra spaces."""
    return re.sub(r"[.!]+\s*$", "", text.strip()).lower().split()


class _Parser:
    """Recursive descent over the word list; ``pos`` is the next word."""

    def __init__(self, text: str):
        self.text = text
        self.words = tokenize_words(text)
        self.pos = 0

    def fail(self, expected: str) -> CaptionParseError:
        """An error naming what was expected and what was found at ``pos``."""
        found = self.words[self.pos] if self.pos < len(self.words) else "end of caption"
        return CaptionParseError(
            f"cannot parse {self.text!r}: expected {expected} at word {self.pos + 1}, found {found!r}")

    def take(self, options: Collection[str]) -> str | None:
        """Consume and return the next word if it is one of ``options``."""
        if self.pos < len(self.words) and self.words[self.pos] in options:
            self.pos += 1
            return self.words[self.pos - 1]
        return None

    def take_phrase(self, phrases: Collection[str]) -> str | None:
        """Consume the longest multi-word phrase among ``phrases`` that matches."""
        for phrase in sorted(phrases, key=lambda p: -len(p.split())):
            n = len(phrase.split())
            if " ".join(self.words[self.pos:self.pos + n]) == phrase:
                self.pos += n
                return phrase
        return None

    def noun_phrase(self) -> NounPhrase:
        """np := ("a" | "an") [SIZE] [COLOUR] NOUN"""
        if self.take(ARTICLES) is None:
            raise self.fail("'a' or 'an'")
        size = self.take(SIZE_MEANING)
        colour = self.take(COLOURS)
        noun = self.take(NOUNS)
        if noun is None:
            raise self.fail("a size, colour or noun" if size is None and colour is None else "a noun")
        return NounPhrase(shape=None if noun == WILDCARD_NOUN else noun, colour=colour, size=size)

    def caption(self) -> Caption:
        """caption := np | np "and" np | np RELATION np | np LOCATION, then end of text."""
        first = self.noun_phrase()
        if self.pos == len(self.words):
            return Caption("object", first)
        if self.take(("and",)):
            caption = Caption("and", first, self.noun_phrase())
        elif (location := self.take_phrase(LOCATION_MEANING)) is not None:
            caption = Caption("location", first, location=location)
        elif (relation := self.take_phrase(RELATION_MEANING)) is not None:
            caption = Caption("relation", first, self.noun_phrase(), relation=relation)
        else:
            raise self.fail("'and', a relation or a location")
        if self.pos != len(self.words):
            raise self.fail("end of caption")
        return caption


def parse(text: str) -> Caption:
    """Parse caption text; raise ``CaptionParseError`` if it is not in the grammar."""
    return _Parser(text).caption()
