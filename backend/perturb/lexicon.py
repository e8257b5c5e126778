"""Word relations for perturbations: the curated lexicon first, WordNet second.

The curated `lexicon.json` decides for every word it knows, so results do not
depend on whether WordNet happens to be installed. WordNet (read through
NLTK, never downloaded) only adds co-hyponyms and antonyms for words the
lexicon lacks, and vetoes replacements that share a synset with the
original word: a synonym would make a "negative" that is still true.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEXICON_PATH = Path(__file__).with_name("lexicon.json")

# Coarse parts of speech used across the package; "SPATIAL" is a spatial
# relation phrase such as "on top of".
NOUN, ADJ, VERB, SPATIAL = "NOUN", "ADJ", "VERB", "SPATIAL"
_WORDNET_POS = {NOUN: "n", ADJ: "a", VERB: "v"}
_PLAIN_LEMMA = re.compile(r"[a-z]+(?:[_-][a-z]+)*")
_SINGLE_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
# WordNet noun classes of things a picture can show; others ("scene",
# "glide") have sisters that no image could tell apart.
_VISIBLE_NOUN_CLASSES = frozenset({
    "noun.animal", "noun.artifact", "noun.body", "noun.food", "noun.object", "noun.person", "noun.plant",
    "noun.substance",
})
# A parent with more children than this is too broad for its children to be
# look-alikes ("structure" spans fountains, bridges and storeys).
_MAX_SISTERS = 40


@dataclass(frozen=True)
class SynonymRule:
    """One hand-checked, meaning-preserving replacement (a hard positive)."""

    word: str
    synonym: str
    match: str  # "lemma": inflect like the matched token; "form": exact words
    pos: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    when: tuple[str, ...] = ()  # names of conditions in positives.CONDITIONS
    source: str = ""


def _unique(words: list[str]) -> list[str]:
    return list(dict.fromkeys(words))


def _pair_index(pairs: list[list[str]]) -> dict[str, list[str]]:
    """Symmetric lookup from a list of word pairs: each word -> its partners."""
    index: dict[str, list[str]] = {}
    for a, b in pairs:
        index.setdefault(a, []).append(b)
        index.setdefault(b, []).append(a)
    return index


class Lexicon:
    """Indexed view of `lexicon.json`."""

    def __init__(self, data: dict[str, Any]):
        self.groups: dict[str, list[list[str]]] = {
            NOUN: list(data["objects"].values()),
            ADJ: list(data["attributes"].values()),
            VERB: list(data["actions"].values()),
        }
        self.opposites = {
            ADJ: _pair_index(data["attribute_opposites"]),
            VERB: _pair_index(data["action_opposites"]),
            SPATIAL: _pair_index(data["spatial_opposites"]),
        }
        self.spatial_converses: dict[str, str] = {
            word: partners[0] for word, partners in _pair_index(data["spatial_converses"]).items()
        }
        self.symmetric_relations = frozenset(data["symmetric_relations"])
        self.synonym_rules = tuple(
            SynonymRule(
                word=rule["word"], synonym=rule["synonym"], match=rule["match"],
                pos=tuple(rule.get("pos", ())), deps=tuple(rule.get("deps", ())),
                when=tuple(rule.get("when", ())), source=rule.get("source", ""),
            )
            for rule in data["hard_positive_synonyms"]["rules"]
        )
        self._synonyms: dict[str, set[str]] = {}
        pairs = [(rule.word, rule.synonym) for rule in self.synonym_rules]
        pairs += [(a, b) for words in data["synonym_sets"] for a in words for b in words if a != b]
        for a, b in pairs:
            self._synonyms.setdefault(a, set()).add(b)
            self._synonyms.setdefault(b, set()).add(a)
        self._worn = frozenset(word for category in data["worn_categories"] for word in data["objects"][category])
        self._animate = frozenset(
            [word for category in data["animate_categories"] for word in data["objects"][category]]
            + data["other_animate_nouns"]
        )

    @property
    def spatial_phrases(self) -> list[str]:
        """Every spatial relation the lexicon knows, for phrase matching."""
        return _unique([*self.opposites[SPATIAL], *self.spatial_converses])

    @property
    def multiword_nouns(self) -> list[str]:
        return [word for group in self.groups[NOUN] for word in group if " " in word]

    def is_worn(self, noun: str) -> bool:
        """Clothing: "in" before it means wearing, not containment."""
        return noun in self._worn

    def is_animate(self, noun: str) -> bool:
        """People and animals: only they can be "seated"."""
        if noun in self._animate or self._animate & self._synonyms.get(noun, set()):
            return True
        senses = _synsets(noun, NOUN)
        return bool(senses) and senses[0].lexname() in ("noun.person", "noun.animal")

    def is_attribute_word(self, word: str) -> bool:
        return any(word in group for group in self.groups[ADJ]) or word in self.opposites[ADJ]

    def are_synonyms(self, a: str, b: str, pos: str) -> bool:
        """True when replacing `a` by `b` could leave the caption true."""
        a, b = a.lower(), b.lower()
        if a == b or b in self._synonyms.get(a, ()):
            return True
        return _wordnet_share_synset(a, b, pos)

    def co_hyponyms(self, word: str, pos: str) -> list[str]:
        """Sister terms of `word`: curated groups, else WordNet siblings."""
        keys = {word} | self._synonyms.get(word, set())
        curated = [other for group in self.groups.get(pos, []) if keys & set(group) for other in group]
        if curated:
            return [w for w in _unique(curated) if not self.are_synonyms(word, w, pos)]
        return [w for w in _wordnet_co_hyponyms(word, pos) if not self.are_synonyms(word, w, pos)]

    def antonyms(self, word: str, pos: str) -> list[str]:
        curated = self.opposites.get(pos, {}).get(word)
        if curated:
            return list(curated)
        return [w for w in _wordnet_antonyms(word, pos) if not self.are_synonyms(word, w, pos)]

    def contrasts(self, word: str, pos: str, *, with_antonyms: bool = True) -> list[str]:
        """Replacements that make a caption false: co-hyponyms, optionally antonyms."""
        found = self.co_hyponyms(word, pos) if pos != SPATIAL else []
        if with_antonyms or pos == SPATIAL:
            found += self.antonyms(word, pos)
        return _unique(found)


@functools.cache
def lexicon() -> Lexicon:
    with LEXICON_PATH.open(encoding="utf-8") as handle:
        return Lexicon(json.load(handle))


@functools.cache
def wordnet():
    """NLTK's WordNet reader, or None when the corpus is not installed.

    NLTK looks in NLTK_DATA and its default folders only; it never
    downloads on its own, and neither does this package.
    """
    try:
        from nltk.corpus import wordnet as reader

        reader.ensure_loaded()
    except (ImportError, LookupError, OSError):
        return None
    return reader


def _synsets(word: str, pos: str) -> list:
    reader = wordnet()
    if reader is None or pos not in _WORDNET_POS:
        return []
    return reader.synsets(word.replace(" ", "_"), _WORDNET_POS[pos])


def _wordnet_share_synset(a: str, b: str, pos: str) -> bool:
    return bool(set(_synsets(a, pos)) & set(_synsets(b, pos)))


@functools.lru_cache(maxsize=4096)
def _wordnet_co_hyponyms(word: str, pos: str) -> tuple[str, ...]:
    """Single-word lemmas of sister synsets of the word's most frequent sense.

    A sister lemma is kept only in its base form and when that synset is
    its own most frequent sense, which drops rare readings ("head" as a
    sister of "dog") and plural lemma names ("balusters").
    """
    senses = _synsets(word, pos)
    if not senses or (pos == NOUN and senses[0].lexname() not in _VISIBLE_NOUN_CLASSES):
        return ()
    sense, found = senses[0], []
    parents = [p for p in sense.hypernyms() + sense.instance_hypernyms() if len(p.hyponyms()) <= _MAX_SISTERS]
    for parent in parents:
        for sister in parent.hyponyms():
            for name in (lemma.name() for lemma in sister.lemmas()):
                if (
                    sister != sense
                    and _SINGLE_WORD.fullmatch(name)
                    and wordnet().morphy(name, _WORDNET_POS[pos]) == name
                    and _synsets(name, pos)[:1] == [sister]
                ):
                    found.append(name)
    return tuple(_unique(found))


@functools.lru_cache(maxsize=4096)
def _wordnet_antonyms(word: str, pos: str) -> tuple[str, ...]:
    """Direct antonyms of the word in its three most frequent senses."""
    found = [
        antonym.name().replace("_", " ")
        for sense in _synsets(word, pos)[:3]
        for lemma in sense.lemmas()
        if lemma.name() == word
        for antonym in lemma.antonyms()
        if _PLAIN_LEMMA.fullmatch(antonym.name())
    ]
    return tuple(_unique(found))
