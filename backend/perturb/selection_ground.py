"""Selectional plausibility of where a body is: water, air and ground.

A relation refill that moves a body to where it cannot be reads as absurd
without the image, so a text-only model rejects it. Found in the replace
family's outputs on even ids ("A dog swimming through the grass", "A man
walking in the air on a skateboard", "Kites are flying high in the air
beneath the beach", "A flock of birds flying under the water", "A surfer
repairing a large wave"):

  dry_swim          swimming in a caption that names no water.
  walk_on_air       walking, running, crawling, sitting or standing "in" or
                    "through the air" (people jump, birds fly, things float
                    there).
  under_ground      anything under, below or beneath the ground, a beach, a
                    field or a hill; flying under water.
  unhandled         washing, repairing or carrying a wave, the sea, the sky
                    or a mountain: things no hand works on.
  lie_at            lying, kneeling or squatting at a table, a desk or a
                    counter (people sit or stand there: "A boy is eating
                    donut holes while lying at a dinner table" was made).
  rise_below        a tower rising, soaring or looming below, beneath or
                    under something ("A large, ornate clock tower rises
                    beneath another skyscraper" was made).
  atop_a_pole       a person, a large animal or furniture on (top of) a pole
                    or a post ("Many people are sitting on two
                    benches on top of a light pole" was made); birds perch
                    there.
  under_a_board     a person under a board they ride ("A man under a
                    skateboard is coming up a ramp" was made from "on").

Like `selection`, each rule errs towards "plausible", and a violation counts
only when the perturbation made it (`plausibility`).
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.nouns import ANIMAL, PERSON, noun_key
from backend.perturb.parse_reading import verb_lemma
from backend.perturb.plausibility_parse import Violation, agent_options, is_under, kind_of, make_violation, placements
from backend.perturb.selection import WATER_SYNSETS

WATER_WORDS = frozenset("water pool wave surf tide splash puddle".split())
# Where water is near: "people swimming at the beach" is in the sea.
SHORE_WORDS = frozenset("beach shore coast harbor harbour dock pier boat surfboard".split())
SWIM_FORMS = frozenset("swim swims swimming swam swum".split())
GROUNDED_VERBS = frozenset("walk run jog stroll crawl sit stand kneel lie lay swim".split())
AIR_WORDS = frozenset(["air", "midair"])
THROUGH_AIR = frozenset(["in", "through"])
# Nothing a photo shows is beneath these (snow covers things, streets have tunnels: left out).
GROUND_NOUNS = frozenset("ground beach field grass lawn meadow desert hill mountain slope".split())
BELOW = frozenset(["under", "below", "beneath", "underneath"])
HANDLING_VERBS = frozenset("wash repair fix clean carry hold lift throw kick build cut push".split())
UNHANDLED_NOUNS = frozenset("wave ocean sea sky mountain hill river lake beach".split())
LYING_VERBS = frozenset("lie lay kneel squat".split())
AT = frozenset(["at"])
SEATED_PLACES = frozenset("table desk counter bar computer laptop".split())
RISING_VERBS = frozenset("rise tower soar loom".split())
POLES = frozenset("pole post lamppost".split())  # people sit on fences
ATOP = frozenset(["on", "atop", "onto", "upon"])
_PERCHERS = frozenset(["bird.n.01", "feline.n.01", "primate.n.02", "squirrel.n.01"])
_SEATS = frozenset(["seat.n.03", "furniture.n.01"])
# Boards a person stands on, too thin to be under ("a man under a car" may be repairing it).
RIDDEN_BOARDS = frozenset("skateboard surfboard snowboard longboard wakeboard bodyboard ski skis".split())


def _is_water(noun: Token) -> bool:
    return noun_key(noun) in WATER_WORDS or is_under(noun_key(noun), WATER_SYNSETS)


def _names_water(doc: Doc) -> bool:
    """Water or a shore anywhere in the caption."""
    return any(token.pos_ == "NOUN" and (_is_water(token) or noun_key(token) in SHORE_WORDS) for token in doc)


def _swims(token: Token) -> bool:
    """A form of "swim" that is the act, not a modifier ("swim trunks", "a swimming pool"). spaCy reads
    "A horse swimming in a field" as a noun phrase, so the word, not its part of speech, decides."""
    return token.lower_ in SWIM_FORMS and token.dep_ not in ("compound", "amod")


def _dry_swims(doc: Doc) -> list[Violation]:
    """Swimming where the caption names no water ("a horse swimming in a field")."""
    if _names_water(doc):
        return []
    return [make_violation("dry_swim", "swim", [option[0] for option in agent_options(verb)[:1]], verb)
            for verb in doc if _swims(verb)]


def _in_the_air(verb: Token) -> bool:
    """`verb` has "in" or "through the air" or "in mid air" ("midair" once spaCy joins it)."""
    return any(obj.lower_ in AIR_WORDS for obj in _preposition_objects(verb, THROUGH_AIR))


def _walks_on_air(doc: Doc) -> list[Violation]:
    """A grounded act "in the air" ("a man walking in the air on a skateboard")."""
    return [make_violation("walk_on_air", verb_lemma(verb), [], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in GROUNDED_VERBS and _in_the_air(verb)]


def _under_ground(doc: Doc) -> list[Violation]:
    """Under the ground, a beach or a street; or flying under water ("birds flying under the water")."""
    found = []
    for option, where, word in placements(doc, BELOW):
        key = noun_key(where)
        flying = where.head.head.pos_ == "VERB" and verb_lemma(where.head.head) == "fly"
        if key in GROUND_NOUNS or (flying and _is_water(where)):
            found.append(make_violation("under_ground", word, [*option[:1], where], where.head))
    return found


def _unhandled(doc: Doc) -> list[Violation]:
    """Working by hand on what no hand works on ("a surfer repairing a large wave")."""
    return [make_violation("unhandled", verb_lemma(verb), [obj], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in HANDLING_VERBS
            for obj in verb.children if obj.dep_ == "dobj" and noun_key(obj) in UNHANDLED_NOUNS]


def _preposition_objects(verb: Token, prepositions: frozenset[str]) -> list[Token]:
    """The objects of `verb`'s own prepositions among `prepositions`."""
    return [obj for prep in verb.children if prep.dep_ == "prep" and prep.lower_ in prepositions
            for obj in prep.children if obj.dep_ == "pobj"]


def _lying_at_a_table(doc: Doc) -> list[Violation]:
    """Lying, kneeling or squatting at a table or a desk ("lying at a dinner table")."""
    return [make_violation("lie_at", verb_lemma(verb), [place], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in LYING_VERBS
            for place in _preposition_objects(verb, AT) if place.lemma_.lower() in SEATED_PLACES]


def _rising_below(doc: Doc) -> list[Violation]:
    """A tower rising beneath something ("a clock tower rises beneath another skyscraper")."""
    return [make_violation("rise_below", verb_lemma(verb), [place], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in RISING_VERBS
            for place in _preposition_objects(verb, BELOW)]


def _pole_under(where: Token) -> Token | None:
    """The pole or post `where` is, or the one "top of" names ("on top of a light pole")."""
    if where.lower_ == "top":
        where = next((obj for prep in where.children if prep.lower_ == "of"
                      for obj in prep.children if obj.dep_ == "pobj"), where)
    return where if where.lemma_.lower() in POLES else None


def _atop_a_pole(doc: Doc) -> list[Violation]:
    """A person, a large animal or furniture on (top of) a pole or a post ("benches on top of a light pole");
    birds, cats and monkeys perch there, signs and lights hang there, and leaning or hanging on one is fine."""
    found = []
    for option, where, word in placements(doc, ATOP):
        pole = _pole_under(where)
        holder = where.head.head
        if pole is None or (holder.pos_ == "VERB" and verb_lemma(holder) in ("lean", "hang", "rest", "lock")):
            continue
        if all(_cannot_perch(thing) for thing in option):
            found.append(make_violation("atop_a_pole", word, [*option[:1], pole], where.head))
    return found


def _cannot_perch(thing: Token) -> bool:
    key = noun_key(thing)
    if kind_of(thing) in (PERSON, ANIMAL):
        return not is_under(key, _PERCHERS)
    return is_under(key, _SEATS)


def _under_a_board(doc: Doc) -> list[Violation]:
    """A person under, below or beneath a board they ride ("a person under a skateboard does a flip")."""
    return [make_violation("under_a_board", word, [option[0], board], board.head)
            for option, board, word in placements(doc, BELOW)
            if noun_key(board) in RIDDEN_BOARDS and all(kind_of(thing) == PERSON for thing in option)]


def ground_violations(doc: Doc) -> list[Violation]:
    """The rules above over one parse."""
    return (_dry_swims(doc) + _walks_on_air(doc) + _under_ground(doc) + _unhandled(doc) + _lying_at_a_table(doc)
            + _rising_below(doc) + _atop_a_pole(doc) + _under_a_board(doc))
