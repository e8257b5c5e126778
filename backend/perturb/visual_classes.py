"""Which adjectives an attribute swap may trade: a curated table of visual classes.

An attribute swap is a hard negative only when both words answer the same
visual question about their objects ("what colour?", "what is it made
of?"), and answer it differently. Trading a colour for a material ("a brick
building with a blue sign" -> "a blue building with a brick sign") or an age
for a material ("young" <-> "concrete") yields captions a text encoder can
reject as odd without the image, and words no photo can check ("wonderful",
"nice", "public") never make a negative at all, so they are simply absent
from the table.

Words that name the same value ("big"/"large", "gray"/"grey"/"silver",
"wood"/"wooden") share a value: swapping them would leave the caption true.
Colours that people confuse ("tan" vs "brown") share a value for the same
reason.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# class -> value -> words. A word may appear in two classes only when a
# noun condition (below) tells them apart ("old" man vs "old" car).
VISUAL_CLASSES: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "colour": {
        "white": ("white",), "black": ("black",), "red": ("red",), "blue": ("blue",),
        "green": ("green",), "yellow": ("yellow",), "orange": ("orange",), "purple": ("purple",),
        "pink": ("pink",), "brown": ("brown", "tan", "beige"), "gray": ("gray", "grey", "silver"),
    },
    "material": {
        "wood": ("wooden", "wood"), "metal": ("metal", "metallic", "steel", "iron", "aluminum"),
        "stone": ("stone", "rock"), "brick": ("brick",), "glass": ("glass",), "plastic": ("plastic",),
        "concrete": ("concrete", "cement"), "marble": ("marble",), "leather": ("leather",),
        "wicker": ("wicker",), "ceramic": ("ceramic", "porcelain"), "cardboard": ("cardboard",),
    },
    "size": {
        "big": ("big", "large", "huge", "giant", "tall", "enormous"),
        "small": ("small", "little", "tiny"),
    },
    "age": {"young": ("young",), "old": ("old", "elderly")},
    "newness": {"new": ("new",), "old": ("old", "antique", "vintage")},
    "shape": {
        "round": ("round", "circular"), "square": ("square",), "rectangular": ("rectangular",),
        "triangular": ("triangular",), "oval": ("oval",),
    },
    "pattern": {
        "striped": ("striped",), "spotted": ("spotted",), "checkered": ("checkered", "checked"),
        "plaid": ("plaid",), "floral": ("floral",),
    },
    "openness": {"open": ("open",), "closed": ("closed",)},
    "fullness": {"empty": ("empty",), "full": ("full",)},
    "wetness": {"wet": ("wet",), "dry": ("dry",)},
    "cleanliness": {"clean": ("clean",), "dirty": ("dirty",)},
})

# Nouns used as material modifiers ("a stone building", "a metal pole"):
# these compounds describe what the head is made of, so their first word is
# an attribute, unlike "stop" in "stop sign".
MATERIAL_NOUNS = frozenset(word for words in VISUAL_CLASSES["material"].values() for word in words) - {
    "wooden", "metallic",
}

# Classes that only make sense for living things, or only for objects: an
# "old man" is aged, an "old car" is vintage; a "young tree" is no photo fact.
ANIMATE_ONLY = frozenset({"age"})
INANIMATE_ONLY = frozenset({"newness", "openness", "fullness", "cleanliness", "material", "shape", "pattern"})
# A person's "colour" is a skin colour, and a "little girl" is a young one:
# swapping either says nothing a photo settles without guessing.
NOT_FOR_PEOPLE = frozenset({"colour", "size"})

# Words that say "of many colours" rather than name one.
MANY_COLOURS = frozenset({"colorful", "colourful", "multicolored", "multicoloured"})

# Colour words for an animal's coat: "a green cat" is absurd on its face,
# and "a silver dog" reads oddly though silver counts as gray elsewhere.
ANIMAL_COLOURS = frozenset({"white", "black", "brown", "gray", "grey", "tan"})
# Coats some animals have beyond those: a yellow or red dog (a Labrador, a setter), an orange cat (a tabby),
# a bird of any bright colour (a cardinal, a canary, a blue jay, a parrot).
# Only a swap hands them out, trading a colour the caption states; an addition would put one on any dog or cat,
# next to coat words the table does not know ("an orange calico cat").
COAT_COLOURS = MappingProxyType({
    **dict.fromkeys(("dog", "puppy"), frozenset({"yellow", "red"})),
    **dict.fromkeys(("cat", "kitten"), frozenset({"orange"})),
    **dict.fromkeys(("bird", "parrot"), frozenset({"red", "yellow", "blue", "green", "orange"})),
})
# Natural things with a natural palette: "a green sky", "blue grass" or "a
# purple banana" are rejected without looking at the image.
_GREENERY = frozenset({"green", "brown", "yellow"})
NATURAL_COLOURS = MappingProxyType({
    **dict.fromkeys(("sky", "cloud"), frozenset({"blue", "gray", "white", "black", "orange", "pink"})),
    **dict.fromkeys(("grass", "bush", "tree", "branch", "leaf", "plant", "hay", "lawn", "field", "foliage", "hedge",
                     "shrub", "weed", "vegetation", "forest", "hill", "mountain", "meadow", "pasture"), _GREENERY),
    **dict.fromkeys(("water", "ocean", "sea", "lake", "river", "wave"), frozenset({"blue", "green", "brown", "gray"})),
    "snow": frozenset({"white"}),
    "banana": frozenset({"yellow", "green", "brown"}), "apple": frozenset({"red", "green", "yellow"}),
    "broccoli": frozenset({"green"}), "carrot": frozenset({"orange"}), "lemon": frozenset({"yellow", "green"}),
    "orange": frozenset({"orange"}), "tomato": frozenset({"red", "green", "yellow"}),
    "lettuce": frozenset({"green"}), "strawberry": frozenset({"red"}),
    **dict.fromkeys(("pea", "cucumber", "spinach", "celery", "lime", "avocado"), frozenset({"green"})),
    "zucchini": frozenset({"green", "yellow"}), "eggplant": frozenset({"purple"}),
    "corn": frozenset({"yellow", "white"}),
    **dict.fromkeys(("traffic light", "stoplight", "traffic signal"), frozenset({"red", "green", "yellow"})),
    # Made things of one typical colour, by their compound name: "a blue stop sign" is absurd.
    **dict.fromkeys(("stop sign", "fire truck", "fire engine"), frozenset({"red"})),
    "school bus": frozenset({"yellow"}), "tennis ball": frozenset({"yellow", "green"}),
    # Animals of one coat: "Two brown bears" -> "Two brown zebras" was made and judged absurd.
    "zebra": frozenset({"black", "white"}), "polar bear": frozenset({"white"}), "panda": frozenset({"black", "white"}),
    # "A brown cow and two black giraffes" was made (stop 48): giraffes and elephants have their coats too.
    "giraffe": frozenset({"brown", "tan", "yellow", "orange", "white"}),
    "elephant": frozenset({"gray", "grey", "brown", "white"}),
    # Cultivars, by their compound name (`attribute_fit`): "yellow granny smith apples" was judged absurd.
    "granny smith": frozenset({"green"}), "red delicious": frozenset({"red"}),
    "golden delicious": frozenset({"yellow"}),
})
# The names above that give the noun they stand before their colours: cultivars, and greenery a thing is made of
# ("grass umbrellas"), where an animal's name gives it none ("an elephant hat" may be blue, "a snow suit" red).
COLOURING_COMPOUNDS = frozenset({"granny smith", "red delicious", "golden delicious", "grass", "hay"})

# Made things of a usual colour, though not a fixed one ("a blue fire hydrant" is seen): a colour moved onto one
# may well be true of the photo ("a truck next to a red fire hydrant").
USUALLY_COLOURED = frozenset({"hydrant", "fire hydrant", "mailbox", "taxi", "cab", "traffic cone", "cone"})

_INDEX: dict[str, list[tuple[str, str]]] = {}
for _class, _values in VISUAL_CLASSES.items():
    for _value, _words in _values.items():
        for _word in _words:
            _INDEX.setdefault(_word, []).append((_class, _value))


def _allowed(visual_class: str, value: str, word: str, animacy: str | None, noun: str, with_coats: bool) -> bool:
    coats = ANIMAL_COLOURS | (COAT_COLOURS.get(noun, frozenset()) if with_coats else frozenset())
    if visual_class == "colour" and animacy == "animal" and word not in coats:
        return False
    if visual_class == "colour" and value not in NATURAL_COLOURS.get(noun, frozenset([value])):
        return False
    if visual_class in ANIMATE_ONLY:
        return animacy is not None
    if visual_class in INANIMATE_ONLY and animacy is not None:
        return False
    return not (visual_class in NOT_FOR_PEOPLE and animacy == "person")


def visual_values(word: str, animacy: str | None, noun: str = "", *, with_coats: bool = False) -> dict[str, str]:
    """{class: value} that `word` can express on a noun (its lemma, optional)
    of this animacy ("person", "animal" or None for things); empty for
    non-visual words. `with_coats`: an animal may take its `COAT_COLOURS` too (swaps only)."""
    word = word.lower()
    return {cls: value for cls, value in _INDEX.get(word, []) if _allowed(cls, value, word, animacy, noun, with_coats)}


def shared_class(first: dict[str, str], second: dict[str, str]) -> str | None:
    """The visual class two attribute words both express with different
    values, or None when they are of different classes or mean the same.
    Several candidate classes (rare) make it undecidable: None."""
    classes = sorted(cls for cls in first.keys() & second.keys() if first[cls] != second[cls])
    same = [cls for cls in first.keys() & second.keys() if first[cls] == second[cls]]
    return classes[0] if len(classes) == 1 and not same else None
