"""Which of CE-CLIP's and REPLACE's noun refills fit their slot.

CE-CLIP's object negative refills a noun with a sister of its lexicon group
(an animal for an animal, a vehicle for a vehicle). The groups are broad,
and a hand-judged sample of 100 refills had 23 absurd ones, all a sister
that does not fit the verb or the place: "riding a bear", "a guy inside a
motorcycle", "several watermelons sit in a bowl", "a horse sitting in the
sink". A text-only model rejects such a negative without the image. So a
refill must also:

  * be ridden, where the noun is ridden ("riding a horse" -> "an elephant",
    not "a bear"), draw loads, where it pulls or tows one, or graze, where
    it grazes or comes in a herd ("sheep grazing" -> "cows", not "dogs");
  * otherwise share the original's fit class below, where its group has one:
    things of one size, use and setting (a large animal for a large
    animal, a pet for a pet, a seat for a seat, a cup for a mug, a car for
    a bus, a jet ski for a boat, a lake for a river, a swan for a duck; a tractor, a bed, a beach or a street
    has no such sister). A word in no class (an apple, a shirt) may take any sister
    that is in no class either.

What the selectional rules (`plausibility`) flag is dropped by the caller,
in favour of the next refill. REPLACE holds only some groups to their class
(see `fits_slot`). For both, a piece of furniture must serve what is at, in
or on it (people sit at a table, on a seat; a thing stands on a surface),
and no refill may leave behind a word that belongs to the old noun: a
modifier naming a kind of it ("a tabby cat" -> "a tabby dog"), a second
mention of it ("a bus ... to board the bus" -> "a train ... to board the
bus"), a man's garment turned a woman's ("a guy in a green dress"), nor
a neighbour that cannot describe the new noun ("brown bears" -> "brown
zebras", "a man with a beard" -> "a girl": `refill_neighbours`); nor may
the photographer's camera ("looking at the camera") become a thing.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TypeVar

from spacy.tokens import Token

from backend.perturb.attribute_fit import attribute_fits
from backend.perturb.gendered import FEMALE_WORDS, MALE_WORDS, WOMENS_WEAR
from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import (
    ACTIVITY_REFILLS,
    ANIMAL,
    INANIMATE,
    PERSON,
    activity_of,
    is_physical,
    noun_key,
    noun_senses,
    referent,
)
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma, of_holder, verb_lemma
from backend.perturb.plausibility_parse import (
    EATING_VERBS,
    LARGE_ANIMALS,
    agent_options,
    is_under,
    kind_of,
    living,
    placements,
)
from backend.perturb.refill_neighbours import neighbours_fit
from backend.perturb.wearing import wearer

T = TypeVar("T")

_LARGE_WILD = frozenset(["elephant", "giraffe", "zebra", "bear", "polar bear", "lion", "tiger", "deer", "rhino",
                         "hippo", "moose"])
_OTHER_CLASSES = (
    "dog,cat,rabbit",
    "monkey,squirrel",
    "sheep,goat,pig",
    "field,park,forest,mountain",
    "car,bus,truck,van",
    "bicycle,motorcycle,scooter",
    "airplane,helicopter",
    "ball,tennis ball,soccer ball,frisbee",
    "tennis racket,baseball bat",
    "watermelon,pineapple",
    "chair,stool,bench,couch",
    "table,desk",
    "shelf,cabinet,dresser",
    "plate,bowl,tray",
    "cup,mug",
    "refrigerator,oven,stove",
    "microwave,toaster",
    "laptop,keyboard",
    "phone,remote,camera",
    "cake,donut,pie,cookie",
    "pizza,sandwich,hot dog,hamburger",
    "grass,dirt,sand",
    "tree,bush",
    "flower,cactus",
    "lamp,clock,mirror",
    "train,tram",
    "boat,jet ski",
    "duck,swan,goose,seagull",  # birds on the water; the lexicon's overlaps keep a duck from a goose
    # Alone in their group: no sister is of their size and use.
    "river,lake,pond",
    "bird", "pigeon", "parrot", "owl", "book", "candle", "kite", "bed", "television", "street", "umbrella", "vase",
    "snow", "beach", "desert", "tractor", "skateboard", "surfboard", "snowboard",
    "soup", "salad",
)
FIT_CLASSES: tuple[frozenset[str], ...] = (
    LARGE_ANIMALS - _LARGE_WILD, _LARGE_WILD, *(frozenset(words.split(",")) for words in _OTHER_CLASSES))
_LARGE_CLASSES = {0, 1}  # the indices of the two large-animal classes in FIT_CLASSES
# The lexicon's object groups whose refills REPLACE holds to a fit class: what a verb or a place selects by size,
# use or medium. Judged absurd when free: "boats flying through a blue sky", "flying a soccer ball", "a meal on a
# white cup", "a mirror about the topic fun". Electronics stay free ("works on a
# laptop" -> "on a phone"): holding them to a class cost even-id coverage, and the one judged absurd ("zebras
# look towards the keyboard") was the photographer's camera (`_faces_the_camera`).
CLASS_BOUND_GROUPS = frozenset(["vehicle", "tableware", "sports equipment", "household object"])
# A dish in a caption with bread or a bun is in it or on it: only what comes in bread fits ("a hot dog sitting on
# top of a bun" -> "a donut", "a hot dog cut in half on some bread" -> "a cookie" were judged absurd). Other dishes
# stay free ("cutting a cake" -> "cutting a pizza").
BREADS = frozenset("bread bun roll toast baguette".split())
IN_BREAD = frozenset("sandwich hot dog hamburger".split())
# What a piece of furniture is for, by what is at, in or on it: people sit at a table, in a chair and on a seat,
# a thing stands on a surface ("sitting at a shelf", "sitting in a desk", "a sandwich sitting on a couch" were
# made). An animal sits on any of them.
_FURNITURE_ROLES = {
    "at": frozenset("table desk counter".split()),
    "in": frozenset("chair couch sofa armchair bed".split()),
    "person": frozenset("chair stool bench couch sofa bed armchair".split()),
    "thing": frozenset("table desk shelf counter cabinet dresser".split()),
}
# Open ground where people walk and play and animals graze stands for open ground, a street too where no vehicle
# drives on it; a river (water), a forest, a mountain or a desert stands for none ("motorcyclists riding down the
# river", "a bus is stopped on a dark forest", "cattle grazing on a lush green desert", "flying a kite on a
# forest" were made).
_OPEN_LAND = dict.fromkeys(["beach", "field", "park", "street"], "open land")
_FURNITURE_PREPOSITIONS = frozenset("at in on onto atop upon".split())
_TOWARDS = frozenset("at towards toward into for".split())
_FACING_VERBS = frozenset("look stare smile pose gaze face glance peer turn grin".split())
RIDDEN_ANIMALS = frozenset("horse pony elephant camel donkey mule".split())
DRAUGHT_ANIMALS = RIDDEN_ANIMALS | frozenset("cow ox bull".split())
WINGED_VERBS = frozenset("fly perch soar nest flutter glide hover swoop flap peck".split())
PULLING_VERBS = frozenset("pull tow draw drag haul".split())
# What grazers and browsers eat (`_eats_plants`).
PLANT_FOODS = frozenset("leaf grass hay plant branch bush twig foliage shrub".split())
# Animals that graze, for the one that grazes ("A group of sheep grazing" -> "cows", not "dogs" or "birds").
GRAZERS = frozenset("horse pony cow ox bull sheep goat deer zebra elephant giraffe".split())


def _finds(word: str, collections: Iterable[tuple[T, Iterable[str]]]) -> T | None:
    """The name of the first collection holding `word`, else of the first holding a curated synonym of it
    ("bike", which the lexicon leaves ambiguous: a bicycle or a motorbike). WordNet's shared senses are too loose
    here ("pig" and "bull" both name a policeman)."""
    lex = lexicon()
    key = lex.canonical(word)
    pairs = [(name, list(words)) for name, words in collections]
    for same in (lambda other: lex.canonical(other) == key, lambda other: not lex.may_replace(word, other)):
        found = [name for name, words in pairs if any(map(same, words))]
        if found:
            return found[0]
    return None


@functools.cache
def fit_class(word: str) -> int | None:
    """The index of the fit class holding `word` or a synonym of it ("bike"), None when none does."""
    return _finds(word, enumerate(FIT_CLASSES))


def _is_ridden(noun: Token) -> bool:
    """The object of "ride" ("riding a horse", "riding horses and camels", "riding on the back of an elephant")."""
    holder = of_holder(noun)
    if holder is not None and holder.lower_ in ("back", "top"):
        noun = holder
    if noun.dep_ == "pobj" and noun.head.lower_ in ("on", "atop"):
        return verb_lemma(noun.head.head) == "ride"
    head = noun.head.head if noun.dep_ == "conj" else noun.head
    return noun.dep_ in ("dobj", "conj") and head.pos_ == "VERB" and verb_lemma(head) == "ride"


def _does(noun: Token, verbs: frozenset[str]) -> bool:
    """The agent of one of `verbs`, active or passive ("towed by a group of dogs")."""
    return any(verb.pos_ == "VERB" and verb_lemma(verb) in verbs
               and any(noun in (agent, referent(agent)) for option in agent_options(verb) for agent in option)
               for verb in noun.doc)


@functools.lru_cache(maxsize=1024)
def _role_animals(noun: Token) -> frozenset[str] | None:
    """The animals that can fill this animal's role (ridden, pulling, grazing), None where it has no such role;
    remembered per token (tokens of one parse compare equal), as `fits_slot` asks it for every candidate word."""
    if kind_of(noun) != ANIMAL:
        return None
    if _is_ridden(noun):
        return RIDDEN_ANIMALS
    if _does(noun, PULLING_VERBS):
        return DRAUGHT_ANIMALS
    return GRAZERS if _does(noun, frozenset({"graze"})) or _in_herd(noun) or _eats_plants(noun) else None


def _eats_plants(noun: Token) -> bool:
    """"A giraffe eating leaves", "cows munching on hay": only a grazer or a browser eats them ("A lion eating
    leaves" was made)."""
    def eaten(verb: Token) -> list[Token]:
        ons = [child for child in verb.children if child.dep_ == "prep" and child.lower_ == "on"]
        return [child for child in verb.children if child.dep_ == "dobj"] + [
            obj for on in ons for obj in on.children if obj.dep_ == "pobj"]

    return any(verb.pos_ == "VERB" and verb_lemma(verb) in EATING_VERBS and _does(noun, frozenset([verb_lemma(verb)]))
               and any(noun_lemma(food) in PLANT_FOODS for food in eaten(verb)) for verb in noun.doc)


def _in_herd(noun: Token) -> bool:
    """"a herd of sheep": a herd is of grazers ("a herd of birds" reads as absurd)."""
    holder = of_holder(noun)
    return holder is not None and holder.lemma_.lower() == "herd"


@functools.cache
def _group_of(word: str) -> str | None:
    """The lexicon object group holding `word` or a synonym of it."""
    return _finds(word, lexicon().object_groups.items())


def _free_in_replace(noun: Token, original: str, word: str) -> bool:
    """REPLACE's refills outside the class rule: a thing of no class-bound group (furniture, food, open land:
    "a cat on a chair" for "on a bed", as SugarCrepe's negatives change a thing's size or use), and a pet for a
    bird, alone in its class, in a caption where nothing flies or perches ("a dog perched on a branch") and no
    colour is a bird's ("a blue rabbit"). Other animals keep their class: a pet for a pet, a farm animal for a
    farm animal ("a goat playing frisbee", "a sheep lying on a suitcase", "birds ... in a parking lot" ->
    "monkeys" were made)."""
    if kind_of(noun) == ANIMAL:
        winged = any(verb_lemma(token) in WINGED_VERBS for token in noun.doc if token.pos_ == "VERB")
        furless = any(not attribute_fits(noun, child.lower_, mammal=True) for child in noun.children)  # a blue bird
        pet_for_bird = fit_class(original) == fit_class("bird") and fit_class(word) == fit_class("dog")
        return pet_for_bird and not (winged or furless)
    group = _group_of(original)
    if group == "dish":
        return word in IN_BREAD or not any(noun_lemma(token) in BREADS for token in noun.doc)
    if group == "outdoor place":
        driven = "street" in (original, word) and any(_group_of(noun_lemma(token)) == "vehicle"
                                                       for token in noun.doc if token.tag_ in NOUN_TAGS)
        return not driven and _OPEN_LAND.get(original, original) == _OPEN_LAND.get(word, word)
    return group not in CLASS_BOUND_GROUPS


OTHER = frozenset(["other", "another"])


def _names_a_kind_of(noun: Token) -> bool:
    """A modifier that names a kind of the noun ("a tabby cat", "a dalmatian dog"): a refill would keep it
    ("a baby tabby dog" was judged absurd). WordNet: some sense of the modifier is under the noun's first. A
    compound modifier is always inside the replaced span ("teddy bear", `slots.Slot.whole_compound`: "a
    turboprop airplane" -> "a helicopter"), so it goes with the noun."""
    key = noun_key(noun)
    senses = noun_senses(key)
    if not senses:
        return False
    return any(child.dep_ in ("amod", "nmod") and child.lower_ not in key.split()  # "teddy bear"
               and is_under(child.lower_, frozenset([senses[0].name()])) for child in noun.children)


def _mentioned_again(noun: Token) -> bool:
    """A later "the" noun of the caption is this one again ("A bus stopped ... to board the bus"), or a later one
    of its kind is compared with it ("from a large boat as a smaller boat is lowered", "another boat"): the
    refill would leave the second mention naming or measured against the old thing ("from a large jet ski as a
    smaller boat is lowered" was judged absurd); nor may "another" one become another kind ("a cat looking at
    another rabbit"). Two of a kind ("a small elephant walks underneath a big elephant") are two things, and
    either may change."""
    lex = lexicon()
    key = lex.canonical(noun_lemma(noun))
    if any(child.lower_ in OTHER for child in noun.children) and any(
            token.tag_ in NOUN_TAGS and lex.canonical(noun_lemma(token)) == key for token in noun.doc[:noun.i]):
        return True  # "a cat looking at another cat" -> "at another rabbit"
    return any(token.tag_ in NOUN_TAGS and lex.canonical(noun_lemma(token)) == key
               and any((child.dep_ == "det" and child.lower_ == "the") or child.tag_ == "JJR"
                       or child.lower_ in OTHER for child in token.children)
               for token in noun.doc[noun.i + 1:])


def _furniture_fits(noun: Token, word: str) -> bool:
    """A piece of furniture's refill serves what is at, in or on it (`_FURNITURE_ROLES`)."""
    if _group_of(noun_lemma(noun)) != "furniture":
        return True
    for options, where, preposition in placements(noun.doc, _FURNITURE_PREPOSITIONS):
        option = living(options)
        kinds = {kind_of(thing) for thing in option}
        things = kinds == {INANIMATE} and all(is_physical(noun_lemma(thing)) for thing in option)  # no "focus on"
        role = preposition if preposition in ("at", "in") else "person" if kinds == {PERSON} else (
            "thing" if things else None)
        if where.i == noun.i and role is not None and word not in _FURNITURE_ROLES[role]:
            return False
    return True


def _faces_the_camera(noun: Token) -> bool:
    """The camera that takes the photo, which its subject looks, smiles or poses at ("zebras look towards the
    camera"): it is no thing of the scene, and a refill is ("zebras look towards the keyboard" was judged
    absurd)."""
    preposition = noun.head
    return (noun_lemma(noun) == "camera" and noun.dep_ == "pobj" and preposition.lower_ in _TOWARDS
            and verb_lemma(preposition.head) in _FACING_VERBS)


def _worn_by_a_man(noun: Token, word: str) -> bool:
    """A garment only women wear, where a man may be its wearer: in a caption whose people are all men ("a guy
    in a green shirt", "A man wearing a gray vest", "A man has a checked shirt", "a male tennis player in a
    white shirt", however the parse hangs the garment), or, where the caption names both, unless it is worn
    "in" by a woman alone ("A man and a woman in shirts" -> "in dresses" is refused)."""
    if word not in WOMENS_WEAR:
        return False
    words = {token.lower_ for token in noun.doc}
    if not words & MALE_WORDS:
        return False
    person = wearer(noun)
    together = {person.lower_, person.head.lower_} | {child.lower_ for child in person.children if child.dep_ == "conj"}
    return person is noun or person.lower_ not in FEMALE_WORDS or bool(together & MALE_WORDS)


@functools.lru_cache(maxsize=1024)
def _stays_as_named(noun: Token) -> bool:
    """A noun no word may replace (a kind named by its modifier, a thing named again, a face to the camera);
    remembered per token, as `fits_slot` asks it for every candidate word."""
    return _names_a_kind_of(noun) or _mentioned_again(noun) or _faces_the_camera(noun)


def fits_slot(noun: Token, original: str, word: str, all_groups: bool = True) -> bool:
    """Whether `word` may replace the noun `original` here (see the module docstring). Without `all_groups`
    (REPLACE) the fit classes bind only large animals and the `CLASS_BOUND_GROUPS`: REPLACE's negatives may
    change a piece of furniture or a place ("a cat on a chair" for "on a bed"), as SugarCrepe's do, and
    holding every group to a class cost 7 points of replace_obj coverage."""
    if _stays_as_named(noun):
        return False
    if _worn_by_a_man(noun, word) or not _furniture_fits(noun, word) or not neighbours_fit(noun, original, word):
        return False
    if (verb := activity_of(noun)) is not None:
        return word in ACTIVITY_REFILLS[verb]  # "playing frisbee" -> "playing ball", not "playing tennis ball"
    animals = _role_animals(noun)
    if animals is not None:
        return word in animals
    if not all_groups and _free_in_replace(noun, original, word):
        return True
    return fit_class(original) == fit_class(word)
