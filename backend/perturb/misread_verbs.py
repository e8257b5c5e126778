"""Reading again a caption whose main verb spaCy read as a plural noun: for the relation slots, and for the
subject an addition joins.

In "A squinting tennis player stares at a tennis racket" spaCy tags "stares" NNS and makes it the root, so no
relation slot sees a verb there. The caption is read again with the verb in the progressive ("A squinting
tennis player is staring at a tennis racket"), which spaCy parses as a verb, and the relation finders' slots on
the verb or after it are carried back to the caption as written, the new verb in the third person ("stares at"
-> "looks away from"). Only a shape that is hardly a noun phrase is read again: a singular noun just before the
plural noun, a preposition or an object just after it, no other finite verb in the caption, and either "a" or
"an" before the plural noun or a person or animal just before the root ("The grey and white cat stares up near a
laptop"). "The kitchen counters with food" is neither and is left alone; "in animal prints" is no root.
An addition's join is found on the same reading ("a zebra is grazing" -> "a zebra and a giraffe are grazing") and
carried back with the verb made plural ("a zebra and a giraffe graze", `carried_edits`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from backend.perturb.core import Edit
from backend.perturb.inflect import verb_form
from backend.perturb.lexicon import wordnet
from backend.perturb.nlp import parse
from backend.perturb.nouns import animacy

Finder = Callable[[Doc], list[tuple[Span, list[str]]]]
_FINITE_TAGS = ("VBZ", "VBP", "VBD", "MD")
_AFTER_VERB_TAGS = ("IN", "RP", "DT", "PRP$")
_PROGRESSIVE = "is "


def _verb_lemma(word: str, tag: str) -> str | None:
    """The verb whose `tag` form is `word` ("stares", VBZ -> "stare"; "putting", VBG -> "put", not "putt")."""
    reader = wordnet()
    if reader is None:
        return None
    return next((lemma for lemma in reader._morphy(word, "v") if verb_form(lemma, tag) == word), None)


def _after_article(token: Token) -> bool:
    """"a" or "an" before a plural noun: no noun phrase ("A skateboarder balances")."""
    return any(child.dep_ == "det" and child.lower_ in ("a", "an") for child in token.children)


def _misread_verb(doc: Doc) -> tuple[Token, str] | None:
    """The plural noun that must be the caption's verb, with its lemma (see the module docstring)."""
    if any(token.tag_ in _FINITE_TAGS for token in doc):
        return None
    for token in doc[1:-1]:
        if (token.tag_ == "NNS" and doc[token.i - 1].tag_ == "NN" and doc[token.i + 1].tag_ in _AFTER_VERB_TAGS
                and (_after_article(token) or (token.dep_ == "ROOT" and animacy(doc[token.i - 1]) is not None))):
            lemma = _verb_lemma(token.lower_, "VBZ")
            return (token, lemma) if lemma else None
    return None


def _third_person(words: str) -> str:
    """A progressive phrase in the third person ("looking away from" -> "looks away from"); a state keeps its
    "is" ("parked on a runway" -> "is parked on a runway")."""
    first, space, rest = words.partition(" ")
    lemma = _verb_lemma(first, "VBG")
    return verb_form(lemma, "VBZ") + space + rest if lemma else _PROGRESSIVE + words


@dataclass(frozen=True)
class Reading:
    """A caption read again with its misread verb in the progressive: `doc` parses the text the first parse read
    (the caption, or a shouted caption's lower-cased copy) with `verb` (a token of the first parse, `lemma` its
    verb) written "is <participle>", `added` characters longer; `caption` is the caption as written."""

    doc: Doc
    caption: str
    verb: Token
    lemma: str

    @property
    def added(self) -> int:
        return len(_PROGRESSIVE) + len(verb_form(self.lemma, "VBG")) - len(self.verb.text)

    @property
    def text(self) -> str:
        """The caption as written with the verb in the progressive, the words put in lower-case (a shouted caption's
        request keeps `all_caps`, so its `text`, which `doc` parses, is all lower-case again)."""
        return _progressive(self.caption, self.verb, self.lemma)


def _progressive(text: str, verb: Token, lemma: str) -> str:
    return text[: verb.idx] + _PROGRESSIVE + verb_form(lemma, "VBG") + text[verb.idx + len(verb.text):]


def reread(doc: Doc, caption: str | None = None) -> Reading | None:
    """The caption read with its misread verb as a verb (see the module docstring), or None where there is none or
    the new parse does not make it a verb with a subject. `caption` is the text as written where `doc` parses a
    copy of it (a shouted caption's lower-cased one)."""
    found = _misread_verb(doc)
    if found is None:
        return None
    verb, lemma = found
    new_doc = parse(_progressive(doc.text, verb, lemma))
    start, participle = verb.idx + len(_PROGRESSIVE), verb_form(lemma, "VBG")
    new_verb = new_doc.char_span(start, start + len(participle))
    if new_verb is None or new_verb.root.pos_ != "VERB" or not any(
            child.dep_ == "nsubj" for child in new_verb.root.children):
        return None
    return Reading(new_doc, doc.text if caption is None else caption, verb, lemma)


def carried_edits(reading: Reading, edits: Sequence[Edit]) -> list[Edit] | None:
    """`edits` of the caption read again, carried back to the caption as written: one before the verb as it is,
    one after it moved back by the words added, the "is" made "are" the verb in its plural ("A zebra is grazing"
    -> "A zebra and a giraffe are grazing" is "A zebra and a giraffe graze"); None where an edit touches the
    words added otherwise."""
    verb = reading.verb
    start, end = verb.idx, verb.idx + len(verb.text) + reading.added
    carried = []
    for edit in edits:
        if edit.end <= start:
            carried.append(edit)
        elif edit.start >= end:
            carried.append(Edit(edit.before, edit.after, edit.start - reading.added, edit.end - reading.added))
        elif (edit.start, edit.end, edit.after) == (start, start + len(_PROGRESSIVE) - 1, "are"):
            written = reading.caption[verb.idx : verb.idx + len(verb.text)]
            carried.append(Edit(written, reading.lemma, verb.idx, verb.idx + len(verb.text)))
        else:
            return None
    return carried


def _carried_slot(doc: Doc, reading: Reading, slot: Span, words: list[str]) -> tuple[Span, list[str]] | None:
    """`slot` of the caption read again as a slot of `doc`: at the verb (its words put in the third person) or
    wholly after it (moved back by the words added); None for anything before the verb or on the "is"."""
    verb, added = reading.verb, reading.added
    if slot.start_char == verb.idx + len(_PROGRESSIVE):
        words = [_third_person(words_of) for words_of in words]
        span = doc.char_span(verb.idx, slot.end_char - added)
    elif slot.start_char >= verb.idx + len(verb.text) + added:
        span = doc.char_span(slot.start_char - added, slot.end_char - added)
    else:
        return None
    return (span, words) if span is not None and words else None


def misread_verb_slots(doc: Doc, finders: Sequence[Finder]) -> list[tuple[Span, list[str]]]:
    """`finders`' slots of the caption read with its misread verb as a verb, carried back to the caption."""
    reading = reread(doc)
    if reading is None:
        return []
    slots = [_carried_slot(doc, reading, span, words) for find in finders for span, words in find(reading.doc)]
    return [slot for slot in slots if slot is not None]
