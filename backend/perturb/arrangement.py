"""Things set in order, and the same things scattered, as a relation phrase: "Several refrigerators are lined up
by a wall" -> "Several refrigerators are scattered by a wall", "Tall boxes are stacked on a brown sidewalk" ->
"Tall boxes are scattered on a brown sidewalk" (SugarCrepe's replace_rel: "lined up by" -> "sprawled across",
"in a row" -> "scattered everywhere").

A photo tells a stack, a pile or a line from things strewn about. Only the participle or past of many things (a
passive, one hung on the noun, or spaCy's past for "Bananas piled up at a stand"), where "scattered" reads as
their state or what they did; the place after it stays. Not the participle before its noun (`_before_noun`):
"in glass stacked casings" -> "in glass scattered casings" was judged garbled.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.parse_reading import NOUN_TAGS, subject_of, verb_lemma

# Verbs of things set in order, with the particle that may follow ("lined up", "piled up").
ORDERED = frozenset({"stack", "pile", "line"})
# Words anywhere after the participle that the scattered things would contradict: "stacked on top of each other",
# "stacked high", "lined up in rows".
_ORDER_WORDS = frozenset({"top", "each", "another", "high", "neatly", "together", "row", "rows", "line", "tower"})
# Words right after it that need the order: "lined up to board", "piled into a bin", "stacked against a wall".
_GOALS = frozenset({"to", "into", "onto", "against", "for"})


def _many(verb: Token) -> bool:
    """The participle is said of a plural noun: hung on it ("pizzas lined up") or its passive subject."""
    noun = verb.head if verb.dep_ == "acl" else subject_of(verb)
    return noun is not None and noun.tag_ in ("NNS", "NNPS") and noun.tag_ in NOUN_TAGS


def _before_noun(verb: Token) -> bool:
    """The participle is a modifier of a noun after it, which spaCy may read as its object ("in glass stacked
    casings": "casings" the object of a past "stacked")."""
    return verb.dep_ == "amod" or any(child.dep_ == "dobj" for child in verb.children)


def arrangement_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"lined up", "stacked", "piled (up)" said of many things -> "scattered", where nothing after it needs the
    order (`_ORDER_WORDS`, `_GOALS`): "line" only with "up" ("lined with trees" is another act)."""
    slots = []
    for verb in doc:
        if verb.tag_ not in ("VBN", "VBD") or verb_lemma(verb) not in ORDERED or not _many(verb) or _before_noun(verb):
            continue
        end = verb.i + 1
        if end < len(doc) and doc[end].lower_ == "up" and doc[end].dep_ == "prt":
            end += 1
        elif verb_lemma(verb) == "line":
            continue
        if (end < len(doc) and doc[end].lower_ in _GOALS) or any(t.lower_ in _ORDER_WORDS for t in doc[end:]):
            continue
        slots.append((doc[verb.i : end], ["scattered"]))
    return slots
