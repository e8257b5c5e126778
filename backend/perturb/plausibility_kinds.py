"""Beings and vehicles doing, or being where, their kind cannot: negatives judged absurd in the hand-judged samples
(tuning rows of `bench/plausibility_judged.py`), each rule a class of them:

  breed_misfit     a breed or coat word of one animal on another ("A baby tabby rabbit", "a group of husky monkeys").
  wild_handled     walking, leading or petting a wild beast ("A man walking his giraffe", "leading a white bear with
                   a rope", "petting a polar bear"); people walk and pet elephants, horses and giraffes in zoos are fed
                   (petting a giraffe is left alone).
  cooked_on_cold   cooking or frying on a refrigerator, a freezer, a microwave or a dishwasher ("A woman is cooking
                   on a large black refrigerator").
  under_low        a person sitting, standing or doing a trick under something too low to be under: a bed, a couch,
                   a bicycle ("A man sitting under a bed", "A police man under a motorcycle").
  over_shelter     a person or an animal sitting, standing or being over an umbrella, a canopy or an awning ("The
                   father and daughter are over an umbrella").
  sat_in_table     sitting in a table, a desk or a counter ("A man sitting in a table").
  kite_struck      kicking or hitting a kite ("someone else kicks a kite", "prepares to hit the ball and a kite").
  flowers_held     flowers in, of or filling a thing that holds none: a book, an umbrella, a lamp ("A book filled
                   with yellow and white flowers", "An umbrella of flowers", "flowers in the white book").
  animal_throws    an animal throwing or tossing a thing: only people and apes throw ("A black and white dog
                   throwing a blue flying disc"); a horse throwing its rider bucks him off.
  other_kind       an animal among "other" animals of another class ("a man pets a horse attached to other birds"):
                   "other" says it is one of them.
  on_cutlery       a made thing resting on a fork, a spoon or a knife ("A plate rests on a fork"); food may.

Each errs towards "plausible"; a violation counts only where the perturbation made it
(`plausibility.implausibilities`), so each names the preposition or verb the perturbation may have changed.
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.nouns import ANIMAL, PERSON, is_kind_of, noun_key
from backend.perturb.parse_reading import noun_lemma, verb_lemma
from backend.perturb.plausibility_parse import (
    Violation,
    agent_options,
    is_under,
    kind_of,
    make_violation,
    placements,
    some_sense_under,
)
from backend.perturb.selection import FILLING_WORDS

BREEDS = {"tabby": frozenset(["cat", "kitten"]), "calico": frozenset(["cat", "kitten"]),
          "husky": frozenset(["dog", "puppy"])}
WILD_BEASTS = frozenset("bear lion tiger wolf zebra giraffe leopard cheetah rhino hippo".split())
LED_VERBS = frozenset(["walk", "lead"])
PETTED_BEASTS = WILD_BEASTS - {"giraffe", "zebra"}
COOKING_VERBS = frozenset("cook fry grill boil saute sear".split())
COLD_APPLIANCES = frozenset("refrigerator fridge freezer microwave dishwasher".split())
# Boards are `selection_ground`'s (under_a_board).
CYCLES = frozenset("motorcycle bicycle bike scooter".split())
LOW_THINGS = CYCLES | frozenset("bed couch sofa".split())
UNDER = frozenset(["under", "beneath", "underneath"])
OVER = frozenset(["over", "above"])
SHELTERS = frozenset("umbrella umbrellas canopy awning parasol".split())
# Verbs of a body at rest or in a trick; lying, crawling and hiding under a bed or a motorcycle are left out (a
# mechanic lies under one, a child hides under the other).
POSED_VERBS = frozenset("sit stand do be perform idle".split())
SURFACES = frozenset("table desk counter".split())
SITTING_VERBS = frozenset(["sit", "seat"])
STRUCK_VERBS = frozenset(["kick", "hit", "punch", "bat"])
FLOWERS = frozenset("flower rose tulip daisy sunflower lily orchid".split())
# Things that hold no flowers, though a book may hold pictures of them and a lamp may be on a vase.
NON_HOLDERS = frozenset("book umbrella lamp clock laptop computer phone television keyboard remote".split())
THROWING_VERBS = frozenset(["throw", "toss", "pitch", "hurl"])
_THROWERS = frozenset(["primate.n.02"])
CUTLERY = frozenset("fork spoon knife chopstick chopsticks toothpick".split())
# Dishes, containers, furniture and devices in some sense ("plate" is first a sheet of metal), food in none first.
_RESTING_THINGS = frozenset(["tableware.n.01", "container.n.01", "furniture.n.01", "device.n.01"])
_FOOD = frozenset(["food.n.01", "food.n.02"])
# The classes of animal "other" keeps apart: a horse among other cows was judged in doubt, among other birds absurd.
_ANIMAL_CLASSES = (frozenset(["mammal.n.01"]), frozenset(["bird.n.01"]), frozenset(["fish.n.01"]),
                   frozenset(["reptile.n.01"]), frozenset(["insect.n.01"]))


def _animal(token: Token) -> bool:
    return kind_of(token) == ANIMAL


def _breed_misfits(doc: Doc) -> list[Violation]:
    """A tabby rabbit."""
    return [make_violation("breed_misfit", mark.lower_, [mark, noun], None) for mark in doc
            if mark.lower_ in BREEDS and mark.dep_ in ("amod", "compound", "nmod")
            and (noun := mark.head).pos_ == "NOUN" and _animal(noun) and noun_lemma(noun) not in BREEDS[mark.lower_]]


def _with_conjuncts(option: tuple[Token, ...]) -> list[Token]:
    """An agent's nouns and their conjuncts ("The father and daughter are over an umbrella")."""
    return list(dict.fromkeys(each for noun in option for each in (noun, *noun.conjuncts)))


def _placed(doc: Doc, prepositions: frozenset[str], places: frozenset[str]) -> list[tuple[list[Token], Token, Token]]:
    """(what is placed, where, the preposition) for `prepositions` whose object's lemma is one of `places`."""
    found = []
    for option, where, _ in placements(doc, prepositions):
        prep = where.head if where.head.lower_ in prepositions else where.head.head.head  # "on top of"
        if where.lemma_.lower() in places:
            found.append((_with_conjuncts(option), where, prep))
    return found


def _head_verb(prep: Token) -> str | None:
    """The lemma of the verb or copula `prep` hangs on; None where it hangs on a noun ("a man under a bike")."""
    return verb_lemma(prep.head) if prep.head.pos_ in ("VERB", "AUX") else None


def _wild_handled(doc: Doc) -> list[Violation]:
    """Walking a giraffe, petting a bear."""
    found = []
    for verb in doc:
        lemma = verb_lemma(verb) if verb.pos_ == "VERB" else ""
        beasts = WILD_BEASTS if lemma in LED_VERBS else PETTED_BEASTS if lemma == "pet" else frozenset()
        found += [make_violation("wild_handled", lemma, [obj], verb) for obj in verb.children
                  if obj.dep_ == "dobj" and _animal(obj) and noun_key(obj) in beasts]
    return found


def _cooked_on_cold(doc: Doc) -> list[Violation]:
    """Cooking on a refrigerator."""
    return [make_violation("cooked_on_cold", verb_lemma(verb), [where], prep) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in COOKING_VERBS
            for prep in verb.children if prep.dep_ == "prep" and prep.lower_ in ("on", "atop")
            for where in prep.children if where.dep_ == "pobj" and where.lemma_.lower() in COLD_APPLIANCES]


def _posed(prep: Token, on_a_noun: bool) -> bool:
    """`prep` hangs on a verb of rest or a trick or a copula, or, where `on_a_noun`, on a noun ("A police man under
    a motorcycle", "A man and a girl over an umbrella"); a person merely under a bed may hide or sleep there ("A
    boy asleep under a large bed")."""
    verb = _head_verb(prep)
    if verb is not None:
        return verb in POSED_VERBS
    return on_a_noun and prep.head.pos_ in ("NOUN", "PROPN")


def _under_low(doc: Doc) -> list[Violation]:
    """Sitting under a bed."""
    return [make_violation("under_low", prep.lower_, [person, low], prep)
            for people, low, prep in _placed(doc, UNDER, LOW_THINGS) for person in people
            if kind_of(person) == PERSON and _posed(prep, noun_lemma(low) in CYCLES)]


def _over_shelters(doc: Doc) -> list[Violation]:
    """Standing over an umbrella."""
    return [make_violation("over_shelter", prep.lower_, [being, shelter], prep)
            for beings, shelter, prep in _placed(doc, OVER, SHELTERS) for being in beings
            if kind_of(being) in (PERSON, ANIMAL) and _posed(prep, True)]


def _sat_in_tables(doc: Doc) -> list[Violation]:
    """Sitting in a table."""
    return [make_violation("sat_in_table", "in", [surface], prep)
            for _, surface, prep in _placed(doc, frozenset(["in"]), SURFACES) if _head_verb(prep) in SITTING_VERBS]


def _kites_struck(doc: Doc) -> list[Violation]:
    """Kicking a kite."""
    return [make_violation("kite_struck", verb_lemma(verb), [kite], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in STRUCK_VERBS
            for obj in verb.children if obj.dep_ == "dobj"
            for kite in (obj, *obj.conjuncts) if kite.lemma_.lower() == "kite"]


def _flower_holders(doc: Doc) -> list[tuple[Token, Token]]:
    """(holder, flowers) for "flowers in X", "X of flowers" and "X filled with flowers" or "full of flowers"."""
    pairs = [(where, thing) for option, where, _ in placements(doc, frozenset(["in", "inside"])) for thing in option]
    for flowers in doc:
        prep = flowers.head
        if flowers.dep_ != "pobj" or prep.lower_ not in ("of", "with"):
            continue
        if prep.head.lower_ in FILLING_WORDS and prep.head.head.pos_ == "NOUN":  # "A vase and a book filled with"
            pairs += [(holder, flowers) for holder in (prep.head.head, *prep.head.head.conjuncts)]
        elif prep.lower_ == "of" and prep.head.pos_ == "NOUN":  # not "A lamp and a small vase of flowers"
            pairs.append((prep.head, flowers))
    return pairs


def _flowers_held(doc: Doc) -> list[Violation]:
    """A book filled with flowers."""
    return [make_violation("flowers_held", noun_lemma(holder), [holder, flowers], None)
            for holder, flowers in _flower_holders(doc)
            if noun_lemma(flowers) in FLOWERS and noun_lemma(holder) in NON_HOLDERS]


def _throws_a_thing(verb: Token) -> bool:
    """`verb` throws a thing: a horse throwing its rider is bucking him off ("White horse throwing a man")."""
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    return bool(objects) and not any(kind_of(obj) in (PERSON, ANIMAL) for obj in objects)


def _animals_throwing(doc: Doc) -> list[Violation]:
    """A dog throwing a disc."""
    return [make_violation("animal_throws", verb_lemma(verb), [option[0]], verb) for verb in doc
            if verb.pos_ == "VERB" and verb_lemma(verb) in THROWING_VERBS and _throws_a_thing(verb)
            for option in agent_options(verb)
            if all(_animal(noun) and not is_under(noun_key(noun), _THROWERS) for noun in option)]


def _kin(first: Token, second: Token) -> bool:
    """Of one class of animal (`_ANIMAL_CLASSES`), or one a kind of the other ("a zebra and other animals")."""
    one, two = noun_lemma(first), noun_lemma(second)
    classes = [[is_under(key, group) for group in _ANIMAL_CLASSES] for key in (one, two)]
    return is_kind_of(one, two) or is_kind_of(two, one) or not any(classes[0]) or classes[0] == classes[1]


def _other_kinds(doc: Doc) -> list[Violation]:
    """A horse attached to other birds: the animal named last before "other" is of another class."""
    found = []
    for other in doc:
        group = other.head
        if other.lower_ != "other" or other.dep_ != "amod" or not _animal(group) or group.tag_ != "NNS":
            continue
        before = [noun for noun in doc[group.sent.start:other.i] if noun.pos_ == "NOUN" and _animal(noun)]
        if before and not _kin(before[-1], group):
            found.append(make_violation("other_kind", "other", [before[-1], group], None))
    return found


def _on_cutlery(doc: Doc) -> list[Violation]:
    """A plate on a fork."""
    return [make_violation("on_cutlery", word, [thing, cutlery], None)
            for option, cutlery, word in placements(doc, frozenset(["on", "atop"])) for thing in option
            if noun_lemma(cutlery) in CUTLERY and some_sense_under(noun_key(thing), _RESTING_THINGS)
            and not is_under(noun_key(thing), _FOOD)]


def kind_violations(doc: Doc) -> list[Violation]:
    """The rules here over one parse."""
    return (_breed_misfits(doc) + _wild_handled(doc) + _cooked_on_cold(doc) + _under_low(doc) + _over_shelters(doc)
            + _sat_in_tables(doc) + _kites_struck(doc) + _flowers_held(doc) + _animals_throwing(doc)
            + _other_kinds(doc) + _on_cutlery(doc))
