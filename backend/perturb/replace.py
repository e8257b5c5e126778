"""Single-word replacement negatives: REPLACE (Hsieh et al., 2023; CLOVe) and
CE-CLIP's attribute/action/object negatives (Zhang et al., 2024).

A slot is a whole token (or a known multi-word noun or spatial phrase) in
the parse, so replacing "man" can never touch "woman". Replacements are
lexicon lemmas inflected like the slot ("dogs" -> "cats", "eating" ->
"holding"), and never a synonym of the original word.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from spacy.tokens import Doc, Span

from backend.perturb.core import Request, Variant, build, replacement, spread, take_distinct
from backend.perturb.inflect import pluralize, verb_form
from backend.perturb.lexicon import ADJ, NOUN, SPATIAL, VERB, lexicon
from backend.perturb.nlp import chunk_of, find_phrases, load_spacy, prepositional_objects, token_span
from backend.perturb.swap import NEGCLIP_SPANS, span_swaps

REPLACE_FAMILY = "replace"
CE_CLIP_FAMILY = "ce_clip"
# Placeholder a `fill_mask` callable receives in place of the masked word;
# a caller wrapping a transformers fill-mask pipeline swaps in its
# tokenizer's mask token (RoBERTa's, as CE-CLIP used, is the same string).
MASK = "<mask>"
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
MODIFIER_DEPS = ("amod", "compound", "acomp")


@dataclass(frozen=True)
class Slot:
    """A replaceable part of the caption and the lemma the lexicon knows it by."""

    span: Span
    lemma: str
    pos: str


def introduces_clothing(phrase: Span) -> bool:
    """True for "in" in "a man in a red shirt": wearing, not a spatial relation.
    The whole object chunk is checked, since a mis-parse can make the
    garment a modifier ("a blue dress poses")."""
    return any(
        lexicon().is_worn(token.lemma_.lower()) for obj in prepositional_objects(phrase) for token in chunk_of(obj)
    )


def _occupied(doc: Doc) -> tuple[list[Span], set[int]]:
    """Spatial phrases, and the token indices they cover (not objects/attributes:
    "left" in "to the left of" is no object)."""
    phrases = find_phrases(doc, lexicon().spatial_phrases)
    return phrases, {i for phrase in phrases for i in range(phrase.start, phrase.end)}


def object_slots(doc: Doc) -> list[Slot]:
    """Head nouns, and the lexicon's multi-word nouns ("hot dog") as one slot."""
    _, taken = _occupied(doc)
    multiword = find_phrases(doc, lexicon().multiword_nouns, by_lemma=True)
    slots = [Slot(span, span.lemma_.lower(), NOUN) for span in multiword]
    taken |= {i for slot in slots for i in range(slot.span.start, slot.span.end)}
    slots += [
        Slot(token_span(token), token.lemma_.lower(), NOUN)
        for token in doc
        if token.tag_ in ("NN", "NNS") and token.dep_ != "compound" and token.is_alpha and token.i not in taken
    ]
    return sorted(slots, key=lambda slot: slot.span.start)


def attribute_slots(doc: Doc) -> list[Slot]:
    """Adjectives, plus lexicon attributes used as modifiers ("metal fence")."""
    _, taken = _occupied(doc)
    lex = lexicon()
    return [
        Slot(token_span(token), token.lower_, ADJ)
        for token in doc
        if token.i not in taken
        and token.is_alpha
        and (token.tag_ == "JJ" or (token.dep_ in MODIFIER_DEPS and lex.is_attribute_word(token.lower_)))
    ]


def action_slots(doc: Doc) -> list[Slot]:
    return [Slot(token_span(t), t.lemma_.lower(), VERB) for t in doc if t.pos_ == "VERB" and t.is_alpha]


def relation_slots(doc: Doc) -> list[Slot]:
    """Spatial relation phrases and verbs."""
    phrases, _ = _occupied(doc)
    spatial = [Slot(span, span.text.lower(), SPATIAL) for span in phrases if not introduces_clothing(span)]
    return sorted(spatial + action_slots(doc), key=lambda slot: slot.span.start)


def inflected(slot: Slot, lemma: str) -> str:
    """`lemma` in the form of the slot's word: plural noun, verb tense."""
    if slot.pos == NOUN and slot.span[-1].tag_ == "NNS":
        return pluralize(lemma)
    if slot.pos == VERB:
        return verb_form(lemma, slot.span[0].tag_)
    return lemma


def lexicon_replacements(slot: Slot, *, with_antonyms: bool) -> list[str]:
    return [inflected(slot, word) for word in lexicon().contrasts(slot.lemma, slot.pos, with_antonyms=with_antonyms)]


def model_replacements(request: Request, slot: Slot) -> list[str]:
    """Words a masked language model proposes, minus the original word,
    its synonyms and anything that is not a plain lower-case word."""
    text = request.doc.text
    masked = text[: slot.span.start_char] + MASK + text[slot.span.end_char :]
    original = {slot.span.text.lower(), slot.lemma}
    stop_words = load_spacy().Defaults.stop_words
    keep = []
    for candidate in request.fill_mask(masked):
        word = candidate.strip().lower()
        if not _WORD.fullmatch(word) or word in original or word in stop_words:
            continue
        if not any(lexicon().are_synonyms(known, word, slot.pos) for known in original):
            keep.append(word)
    return list(dict.fromkeys(keep))


def _replacements(
    request: Request, slots: list[Slot], family: str, subtype: str, propose: Callable[[Slot], list[str]]
) -> Iterator[Variant]:
    options = [[(slot, word) for word in propose(slot)] for slot in slots]
    variants = (
        build(request, [replacement(request, slot.span, word)], family, subtype)
        for slot, word in spread(options, request.rng)
    )
    return take_distinct(request, variants)


REPLACE_SLOTS: dict[str, Callable[[Doc], list[Slot]]] = {
    "object": object_slots,
    "attribute": attribute_slots,
    "relation": relation_slots,
}

CE_CLIP_SLOTS: dict[str, Callable[[Doc], list[Slot]]] = {
    "attribute": attribute_slots,
    "action": action_slots,
    "object": object_slots,
}


def replace(request: Request) -> list[Variant]:
    propose = functools.partial(lexicon_replacements, with_antonyms=True)
    variants = []
    for subtype, find_slots in REPLACE_SLOTS.items():
        variants += _replacements(request, find_slots(request.doc), REPLACE_FAMILY, subtype, propose)
    return variants


def ce_clip(request: Request) -> list[Variant]:
    """Relation: swap two nouns. Attribute/action/object: refill one word,
    by the caller's masked language model if given, else the lexicon's
    co-hyponyms."""
    nouns = NEGCLIP_SPANS["noun"](request.doc)
    variants = list(span_swaps(request, nouns, CE_CLIP_FAMILY, "relation"))
    if request.fill_mask is not None:
        propose = functools.partial(model_replacements, request)
    else:
        propose = functools.partial(lexicon_replacements, with_antonyms=False)
    for subtype, find_slots in CE_CLIP_SLOTS.items():
        variants += _replacements(request, find_slots(request.doc), CE_CLIP_FAMILY, subtype, propose)
    return variants
