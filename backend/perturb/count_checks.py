"""Plausibility checks for count swaps: when a new number reads as absurd.

A count swap is a hard negative only when its caption describes an
ordinary scene. One thing cannot rest on two supports ("a device on two
tables"), one seat does not hold a crowd ("some people sit in a chair"),
"among" and "surrounded by" need many, and a pronoun must still agree with
whatever it may refer to ("a man with his two dogs" -> "two men with his
dog" is refused; "a man ... behind him" -> "two men ... behind them"
follows). Each check says no when in doubt.
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import NOUNISH, SUBJECT_DEPS, find_phrases
from backend.perturb.nouns import EXPANSES, animacy, is_place

NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}
# Plurals that count loosely: "several", "many".
MANY = frozenset({"several", "many", "multiple", "numerous"})
# Words whose meaning depends on the number they sit with.
NUMBER_WORDS = frozenset({
    "other", "another", "each", "every", "both", "single", "lone", "only", "pair", "couple", "few",
    "various", "same", "double", "twin", "either", "neither", "together", "respectively", "first",
    "second", "third", "last", "different", "assorted", "similar", "matching", "identical",
})
# Those of them that ask only for a plural: "two giraffes stand together near many rocks" may become "many
# giraffes stand together near two rocks", never "a giraffe stands together".
PLURAL_WORDS = frozenset({"together", "various", "different", "assorted", "similar", "matching", "identical"})
LOCATIVE_PREPOSITIONS = frozenset({
    "on", "in", "at", "inside", "under", "atop", "across", "through", "along", "upon", "onto", "into",
    "within", "beneath", "underneath", "over", "against", "down", "up", "on top of", "inside of", "atop of",
    "out of",
})
FILLING_VERBS = frozenset({"fill", "load", "stack", "pile", "pack", "cover", "crowd", "line", "stock", "full"})
# ("rid": spaCy's small model lemmatises "riding" so.)
HOLDING_VERBS = frozenset({"hold", "display", "contain", "offer"})
SEATED_VERBS = frozenset({"sit", "lie", "lay", "sleep", "ride", "rid", "stand", "perch"})
# What one person works one of at a time: "a person paddles several canoes" is absurd.
STEERED_VERBS = frozenset({"paddle", "row", "drive", "steer", "pilot"})
# Verbs whose "at" aims rather than places: "two women looking at a cellphone" may become "a woman looking at
# two cellphones", while "a dog at a table" may not stand at two.
AIMING_VERBS = frozenset({"look", "stare", "gaze", "glance", "peer", "point", "smile", "laugh", "wave"})
# Pronoun -> (plural?, may refer to a person or animal?, may refer to a thing?)
PRONOUNS = {
    "he": (False, True, False), "him": (False, True, False), "his": (False, True, False),
    "himself": (False, True, False), "she": (False, True, False), "her": (False, True, False),
    "hers": (False, True, False), "herself": (False, True, False), "it": (False, True, True),
    "its": (False, True, True), "itself": (False, True, True), "they": (True, True, True),
    "them": (True, True, True), "their": (True, True, True), "theirs": (True, True, True),
    "themselves": (True, True, True),
}


def preposition_of(noun: Token) -> str:
    """The preposition a noun is the object of, whole: "on top of", "in"."""
    for phrase in find_phrases(noun.doc, lexicon().spatial_phrases):
        if phrase.end == noun.head.i + 1:
            return phrase.text.lower()
    return noun.head.lower_


def _is_support(noun: Token) -> bool:
    """The object of "on", "in", "on top of"... or of "ride" or "paddle": where something else is, or what
    one works at a time."""
    if noun.dep_ == "dobj":
        return noun.head.lemma_.lower() in SEATED_VERBS | STEERED_VERBS
    if noun.dep_ == "pobj" and noun.head.lower_ == "at" and noun.head.head.lemma_.lower() in AIMING_VERBS:
        return False
    return noun.dep_ == "pobj" and preposition_of(noun) in LOCATIVE_PREPOSITIONS


def seats_of(noun: Token) -> list[Token]:
    """What a person or animal sits, lies or rides in or on: "a person sits in a chair", "people are sitting on
    two benches". A place or an expanse holds any number ("two girls standing in the grass"), so it is none."""
    if animacy(noun) is None:
        return []
    verbs = [noun.head] if noun.dep_ in SUBJECT_DEPS else []
    verbs += [child for child in noun.children if child.dep_ == "acl"]
    return [obj for verb in verbs if verb.lemma_.lower() in SEATED_VERBS
            for prep in verb.children if prep.dep_ == "prep" and prep.lower_ in ("in", "on")
            for obj in prep.children
            if obj.dep_ == "pobj" and not is_place(obj) and obj.lemma_.lower() not in EXPANSES]


def _seated_on(noun: Token, tag: str) -> bool:
    """Sitting, lying or riding on a seat tagged `tag`: NN ("a person sits in a chair"; a plate of pineapples
    may "sit on a table") or NNS ("people are sitting on two benches")."""
    return any(seat.tag_ == tag for seat in seats_of(noun))


def holders_of(noun: Token) -> list[Token]:
    """The things (not people) that hold, display or contain `noun`: "a green stand holding several bananas",
    "shelves that hold many books"."""
    verb = noun.head
    if noun.dep_ != "dobj" or verb.lemma_.lower() not in HOLDING_VERBS:
        return []
    agents = [child for child in verb.children if child.dep_ in SUBJECT_DEPS and child.tag_ not in ("WDT", "WP")]
    if not agents and verb.dep_ in ("acl", "relcl"):
        agents = [verb.head]
    return [agent for agent in agents if agent.pos_ == "NOUN" and animacy(agent) is None]


def _rank(count: int | str) -> int | None:
    """A count's size where it can be compared: a number, or "several", "many" as more than two."""
    return count if isinstance(count, int) else 3 if count in MANY else None


def swap_outnumbers_sitters(sitters: set[Token], sitters_count: int | str, seat: Token, seat_count: int | str) -> bool:
    """Would trading counts leave fewer people or animals than the seats they sit on, or fewer things than the
    stands that hold them? "Many people are sitting on two benches" -> "Two people are sitting on many benches"
    and "A green stand holding several bananas" -> "Several green stands holding a banana" were judged absurd
    (several sit on one seat, not one on several; one stand holds many bananas)."""
    if not any(seat in seats_of(word) or seat in holders_of(word) for word in sitters):
        return False
    before_sitters, before_seats = _rank(sitters_count), _rank(seat_count)
    return before_sitters is not None and before_seats is not None and before_sitters > before_seats


def _wears(noun: Token, tag: str) -> bool:
    """Dressed in a garment tagged `tag`: "a woman in a blue sweater" (NN) cannot become "two women in a blue
    sweater", nor "three people in black shirts" (NNS) "a person in black shirts"."""
    return any(
        prep.lower_ in ("in", "wearing") and obj.tag_ == tag and lexicon().is_worn(obj.lemma_.lower())
        for prep in noun.children
        for obj in prep.children
        if obj.dep_ in ("pobj", "dobj")
    )


def _worn(noun: Token) -> bool:
    """A garment someone wears ("wearing a suit", "in a suit"): one wearer does not wear two suits."""
    wearing = (noun.dep_ == "dobj" and noun.head.lemma_.lower() == "wear") or (
        noun.dep_ == "pobj" and noun.head.lower_ in ("in", "wearing"))
    return wearing and lexicon().is_worn(noun.lemma_.lower())


def _gathers(noun: Token) -> bool:
    """Stands or sits "around" something ("stones sitting around a dime"), or lies around it ("6 plates of food
    around him": "a plate of food around them" is no ring)."""
    verbs = [noun.head] if noun.dep_ in SUBJECT_DEPS else []
    verbs += [child for child in noun.children if child.dep_ == "acl"]
    return any(prep.lower_ in ("around", "together") for verb in [noun, *verbs] for prep in verb.children)


def _needs_many(noun: Token) -> bool:
    """"among boards", "between posts", "surrounded by poles", "filled with
    bananas", "stones around a dime": one will not do, unless the noun is
    coordinated with another ("among a board and toys")."""
    if noun.dep_ == "conj" or any(child.dep_ == "conj" for child in noun.children):
        return False
    if _gathers(noun):
        return True
    if noun.dep_ != "pobj":
        return False
    preposition, verb = noun.head, noun.head.head.lemma_.lower()
    return (
        preposition.lower_ in ("among", "amongst", "between")
        or (preposition.lower_ == "by" and verb in ("surround", "flank", "encircle"))
        or (preposition.lower_ in ("with", "of", "in") and verb in FILLING_VERBS)
    )


def may_take(target: Token, target_plural: bool, source_plural: bool) -> bool:
    """A support does not multiply, nor does one seat or one garment hold a
    crowd: "a device on two tables", "some people sit in a chair" and "two
    women in a blue sweater" are absurd, while "two devices on a table" is
    an ordinary scene; "among" needs a plural, one person neither sits on
    two benches nor wears black shirts, and a worn suit does not become two."""
    if target_plural and not source_plural:
        return not (_needs_many(target) or _seated_on(target, "NNS") or _wears(target, "NNS"))
    if not source_plural or target_plural:
        return True
    return not (_is_support(target) or _seated_on(target, "NN") or _wears(target, "NN") or _worn(target))


def _possible_referents(pronoun: Token) -> list[Token]:
    """Nouns before the pronoun, minus the one its phrase describes (in "a
    desk with a laptop on it", "it" is not the laptop) and its conjuncts."""
    described: set[int] = set()
    if pronoun.dep_ == "pobj" and pronoun.head.head.pos_ in NOUNISH:
        head = pronoun.head.head
        described = {head.i} | {conjunct.i for conjunct in head.conjuncts}
    return [
        t for t in pronoun.doc[: pronoun.i] if t.pos_ in NOUNISH and t.dep_ != "compound" and t.i not in described
    ]


# A pronoun that is no subject, and its other number: "swimming behind him" -> "behind them" when the man it
# refers to becomes two men, "in their enclosure" -> "in its enclosure" when two giraffes become one. A subject
# ("he sits") would need its verb changed too, and a plural that becomes one person would need a gender.
_PLURAL_OBJECT_PRONOUNS = {"him": "them", "his": "their", "its": "their", "it": "them", "himself": "themselves",
                           "herself": "themselves", "itself": "themselves"}
_SINGULAR_OBJECT_PRONOUNS = {"their": "its", "them": "it", "themselves": "itself"}


def _new_number(pronoun: Token, referent: Token) -> str | None:
    """The pronoun in the referent's other number: "his" -> "their", "her" -> "their" or "them" by its tag,
    "their" -> "its" for an animal or a thing. Not where the pronoun names a support: "a table with several
    dishes on it" -> "several tables with a dish on them" puts one dish on many tables."""
    if pronoun.dep_ in SUBJECT_DEPS or _is_support(pronoun):
        return None
    if pronoun.lower_ in _SINGULAR_OBJECT_PRONOUNS:
        return _SINGULAR_OBJECT_PRONOUNS[pronoun.lower_] if animacy(referent) != "person" else None
    if pronoun.lower_ == "her":
        return "their" if pronoun.tag_ == "PRP$" else "them"
    return _PLURAL_OBJECT_PRONOUNS.get(pronoun.lower_)


def pronoun_edits(doc: Doc, changed: set[int]) -> list[tuple[Token, str]] | None:
    """How the pronouns follow a count swap, or None when one cannot. A pronoun that may refer to a noun whose
    number changes follows it only when that noun is all it may refer to ("A man on a surfboard with two
    people swimming behind him" -> "Two men on a surfboard with a person swimming behind them")."""
    edits = []
    for pronoun in doc:
        if pronoun.lower_ not in PRONOUNS:
            continue
        plural, living, thing = PRONOUNS[pronoun.lower_]
        referents = [noun for noun in _possible_referents(pronoun)
                     if (noun.tag_ == "NNS") == plural and (living if animacy(noun) is not None else thing)]
        if not any(noun.i in changed for noun in referents):
            continue
        new = _new_number(pronoun, referents[0]) if len(referents) == 1 else None
        if new is None:
            return None
        edits.append((pronoun, new))
    return edits
