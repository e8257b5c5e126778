"""Acts on a held or aimed-at thing that spread over several words, as a relation phrase: "a man holding his cell
phone up" -> "a man putting his cell phone down", "holds a furry animal in her arms" -> "puts down a furry animal"
(and any thing held, "holding a cup" -> "putting down a cup"),
"A tennis player taking a swing at a ball" -> "A tennis player catching a ball", "prepares to swing at a tennis
ball" -> "prepares to catch a tennis ball", "kisses the girl on the head" -> "pats the girl on the head"
(SugarCrepe's replace_rel: "holding up" -> "putting down", "swing at" -> "hits", "kisses" -> "hugs"), "A kid
brushing his teeth" -> "A kid flossing his teeth", "takes a bite of her pizza"
-> "cuts a slice of her pizza", "taking a picture of a dog" or "watching a train" -> "looking away from" it.

`verb_phrases.SWAPS` replaces a verb with the particle or preposition right after it; these are the same acts
with the object between verb and particle, with "a swing" for the verb, or in the base form after "to", which
the word swaps leave alone, and a kiss, a bite or a brushing, which the lexicon has no opposite for. A photo
tells them apart: a thing held up is not being set down, a swing at a ball is not a catch, lips on a head are not a
hand, teeth in food are no knife, a toothbrush is no string of floss.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.inflect import verb_form
from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import is_physical
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma, verb_lemma
from backend.perturb.verb_phrases import PICTURES, doer_of, has_purpose, readied, while_moving
from backend.perturb.without import BODY_PARTS

# Separated particle verbs of a held thing, and their opposite: "holding his phone up" -> "putting his phone down".
_SEPARATED = {("hold", "up"): ("put", "down"), ("pick", "up"): ("put", "down"), ("lift", "up"): ("put", "down"),
              ("put", "down"): ("pick", "up"), ("set", "down"): ("pick", "up")}
# Prepositions of where the act happens, which the new act keeps ("putting his cell phone down in a crowd").
_SETTINGS = frozenset({"in", "at", "on", "near", "with", "while", "during", "inside", "outside"})
# What a swing is aimed at, and could be caught instead; not a pitch, which only a catcher catches.
SWUNG_AT = frozenset({"ball", "balloon", "birdie", "shuttlecock", "frisbee"})
# Where a kiss lands that a hand could pat instead ("kisses the top of a woman's head" -> "pats the top of ..."):
# lips and a hand on a head look different; a kiss on the lips or cheek has no patting opposite.
_PATTED = frozenset({"head", "forehead"})
# Teeth a person brushes and could be flossing instead: a toothbrush and a string look different, so not where the
# caption names the brush or paste anywhere ("holding a toothbrush and flossing their teeth" was judged doubtful).
TEETH = frozenset({"teeth", "tooth"})
_BRUSHES = frozenset({"toothbrush", "toothbrushes", "toothpaste", "brush", "brushes"})
# Words after a photo's subject that need the camera: what it is taken with or through.
_AIMED_WITH = frozenset({"with", "using", "through", "on", "from"})
# Dependents a watch may have and keep when it becomes a look away.
_WATCH_DEPS = frozenset({"nsubj", "aux", "dobj", "prep", "punct", "cc", "conj", "advmod", "advcl", "mark", "npadvmod"})
# What a thing is held in, and is no longer in once put down ("holding a baby in her arms" -> "putting down a baby").
_HOLDING_PARTS = frozenset({"hand", "arm", "palm", "lap"})
# Verb forms the new phrase can take; the base form where the act is about to be done ("prepares to swing at").
_TAGS = frozenset({"VBG", "VBZ", "VBP", "VBD"})


def _person_does(verb: Token) -> bool:
    doer = doer_of(verb)  # "A player prepares to swing at a ball": the player of "prepares"
    return doer is not None and lexicon().is_person(doer)


def _separated_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"holding his cell phone up" -> "putting his cell phone down": a particle after the verb's object, which
    stays between the new verb and its particle."""
    doc = verb.doc
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    particles = [child for child in verb.children if child.dep_ == "prt"]
    if len(objects) != 1 or len(particles) != 1 or particles[0].i <= objects[0].i:
        return None
    new = _SEPARATED.get((verb_lemma(verb), particles[0].lower_))
    after = doc[particles[0].i + 1] if particles[0].i + 1 < len(doc) else None
    if new is None or (after is not None and after.pos_ == "ADP" and after.lower_ not in _SETTINGS):
        return None  # "holding a knife up to a cake", "picks the ball up off the ground": the new act has no goal
    words = doc[verb.i + 1 : particles[0].i].text
    return doc[verb.i : particles[0].i + 1], [f"{verb_form(new[0], verb.tag_)} {words} {new[1]}"]


def _held_in_hand_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"holds a furry animal in her arms" -> "puts down a furry animal": a thing held in someone's hands, arms or lap,
    with the hands dropped (a thing put down is no longer in them). Nothing but a setting (`_SETTINGS`) or the
    caption's end may follow the hands ("holding a phone in one hand up to her ear" has a goal)."""
    doc = verb.doc
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    if verb_lemma(verb) != "hold" or len(objects) != 1 or objects[0].right_edge.i + 1 >= len(doc):
        return None
    if while_moving(verb):
        return None  # "A man walking while putting down a ball" was judged doubtful
    word = doc[objects[0].right_edge.i + 1]
    hands = [child for child in word.children if child.dep_ == "pobj" and noun_lemma(child) in _HOLDING_PARTS]
    if word.lower_ != "in" or word.head.i not in (verb.i, objects[0].i) or not hands:
        return None
    after = doc[hands[0].i + 1] if hands[0].i + 1 < len(doc) else None
    if after is not None and not after.is_punct and after.lower_ not in _SETTINGS | {"and"}:
        return None
    if any(token.lower_ == "other" for token in doc[hands[0].i :]):
        return None  # "holds a carrot in her right hand with a beverage in the other": "the other" needs the hand
    thing = doc[verb.i + 1 : word.i].text
    return doc[verb.i : hands[0].i + 1], [f"{verb_form('put', verb.tag_)} down {thing}"]


def _held_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"A man holding a cup" -> "A man putting down a cup": a thing held, no body part or animal, and nothing after
    it but a setting (`_SETTINGS`), "and" or the caption's end ("holding an umbrella over her head" needs the hold);
    no body part named after it and no second act joined to the hold, which may need the thing held.
    A particle or the hands after the thing are read by `_separated_slot` and `_held_in_hand_slot`."""
    doc = verb.doc
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    if (verb_lemma(verb) != "hold" or len(objects) != 1 or objects[0].tag_ not in NOUN_TAGS or while_moving(verb)
            or any(child.dep_ == "prt" for child in verb.children)):
        return None
    thing = noun_lemma(objects[0])
    if thing in BODY_PARTS or not is_physical(thing) or lexicon().is_animate(thing):
        return None  # "A woman put down a brown horse" (held by its lead) was met while tuning
    end = objects[0].right_edge.i + 1
    after = doc[end] if end < len(doc) else None
    if after is not None and not after.is_punct and after.lower_ not in _SETTINGS | {"and"}:
        return None
    parts = _HOLDING_PARTS | BODY_PARTS
    if any(noun_lemma(token) in parts or token.lower_ == "other" for token in doc[verb.i + 1 :]):
        return None  # "puts down a toothbrush in its hand", "... a slice of pizza with her mouth" (judged absurd)
    if any(other.pos_ == "VERB" for other in verb.conjuncts):
        return None  # "putting down a toothbrush and brushing their teeth" (judged absurd): the other act may use it
    return doc[verb.i : verb.i + 1], [verb_form("put down", verb.tag_)]


def _photo_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"A man taking a picture of a dog" -> "A man looking away from a dog": a camera aimed at a thing, and eyes
    turned from it. Not of oneself, nor with a device or a way named after ("looking away from food with a
    mobile device" leaves the device dangling)."""
    doc = verb.doc
    pictures = [child for child in verb.children if child.dep_ == "dobj" and noun_lemma(child) in PICTURES]
    if verb_lemma(verb) != "take" or not pictures or pictures[0].i + 1 >= len(doc):
        return None
    of = doc[pictures[0].i + 1]
    things = [child for child in of.children if child.dep_ == "pobj"]
    if of.lower_ != "of" or of.head.i != pictures[0].i or not things or things[0].lower_.endswith(("self", "selves")):
        return None
    if any(token.lower_ in _AIMED_WITH for token in doc[of.i :]):
        return None
    return doc[verb.i : of.i + 1], [verb_form("look away from", verb.tag_)]


def _watch_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"A woman and a small child watch a train as it passes" -> "... look away from a train": eyes on a thing and
    turned from it. Only a plain object and nothing that needs the watching after it ("watch a man ride": no object
    of its own; "watching TV to relax": a purpose)."""
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    if verb_lemma(verb) != "watch" or len(objects) != 1 or objects[0].tag_ not in NOUN_TAGS:
        return None
    if any(child.dep_ not in _WATCH_DEPS for child in verb.children) or has_purpose(verb):
        return None
    if any(child.tag_ == "VB" or (child.dep_ == "compound" and lexicon().is_animate(noun_lemma(child)))
           for child in objects[0].children):
        return None  # "watching a rider approach": a bare verb after the object (spaCy may read it as a noun)
    return verb.doc[verb.i : verb.i + 1], [verb_form("look away from", verb.tag_)]


def _swing_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"swinging at a ball", "taking a swing at a ball" -> "catching a ball", where the ball (`SWUNG_AT`) is the
    object of the "at" right after "swing"."""
    doc = verb.doc
    lemma = verb_lemma(verb)
    if lemma == "swing":
        at = verb.i + 1
    elif lemma == "take" and [token.lower_ for token in doc[verb.i + 1 : verb.i + 3]] == ["a", "swing"]:
        at = verb.i + 3
    else:
        return None
    if at >= len(doc) or doc[at].lower_ != "at":
        return None
    targets = [child for child in doc[at].children if child.dep_ == "pobj"]
    if not targets or noun_lemma(targets[0]) not in SWUNG_AT:
        return None
    return doc[verb.i : at + 1], [verb_form("catch", verb.tag_)]


def _kiss_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"kisses the girl on the head" -> "pats the girl on the head": a kiss with a head after it, in its clause."""
    if verb_lemma(verb) != "kiss" or not any(token.lower_ in _PATTED for token in verb.subtree if token.i > verb.i):
        return None
    return verb.doc[verb.i : verb.i + 1], [verb_form("pat", verb.tag_)]


def _bite_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"takes a bite of her pizza", "taking a bite out of a donut" -> "cutting a slice of": teeth and a knife on food
    look different."""
    doc = verb.doc
    words = [token.lower_ for token in doc[verb.i + 1 : verb.i + 5]]
    if verb_lemma(verb) != "take" or words[:2] != ["a", "bite"]:
        return None
    length = 3 if words[2:3] == ["of"] else 4 if words[2:4] == ["out", "of"] else 0
    return (doc[verb.i : verb.i + 1 + length], [verb_form("cut", verb.tag_) + " a slice of"]) if length else None


def _brush_slot(verb: Token) -> tuple[Span, list[str]] | None:
    """"A kid brushing his teeth" -> "A kid flossing his teeth", where no brush or paste is named."""
    doc = verb.doc
    teeth = [child for child in verb.children if child.dep_ == "dobj" and noun_lemma(child) in TEETH]
    if verb_lemma(verb) != "brush" or not teeth or any(token.lower_ in _BRUSHES for token in doc if token.i != verb.i):
        return None
    return doc[verb.i : verb.i + 1], [verb_form("floss", verb.tag_)]


def aimed_act_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Separated particle verbs of a held thing, things held (in the hands or arms), pictures taken of a thing, things
    watched, swings at a ball, kisses on a head, bites of food and teeth brushed, done by a person, with the
    opposite act."""
    slots = []
    for verb in doc:
        if verb.pos_ != "VERB" or (verb.tag_ not in _TAGS and not readied(verb)) or not _person_does(verb):
            continue
        for found in (_separated_slot(verb), _held_in_hand_slot(verb), _held_slot(verb), _photo_slot(verb),
                      _watch_slot(verb), _swing_slot(verb), _kiss_slot(verb), _bite_slot(verb), _brush_slot(verb)):
            if found is not None:
                slots.append(found)
    return slots
