"""Hard positives (Kamath et al., 2024): rewrites that keep the caption true.

`synonym` replaces a word by a hand-checked synonym (the paper's Tables 4-6
plus careful additions, see lexicon.json). `conjunct_reorder` swaps the
noun phrases around "and"; `spatial_converse` turns "X left of Y" into
"Y right of X". Both move whole, self-contained noun phrases, so every
attribute stays on its object; anything less certain is skipped.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from spacy.tokens import Span

from backend.perturb.core import Request, Variant, build, moved, replacement, spread, swapped, take_distinct
from backend.perturb.lexicon import SynonymRule, lexicon
from backend.perturb.nlp import (
    NOUNISH,
    Relation,
    chunk_of,
    find_phrases,
    is_plural,
    is_self_contained,
    prepositional_objects,
    spatial_relations,
    subject_of,
    token_span,
)
from backend.perturb.replace import Slot, inflected, introduces_clothing

FAMILY = "hard_positive"
# Roles in which a noun phrase can trade places with another without
# changing what some other word says about it.
FREE_SUBJECT_DEPS = ("ROOT", "nsubj", "nsubjpass", "attr")


def _object_not_worn(span: Span) -> bool:
    return not introduces_clothing(span)


def _object_has_determiner(span: Span) -> bool:
    objects = prepositional_objects(span)
    return bool(objects) and all(any(c.dep_ in ("det", "poss") for c in obj.children) for obj in objects)


def _subject_is_animate(span: Span) -> bool:
    subject = subject_of(span[0])
    return subject is not None and lexicon().is_animate(subject.lemma_.lower())


# Conditions a synonym rule can require in lexicon.json ("when").
CONDITIONS: dict[str, Callable[[Span], bool]] = {
    "object_not_worn": _object_not_worn,
    "object_has_determiner": _object_has_determiner,
    "subject_is_animate": _subject_is_animate,
}


def _rule_applies(rule: SynonymRule, span: Span) -> bool:
    first = span[0]
    if rule.pos and first.pos_ not in rule.pos:
        return False
    if rule.deps and first.dep_ not in rule.deps:
        return False
    return all(CONDITIONS[condition](span) for condition in rule.when)


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
            if rule.word == token.lemma_.lower() and _rule_applies(rule, span)
        ])
    return options


def _synonyms(request: Request) -> Iterator[Variant]:
    variants = (
        build(request, [replacement(request, span, synonym)], FAMILY, "synonym", "positive")
        for span, synonym in spread(_synonym_options(request), request.rng)
    )
    return take_distinct(request, variants)


def _conjunct_reorders(request: Request) -> Iterator[Variant]:
    """"the open door and the crouched cat" -> "the crouched cat and the open door"."""
    variants = []
    for cc in request.doc:
        if cc.dep_ != "cc" or cc.lower_ != "and":
            continue
        first = cc.head
        conjuncts = [child for child in first.children if child.dep_ == "conj"]
        if len(conjuncts) != 1 or first.pos_ not in NOUNISH or conjuncts[0].pos_ not in NOUNISH:
            continue
        left, right = chunk_of(first), chunk_of(conjuncts[0])
        others = [child for child in first.children if child not in (cc, conjuncts[0]) and not child.is_punct]
        if (
            left.end == cc.i
            and right.start == cc.i + 1
            and first.left_edge.i >= left.start
            and all(left.start <= child.i < left.end for child in others)
            and is_self_contained(right)
            and left.text.lower() != right.text.lower()
        ):
            variants.append(build(request, swapped(request, left, right), FAMILY, "conjunct_reorder", "positive"))
    request.rng.shuffle(variants)
    return take_distinct(request, variants)


def _converse_is_safe(relation: Relation) -> bool:
    """Only "X <rel> Y" or "X is <rel> Y" with nothing else attached to X or Y."""
    subject, predicate, obj = relation.subject, relation.predicate, relation.object
    doc = subject.doc
    gap = doc[subject.end : predicate.start]
    if len(gap) > 1 or (len(gap) == 1 and gap[0].lemma_ != "be"):
        return False
    if len(gap) == 1 and is_plural(subject) != is_plural(obj):
        return False  # "the cats are left of the dog" would need "is"
    outside = [child for child in subject.root.children if not subject.start <= child.i < subject.end]
    return (
        subject.root.dep_ in FREE_SUBJECT_DEPS
        and subject.root.left_edge.i >= subject.start
        and all(child.i == predicate.start for child in outside)
        and is_self_contained(obj)
    )


def _spatial_converses(request: Request) -> Iterator[Variant]:
    """"a red circle to the left of a blue square" -> "a blue square to the right of a red circle"."""
    lex = lexicon()
    variants = []
    for relation in spatial_relations(request.doc, lex.spatial_phrases):
        converse = lex.spatial_converses.get(relation.predicate.text.lower())
        if converse and _converse_is_safe(relation):
            edits = [
                moved(request, relation.object, relation.subject),
                replacement(request, relation.predicate, converse),
                moved(request, relation.subject, relation.object),
            ]
            variants.append(build(request, edits, FAMILY, "spatial_converse", "positive"))
    request.rng.shuffle(variants)
    return take_distinct(request, variants)


def hard_positive(request: Request) -> list[Variant]:
    return [*_synonyms(request), *_conjunct_reorders(request), *_spatial_converses(request)]
