"""Hard negatives and hard positives of captions, checked by the oracle.

Each kind enumerates every candidate edit of the parsed caption; a seeded
shuffle picks the first candidate the oracle accepts (false in the scene for
negatives, true and textually different for positives). Enumeration instead
of random retries means "not applicable" is a definite answer (None).

Negative kinds: replace_colour, replace_size, replace_shape, replace_rel
(any other relation or location), flip_rel (left<->right, above<->below),
swap_att (exchange colour or size between two noun phrases with different
shapes; with equal shapes the swap would test the relation instead),
swap_rel (exchange the arguments of a relation), add_obj (conjoin an object
that is absent), add_att (name a wrong attribute). Note "Y left of X"
(swap_rel) and "X right of Y" (flip_rel) mean the same; they differ in form.

Positive kinds (Kamath et al.): synonym (big->large, left of->to the left
of, above->over), reorder (swap the conjuncts of "and"), converse
("X left of Y" -> "Y right of X").
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

from .grammar import LOCATION_MEANING, RELATION_MEANING, SIZE_MEANING, Caption, NounPhrase, parse, realise, words_for
from .oracle import evaluate
from .scene import COLOURS, OPPOSITE, SHAPES, Scene

Edit = Callable[[Caption], Iterator[Caption]]


def _with_np(caption: Caption, index: int, np_: NounPhrase) -> Caption:
    """The caption with noun phrase ``index`` (0 or 1) replaced."""
    return replace(caption, first=np_) if index == 0 else replace(caption, second=np_)


def _other_phrases(caption: Caption, keep: Callable[[str, str], bool]) -> Iterator[Caption]:
    """Relation/location phrases whose meaning ``m`` passes ``keep(old, m)``."""
    if caption.kind == "relation":
        old = caption.relation_meaning
        for phrase, meaning in RELATION_MEANING.items():
            if keep(old, meaning):
                yield replace(caption, relation=phrase)
    elif caption.kind == "location":
        old = caption.location_meaning
        for phrase, meaning in LOCATION_MEANING.items():
            if keep(old, meaning):
                yield replace(caption, location=phrase)


def _replace_colour(caption: Caption) -> Iterator[Caption]:
    for i, np_ in enumerate(caption.noun_phrases):
        if np_.colour is not None:
            for colour in COLOURS:
                if colour != np_.colour:
                    yield _with_np(caption, i, replace(np_, colour=colour))


def _replace_size(caption: Caption) -> Iterator[Caption]:
    for i, np_ in enumerate(caption.noun_phrases):
        if np_.size is not None:
            for word, meaning in SIZE_MEANING.items():
                if meaning != np_.size_meaning:
                    yield _with_np(caption, i, replace(np_, size=word))


def _replace_shape(caption: Caption) -> Iterator[Caption]:
    for i, np_ in enumerate(caption.noun_phrases):
        if np_.shape is not None:
            for shape in SHAPES:
                if shape != np_.shape:
                    yield _with_np(caption, i, replace(np_, shape=shape))


def _replace_rel(caption: Caption) -> Iterator[Caption]:
    return _other_phrases(caption, lambda old, new: new != old)


def _flip_rel(caption: Caption) -> Iterator[Caption]:
    return _other_phrases(caption, lambda old, new: new == OPPOSITE[old])


def _swap_att(caption: Caption) -> Iterator[Caption]:
    if caption.second is None:
        return
    a, b = caption.first, caption.second
    if a.shape is None or b.shape is None or a.shape == b.shape:
        return
    if a.colour and b.colour and a.colour != b.colour:
        yield caption.with_phrases(replace(a, colour=b.colour), replace(b, colour=a.colour))
    if a.size and b.size and a.size_meaning != b.size_meaning:
        yield caption.with_phrases(replace(a, size=b.size), replace(b, size=a.size))


def _swap_rel(caption: Caption) -> Iterator[Caption]:
    if caption.kind == "relation":
        yield caption.swapped()


def _add_obj(caption: Caption) -> Iterator[Caption]:
    if caption.kind == "object":
        for shape in SHAPES:
            for colour in COLOURS:
                added = NounPhrase(shape=shape, colour=colour)
                yield Caption("and", caption.first, added)
                yield Caption("and", added, caption.first)


def _add_att(caption: Caption) -> Iterator[Caption]:
    for i, np_ in enumerate(caption.noun_phrases):
        if np_.colour is None:
            for colour in COLOURS:
                yield _with_np(caption, i, replace(np_, colour=colour))
        if np_.size is None:
            for word in SIZE_MEANING:
                yield _with_np(caption, i, replace(np_, size=word))


def _synonym(caption: Caption) -> Iterator[Caption]:
    for i, np_ in enumerate(caption.noun_phrases):
        if (size := np_.size_meaning) is not None:
            for word in words_for(size, SIZE_MEANING):
                if word != np_.size:
                    yield _with_np(caption, i, replace(np_, size=word))
    if caption.kind == "relation":
        for phrase in words_for(caption.relation_meaning, RELATION_MEANING):
            if phrase != caption.relation:
                yield replace(caption, relation=phrase)


def _reorder(caption: Caption) -> Iterator[Caption]:
    if caption.kind == "and":
        yield caption.swapped()


def _converse(caption: Caption) -> Iterator[Caption]:
    if caption.kind == "relation":
        opposite = OPPOSITE[caption.relation_meaning]
        for phrase in words_for(opposite, RELATION_MEANING):
            yield replace(caption.swapped(), relation=phrase)


NEGATIVE_EDITS: dict[str, Edit] = {
    "replace_colour": _replace_colour, "replace_size": _replace_size,
    "replace_shape": _replace_shape, "replace_rel": _replace_rel, "flip_rel": _flip_rel,
    "swap_att": _swap_att, "swap_rel": _swap_rel, "add_obj": _add_obj, "add_att": _add_att,
}
POSITIVE_EDITS: dict[str, Edit] = {"synonym": _synonym, "reorder": _reorder, "converse": _converse}
NEGATIVE_KINDS: tuple[str, ...] = tuple(NEGATIVE_EDITS)
POSITIVE_KINDS: tuple[str, ...] = tuple(POSITIVE_EDITS)


def _first_accepted(candidates: list[Caption], rng: np.random.Generator,
                    accept: Callable[[Caption], bool]) -> Caption | None:
    for k in rng.permutation(len(candidates)):
        if accept(candidates[k]):
            return candidates[k]
    return None


def negative_caption(caption: Caption, scene: Scene, kind: str,
                     rng: np.random.Generator) -> Caption | None:
    """A ``kind`` edit of ``caption`` that is false in ``scene``, or None if none exists."""
    candidates = list(NEGATIVE_EDITS[kind](caption))
    return _first_accepted(candidates, rng, lambda c: not evaluate(c, scene))


def positive_caption(caption: Caption, scene: Scene, kind: str,
                     rng: np.random.Generator) -> Caption | None:
    """A ``kind`` rewording of ``caption`` that is true in ``scene`` and reads differently."""
    text = realise(caption)
    candidates = list(POSITIVE_EDITS[kind](caption))
    return _first_accepted(candidates, rng,
                           lambda c: evaluate(c, scene) and realise(c) != text)


def replace_pair(caption: Caption, scene: Scene,
                 rng: np.random.Generator) -> tuple[Caption, Caption] | None:
    """Kamath et al.'s REPLACE triplet: a synonym positive and a negative at the same slot.

    A slot is a size word or the relation phrase; the positive swaps it for
    its synonym (large->big), the negative for a word of another meaning
    (large->small), and must be false in ``scene``.
    """
    slots: list[tuple[Caption, list[Caption]]] = []
    for i, np_ in enumerate(caption.noun_phrases):
        if (size := np_.size_meaning) is not None:
            synonym = next(w for w in words_for(size, SIZE_MEANING) if w != np_.size)
            others = [w for w, m in SIZE_MEANING.items() if m != size]
            slots.append((_with_np(caption, i, replace(np_, size=synonym)),
                          [_with_np(caption, i, replace(np_, size=w)) for w in others]))
    if caption.kind == "relation":
        meaning = caption.relation_meaning
        synonym = next(p for p in words_for(meaning, RELATION_MEANING) if p != caption.relation)
        slots.append((replace(caption, relation=synonym),
                      [replace(caption, relation=p) for p, m in RELATION_MEANING.items() if m != meaning]))
    for k in rng.permutation(len(slots)):
        positive, negatives = slots[k]
        negative = _first_accepted(negatives, rng, lambda c: not evaluate(c, scene))
        if negative is not None and evaluate(positive, scene):
            return positive, negative
    return None


def hard_negative(text: str, scene: Scene, kind: str, rng: np.random.Generator) -> str | None:
    """Text version of ``negative_caption`` (parses ``text``; raises ValueError if invalid)."""
    negative = negative_caption(parse(text), scene, kind, rng)
    return None if negative is None else realise(negative)


def hard_positive(text: str, scene: Scene, kind: str, rng: np.random.Generator) -> str | None:
    """Text version of ``positive_caption`` (parses ``text``; raises ValueError if invalid)."""
    positive = positive_caption(parse(text), scene, kind, rng)
    return None if positive is None else realise(positive)
