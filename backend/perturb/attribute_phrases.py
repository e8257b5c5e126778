"""Attributes that are not one adjective on a noun, and that the word slots therefore miss: a colour worn
("A young boy dressed in yellow" -> "... dressed in blue") and an age style said in two words ("an old
fashioned stove" -> "a modern stove"), both SugarCrepe replace_att edits.
"""
from __future__ import annotations

import itertools

from spacy.tokens import Doc, Span

from backend.perturb.lexicon import ADJ, lexicon
from backend.perturb.parse_reading import caption_lemmas

# Two-word styles and the one word that contradicts them; "modern" goes the other way to "old fashioned".
STYLES = {("old", "fashioned"): "modern", ("old", "fashion"): "modern", ("old", "style"): "modern",
          ("old", "timey"): "modern", ("old", "time"): "modern"}
DRESS_VERBS = frozenset({"dress", "clothe", "clad"})
COLOURS_PER_SLOT = 4


_METALLIC_OR_PALE = frozenset({"silver", "gold", "beige", "tan"})


def _is_colour(word: str) -> bool:
    return "color" in lexicon().attribute_classes(word)


def _worn_colour_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A colour alone after "dressed in" / "in" said of a person ("a goalkeeper in orange")."""
    slots = []
    present = caption_lemmas(doc)
    for token in doc[2:]:
        before = doc[token.i - 1]
        if not _is_colour(token.lower_) or before.lower_ != "in":
            continue
        if token.i + 1 < len(doc) and doc[token.i + 1].pos_ in ("NOUN", "PROPN", "ADJ", "CCONJ"):
            continue  # "in yellow shirts", "in black and white": the colour is not alone
        if before.head.lemma_.lower() not in DRESS_VERBS and not lexicon().is_person(before.head.lemma_.lower()):
            continue
        others = [colour for colour in lexicon().co_hyponyms(token.lower_, ADJ)
                  if _is_colour(colour) and colour not in present and colour not in _METALLIC_OR_PALE]
        slots.append((doc[token.i : token.i + 1], others[:COLOURS_PER_SLOT]))
    return slots


def _style_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    slots = []
    for first, second in itertools.pairwise(doc):
        new = STYLES.get((first.lower_, second.lower_))
        if new is not None and second.i + 1 < len(doc) and doc[second.i + 1].pos_ in ("NOUN", "ADJ", "VERB"):
            slots.append((doc[first.i : second.i + 1], [new]))
    return slots


def attribute_phrase_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Worn colours and two-word styles, each with its replacements."""
    return _worn_colour_slots(doc) + _style_slots(doc)
