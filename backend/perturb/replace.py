"""Single-word replacement negatives: REPLACE (Hsieh et al., 2023; CLOVe) and
CE-CLIP's relation/attribute/action/object negatives (Zhang et al., 2024).

Replacement words come from the curated lexicon only (see slots.py for
where a word may go and which words fit there), inflected like the word
they replace ("dogs" -> "cats", "eating" -> "holding"). A caller's masked
language model may rank CE-CLIP's refills, but only among the lexicon's
words for that slot: a model proposing any word it likes brings back the
synonyms and rare words this family must not produce.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator

from spacy.tokens import Doc, Span, Token

from backend.perturb.ages import child_slots
from backend.perturb.aimed_acts import aimed_act_slots
from backend.perturb.arrangement import arrangement_slots
from backend.perturb.athletes import athlete_slots
from backend.perturb.attribute_fit import attribute_fits
from backend.perturb.attribute_phrases import attribute_phrase_slots
from backend.perturb.compounds import compound_slots, counted
from backend.perturb.core import FillMask, Request, Variant, build, replacement, spread, swapped, take_distinct
from backend.perturb.counted import count_slots
from backend.perturb.garments import held_garment_slots
from backend.perturb.gendered import gender_swap, people_slots
from backend.perturb.kind_modifiers import kind_slots
from backend.perturb.lexicon import ADJ, lexicon
from backend.perturb.misread_verbs import misread_verb_slots
from backend.perturb.motion import motion_slots
from backend.perturb.nlp import find_phrases, token_span
from backend.perturb.nouns import group_kind, is_physical
from backend.perturb.parse_reading import (
    COLLECTIVE_NOUNS,
    NOUN_TAGS,
    PORTION_NOUNS,
    head_noun,
    is_counted_mass,
    new_adjacent_repeat,
    next_to_another_noun,
)
from backend.perturb.placement import placement_slots
from backend.perturb.plausibility import plausible_among
from backend.perturb.refill_fit import fits_slot
from backend.perturb.slots import (
    Slot,
    action_slots,
    attribute_slots,
    inflected,
    introduces_clothing,
    object_slots,
    relation_slots,
    replacement_lemmas,
)
from backend.perturb.typical import swap_repairs_caption
from backend.perturb.verb_phrases import verb_phrase_slots
from backend.perturb.without import without_slots

__all__ = ["MASK", "Slot", "ce_clip", "inflected", "introduces_clothing", "replace"]

REPLACE_FAMILY = "replace"
CE_CLIP_FAMILY = "ce_clip"
# Placeholder a `fill_mask` callable receives in place of the masked word;
# a caller wrapping a transformers fill-mask pipeline swaps in its
# tokenizer's mask token (RoBERTa's, as CE-CLIP used, is the same string).
MASK = "<mask>"
# Foods, and the dishes besides mass nouns that may be named bare as a food ("eating pizza", "a plate of cake").
FOOD_GROUPS = ("fruit", "vegetable", "meat", "starch", "dish")
FOODS_EATEN_BARE = frozenset({"pizza", "cake", "pie"})
DRINK_GROUPS = ("hot drink", "cold drink")
_WORD = re.compile(r"[a-z]+(?:[ -][a-z]+)*")
# Nouns that locate or frame rather than name a thing: swapping them with
# an object gives word salad ("a slanted street of a woman").
FRAME_NOUNS = frozenset({
    "top", "front", "side", "middle", "back", "bottom", "edge", "corner", "background", "foreground", "view",
    "picture", "photo", "photograph", "image", "close", "closeup", "area", "day", "night", "time", "way", "something",
    "thing", "lot", "end", "center", "shot", "scene", "sort", "distance", "air", "body",
})


def _without_new_repeats(request: Request, variants: Iterator[Variant]) -> Iterator[Variant]:
    return (variant for variant in variants if not new_adjacent_repeat(request.caption, variant.text))


def _replacement_candidates(
    request: Request, slots: list[Slot], family: str, subtype: str, propose: Callable[[Slot], list[str]]
) -> Iterator[Variant]:
    """Every slot's refills, spread so each slot gets a turn before any gets two."""
    options = [[(slot, word) for word in propose(slot)] for slot in slots]
    return (
        build(request, [replacement(request, slot.span, inflected(slot, word))], family, subtype)
        for slot, word in spread(options, request.rng)
    )


def _replacements(
    request: Request, slots: list[Slot], family: str, subtype: str, propose: Callable[[Slot], list[str]]
) -> Iterator[Variant]:
    variants = _replacement_candidates(request, slots, family, subtype, propose)
    return take_distinct(request, _without_new_repeats(request, variants))


def model_replacements(request: Request, fill_mask: FillMask, slot: Slot) -> list[str]:
    """The lexicon's words for this slot, in the order a masked language
    model (`fill_mask`) ranks them; words the model does not propose are left out."""
    text = request.text
    masked = text[: slot.span.start_char] + MASK + text[slot.span.end_char :]
    allowed = set(replacement_lemmas(slot, with_antonyms=False))
    proposed = (candidate.strip().lower() for candidate in fill_mask(masked))
    return list(dict.fromkeys(word for word in proposed if _WORD.fullmatch(word) and word in allowed))


REPLACE_SLOTS: dict[str, Callable[[Doc], list[Slot]]] = {
    "object": object_slots,
    "attribute": attribute_slots,
    "relation": relation_slots,
}

CE_CLIP_SLOTS: dict[str, Callable[[Doc], list[Slot]]] = {
    "attribute": attribute_slots,
    "action": action_slots,
}


# Replacements beyond one lexicon word per slot, per subtype: each finder gives (span, new texts) pairs.
_RELATION_PHRASES = (without_slots, motion_slots, verb_phrase_slots, placement_slots, held_garment_slots,
                     aimed_act_slots, arrangement_slots)
PHRASE_SLOTS: dict[str, tuple[Callable[[Doc], list[tuple[Span, list[str]]]], ...]] = {
    "object": (kind_slots, people_slots, child_slots, athlete_slots),
    "attribute": (count_slots, attribute_phrase_slots),
    "relation": (*_RELATION_PHRASES, functools.partial(misread_verb_slots, finders=_RELATION_PHRASES)),
}


def _phrase_edits(request: Request, subtype: str) -> list[list[Variant]]:
    """Each phrase slot's variants in a list (see PHRASE_SLOTS), and for objects a person of the other
    gender with the pronouns that point back, which takes several edits at once."""
    doc = request.doc
    options = [[build(request, [replacement(request, span, word)], REPLACE_FAMILY, subtype) for word in words]
               for find in PHRASE_SLOTS[subtype] for span, words in find(doc)]
    swap = gender_swap(doc) if subtype == "object" else None
    if swap:
        edits = [replacement(request, token_span(token), word) for token, word in swap]
        options.append([build(request, edits, REPLACE_FAMILY, subtype)])
    return options


def replace(request: Request) -> list[Variant]:
    """Each subtype's phrase edits (see `_phrase_edits`) come first: a caption has few of them, and a word
    slot's many lexicon refills would otherwise fill the subtype's quota before any is reached. An object's
    refill must fit its slot, as CE-CLIP's must (`_fitting_objects`)."""
    propose = functools.partial(replacement_lemmas, with_antonyms=True)
    variants: list[Variant] = []
    for subtype, find_slots in REPLACE_SLOTS.items():
        phrases = spread(_phrase_edits(request, subtype), request.rng)
        if subtype == "object":
            words = _fitting_objects(request, REPLACE_FAMILY, propose, all_groups=False)
        else:
            words = _replacement_candidates(request, find_slots(request.doc), REPLACE_FAMILY, subtype,
                                            functools.partial(_fitting_attributes, propose))
        variants += take_distinct(request, _without_new_repeats(request, itertools.chain(phrases, words)))
    return variants


# Roles of nouns that name a participant; others ("rubber" in "rubber
# green turtle") are modifiers spaCy did not label as such.
ARGUMENT_DEPS = ("ROOT", "nsubj", "nsubjpass", "dobj", "pobj", "attr", "conj", "appos")


def _swappable_noun(token: Token, covered: set[int]) -> bool:
    """A head noun naming a thing, with no noun modifier to leave behind
    ("a shopping bag" -> "a shopping man"), no collective around it, and no
    hyphen joining it to a word ("a close-up" -> "a close-plate" was judged garbled)."""
    lemma = token.lemma_.lower()
    doc = token.doc
    return (
        token.tag_ in NOUN_TAGS
        and not any(doc[i].tag_ == "HYPH" for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc))
        and token.dep_ in ARGUMENT_DEPS
        and token.is_alpha
        and token.dep_ != "compound"
        and token.i not in covered
        and not any(child.dep_ == "compound" for child in token.children)
        and lemma not in FRAME_NOUNS | COLLECTIVE_NOUNS | PORTION_NOUNS
        and not is_counted_mass(token)
        and not next_to_another_noun(token)
        and is_physical(lemma)
    )


def determiner_kind(noun: Token) -> str:
    """"a", "the", "his", a number or nothing: two nouns trade places only
    with the same kind, so no "a water" or "the some" appears."""
    for child in noun.children:
        if child.dep_ == "poss":
            return "possessive"
        if child.dep_ == "nummod":
            return "number"
        if child.dep_ == "det":
            return "indefinite" if child.lower_ in ("a", "an") else f"det:{child.lower_ in ('the', 'this', 'that')}"
    return "none"


def symmetric_between(doc: Doc, first: Token, second: Token) -> bool:
    """True when the words between two nouns hold "and", "or", "with",
    "next to" ...: swapping them would say the same ("a dog next to a cat")."""
    between = f" {' '.join(token.lower_ for token in doc[first.i + 1 : second.i])} "
    return any(f" {phrase} " in between for phrase in lexicon().symmetric_relations) or " , " in between


def _noun_swaps(request: Request) -> Iterator[Variant]:
    """CE-CLIP's relation negative: two nouns of the same number trade places."""
    doc = request.doc
    lex = lexicon()
    phrases = find_phrases(doc, lex.spatial_phrases) + find_phrases(doc, lex.multiword_nouns, by_lemma=True)
    covered = {i for span in phrases for i in range(span.start, span.end)}
    nouns = [token for token in doc if _swappable_noun(token, covered)]
    pairs = [
        (a, b)
        for a, b in itertools.combinations(nouns, 2)
        if a.tag_ == b.tag_
        and lex.may_replace(a.lemma_, b.lemma_)
        and determiner_kind(a) == determiner_kind(b)
        and not symmetric_between(doc, a, b)
        and not swap_repairs_caption(a, b)
    ]
    request.rng.shuffle(pairs)
    variants = (
        build(request, swapped(request, token_span(a), token_span(b)), CE_CLIP_FAMILY, "relation") for a, b in pairs
    )
    return take_distinct(request, variants)


def _fitting(propose: Callable[[Slot], list[str]], all_groups: bool, slot: Slot) -> list[str]:
    """`propose`'s nouns for `slot` that fit it (`refill_fit.fits_slot`); a compound refilled whole keeps to its
    head's fit class (`Slot.whole_compound`), a kind of a group word ("a jet") to that word's class
    (`nouns.group_kind`) where it is counted as the compounds are (`compounds.counted`)."""
    kind = group_kind(slot.lemma)
    if kind is not None and not counted(slot.span.root):
        return []  # "sits outside the fence for pickup" is no truck, "a jumbo jet" no "jumbo helicopter"
    strict, original = all_groups or slot.whole_compound or kind is not None, kind or slot.lemma
    bare = _food_named_bare(slot)
    return [word for word in propose(slot) if fits_slot(slot.span.root, original, word, strict)
            and (not bare or _stands_bare(word))]


def _stands_bare(word: str) -> bool:
    """A mass noun, a drink or one of `FOODS_EATEN_BARE`: "a glass of soda", "eating cake"."""
    groups = lexicon().object_groups
    return word in lexicon().mass_nouns | FOODS_EATEN_BARE or any(word in groups[group] for group in DRINK_GROUPS)


def _food_named_bare(slot: Slot) -> bool:
    """A food in the singular with no article, number or owner: named as a mass ("a table filled with pizza",
    "eating pizza"), where only another mass can stand ("filled with hot dog" was judged err; "eating sandwich")."""
    noun, groups = slot.span.root, lexicon().object_groups
    food = slot.lemma in lexicon().mass_nouns or any(slot.lemma in groups[group] for group in FOOD_GROUPS)
    return food and noun.tag_ == "NN" and not any(child.dep_ in ("det", "nummod", "poss") for child in noun.children)


def _fitting_attributes(propose: Callable[[Slot], list[str]], slot: Slot) -> list[str]:
    """`propose`'s words for `slot`, where an attribute's must suit its noun
    (`attribute_fit.attribute_fits`)."""
    noun = head_noun(slot.span[0]) if slot.pos == ADJ else None
    kept = _other_attributes(slot, noun) if noun is not None else []
    return [word for word in propose(slot) if noun is None or (
        attribute_fits(noun, word) and not any(lexicon().are_synonyms(word, other, ADJ) for other in kept))]


def _other_attributes(slot: Slot, noun: Token) -> list[str]:
    """The words before the noun back to its determiner or the noun ending a phrase before it (modifiers, "and",
    commas, whatever spaCy hung them on): a refill that means one of them says it twice ("A grey and white dog" ->
    "A grey and gray dog" was judged err)."""
    doc, words, i = noun.doc, [], noun.i - 1
    while i >= 0 and doc[i].pos_ in ("ADJ", "NOUN", "PROPN", "CCONJ", "PUNCT", "ADV"):
        if doc[i].pos_ in ("NOUN", "PROPN") and doc[i + 1].pos_ in ("CCONJ", "PUNCT"):
            break  # another noun phrase ends here: "a large cake and small plates" may take "big plates"
        if i not in range(slot.span.start, slot.span.end) and doc[i].is_alpha:
            words.append(doc[i].lower_)
        i -= 1
    return words


def _fitting_objects(
    request: Request, family: str, propose: Callable[[Slot], list[str]], all_groups: bool
) -> Iterator[Variant]:
    """Object refills that fit their slot and that the selectional rules do not flag: a flagged refill
    ("a horse sitting in a sink") gives way to the next one instead of taking the slot's turn."""
    slots = sorted(object_slots(request.doc) + compound_slots(request.doc), key=lambda slot: slot.span.start)
    fitting = functools.partial(_fitting, propose, all_groups)
    return plausible_among(request.caption, _replacement_candidates(request, slots, family, "object", fitting))


def ce_clip(request: Request) -> list[Variant]:
    """Relation: swap two nouns. Attribute/action/object: refill one word
    with a lexicon co-hyponym, ranked by the caller's masked language
    model when one is given; an object's refill must fit its slot, and an
    attribute's its noun, as REPLACE's must (else the texts REPLACE refuses,
    "a green horse", "a paper building", come back as CE-CLIP's)."""
    variants = list(_noun_swaps(request))
    if request.fill_mask is not None:
        propose = functools.partial(model_replacements, request, request.fill_mask)
    else:
        propose = functools.partial(replacement_lemmas, with_antonyms=False)
    fitting = functools.partial(_fitting_attributes, propose)
    for subtype, find_slots in CE_CLIP_SLOTS.items():
        variants += _replacements(request, find_slots(request.doc), CE_CLIP_FAMILY, subtype, fitting)
    objects = _fitting_objects(request, CE_CLIP_FAMILY, propose, all_groups=True)
    variants += take_distinct(request, _without_new_repeats(request, objects))
    return variants
