"""Swap negatives: NegCLIP's same-kind swaps and attribute/argument binding swaps.

NegCLIP (Yuksekgonul et al., 2023, App. C.1) swaps two noun phrases (3+
tokens, so they do not overlap noun swaps), nouns, adjectives, adverbs or
verb phrases. Single words are swapped only with words of the same tag
("dogs" with "cats", "eating" with "holding") so agreement survives and a
text encoder cannot spot the negative from broken grammar alone.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from spacy.tokens import Doc, Span

from backend.perturb.core import Request, Variant, build, swapped, take_distinct
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import (
    NOUNISH,
    attribute_bindings,
    is_plural,
    spatial_relations,
    token_span,
    verb_relations,
)

NEGCLIP_FAMILY = "negclip_swap"
BINDING_FAMILY = "binding_swap"
NOUN_PHRASE_MIN_TOKENS = 3


def _words_tagged(prefix: str) -> Callable[[Doc], list[Span]]:
    """Single words whose tag starts with `prefix`, minus stop words ("many",
    "other", "very"), which make ungrammatical rather than hard negatives."""

    def spans(doc: Doc) -> list[Span]:
        return [
            token_span(token) for token in doc if token.tag_.startswith(prefix) and token.is_alpha and not token.is_stop
        ]

    return spans


def _noun_phrases(doc: Doc) -> list[Span]:
    return [chunk for chunk in doc.noun_chunks if len(chunk) >= NOUN_PHRASE_MIN_TOKENS]


def _verb_phrases(doc: Doc) -> list[Span]:
    """A verb with its particles: "picking up", "eating"."""
    spans = []
    for token in doc:
        if token.pos_ == "VERB":
            end = token.i + 1
            while end < len(doc) and doc[end].dep_ == "prt" and doc[end].head == token:
                end += 1
            spans.append(doc[token.i : end])
    return spans


NEGCLIP_SPANS: dict[str, Callable[[Doc], list[Span]]] = {
    "noun_phrase": _noun_phrases,
    "noun": _words_tagged("NN"),
    "adjective": _words_tagged("JJ"),
    "adverb": _words_tagged("RB"),
    "verb_phrase": _verb_phrases,
}


def _swappable(first: Span, second: Span) -> bool:
    """Disjoint, different text, and grammatically interchangeable: nouns of
    the same number (so verbs still agree), other words of the same tag."""
    if first.end > second.start or first.text.lower() == second.text.lower():
        return False
    if first.root.pos_ in NOUNISH and second.root.pos_ in NOUNISH:
        return is_plural(first) == is_plural(second)
    return first.root.tag_ == second.root.tag_


def span_swaps(request: Request, spans: list[Span], family: str, subtype: str) -> Iterator[Variant]:
    """Variants swapping two of `spans`, pairs in random order."""
    pairs = [(a, b) for a, b in itertools.combinations(spans, 2) if _swappable(a, b)]
    request.rng.shuffle(pairs)
    return take_distinct(request, (build(request, swapped(request, a, b), family, subtype) for a, b in pairs))


def negclip_swap(request: Request) -> list[Variant]:
    variants = []
    for subtype, find_spans in NEGCLIP_SPANS.items():
        variants += span_swaps(request, find_spans(request.doc), NEGCLIP_FAMILY, subtype)
    return variants


def _attribute_swaps(request: Request) -> Iterator[Variant]:
    """Swap the adjectives of two different objects; neither object may
    already carry the adjective it receives ("vintage red car" and "vintage
    plane" cannot trade "red" for "vintage")."""
    bindings = attribute_bindings(request.doc)
    carried: dict[int, set[str]] = {}
    for adjective, noun in bindings:
        carried.setdefault(noun.i, set()).add(adjective.lower_)
    pairs = [
        (adj_a, adj_b)
        for (adj_a, noun_a), (adj_b, noun_b) in itertools.combinations(bindings, 2)
        if noun_a.lemma_.lower() != noun_b.lemma_.lower()
        and adj_a.lower_ not in carried[noun_b.i]
        and adj_b.lower_ not in carried[noun_a.i]
    ]
    request.rng.shuffle(pairs)
    variants = (
        build(request, swapped(request, token_span(a), token_span(b)), BINDING_FAMILY, "attribute") for a, b in pairs
    )
    return take_distinct(request, variants)


def _argument_swaps(request: Request) -> Iterator[Variant]:
    """Swap subject and object of a verb or of an asymmetric spatial relation."""
    lex = lexicon()
    asymmetric = [phrase for phrase in lex.spatial_phrases if phrase not in lex.symmetric_relations]
    relations = verb_relations(request.doc) + spatial_relations(request.doc, asymmetric)
    relations = [r for r in relations if _swappable(r.subject, r.object)]
    request.rng.shuffle(relations)
    variants = (
        build(request, swapped(request, r.subject, r.object), BINDING_FAMILY, "relation_arguments") for r in relations
    )
    return take_distinct(request, variants)


def binding_swap(request: Request) -> list[Variant]:
    return [*_attribute_swaps(request), *_argument_swaps(request)]
