"""Parse-reading helpers for the replacement and hard-positive families.

spaCy's parse is right most of the time on COCO captions and wrong in
predictable places (a participle attached to the wrong noun, "riding"
lemmatised as "rid"). These helpers read it conservatively: when a
question cannot be answered from the parse, they answer "no" or None, and
the calling rule produces nothing rather than a wrong caption.
"""
from __future__ import annotations

import functools
import itertools
import re

from spacy.tokens import Span, Token

from backend.perturb.inflect import pluralize, verb_form

NOUN_TAGS = ("NN", "NNS")
SUBJECT_DEPS = ("nsubj", "nsubjpass")
RELATIVE_PRONOUNS = ("that", "who", "which", "whom")
# A verb joined to another verb shares its subject: "a man sitting on a
# bench holding an umbrella" ("holding" is advcl of "sitting").
SHARED_SUBJECT_DEPS = ("advcl", "conj", "xcomp", "pcomp")
# Dependents a "simple" noun phrase may have: determiner, possessive
# pronoun, number, adjectives, noun modifiers. Anything else (a relative
# clause, a participle, a prepositional phrase) ties it to other words.
SIMPLE_NP_DEPS = ("det", "poss", "nummod", "amod", "compound")
# Nouns that group what follows "of": "a herd of zebra" is about zebras
# (animate, and plural in meaning even when the noun is singular).
COLLECTIVE_NOUNS = frozenset({
    "group", "herd", "flock", "bunch", "couple", "pair", "team", "crowd", "family", "lot", "lots", "number", "row",
    "line", "set", "pack", "pile", "stack", "collection", "variety", "assortment", "bundle", "cluster", "litter",
    "troop", "fleet", "array", "selection", "handful", "dozen", "plenty", "display",
})
PORTION_NOUNS = frozenset({"slice", "piece", "kind", "type", "sort", "half", "part"})
GENDERED_PRONOUNS = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs", "themselves"})
_WORD = re.compile(r"[\w']+")


def noun_lemma(token: Token) -> str:
    """The singular of a noun, mending spaCy's mis-lemmatised plurals
    ("vases" -> "vas"): the lemma must pluralise back to the word."""
    lower, lemma = token.lower_, token.lemma_.lower()
    if token.tag_ != "NNS" or pluralize(lemma) == lower:
        return lemma
    candidates = [lower[:-1], lower[:-2], lower[:-3] + "y"] if lower.endswith("s") else []
    return next((c for c in candidates if c and pluralize(c) == lower), lemma)


def verb_lemma(token: Token) -> str:
    """The base form of a verb, mending spaCy's lemmas that do not inflect
    back to the word.

    spaCy's lemmatiser drops a final "e" it should keep ("riding" -> "rid",
    "staring" -> "star", "striped" -> "strip"), and a wrong lemma misses the
    verb lists every caller checks (the lexicon's actions and synonyms, the
    plausibility rules' agent verbs, "ride"). A lemma is trusted when
    `verb_form` turns it back into the word; otherwise the first of a few
    spellings that does is taken, and failing that spaCy's lemma. Mending
    by rule rather than by a table of known slips covers verbs nobody
    listed; it can over-mend a form `verb_form` does not make (British
    "travelling" -> "travell", "lighted" -> "lighte").
    """
    return _mended_lemma(token.lower_, token.lemma_.lower(), token.tag_)


@functools.lru_cache(maxsize=8192)
def _mended_lemma(lower: str, lemma: str, tag: str) -> str:
    """`verb_lemma` of a word, its spaCy lemma and tag: remembered, as every label rule asks it of every verb."""
    if tag not in ("VBG", "VBZ", "VBD", "VBN") or verb_form(lemma, tag) == lower:
        return lemma
    for candidate in (lemma + "e", lemma[:-1], lower[:-3], lower[:-3] + "e"):
        if candidate and verb_form(candidate, tag) == lower:
            return candidate
    return lemma


def _noun_or_none(token: Token | None) -> Token | None:
    return token if token is not None and token.pos_ in ("NOUN", "PROPN", "PRON") else None


def subject_of(verb: Token) -> Token | None:
    """Who does what `verb` says: its subject, the noun a participle or
    relative clause modifies, or the subject of the verb it is joined to.

    A relative pronoun ("a man that is standing") resolves to its noun, and
    a verb joined to another ("a man sitting on a bench holding an
    umbrella") shares its subject, since callers ask who acts, not what the
    parse tree hangs where. The answer is a noun or pronoun or None (a
    short chain only: past four joined verbs the parse is too unsure).
    """
    for _ in range(4):  # a short chain of joined verbs; longer is too unsure
        subject = next((child for child in verb.children if child.dep_ in SUBJECT_DEPS), None)
        if subject is not None and subject.lower_ in RELATIVE_PRONOUNS and verb.dep_ == "relcl":
            return _noun_or_none(verb.head)
        if subject is not None:
            return _noun_or_none(subject)
        if verb.dep_ in ("acl", "relcl"):
            return _noun_or_none(verb.head)
        if verb.dep_ not in SHARED_SUBJECT_DEPS or verb.head.pos_ not in ("VERB", "AUX") or verb.head == verb:
            return None
        verb = verb.head
    return None


def of_holder(noun: Token) -> Token | None:
    """The noun whose "of" phrase `noun` is the object of ("slice" in "a slice of pizza", "top" in "on top of a
    bus"), else None."""
    return noun.head.head if noun.dep_ == "pobj" and noun.head.lower_ == "of" else None


def content_noun(noun: Token) -> Token:
    """The noun a quantity noun counts ("zebras" in "a group of zebras"), else `noun`."""
    if noun.lemma_.lower() not in COLLECTIVE_NOUNS | PORTION_NOUNS:
        return noun
    of = next((child for child in noun.children if child.dep_ == "prep" and child.lower_ == "of"), None)
    objects = [child for child in of.children if child.dep_ == "pobj"] if of is not None else []
    return objects[0] if objects else noun


def is_counted_mass(noun: Token) -> bool:
    """A singular noun after a collective noun ("a herd of zebra"): it
    means many, so a replacement in the singular ("a herd of dog") reads
    wrong; it is not replaced."""
    holder = of_holder(noun)
    return noun.tag_ == "NN" and holder is not None and holder.lemma_.lower() in COLLECTIVE_NOUNS


def direct_object(verb: Token) -> Token | None:
    return next((child for child in verb.children if child.dep_ == "dobj"), None)


def has_particle(verb: Token) -> bool:
    """"picking up", "holding up": the verb's meaning depends on the particle."""
    return any(child.dep_ == "prt" for child in verb.children)


def object_of(phrase: Span) -> Token | None:
    """The noun or pronoun a (multi-word) preposition governs: "table" in
    "on top of the table"; None for "a man behind" or "near by"."""
    objects = [child for child in phrase[-1].children if child.dep_ == "pobj"]
    return objects[0] if len(objects) == 1 and objects[0].pos_ in ("NOUN", "PROPN", "PRON") else None


def head_noun(adjective: Token) -> Token | None:
    """The noun an adjective describes: attributive ("a red car"),
    predicative ("the car is red") or coordinated ("a red and white car")."""
    for _ in range(3):
        if adjective.dep_ in ("amod", "compound") and adjective.head.pos_ in ("NOUN", "PROPN"):
            return adjective.head
        if adjective.dep_ == "acomp":
            return subject_of(adjective.head)
        if adjective.dep_ != "conj":
            return None
        adjective = adjective.head
    return None


def simple_np(head: Token, *, allow: Token | None = None) -> Span | None:
    """The noun phrase of `head` when it is only determiner, possessive
    pronoun, numbers, adjectives and noun modifiers before a noun ("the
    small red car"); None when anything else hangs off it. `allow` is one
    right-hand dependent the caller accounts for (the relation itself)."""
    if head.tag_ not in NOUN_TAGS:
        return None
    for child in head.children:
        if child == allow or (child.is_punct and child.i > head.i):
            continue
        if child.i > head.i or child.dep_ not in SIMPLE_NP_DEPS:
            return None
        if child.dep_ == "poss" and child.pos_ != "PRON":
            return None
        if any(grandchild.dep_ not in ("advmod", "compound", "amod") for grandchild in child.children):
            return None
        if (child.dep_ == "amod" and child.pos_ == "NOUN") or (child.dep_ == "det" and _number_clash(child, head)):
            return None  # a mis-parse: "a fire hydrant waits" with "waits" as the noun
    span = head.doc[head.left_edge.i : head.i + 1]
    return span if all(token.is_alpha for token in span) else None


def _number_clash(determiner: Token, noun: Token) -> bool:
    return determiner.lower_ in ("a", "an") and noun.tag_ == "NNS"


def next_to_another_noun(token: Token) -> bool:
    """Two nouns side by side with no compound arc between them ("bride and
    grooms arms"): spaCy missed a possessive or a compound, so neither
    noun's role is known."""
    doc = token.doc
    neighbours = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
    return any(n.tag_ in NOUN_TAGS and n.head != token and token.head != n for n in neighbours)


def in_fixed_phrase(token: Token, phrases: frozenset[str]) -> bool:
    """True when the token and a neighbour form a set phrase ("old time",
    "hot dog", "3 year old") whose words must not be replaced one by one."""
    doc = token.doc
    before = f"{doc[token.i - 1].lower_} {token.lower_}" if token.i > 0 else ""
    after = f"{token.lower_} {doc[token.i + 1].lower_}" if token.i + 1 < len(doc) else ""
    return before in phrases or after in phrases


def caption_lemmas(doc) -> frozenset[str]:
    """Every word and lemma in the caption, to keep a replacement from
    repeating one ("sitting and standing" -> "standing and standing")."""
    words = {token.lower_ for token in doc} | {token.lemma_.lower() for token in doc}
    words |= {noun_lemma(token) for token in doc if token.tag_ == "NNS"}
    words |= {verb_lemma(token) for token in doc if token.tag_.startswith("VB")}
    return frozenset(words)


def has_gendered_pronoun(doc) -> bool:
    """"A man ... next to him": turning the man into a woman leaves "him"
    behind, a giveaway no image is needed for."""
    return any(token.lower_ in GENDERED_PRONOUNS for token in doc)


def new_adjacent_repeat(original: str, text: str) -> bool:
    """True when `text` has a doubled word ("near near") that `original`
    did not have."""

    def repeats(sentence: str) -> int:
        words = [word.lower() for word in _WORD.findall(sentence)]
        return sum(a == b for a, b in itertools.pairwise(words))

    return repeats(text) > repeats(original)
