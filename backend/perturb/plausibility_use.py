"""What things are used for and where they can be: negatives judged absurd in the stop-36 natural samples
(tests/data/perturb-judged-replace8-natural.csv, perturb-judged-binding-swap8-natural.csv), each a class:

  wrong_tool      cooking or baking with a cutting tool ("cooking a cake with a knife", from "cutting").
  under_dish      food under a plate, a dish or a tray ("crackers sitting under a plate, ready to eat").
  floor_and_atop  one verb placing its agent both on the floor or the ground and on top of something else, or
                  on a piece of furniture ("laying on a bathroom floor on top of a toilet", "a woman sitting on
                  the floor on a bed"; not "on the floor on a rug").
  wave_on_land    riding or catching a wave along, in or at a dry place ("riding the wave along the park").
  atop_people     standing, sitting or lying on top of "him", "her", or "them" where "them" can only be the
                  people or animals named before ("a girl holds a baby ... with a boy standing on top of them").
  fruit_with_meat a fruit with meat on it ("an apple with meat", an object swap of "a sandwich with meat").
  broken_couple   "husband and wife" or "bride and groom" with one of the pair traded, the second noun still
                  bare ("a new photographer and wife", an object swap of "a new husband and wife").
  thing_cuts      a thing other than a cutting tool that cuts something ("A cake cutting a woman with a knife",
                  ce_clip's swap of "A woman cutting a cake with a knife").
  unreadable      reading a being, a piece of furniture, food or a vehicle ("A book sitting on a bench reading a
                  man", "A man sitting on a book reading a bench": ce_clip's swaps of "... reading a book").
  dressed_thing   a thing "in" a garment ("A bench in a red top sitting on a girl", ce_clip's swap of "A girl in
                  a red top sitting on a bench", labelled plausible at stop 40); a figure may be dressed ("a
                  mannequin in a dress", "a teddy bear in a sweater").

Each errs towards "plausible" like the rules in `selection`; like them, a violation counts only where the
perturbation made it (`plausibility`).
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import ANIMAL, INANIMATE, PERSON, TOPS, noun_key
from backend.perturb.parse_reading import verb_lemma
from backend.perturb.plausibility_parse import (
    Violation,
    agent_options,
    is_under,
    kind_of,
    make_violation,
    placements,
)

COOKING_VERBS = frozenset("cook bake fry grill roast boil".split())
CUTTING_TOOLS = frozenset("knife knives scissors saw blade cutter cleaver".split())
CUTTING_MACHINES = frozenset(["machine", "mower", "lawnmower", "lawn mower", "slicer", "shredder"])
_UNREADABLE = frozenset(["furniture.n.01", "food.n.01", "food.n.02", "vehicle.n.01", "building.n.01"])
DISHES = frozenset("plate plates dish dishes tray trays saucer platter".split())
BELOW = frozenset(["under", "beneath", "underneath", "below"])
FLOORS = frozenset("floor ground grass sand".split())
RAISED = frozenset("top bed couch sofa chair table bench desk counter".split())  # WordNet's first table is data
_FURNITURE = frozenset(["furniture.n.01"])
WAVES = frozenset(["wave", "waves"])
DRY_PLACES = frozenset("park street road city field lawn yard sidewalk grass desert forest".split())
WAVE_PLACES = frozenset(["along", "in", "at", "through", "across", "on"])
PEOPLE_PRONOUNS = frozenset(["him", "her"])
_FOOD_SYNSETS = frozenset(["food.n.01", "food.n.02", "baked_goods.n.01"])
_FRUIT_SYNSETS = frozenset(["edible_fruit.n.01"])
_MEAT_SYNSETS = frozenset(["meat.n.01"])
_HUSBANDS = frozenset("husband groom bridegroom man guy".split())
_WIVES = frozenset("wife bride woman lady".split())
PARTNERS = {"wife": _HUSBANDS, "bride": _HUSBANDS, "husband": _WIVES, "groom": _WIVES, "bridegroom": _WIVES}


def _with_objects(token: Token) -> list[Token]:
    """The objects of "with" phrases under `token`: "cooking a cake with a knife" gives the knife however
    the parse hangs it (on "cooking" or on "cake")."""
    return [obj for prep in token.subtree if prep.dep_ == "prep" and prep.lower_ == "with"
            for obj in prep.children if obj.dep_ == "pobj"]


def _wrong_tools(doc: Doc) -> list[Violation]:
    """Cooking with a knife or scissors."""
    return [make_violation("wrong_tool", verb_lemma(verb), [tool], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in COOKING_VERBS
            for tool in _with_objects(verb) if tool.lower_ in CUTTING_TOOLS]


def _under_dishes(doc: Doc) -> list[Violation]:
    """Food under a plate: what a plate carries lies on it."""
    return [make_violation("under_dish", word, [option[0], where], where.head)
            for option, where, word in placements(doc, BELOW)
            if where.lower_ in DISHES and all(is_under(noun_key(thing), _FOOD_SYNSETS) for thing in option)]


def _on_objects(verb: Token) -> list[Token]:
    """The objects of `verb`'s own "on" phrases, "top" for "on top of"."""
    return [obj for prep in verb.children if prep.dep_ == "prep" and prep.lower_ in ("on", "atop")
            for obj in prep.children if obj.dep_ == "pobj"]


def _floor_and_atop(doc: Doc) -> list[Violation]:
    """On the floor and on top of something, or on a bed, at once."""
    found = []
    for verb in doc:
        places = _on_objects(verb) if verb.pos_ == "VERB" else []
        floor = next((place for place in places if place.lower_ in FLOORS), None)
        top = next((place for place in places
                    if place.lower_ in RAISED or is_under(noun_key(place), _FURNITURE)), None)
        if floor is not None and top is not None:
            found.append(make_violation("floor_and_atop", verb_lemma(verb), [floor, top], verb))
    return found


def _waves_on_land(doc: Doc) -> list[Violation]:
    """A wave ridden along a park or a street."""
    return [make_violation("wave_on_land", verb_lemma(verb), [wave, place], verb) for verb in doc
            if verb.pos_ == "VERB"
            for wave in verb.children if wave.dep_ == "dobj" and wave.lower_ in WAVES
            for prep in verb.children if prep.dep_ == "prep" and prep.lower_ in WAVE_PLACES
            for place in prep.children if place.dep_ == "pobj" and noun_key(place) in DRY_PLACES]


def _only_beings_before(pronoun: Token) -> bool:
    """Can "them" stand only for people or animals? It can where three or more (the agent among them) were
    named before it and no plural thing was ("a girl holds a baby eating a bagel with a boy standing on top of
    them"; not "kids next to rocks, a boy standing on top of them")."""
    nouns = [token for token in pronoun.doc[:pronoun.i] if token.pos_ == "NOUN"]
    beings = [noun for noun in nouns if kind_of(noun) in (PERSON, ANIMAL)]
    plural_things = [noun for noun in nouns if noun.tag_ == "NNS" and noun not in beings]
    return len(beings) >= 3 and not plural_things


def _atop_people(doc: Doc) -> list[Violation]:
    """On top of "him", "her", or "them" standing for people."""
    return [make_violation("atop_people", word, [option[0], where], where.head.head)
            for option, where, word in placements(doc, frozenset(["on", "atop"]))
            if where.pos_ == "PRON" and (where.lower_ in PEOPLE_PRONOUNS
                                         or (where.lower_ == "them" and _only_beings_before(where)))]


def _fruit_with_meat(doc: Doc) -> list[Violation]:
    """A fruit with meat ("an apple with meat")."""
    return [make_violation("fruit_with_meat", "with", [fruit, meat], None) for fruit in doc
            if fruit.pos_ == "NOUN" and is_under(noun_key(fruit), _FRUIT_SYNSETS)
            for prep in fruit.children if prep.dep_ == "prep" and prep.lower_ == "with"
            for meat in prep.children if meat.dep_ == "pobj" and is_under(noun_key(meat), _MEAT_SYNSETS)]


def _broken_couples(doc: Doc) -> list[Violation]:
    """"A photographer and wife": a bare "wife" (no determiner of its own) shares the first noun's, so the two
    read as a couple, which only a husband and a wife (a bride and a groom) are."""
    found = []
    for second in doc:
        first = second.head
        bare = not any(child.dep_ in ("det", "poss") for child in second.children)
        if second.dep_ != "conj" or first.pos_ != "NOUN" or not bare:
            continue
        for spouse, other in ((first, second), (second, first)):
            partners = PARTNERS.get(spouse.lower_)
            if partners is not None and other.lower_ not in partners:
                found.append(make_violation("broken_couple", "and", [first, second], None))
    return found


def _dressed_things(doc: Doc) -> list[Violation]:
    """A thing in a garment: "in" hangs on the thing and its object is worn ("a bench in a red top")."""
    return [make_violation("dressed_thing", "in", [prep.head, garment], None) for garment in doc
            if garment.dep_ == "pobj" and (prep := garment.head).lower_ == "in" and prep.head.pos_ == "NOUN"
            and (lexicon().is_worn(garment.lemma_.lower()) or garment.lower_ in TOPS)
            and kind_of(prep.head) == INANIMATE]


def _things_cutting(doc: Doc) -> list[Violation]:
    """A thing that cuts something, where no cutting tool or machine is named as the cutter."""
    found = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) != "cut" or not any(c.dep_ == "dobj" for c in verb.children):
            continue
        for option in agent_options(verb):
            if all(kind_of(agent) == INANIMATE and noun_key(agent) not in CUTTING_TOOLS | CUTTING_MACHINES
                   for agent in option):
                found.append(make_violation("thing_cuts", "cut", [option[0]], verb))
    return found


def _unreadable(doc: Doc) -> list[Violation]:
    """Reading a being, furniture, food or a vehicle; a quoted or capitalised word is what a sign reads ("a sign
    reading Bear Crossing")."""
    return [make_violation("unreadable", "read", [obj], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) == "read"
            for obj in verb.children if obj.dep_ == "dobj" and obj.pos_ == "NOUN" and obj.text.islower()
            and (kind_of(obj) in (PERSON, ANIMAL) or is_under(noun_key(obj), _UNREADABLE))]


def use_violations(doc: Doc) -> list[Violation]:
    """The rules here over one parse."""
    return (_wrong_tools(doc) + _under_dishes(doc) + _floor_and_atop(doc) + _waves_on_land(doc)
            + _atop_people(doc) + _fruit_with_meat(doc) + _broken_couples(doc) + _dressed_things(doc)
            + _things_cutting(doc) + _unreadable(doc))
