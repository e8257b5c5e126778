"""Is a caption's own wording atypical in a way a swap would repair? Then the swap may describe the photo.

"A baseball player swinging a ball at a bat" was written reversed: the photo shows a bat swung at a ball, so
the swap "swinging a bat at a ball" is still true of it. Captions are written by people and some are garbled;
a swap that turns a verb-object pairing never seen in the caption counts (`caption_stats`) into one that is
seen is taken to be such a repair and is not offered as a negative.
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.caption_stats import SEP, shipped
from backend.perturb.parse_reading import noun_lemma, verb_lemma


def _verb_uses(noun: Token, replacement: Token) -> tuple[int, int]:
    """(count of the verb with `noun` as direct object, count with `replacement` in its place); (0, 0) when
    `noun` is no verb's direct object."""
    head = noun.head
    if head.pos_ != "VERB" or noun.dep_ != "dobj":
        return 0, 0
    stats, verb = shipped(), verb_lemma(head)
    return (stats.dobj.get(f"{verb}{SEP}{noun_lemma(noun)}", 0),
            stats.dobj.get(f"{verb}{SEP}{noun_lemma(replacement)}", 0))


def swap_repairs_caption(first: Token, second: Token) -> bool:
    """Swapping the two nouns gives a verb an object it is seen with where the caption's object never is."""
    before = after = 0
    for noun, other in ((first, second), (second, first)):
        was, would_be = _verb_uses(noun, other)
        before, after = before + was, after + would_be
    return before == 0 and after > 0
