"""Which noun refills fit the words they keep around them.

A noun refill (REPLACE's and CE-CLIP's) keeps the noun's neighbours, which
were chosen for the old noun. Where a neighbour cannot describe the new one,
a text-only reader rejects the negative without the image; the judged
natural samples of stop 37 had these (labelled impl):

  * a colour the new noun never has ("Two brown bears" -> "brown zebras",
    "yellow bananas" -> "yellow oranges": `visual_classes.NATURAL_COLOURS`);
  * a part the new being has not ("a man with a beard" -> "a girl with a
    beard", "a bird with a colorful beak" -> "a rabbit with ...");
  * a fixture the new room has not ("A bathroom with a toilet" -> "A
    bedroom with a toilet");
  * a taste: a sweet among savoury things, a savoury thing for a sweet
    marked as one ("a slice of pizza with ham slices" -> "of cake", "a
    white frosted cake" -> "hot dog", "a cake with candles" -> "pizza");
  * a piece of what comes in no pieces ("a slice of pizza" -> "of soup"), a crust of what has none ("a
    crust of pie" -> "of salad");
  * an opening that is no opening ("looks out of the window" -> "the roof");
  * grass on what grows none ("a green grass covered field" -> "street",
    "a field of grass" -> "a beach of grass");
  * a camera that takes no pictures ("taking pictures with a cell phone" ->
    "with a remote");
  * a phone that one talks on, a mirror one is seen "in": what else would
    do is no other thing ("talking on the phone" -> "on the keyboard", "a
    selfie in a mirror" -> "in a lamp"), so they take no refill.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from spacy.tokens import Doc, Token

from backend.perturb.gendered import FEMALE
from backend.perturb.nouns import ANIMAL, PERSON
from backend.perturb.parse_reading import noun_lemma, of_holder, verb_lemma
from backend.perturb.plausibility_parse import is_under, kind_of
from backend.perturb.selection import BATH_FIXTURES, COOKERS, MISPLACED
from backend.perturb.visual_classes import NATURAL_COLOURS, visual_values

CHILDREN = frozenset("boy child kid baby toddler infant".split())


def _is_a(*synsets: str) -> Callable[[str], bool]:
    return lambda word: is_under(word, frozenset(synsets))


def _may_grow_a_beard(word: str) -> bool:
    return word not in FEMALE and word not in CHILDREN and not is_under(word, frozenset(["female.n.02"]))


# A part, and who may have it: a man, or a being of these WordNet classes.
PART_BEARERS: dict[str, Callable[[str], bool]] = {
    **dict.fromkeys(["beak", "feather", "wing"], _is_a("bird.n.01")),
    **dict.fromkeys(["trunk", "tusk"], _is_a("proboscidean.n.01")),
    "mane": _is_a("equine.n.01", "lion.n.01"),
    **dict.fromkeys(["horn", "antler"], _is_a("bovid.n.01", "deer.n.01", "rhinoceros.n.01")),
    **dict.fromkeys(["beard", "mustache", "moustache", "goatee"], _may_grow_a_beard),
}
SWEETS = frozenset("cake donut doughnut pie cookie cupcake muffin brownie pastry dessert".split()) | {"ice cream"}
SAVOURY = frozenset("""
    ham bacon pepperoni sausage salami meat chicken beef steak onion mushroom olive anchovy pepper tomato
""".split())
SWEET_MARKS = frozenset("frosted frosting icing iced glazed sprinkle sprinkles".split())
CANDLES = frozenset(["candle", "candles"])  # on the noun ("a cake with candles on it"), not "a candle lit table"
# What comes in slices, and what comes in no pieces at all ("a slice of donut", "a piece of soup").
SLICES = frozenset(["slice", "wedge"])
SLICED = frozenset("""
    pizza cake pie bread toast cheese cheesecake quiche tart melon watermelon pineapple orange lemon lime apple
    tomato cucumber ham meat turkey beef pork bacon
""".split())
PIECES = frozenset(["piece", "chunk"])  # "a bite of salad" is fine
CRUSTS = frozenset(["crust"])  # "A brown crust of pie" -> "of salad" was judged absurd
CRUSTED = frozenset("pie pizza bread toast quiche tart cheesecake loaf baguette".split())
UNSLICED = frozenset("soup stew salad cereal rice pasta spaghetti noodle broth yogurt oatmeal porridge".split())
OPENINGS = frozenset("window door doorway hatch sunroof porthole gate".split())
THROUGH_OPENING = frozenset(["out", "through"])
GRASS_WORDS = frozenset(["grass", "grassy", "lush"])  # "a lush green field" -> "street" was made
GRASSLAND = frozenset("field park lawn meadow pasture hill hillside mountain yard prairie".split())
GRASS_PATCHES = frozenset("field lawn meadow pasture patch".split())  # "a field of grass"
# The room a fixture it is "with" belongs in: "A bathroom with a toilet" -> "A bedroom with a toilet".
ROOMS = frozenset(MISPLACED) | {"office", "restroom", "washroom", "room"}  # WordNet's first toilet is a room
FIXTURE_ROOMS = ((BATH_FIXTURES, frozenset(["bathroom", "restroom", "washroom"])), (COOKERS, frozenset(["kitchen"])))
# What holds things "of" which it is full ("a shelf of books", "a bowl of fruit"): WordNet's classes, and words
# whose first sense is another thing ("plate" is first a sheet of metal).
HOLDER_SYNSETS = frozenset(["container.n.01", "tableware.n.01", "support.n.10"])
HOLDER_WORDS = frozenset("plate rack cabinet bookcase table".split())
PHOTOS = frozenset("picture photo photograph pic selfie snapshot".split())
CAMERAS = frozenset(["camera", "phone", "cellphone", "smartphone", "tablet", "ipad", "cell phone", "smart phone"])


def _with_words(noun: Token) -> set[str]:
    """The words (and lemmas) of what `noun` is "with": "a man with a beard, vest and colorful tie", which spaCy
    may parse as a "beard" tie."""
    tokens = [token for prep in noun.children if prep.dep_ == "prep" and prep.lower_ == "with"
              for token in prep.subtree]
    return {token.lower_ for token in tokens} | {token.lemma_.lower() for token in tokens}


def _colours_fit(noun: Token, word: str) -> bool:
    """The noun's own colour words are colours `word` has (`NATURAL_COLOURS`)."""
    own = NATURAL_COLOURS.get(word)
    if own is None:
        return True
    adjectives = [child for child in noun.children if child.dep_ == "amod"]
    adjectives += [conj for adjective in adjectives for conj in adjective.children if conj.dep_ == "conj"]
    values = {visual_values(adjective.lower_, None).get("colour") for adjective in adjectives} - {None}
    return values <= own


def _parts_fit(noun: Token, word: str) -> bool:
    """A person's or an animal's parts ("with a beak") are parts `word` has (`PART_BEARERS`)."""
    if kind_of(noun) not in (PERSON, ANIMAL):
        return True
    return all(PART_BEARERS[part](word) for part in _with_words(noun) & PART_BEARERS.keys())


def _room_fits(original: str, noun: Token, word: str) -> bool:
    """A room "with" a bath fixture or a cooker is a bathroom or a kitchen (`FIXTURE_ROOMS`)."""
    if original not in ROOMS:
        return True
    fixtures = _with_words(noun)
    return all(word in rooms for kind, rooms in FIXTURE_ROOMS if fixtures & kind)


def _taste_fits(noun: Token, original: str, word: str) -> bool:
    """No sweet in a caption with a savoury food ("a slice of cake with ham slices"), and nothing but a sweet for
    a sweet the caption marks as one ("a white frosted cake" -> "hot dog")."""
    lemmas = _words(noun.doc)
    if word in SWEETS:
        return not lemmas & SAVOURY
    marked = lemmas & SWEET_MARKS or any(token.lower_ in CANDLES for token in noun.subtree)
    return original not in SWEETS or not marked


@functools.lru_cache(maxsize=64)
def _words(doc: Doc) -> frozenset[str]:
    """The caption's words and their lemmas, read once for all the candidate words of a slot."""
    return frozenset({noun_lemma(token) for token in doc} | {token.lower_ for token in doc})


def _piece_fits(noun: Token, word: str) -> bool:
    """"a slice of" something that comes in slices, "a piece of" anything but soup, "a crust of" what is baked
    in one (`SLICED`, `UNSLICED`, `CRUSTED`)."""
    holder = of_holder(noun)
    unit = noun_lemma(holder) if holder is not None else None
    return ((unit not in SLICES or word in SLICED) and (unit not in PIECES or word not in UNSLICED)
            and (unit not in CRUSTS or word in CRUSTED))


def _opening_fits(noun: Token, original: str, word: str) -> bool:
    """An opening looked or gone "out of" or "through" stays an opening ("out of the window" -> "the roof")."""
    preposition = noun.head.head if noun.head.lower_ == "of" else noun.head
    return original not in OPENINGS or preposition.lower_ not in THROUGH_OPENING or word in OPENINGS


def _grass_fits(noun: Token, word: str) -> bool:
    """Grass grows on a field, a lawn, a park or a hill: "a grass covered field" -> "street" contradicts itself;
    "a field of grass" is a patch of it."""
    of_grass = any(prep.lower_ == "of" and any(noun_lemma(obj) == "grass" for obj in prep.children)
                   for prep in noun.children if prep.dep_ == "prep")
    if of_grass:
        return word in GRASS_PATCHES
    grassed = any(token.lower_ in GRASS_WORDS for token in noun.lefts for token in token.subtree)
    return not grassed or word in GRASSLAND


def _camera_fits(noun: Token, word: str) -> bool:
    """What pictures are taken with is a camera or a phone ("taking pictures with a remote")."""
    prep = noun.head
    if noun.dep_ != "pobj" or prep.lower_ != "with":
        return True
    holder = prep.head
    photos = holder if noun_lemma(holder) in PHOTOS else next(
        (child for child in holder.children if child.dep_ == "dobj" and noun_lemma(child) in PHOTOS), None)
    taking = photos is not None and (photos is holder or verb_lemma(holder) == "take")
    return not taking or word in CAMERAS


TALKING_VERBS = frozenset(["talk", "chat", "speak"])


def talked_on(noun: Token) -> bool:
    """"phone" in "a woman talking on the phone": what someone talks on."""
    prep = noun.head
    return noun.dep_ == "pobj" and prep.lower_ == "on" and verb_lemma(prep.head) in TALKING_VERBS


def seen_in(noun: Token) -> bool:
    """"mirror" in "taking a selfie in a mirror", "looking in the mirror": where a reflection is seen."""
    return noun_lemma(noun) == "mirror" and noun.dep_ == "pobj" and noun.head.lower_ == "in"


def _is_holder(word: str) -> bool:
    return word in HOLDER_WORDS or is_under(word, HOLDER_SYNSETS)


def _holder_fits(noun: Token, original: str, word: str) -> bool:
    """A thing full "of" others stays a thing that holds them: "a shelf of books" -> "a couch of books" was
    judged err in the stop-36 replace sample."""
    full_of = any(prep.lower_ == "of" and any(obj.dep_ == "pobj" for obj in prep.children)
                  for prep in noun.children if prep.dep_ == "prep")
    return not (full_of and _is_holder(original)) or _is_holder(word)


def neighbours_fit(noun: Token, original: str, word: str) -> bool:
    """Whether `word`, refilled for `noun` (lemma `original`), fits the words the refill keeps (module docstring)."""
    return (_colours_fit(noun, word) and _parts_fit(noun, word) and _room_fits(original, noun, word)
            and _taste_fits(noun, original, word)
            and _piece_fits(noun, word) and _opening_fits(noun, original, word) and _grass_fits(noun, word)
            and _camera_fits(noun, word) and _holder_fits(noun, original, word)
            and (word == original or not (talked_on(noun) or seen_in(noun))))
