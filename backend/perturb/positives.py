"""Hard positives (Kamath et al., 2024): rewrites that keep the caption true.

`synonym` replaces a word by a hand-checked synonym (the paper's Tables 4-6
plus careful additions, see lexicon.json), but only where the synonym
keeps the sense: "in -> within" for a bounded place ("within the kitchen",
never "within the sand"), "holding -> grasping" for a person or animal
holding ("a plate grasping a sandwich" is false). `conjunct_reorder` and
`spatial_converse` live in rearrange.py. Anything less certain is skipped.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from spacy.tokens import Span, Token

from backend.perturb.core import Request, Variant, build, replacement, spread, take_distinct
from backend.perturb.lexicon import SynonymRule, lexicon, wordnet
from backend.perturb.nlp import find_phrases, token_span
from backend.perturb.nouns import noun_senses
from backend.perturb.parse_reading import (
    direct_object,
    has_particle,
    head_noun,
    in_fixed_phrase,
    new_adjacent_repeat,
    noun_lemma,
    object_of,
    subject_of,
    verb_lemma,
)
from backend.perturb.rearrange import conjunct_reorders, spatial_converses
from backend.perturb.slots import PERSON_PRONOUNS, Slot, head_lemma, inflected, places_a_thing
from backend.perturb.units import SHADES
from backend.perturb.wearing import introduces_clothing

FAMILY = "hard_positive"
# Verbs of motion or looking: "in" after them is a direction ("puts her
# hand in a dish", "looking inside the fridge"), which "within" is not.
DIRECTION_VERBS = frozenset({
    "look", "peek", "peer", "stare", "gaze", "reach", "go", "walk", "run", "jump", "climb", "put", "place", "pour",
    "drop", "throw", "get", "come", "fly", "drive", "ride", "lean", "crawl", "dive", "fall", "stick", "poke", "enter",
    "step", "head", "move", "toss", "dip", "insert", "stuff", "load",
})
# Words after "looking" that make it a gaze ("looking at"), not a search
# ("looking for") or an appearance ("looking happy").
# ("looking through a book" is browsing it, so "through" is not among them.)
GAZE_WORDS = frozenset({"at", "out", "into", "toward", "towards", "over", "up", "down", "across", "outside"})


def _has_object(span: Span) -> bool:
    return object_of(span) is not None


def _object_not_worn(span: Span) -> bool:
    return not introduces_clothing(span)


def _object_is_bounded(span: Span) -> bool:
    """"in the kitchen", "in a vase": where something is, inside a place
    with an inside; not a surface or a stretch ("in the sand", "in the
    background"), nor a direction ("puts her hand in a dish"), nor the set
    phrase "in between" ("within between two stalls")."""
    lemma = head_lemma(object_of(span))
    head = span[0].head
    if (head.pos_ == "VERB" and verb_lemma(head) in DIRECTION_VERBS) or _next_word(span) == "between":
        return False
    return lemma is not None and not introduces_clothing(span) and lexicon().in_class(lemma, "bounded")


def _not_a_set_phrase(span: Span) -> bool:
    """"seen behind glass" is about a display case, not a position."""
    return not in_fixed_phrase(span[-1], lexicon().fixed_phrases)


def _is_animate_noun(token, *, person: bool) -> bool:
    lemma = head_lemma(token)
    if lemma is None:
        return False
    if token.pos_ == "PRON":
        return lemma in PERSON_PRONOUNS
    return lexicon().is_person(lemma) if person else lexicon().is_animate(lemma)


def _subject_is_animate(span: Span) -> bool:
    return _is_animate_noun(subject_of(span[0]), person=False)


def _subject_is_person(span: Span) -> bool:
    return _is_animate_noun(subject_of(span[0]), person=True)


def _head_is_animate(span: Span) -> bool:
    return _is_animate_noun(head_noun(span[0]), person=False)


def _head_is_person(span: Span) -> bool:
    return _is_animate_noun(head_noun(span[0]), person=True)


def _next_word(span: Span) -> str:
    doc = span.doc
    return doc[span.end].lower_ if span.end < len(doc) else ""


def _plain_adjective(span: Span) -> bool:
    """An adjective on the head of its noun phrase ("an old car"), not
    inside a set phrase ("old time car", "3 year old") or a noun modifier."""
    token = span[0]
    head = head_noun(token)
    return (
        head is not None
        and head.dep_ != "compound"
        and all(child.dep_ in ("advmod", "cc", "conj") for child in token.children)
        and not in_fixed_phrase(token, lexicon().fixed_phrases)
    )


def _colour_of_a_thing(span: Span) -> bool:
    """A colour of an object: not a person's skin, not "black and white"
    photography, not a set phrase ("red light", "white wine"), not the second
    word of a shaded colour ("baby blue" would become "baby sapphire"), not on a word WordNet knows no noun
    sense of (a parse slip: "A woman in black sits" has "sits" a noun, and "in ebony" was judged err)."""
    token = span[0]
    head = head_noun(token)
    if not _plain_adjective(span) or head is None or _is_animate_noun(head, person=True):
        return False
    if (token.i > 0 and token.doc[token.i - 1].lower_ in SHADES) or _unknown_noun(head):
        return False
    partners = {child.lower_ for child in token.children if child.dep_ == "conj"} | {token.head.lower_}
    return not ({token.lower_} | partners) >= {"black", "white"}


def _unknown_noun(noun: Token) -> bool:
    """WordNet (where installed) knows no noun sense of the word."""
    return wordnet() is not None and not (noun_senses(noun.lemma_.lower()) or noun_senses(noun.lower_))


# Conditions a synonym rule can require in lexicon.json ("when").
CONDITIONS: dict[str, Callable[[Span], bool]] = {
    "has_object": _has_object,
    "object_not_worn": _object_not_worn,
    "object_is_bounded": _object_is_bounded,
    "not_a_set_phrase": _not_a_set_phrase,
    "subject_is_animate": _subject_is_animate,
    "subject_is_person": _subject_is_person,
    "head_is_animate": _head_is_animate,
    "head_is_person": _head_is_person,
    "has_direct_object": lambda span: direct_object(span[0]) is not None,
    "no_direct_object": lambda span: direct_object(span[0]) is None,
    "no_particle": lambda span: not has_particle(span[-1]),
    "active_verb": lambda span: span[0].tag_ != "VBN",
    "hangs_from_something": lambda span: _next_word(span) in ("from", "off"),
    "gaze_follows": lambda span: _next_word(span) in GAZE_WORDS,
    "plain_adjective": _plain_adjective,
    "colour_of_a_thing": _colour_of_a_thing,
}


def _stands_alone(span: Span) -> bool:
    """Not part of a slash or hyphen compound ("over/under pass", "close-up") nor the object of another
    preposition ("from behind a rail" cannot become "from to the rear of a rail")."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    after = doc[span.end] if span.end < len(doc) else None
    joined = any(token is not None and token.text in ("/", "-") for token in (before, after))
    return not joined and not (before is not None and span[0].pos_ == "ADP" and before.pos_ == "ADP")


def _rule_applies(rule: SynonymRule, span: Span) -> bool:
    first = span[0]
    if not _stands_alone(span):
        return False
    if rule.pos and first.pos_ not in rule.pos:
        return False
    if rule.deps and first.dep_ not in rule.deps:
        return False
    if first.pos_ == "ADP" and not places_a_thing(span):
        return False
    return all(CONDITIONS[condition](span) for condition in rule.when)


def _token_lemma(token) -> str:
    if token.pos_ == "VERB":
        return verb_lemma(token)
    return noun_lemma(token) if token.pos_ == "NOUN" else token.lemma_.lower()


def _synonym_options(request: Request) -> list[list[tuple[Span, str]]]:
    """Per matched word or phrase, its (span, synonym) options."""
    lex, doc = lexicon(), request.doc
    form_rules = [rule for rule in lex.synonym_rules if rule.match == "form"]
    lemma_rules = [rule for rule in lex.synonym_rules if rule.match == "lemma"]
    # Spatial phrases join the match so "in" is not found inside "in front of".
    spans = find_phrases(doc, [rule.word for rule in form_rules] + lex.spatial_phrases)
    options = [
        [(span, rule.synonym) for rule in form_rules if rule.word == span.text.lower() and _rule_applies(rule, span)]
        for span in spans
    ]
    for token in doc:
        span = token_span(token)
        options.append([
            (span, inflected(Slot(span, rule.word, rule.pos[0]), rule.synonym))
            for rule in lemma_rules
            if rule.word == _token_lemma(token) and _rule_applies(rule, span)
        ])
    return options


def _synonyms(request: Request) -> Iterator[Variant]:
    variants = (
        build(request, [replacement(request, span, synonym)], FAMILY, "synonym", "positive")
        for span, synonym in spread(_synonym_options(request), request.rng)
    )
    return take_distinct(request, (v for v in variants if not new_adjacent_repeat(request.caption, v.text)))


def hard_positive(request: Request) -> list[Variant]:
    return [*_synonyms(request), *conjunct_reorders(request, FAMILY), *spatial_converses(request, FAMILY)]
