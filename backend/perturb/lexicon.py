"""Word relations for perturbations, from the curated `lexicon.json` only.

Every replacement word a negative receives comes from a hand-written group
of co-hyponyms ("dog, cat, horse") or a curated opposite ("empty/full"),
never from WordNet: even gated by corpus frequency and with hypernyms and
hyponyms removed, WordNet's sisters of common caption words were mostly
wrong ("computer -> motor", "fence -> rail", "hydrant -> shower",
"typing -> apostrophizing"), and NLTK returns them from unordered sets.
WordNet (read through NLTK, never downloaded) now only answers yes/no
questions: whether an unknown noun names a person or an animal, and
whether two words share a sense. A rule that depends on the noun it
applies to names a class of nouns (`head_classes`), so "old -> young" only
touches people and animals and "in -> outside" only bounded places.
"""
from __future__ import annotations

import functools
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.core import wordnet_data

LEXICON_PATH = Path(__file__).with_name("lexicon.json")

# Coarse parts of speech used across the package; "SPATIAL" is a spatial
# relation phrase such as "on top of".
NOUN, ADJ, VERB, SPATIAL = "NOUN", "ADJ", "VERB", "SPATIAL"
_WORDNET_POS = {NOUN: "n", ADJ: "a", VERB: "v"}
# Noun classes computed rather than listed.
ANIMATE, INANIMATE, PERSON, GROWN, WORN = "animate", "inanimate", "person", "grown", "worn"


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


@dataclass(frozen=True)
class ActionGroup:
    """Verbs a photo tells apart, and the sentence frame they need: who may
    do them ("animate", "person", "any") and whether they take a direct
    object ("required", "none", "any"). "Red flowers kneeling" or "holding
    onto" -> "wearing onto" come from ignoring the frame."""

    verbs: tuple[str, ...]
    subject: str
    object: str
    object_class: str | None = None  # a head class the object must be in ("worn": no "wearing a pizza")


@dataclass(frozen=True)
class Opposite:
    """A curated opposite; `head_class` (or None) names the nouns it may describe."""

    word: str
    head_class: str | None


def _unique(words: list[str]) -> list[str]:
    return list(dict.fromkeys(words))


def _opposite_index(rows: list[list[str]]) -> dict[str, list[Opposite]]:
    """Symmetric lookup from [a, b] or [a, b, head_class] rows."""
    index: dict[str, list[Opposite]] = {}
    for row in rows:
        a, b, head_class = row[0], row[1], (row[2] if len(row) > 2 else None)
        index.setdefault(a, []).append(Opposite(b, head_class))
        index.setdefault(b, []).append(Opposite(a, head_class))
    return index


def _pair_sets(groups: list[list[str]]) -> dict[str, frozenset[str]]:
    """Each word -> every word sharing a list with it."""
    index: dict[str, set[str]] = {}
    for words in groups:
        for a in words:
            index.setdefault(a, set()).update(b for b in words if b != a)
    return {word: frozenset(partners) for word, partners in index.items()}


def _canonical_words(sets: list[list[str]]) -> dict[str, str]:
    """Single words of the synonym sets -> the set's first single word; a word in two sets ("bike") keeps
    itself, since which one it means is unknown."""
    found: dict[str, list[str]] = {"an": ["a"]}
    for words in sets:
        single = [word for word in words if " " not in word]
        for word in single[1:]:
            found.setdefault(word, []).append(single[0])
    return {word: targets[0] for word, targets in found.items() if len(set(targets)) == 1}


def _synonym_rule(rule: dict[str, Any]) -> SynonymRule:
    return SynonymRule(
        word=rule["word"], synonym=rule["synonym"], match=rule["match"], pos=tuple(rule.get("pos", ())),
        deps=tuple(rule.get("deps", ())), when=tuple(rule.get("when", ())), source=rule.get("source", ""),
    )


class Lexicon:
    """Indexed view of `lexicon.json`."""

    def __init__(self, data: dict[str, Any]):
        objects = data["objects"]
        self.object_groups: dict[str, list[str]] = dict(objects)
        self._attribute_classes: dict[str, set[str]] = {}
        for name, words in data["attributes"].items():
            for word in words:
                self._attribute_classes.setdefault(word, set()).add(name)
        self.groups: dict[str, list[list[str]]] = {
            NOUN: list(objects.values()),
            ADJ: list(data["attributes"].values()),
            VERB: [group["verbs"] for group in data["actions"].values()],
        }
        self.action_groups = tuple(
            ActionGroup(tuple(group["verbs"]), group["subject"], group["object"], group.get("object_class"))
            for group in data["actions"].values()
        )
        self.opposites = {
            ADJ: _opposite_index(data["attribute_opposites"]),
            SPATIAL: _opposite_index(data["spatial_opposites"]),
        }
        self.spatial_converses: dict[str, str] = {}
        for a, b in data["spatial_converses"]:
            self.spatial_converses.setdefault(a, b)
            self.spatial_converses.setdefault(b, a)
        self.spatial_converses.update({phrase: phrase for phrase in data["symmetric_converses"]})
        self.symmetric_relations = frozenset(data["symmetric_relations"])
        self.synonym_rules = tuple(_synonym_rule(rule) for rule in data["hard_positive_synonyms"]["rules"])
        pairs = [[rule.word, rule.synonym] for rule in self.synonym_rules]
        self._synonyms = _pair_sets(pairs + data["synonym_sets"])
        self._overlaps = _pair_sets(data["overlaps"])
        self._canonical = _canonical_words(data["synonym_sets"])
        self.fixed_phrases = frozenset(data["fixed_phrases"])
        self.mass_nouns = frozenset(data["mass_nouns"])
        self.head_classes = {name: frozenset(words) for name, words in data["head_classes"].items()}
        self._worn = frozenset(
            [word for category in data["worn_categories"] for word in objects[category]] + data["other_worn_nouns"]
        )
        self._people = frozenset(
            [word for category in data["person_categories"] for word in objects[category]] + data["other_person_nouns"]
        )
        animals = [word for category in data["animate_categories"] for word in objects[category]]
        self._animate = self._people | frozenset(animals + data["other_animate_nouns"])

    def canonical(self, text: str) -> str:
        """`text` lower-cased, punctuation dropped, each word replaced by the first of its curated synonym set
        and "an" by "a": two texts with one key say the same thing ("a big dog" and "a large dog")."""
        words = re.sub(r"[^\w\s]", " ", text.lower()).split()
        return " ".join(self._canonical.get(word, word) for word in words)

    @property
    def spatial_phrases(self) -> list[str]:
        """Every spatial relation the lexicon knows, for phrase matching."""
        return _unique([*self.opposites[SPATIAL], *self.spatial_converses])

    @property
    def multiword_nouns(self) -> list[str]:
        return sorted(word for group in self.groups[NOUN] for word in group if " " in word)

    def is_worn(self, noun: str) -> bool:
        """Clothing: "in" before it means wearing, not containment."""
        return noun in self._worn

    def is_person(self, noun: str) -> bool:
        return noun in self._people or _first_sense_class(noun) == "noun.person"

    def is_animate(self, noun: str) -> bool:
        """People and animals: only they can be "seated" or "grasp" a thing."""
        return noun in self._animate or _first_sense_class(noun) in ("noun.person", "noun.animal")

    def in_class(self, noun: str, head_class: str) -> bool:
        """Whether `noun` belongs to a named class of `head_classes`, or to
        the computed classes animate, inanimate, person, grown (animate but
        not "boy" or "puppy": "an old boy" contradicts itself) and worn."""
        if head_class == ANIMATE:
            return self.is_animate(noun)
        if head_class == GROWN:
            return self.is_animate(noun) and noun not in self.head_classes["juvenile"]
        if head_class == WORN:
            return self.is_worn(noun)
        if head_class == INANIMATE:
            return not self.is_animate(noun)
        if head_class == PERSON:
            return self.is_person(noun)
        return noun in self.head_classes[head_class]

    def is_attribute_word(self, word: str) -> bool:
        """Known attribute, directly or through a synonym ("wood" for "wooden")."""
        keys = {word} | self._synonyms.get(word, frozenset())
        return any(keys & set(group) for group in self.groups[ADJ]) or word in self.opposites[ADJ]

    def attribute_classes(self, word: str) -> frozenset[str]:
        """Names of the attribute groups holding `word` ("color", "material")."""
        return frozenset(self._attribute_classes.get(word, ()))

    def may_replace(self, a: str, b: str) -> bool:
        """False when a photo of `a` could also be described by `b`: the
        same word, a curated synonym or a listed overlap (kind of, part of,
        look-alike)."""
        a, b = a.lower(), b.lower()
        return a != b and b not in self._synonyms.get(a, ()) and b not in self._overlaps.get(a, ())

    def are_synonyms(self, a: str, b: str, pos: str) -> bool:
        """True for the same word, curated synonyms, or words sharing a
        WordNet sense: replacing one by the other leaves a caption true."""
        a, b = a.lower(), b.lower()
        return a == b or b in self._synonyms.get(a, ()) or _wordnet_share_synset(a, b, pos)

    def co_hyponyms(self, word: str, pos: str) -> list[str]:
        """Sister terms of `word` in the curated groups (found through its
        synonyms too: "bike" is in the vehicles), minus its overlaps."""
        keys = {word} | self._synonyms.get(word, frozenset())
        sisters = [other for group in self.groups.get(pos, []) if keys & set(group) for other in group]
        return [w for w in _unique(sisters) if w not in keys and self.may_replace(word, w)]

    def opposites_of(self, word: str, pos: str) -> list[Opposite]:
        return list(self.opposites.get(pos, {}).get(word, ()))

    def actions_for(self, verb: str) -> list[ActionGroup]:
        keys = {verb} | self._synonyms.get(verb, frozenset())
        return [group for group in self.action_groups if keys & set(group.verbs)]

    def contrasts(self, word: str, pos: str, *, with_antonyms: bool = True) -> list[str]:
        """Replacements that make a caption false regardless of context:
        co-hyponyms and, optionally, the opposites that need no head class."""
        found = self.co_hyponyms(word, pos) if pos != SPATIAL else []
        if with_antonyms or pos == SPATIAL:
            found += [o.word for o in self.opposites_of(word, pos) if o.head_class is None]
        return _unique(found)


@functools.cache
def lexicon() -> Lexicon:
    with LEXICON_PATH.open(encoding="utf-8") as handle:
        return Lexicon(json.load(handle))


@functools.cache
def wordnet():
    """NLTK's WordNet reader, or None when the corpus is not installed.

    NLTK looks in NLTK_DATA and its default folders only; it never
    downloads on its own, and neither does this package. Where NLTK finds
    nothing but Debian's WordNet is installed (a Space: its `packages.txt`
    ran, no set-up script did), the corpus is laid out in a cache folder
    first (`backend.core.wordnet_data`).
    """
    try:
        return _english_reader(_corpus_root())
    except (ImportError, LookupError, OSError):
        return None


def _corpus_root():
    import nltk

    try:
        return nltk.data.find("corpora/wordnet")
    except LookupError:
        if wordnet_data.provide() is None:
            raise
        return nltk.data.find("corpora/wordnet")


def _english_reader(root):
    """NLTK's WordNet reader over `root` without the multilingual (OMW) data, which this package never asks for.

    On loading, NLTK's own reader maps the "wordnet" corpus's sense keys onto the loaded corpus's for OMW's
    lookups, even when the two are the same corpus: two passes over `index.sense` (seconds, in every process
    that perturbs a caption). Without OMW the map is never read, so it is not built.
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The multilingual functions are not available")
        return EnglishWordNet(root, None)


def _synsets(word: str, pos: str) -> list:
    reader = wordnet()
    if reader is None or pos not in _WORDNET_POS:
        return []
    return reader.synsets(word.replace(" ", "_"), _WORDNET_POS[pos])


@functools.lru_cache(maxsize=4096)
def _first_sense_class(noun: str) -> str | None:
    """WordNet's lexicographer file of the noun's most frequent sense
    ("noun.person"), or None. Senses come in a fixed order, so this is
    the same in every process."""
    senses = _synsets(noun, NOUN)
    return senses[0].lexname() if senses else None


def _wordnet_share_synset(a: str, b: str, pos: str) -> bool:
    names_a = {synset.name() for synset in _synsets(a, pos)}
    return any(synset.name() in names_a for synset in _synsets(b, pos))
