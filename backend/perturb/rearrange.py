"""Hard positives that move noun phrases: conjunct reorder and spatial converse.

Moving a noun phrase keeps a caption true only if everything that
describes each object moves with it. So both rules act only on simple
noun phrases (determiner, adjectives, noun: see parse_reading.simple_np) in
captions whose shape leaves nothing attached elsewhere: in "a giraffe
behind a fence eating grass", "eating grass" belongs to the giraffe, and
"a fence eating grass ... in front of a giraffe" is false. Kamath et al.'s
SWAP reorders conjuncts ("the open door and the crouched cat"); converses
("X left of Y" -> "Y right of X", "X in front of Y" -> "Y behind X") keep
the relation by reversing it.
"""
from __future__ import annotations

from collections.abc import Iterator

from spacy.tokens import Doc, Span, Token

from backend.perturb.core import Request, Variant, build, moved, replacement, swapped, take_distinct
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import find_phrases, token_span
from backend.perturb.parse_reading import (
    COLLECTIVE_NOUNS,
    PORTION_NOUNS,
    SIMPLE_NP_DEPS,
    object_of,
    of_holder,
    simple_np,
)

DETERMINER_DEPS = ("det", "poss", "nummod")
MODIFIER_DEPS = ("amod", "compound")
# Words that may stand right before a reordered pair: the pair then starts
# a phrase of its own ("with cats and dogs"), not the tail of a mis-parsed
# noun phrase ("with stir fry vegetables and chicken").
PHRASE_OPENERS = ("ADP", "AUX", "VERB", "PUNCT", "SCONJ", "CCONJ")
# Prepositions of place: a phrase they open after "X and Y" locates both.
LOCATIVES = frozenset({
    "in", "on", "at", "near", "by", "under", "inside", "beside", "behind", "outside", "atop", "beneath",
})
# Determiners one noun phrase can share with the next ("the cats and dogs").
SHAREABLE_DETERMINERS = ("a", "an", "the", "some", "these", "those", "this", "that", "many", "several")
# Words whose meaning depends on what came before: "broccoli and other
# vegetables" cannot become "other vegetables and broccoli".
ORDER_WORDS = frozenset({"other", "another", "more", "else", "rest", "same", "remaining", "second", "last", "first"})


def _children(token: Token, deps: tuple[str, ...]) -> list[Token]:
    return [child for child in token.children if child.dep_ in deps]


def _describes_both(first: Token, child: Token, second: Token) -> bool:
    """A participle or a place after the pair that spaCy hangs on the first
    conjunct but that tells what both do or where both are ("a cat and
    dog napping together", "an apple and banana on a plate")."""
    if child.i < second.i or first.dep_ not in ("ROOT", "nsubj"):
        return False
    return (child.dep_ == "acl" and child.tag_ == "VBG") or (child.dep_ == "prep" and child.lower_ in LOCATIVES)


def _left_conjunct(first: Token, cc: Token, second: Token) -> Span | None:
    """The first conjunct as a simple noun phrase: its only dependents on
    the right are "and", the second conjunct and a participle of both."""
    for child in first.children:
        if child.i > first.i and child not in (cc, second) and not child.is_punct:
            if not _describes_both(first, child, second):
                return None
        if child.i < first.i and child.dep_ not in SIMPLE_NP_DEPS:
            return None
    span = first.doc[first.left_edge.i : first.i + 1]
    return span if all(token.is_alpha for token in span) else None


def _opens_a_phrase(doc: Doc, start: int) -> bool:
    return start == 0 or (doc[start - 1].pos_ in PHRASE_OPENERS and doc[start - 1].tag_ != "VB")


def _reorder_edits(request: Request, first: Token, second: Token, left: Span, right: Span) -> list | None:
    """Swap whole phrases, or only the nouns when one determiner serves both
    ("a man and woman" -> "a woman and man"); None when a number or an
    adjective might be shared ("two laptops and chairs", "red apples and
    oranges")."""
    left_det, right_det = _children(first, DETERMINER_DEPS), _children(second, DETERMINER_DEPS)
    left_mods, right_mods = _children(first, MODIFIER_DEPS), _children(second, MODIFIER_DEPS)
    if any(child.dep_ == "poss" for child in right_det):
        return None  # "a woman and her dog": "her dog and a woman" points forward
    if right_det or not (left_det or left_mods):
        return swapped(request, left, right)
    shared = len(left_det) == 1 and left_det[0].dep_ == "det" and left_det[0].lower_ in SHAREABLE_DETERMINERS
    if not shared or left_mods or right_mods or first.tag_ != second.tag_:
        return None
    return swapped(request, token_span(first), token_span(second))


def _follows_cleanly(doc: Doc, first: Token, second: Token, right: Span) -> bool:
    """Nothing after the pair could belong to its second noun alone: the
    caption ends, punctuation follows, or the verb the pair is subject of.
    ("a bed and a TV on top of a dresser": the TV is on the dresser.)"""
    if right.end >= len(doc) or doc[right.end].is_punct:
        return True
    following = doc[right.end]
    if following.head == first:
        return _describes_both(first, following, second)
    return following.pos_ in ("VERB", "AUX") and following.head != second


def _counted_by_collective(first: Token) -> bool:
    """"a pair of boots and an umbrella": the pair counts only the boots."""
    holder = of_holder(first)
    return holder is not None and holder.lemma_.lower() in COLLECTIVE_NOUNS | PORTION_NOUNS


def _conjunct_reorder(request: Request, cc: Token, family: str) -> Variant | None:
    first = cc.head
    conjuncts = _children(first, ("conj",))
    if cc.lower_ != "and" or len(conjuncts) != 1 or first.dep_ in ("compound", "poss", "conj"):
        return None
    second = conjuncts[0]
    if first.tag_ not in ("NN", "NNS") or second.tag_ not in ("NN", "NNS") or cc.i != first.i + 1:
        return None
    left, right = _left_conjunct(first, cc, second), simple_np(second)
    if left is None or right is None or right.start != cc.i + 1 or not _opens_a_phrase(request.doc, left.start):
        return None
    if right.end < len(request.doc) and request.doc[right.end].tag_ in ("NN", "NNS", "NNP", "NNPS", "POS"):
        return None  # the pair modifies a noun: "bride and grooms arms"
    words = {token.lower_ for token in (*left, *right)}
    if left.text.lower() == right.text.lower() or words & ORDER_WORDS or _counted_by_collective(first):
        return None
    if not _follows_cleanly(request.doc, first, second, right) or _attaches_higher(first, left, right):
        return None
    edits = _reorder_edits(request, first, second, left, right)
    return build(request, edits, family, "conjunct_reorder", "positive") if edits else None


QUANTIFIERS = frozenset({"several", "many", "few", "some", "two", "three", "four", "five", "six", "a", "an", "the"})


def _attaches_higher(first: Token, left: Span, right: Span) -> bool:
    """The second phrase may pair with the noun before the preposition, and spaCy's parse cannot tell:
    reordering would move it under the preposition. So it is when a bare noun after a preposition is joined
    to a counted phrase ("Two dishes of food and several blue arrows" -> "dishes of several blue arrows"),
    and whenever the preposition hangs on a noun other than by "of" ("a frame on wall and sink")."""
    counted = lambda span: span[0].lower_ in QUANTIFIERS or span[0].tag_ == "CD"  # noqa: E731
    if first.dep_ == "pobj" and first.head.lower_ != "of" and first.head.head.pos_ in ("NOUN", "PROPN"):
        return True  # "a frame on wall and sink": the sink may be the bathroom's, not the frame's place
    return first.dep_ == "pobj" and counted(right) and not counted(left)


def conjunct_reorders(request: Request, family: str) -> Iterator[Variant]:
    """"the open door and the crouched cat" -> "the crouched cat and the open door"."""
    found = [_conjunct_reorder(request, cc, family) for cc in request.doc if cc.dep_ == "cc"]
    variants = [variant for variant in found if variant is not None]
    request.rng.shuffle(variants)
    return take_distinct(request, variants)


def _subject_np(phrase: Span) -> Span | None:
    """X in "X <rel> Y" (a caption that is one noun phrase) or "X is <rel> Y"
    (a copula with nothing else attached), as a simple noun phrase that
    starts the caption and is followed by the relation or "is"; else None."""
    anchor = phrase[0].head
    if anchor.dep_ != "ROOT" or anchor.i + 1 != phrase.start:
        return None
    if anchor.pos_ == "NOUN":  # "a cat behind a dog"
        subject = anchor
    elif anchor.lemma_ == "be":  # "the cat is behind the dog"
        subjects = _children(anchor, ("nsubj",))
        others = [c for c in anchor.children if c not in subjects and c != phrase[0] and not c.is_punct]
        if len(subjects) != 1 or others or subjects[0].i + 1 != anchor.i:
            return None
        subject = subjects[0]
    else:
        return None
    noun_phrase = simple_np(subject, allow=phrase[0] if subject == anchor else None)
    return noun_phrase if noun_phrase is not None and noun_phrase.start == 0 else None


def _converse(request: Request, phrase: Span, converse: str, family: str) -> Variant | None:
    obj = object_of(phrase)
    obj_np = simple_np(obj) if obj is not None else None
    subject_np = _subject_np(phrase)
    if obj is None or obj_np is None or subject_np is None or obj_np.start != phrase.end:
        return None
    if not all(token.is_punct for token in request.doc[obj.i + 1 :]):
        return None
    if subject_np.end != phrase.start and subject_np.root.tag_ != obj_np.root.tag_:
        return None  # "the cats are left of the dog" would need "is"
    edits = [moved(request, obj_np, subject_np), moved(request, subject_np, obj_np)]
    if converse != phrase.text.lower():
        edits.insert(1, replacement(request, phrase, converse))
    return build(request, edits, family, "spatial_converse", "positive")


def spatial_converses(request: Request, family: str) -> Iterator[Variant]:
    """"a red circle to the left of a blue square" -> "a blue square to the right of a red circle"."""
    lex = lexicon()
    variants = []
    for phrase in find_phrases(request.doc, lex.spatial_phrases):
        converse = lex.spatial_converses.get(phrase.text.lower())
        variant = _converse(request, phrase, converse, family) if converse else None
        if variant is not None:
            variants.append(variant)
    request.rng.shuffle(variants)
    return take_distinct(request, variants)
