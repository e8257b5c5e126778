"""Swap negatives: NegCLIP's same-kind swaps and the binding swaps.

`negclip_swap` replicates NegCLIP (Yuksekgonul et al., 2023, App. C.1): swap
two noun phrases (3+ tokens, so they do not overlap noun swaps), nouns,
adjectives, adverbs or verb phrases, whatever the words mean. Their released
negatives are about half noise, and so are these: that is the recipe, and
why the probe leaves this family out by default. The choices made here
never change which kinds of span are swapped; they only refuse swaps that
no reading of the recipe calls a negative:

* a unit is never split (chosen because a compound is one noun, so moving
  it whole IS NegCLIP's noun swap): a compound noun ("stop sign", "hot
  dog") moves whole; a hyphenated word, a coordinated adjective ("red and
  white") or a shaded colour ("light blue") is not swapped at all; a
  participle used as an adjective ("a smiling man") is no verb phrase;
* a swap that leaves the caption true is refused (`units.still_true_swaps`:
  conjuncts, symmetric-relation arguments, two modifiers of one noun): a
  negative that is not false is no negative under any definition;
* nouns and noun phrases swap only with ones of the same number (so verbs still
  agree); other spans only with spans whose head has the same tag, and verbs only
  with verbs that take the same kind of object.

Not applied, to stay faithful: the visual-class table (NegCLIP swaps any
two adjectives, "young" with "concrete") and the animacy rule (any two
nouns, "a bench sitting on a man").

`binding_swap` is this project's careful family: "attribute"
(attributes.py), "kind_attribute" (kind_attributes.py), "attribute_phrase" and "attribute_move" (colour_phrases.py),
"relation_arguments" (roles.py), "object" (object_swaps.py), "background_object" (background_swaps.py), "count" and
"same_noun_attribute" (counts.py). It makes fewer negatives, each meant to
be fluent and false of a photo the original describes.
"""
from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Iterator

from spacy.tokens import Doc, Span

from backend.perturb.attributes import attribute_swaps
from backend.perturb.background_swaps import background_swaps
from backend.perturb.colour_phrases import colour_moves, colour_phrase_swaps
from backend.perturb.core import Request, Variant, build, normalized, swapped, take_distinct
from backend.perturb.counts import count_swaps, same_noun_swaps
from backend.perturb.kind_attributes import kind_attribute_swaps
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import NOUNISH, find_phrases, is_plural
from backend.perturb.nouns import is_physical
from backend.perturb.object_swaps import object_swaps
from backend.perturb.roles import role_swaps
from backend.perturb.slots import describes_alike
from backend.perturb.typical import swap_repairs_caption
from backend.perturb.units import is_hyphenated, is_whole_adjective, noun_unit, still_true_swaps

NEGCLIP_FAMILY = "negclip_swap"
BINDING_FAMILY = "binding_swap"
NOUN_PHRASE_MIN_TOKENS = 3


def _nouns(doc: Doc) -> list[Span]:
    """Whole nouns: "stop sign" is one noun, never "stop" and "sign"; a time, an act or a view is none
    ("on the beach in the daytime"), nor a noun modifying a participle ("wood framed")."""
    spans = []
    for token in doc:
        if (token.tag_.startswith("NN") and token.dep_ not in ("compound", "npadvmod") and token.is_alpha
                and not token.is_stop and is_physical(token.lemma_.lower())):
            unit = noun_unit(token)
            if unit is not None:
                spans.append(unit)
    return spans


def _adjectives(doc: Doc) -> list[Span]:
    """Adjectives that are whole words: not in "red and white", "light blue",
    "close-up" or "hot dog", and without a modifier that would stay behind."""
    return [
        doc[t.i : t.i + 1]
        for t in doc
        if t.tag_.startswith("JJ") and t.is_alpha and not t.is_stop and is_whole_adjective(t)
    ]


def _adverbs(doc: Doc) -> list[Span]:
    """Adverbs, minus those inside a spatial phrase ("next" in "next to")."""
    phrases = find_phrases(doc, lexicon().spatial_phrases)
    inside = {i for phrase in phrases for i in range(phrase.start, phrase.end)}
    return [
        doc[t.i : t.i + 1]
        for t in doc
        if t.tag_.startswith("RB") and t.is_alpha and not t.is_stop and t.i not in inside and not is_hyphenated(t)
    ]


def _noun_phrases(doc: Doc) -> list[Span]:
    return [chunk for chunk in doc.noun_chunks if len(chunk) >= NOUN_PHRASE_MIN_TOKENS]


def _verb_phrases(doc: Doc) -> list[Span]:
    """A verb with its particles: "picking up", "eating". A participle used as
    an adjective ("a smiling man", "nice looking") is not a verb phrase."""
    spans = []
    for token in doc:
        if token.pos_ == "VERB" and token.dep_ not in ("amod", "compound") and not is_hyphenated(token):
            end = token.i + 1
            while end < len(doc) and doc[end].dep_ == "prt" and doc[end].head == token:
                end += 1
            spans.append(doc[token.i : end])
    return spans


NEGCLIP_SPANS: dict[str, Callable[[Doc], list[Span]]] = {
    "noun_phrase": _noun_phrases,
    "noun": _nouns,
    "adjective": _adjectives,
    "adverb": _adverbs,
    "verb_phrase": _verb_phrases,
}


def _takes_object(span: Span) -> bool:
    return any(child.dep_ == "dobj" for child in span.root.children)


def _swappable(first: Span, second: Span) -> bool:
    """Disjoint, different text, and grammatically interchangeable: nouns of
    the same number (so verbs still agree), verbs of the same tag that both
    take an object or both do not, other words of the same tag."""
    if first.end > second.start or first.text.lower() == second.text.lower():
        return False
    if first.root.pos_ in NOUNISH and second.root.pos_ in NOUNISH:
        return (is_plural(first) == is_plural(second) and not swap_repairs_caption(first.root, second.root)
                and not describes_alike(first.root, second.root))
    if first.root.pos_ == "VERB" and _takes_object(first) != _takes_object(second):
        return False
    return first.root.tag_ == second.root.tag_


@functools.lru_cache(maxsize=256)
def _still_true_texts(caption: str, doc: Doc, all_caps: bool) -> frozenset[str]:
    request = Request(caption, doc, random.Random(0), 1, None, all_caps, frozenset())
    return frozenset(normalized(build(request, swapped(request, a, b), "", "").text) for a, b in still_true_swaps(doc))


def still_true_texts(request: Request) -> frozenset[str]:
    """Normalised texts of the swaps that keep the caption true (conjuncts,
    symmetric relations, modifiers of one noun): no family may offer them as
    negatives. `perturb` bars them from every negative family."""
    return _still_true_texts(request.caption, request.doc, request.all_caps)


def span_swaps(request: Request, spans: list[Span], family: str, subtype: str) -> Iterator[Variant]:
    """Variants swapping two of `spans`, pairs in random order; a swap that
    leaves the caption true is skipped."""
    pairs = [(a, b) for a, b in itertools.combinations(spans, 2) if _swappable(a, b)]
    request.rng.shuffle(pairs)
    still_true = still_true_texts(request)
    variants = (build(request, swapped(request, a, b), family, subtype) for a, b in pairs)
    return take_distinct(request, (v for v in variants if normalized(v.text) not in still_true))


def negclip_swap(request: Request) -> list[Variant]:
    variants: list[Variant] = []
    for subtype, find_spans in NEGCLIP_SPANS.items():
        variants += span_swaps(request, find_spans(request.doc), NEGCLIP_FAMILY, subtype)
    return variants


BINDING_SUBTYPES: dict[str, Callable[[Request], list[Variant]]] = {
    "attribute": attribute_swaps,
    "kind_attribute": kind_attribute_swaps,
    "attribute_phrase": colour_phrase_swaps,
    "attribute_move": colour_moves,
    "relation_arguments": role_swaps,
    "object": object_swaps,
    "background_object": background_swaps,
    "count": count_swaps,
    "same_noun_attribute": same_noun_swaps,
}


def binding_swap(request: Request) -> list[Variant]:
    still_true = still_true_texts(request)
    return [
        variant
        for make in BINDING_SUBTYPES.values()
        for variant in make(request)
        if normalized(variant.text) not in still_true
    ]
