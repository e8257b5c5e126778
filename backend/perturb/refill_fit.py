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
    a bus; a boat, a tractor, a bed, a beach or a street has no such
    sister). A word in no class (an apple, a shirt) may take any sister
    that is in no class either.

What the selectional rules (`plausibility`) flag is dropped by the caller,
in favour of the next refill. REPLACE holds only animals to their class
(see `fits_slot`).
"""
from __future__ import annotations

import functools

from spacy.tokens import Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import ANIMAL, referent
from backend.perturb.parse_reading import verb_lemma
from backend.perturb.plausibility_parse import LARGE_ANIMALS, agent_options, kind_of

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
    "candle,book",
    # Alone in their group: no sister is of their size and use.
    "bird", "train", "boat", "kite", "bed", "television", "street", "river", "umbrella", "vase", "snow", "beach",
    "desert", "tractor", "skateboard", "surfboard", "snowboard",
    "soup", "salad",
)
FIT_CLASSES: tuple[frozenset[str], ...] = (
    LARGE_ANIMALS - _LARGE_WILD, _LARGE_WILD, *(frozenset(words.split(",")) for words in _OTHER_CLASSES))
_LARGE_CLASSES = {0, 1}  # the indices of the two large-animal classes in FIT_CLASSES
RIDDEN_ANIMALS = frozenset("horse pony elephant camel donkey mule".split())
DRAUGHT_ANIMALS = RIDDEN_ANIMALS | frozenset("cow ox bull".split())
PULLING_VERBS = frozenset("pull tow draw drag haul".split())
# Animals that graze, for the one that grazes ("A group of sheep grazing" -> "cows", not "dogs" or "birds").
GRAZERS = frozenset("horse pony cow ox bull sheep goat deer zebra elephant giraffe".split())


@functools.cache
def _canonical_classes() -> tuple[frozenset[str], ...]:
    lex = lexicon()
    return tuple(frozenset(map(lex.canonical, words)) for words in FIT_CLASSES)


def fit_class(word: str) -> int | None:
    """The index of the fit class holding `word` or a synonym of it ("bike"), None when none does."""
    key = lexicon().canonical(word)
    return next((i for i, words in enumerate(_canonical_classes()) if key in words), None)


def _is_ridden(noun: Token) -> bool:
    """The object of "ride" ("riding a horse", "riding horses and camels", "riding on the back of an elephant")."""
    if noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.lower_ in ("back", "top"):
        noun = noun.head.head
    if noun.dep_ == "pobj" and noun.head.lower_ in ("on", "atop"):
        return verb_lemma(noun.head.head) == "ride"
    head = noun.head.head if noun.dep_ == "conj" else noun.head
    return noun.dep_ in ("dobj", "conj") and head.pos_ == "VERB" and verb_lemma(head) == "ride"


def _does(noun: Token, verbs: frozenset[str]) -> bool:
    """The agent of one of `verbs`, active or passive ("towed by a group of dogs")."""
    return any(verb.pos_ == "VERB" and verb_lemma(verb) in verbs
               and any(noun in (agent, referent(agent)) for option in agent_options(verb) for agent in option)
               for verb in noun.doc)


def _role_animals(noun: Token) -> frozenset[str] | None:
    """The animals that can fill this animal's role (ridden, pulling, grazing), None where it has no such role."""
    if kind_of(noun) != ANIMAL:
        return None
    if _is_ridden(noun):
        return RIDDEN_ANIMALS
    if _does(noun, PULLING_VERBS):
        return DRAUGHT_ANIMALS
    return GRAZERS if _does(noun, frozenset({"graze"})) or _in_herd(noun) else None


def _in_herd(noun: Token) -> bool:
    """"a herd of sheep": a herd is of grazers ("a herd of birds" reads as absurd)."""
    return noun.dep_ == "pobj" and noun.head.lower_ == "of" and noun.head.head.lemma_.lower() == "herd"


def fits_slot(noun: Token, original: str, word: str, animals_only: bool = False) -> bool:
    """Whether `word` may replace the noun `original` here (see the module docstring). With `animals_only`
    the fit classes bind only an animal's refill: REPLACE's negatives may change a thing's size or use
    ("a cat on a chair" for "on a bed", "a pizza" for "a cake"), as SugarCrepe's do, and holding those to a
    class cost 7 points of replace_obj coverage; an animal out of its class is what read as absurd there
    ("two zebras standing on the plate of food", "two bears perched on someone's sneakers"); small animals
    (a bird, a dog, a goat) may still stand for each other, or a bird, alone in its class, would get none."""
    animals = _role_animals(noun)
    if animals is not None:
        return word in animals
    if animals_only and (kind_of(noun) != ANIMAL or not {fit_class(original), fit_class(word)} & _LARGE_CLASSES):
        return True
    return fit_class(original) == fit_class(word)
