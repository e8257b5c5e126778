"""Who wears what, and who does a verb seen past what they wear: spaCy often hangs a participle or a phrase on a
garment ("a woman in a dress and pale makeup sitting by a table": "sitting" on "makeup"), and a colour may stand
for one ("a goalkeeper in orange"). Read by the replace slots, the garment, verb-phrase and refill rules."""
from __future__ import annotations

from spacy.tokens import Span, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma, object_of, subject_of

COLOR = "color"


def is_color(word: str) -> bool:
    return COLOR in lexicon().attribute_classes(word)


def introduces_clothing(phrase: Span) -> bool:
    """True for "in" in "a man in a red shirt" or "a goalkeeper in orange":
    wearing, not a spatial relation. Noun modifiers count too, since a
    mis-parse can make the garment one ("a blue dress poses")."""
    obj = object_of(phrase)
    if obj is None:
        return False
    lex = lexicon()
    nouns = [obj] + [child for child in obj.children if child.dep_ == "compound"]
    return lex.is_worn(noun_lemma(obj)) or any(lex.is_worn(n.lemma_.lower()) for n in nouns) or is_color(obj.lower_)


def wearer(noun: Token) -> Token:
    """The person a garment noun is worn by, where spaCy hung a participle on the garment ("a woman in a dress
    and pale makeup sitting by a table": "sitting" on "makeup"), else `noun` itself."""
    first = noun
    while first.dep_ == "conj" and first.head.tag_ in NOUN_TAGS:
        first = first.head
    preposition = first.head
    if first.dep_ != "pobj" or preposition.lower_ != "in" or preposition.head.tag_ not in NOUN_TAGS:
        return noun
    return preposition.head if introduces_clothing(preposition.doc[preposition.i : preposition.i + 1]) else noun


def actor(verb: Token) -> Token | None:
    """Who does what `verb` says (`parse_reading.subject_of`), seen past a garment to its wearer (`wearer`). Where
    the parse gives no subject, a noun spaCy hung on the verb as an adverb before it still is one ("Two barefoot
    women holding ...": "women" an npadvmod)."""
    subject = subject_of(verb)
    if subject is None:
        before = [child for child in verb.children if child.dep_ == "npadvmod" and child.i < verb.i]
        subject = before[0] if before and before[0].tag_ in NOUN_TAGS else None
    return None if subject is None else wearer(subject)
