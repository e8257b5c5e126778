"""Noun classes the swap rules need: animacy, and nouns that are no countable object.

Role reversals must keep the doer of a posture or action alive ("a grassy
field grazing in a group of sheep" is absurd on its face), so swaps ask
whether a noun names a person, an animal or a thing. Curated lists decide
first, so results do not hinge on WordNet being installed; WordNet only
fills gaps, and only when all of a word's senses agree ("goalkeeper" is a
person, "controller" is a person or a device: a thing, to be safe).
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.lexicon import wordnet

PERSON, ANIMAL = "person", "animal"

PERSON_NOUNS = frozenset({
    "man", "woman", "boy", "girl", "person", "child", "kid", "baby", "lady", "guy", "gentleman",
    "player", "skier", "surfer", "skateboarder", "snowboarder", "biker", "rider", "cyclist", "chef",
    "cook", "officer", "policeman", "soldier", "student", "tourist", "worker", "batter", "catcher",
    "pitcher", "umpire", "teenager", "teen", "toddler", "adult", "father", "mother", "son", "daughter",
    "friend", "bride", "groom", "husband", "wife", "customer", "vendor", "driver", "pilot", "doctor",
    "nurse", "farmer", "fan", "spectator", "passenger", "pedestrian", "shopper", "couple", "family",
    "crowd", "team", "people", "athlete", "girlfriend", "boyfriend", "grandmother", "grandfather",
})
ANIMAL_NOUNS = frozenset({
    "dog", "cat", "horse", "cow", "sheep", "bird", "elephant", "giraffe", "zebra", "bear", "goat",
    "pig", "duck", "deer", "rabbit", "monkey", "lion", "tiger", "squirrel", "puppy", "kitten", "cattle",
    "bull", "calf", "lamb", "pigeon", "seagull", "pony", "ox", "goose", "swan", "parrot", "owl",
    "chicken", "mouse", "animal", "dolphin", "whale", "fish", "cub", "foal", "donkey", "camel",
})
# Modifiers that turn an animal word into a thing: "teddy bear", "stuffed
# dog", "hot dog", "toy horse", "a dog statue" (compound heads handled too).
INANIMATE_MARKERS = frozenset({
    "teddy", "stuffed", "toy", "hot", "plastic", "wooden", "ceramic", "porcelain", "glass", "stone",
    "metal", "paper", "fake", "cartoon", "plush", "statue", "figurine", "sculpture", "painting",
})
# Groups whose members are named by "of": "a group of people", "a herd of zebras".
GROUP_NOUNS = frozenset({"group", "herd", "flock", "crowd", "team", "pack", "couple", "pair", "family", "bunch"})

# Nouns that describe no object of their own: times and weather, views,
# parts, measures and groups ("a large group" is many, not big), and
# abstractions. No attribute, count or role swap touches them.
NOT_A_THING = frozenset({
    "day", "night", "time", "morning", "evening", "afternoon", "rain", "weather", "sunset", "sunlight",
    "light", "shadow", "background", "foreground", "distance", "view", "scene", "picture", "photo",
    "photograph", "image", "shot", "close", "side", "top", "bottom", "front", "back", "middle", "center",
    "edge", "corner", "area", "part", "piece", "slice", "half", "bit", "lot", "number", "variety", "set",
    "row", "line", "pile", "stack", "kind", "type", "sort", "way", "direction", "location", "place",
    "spot", "one", "other", "others", "some", "display", "assortment", "array", "bunch", "pair",
    "group", "herd", "flock", "pack", "couple", "team", "crowd", "family", "body", "amount",
    "collection", "something", "thing", "lots", "use", "work", "sale", "walk", "ride", "trip", "game",
    "match", "race", "turn", "look", "nap", "break", "stroll", "landscape", "scenery", "terrain",
    "approach", "call", "jump", "catch", "swing", "throw", "kick", "pose", "play", "hit", "serve", "dive",
    "landing", "takeoff", "collage", "montage", "screen", "reflection",
})
# Surfaces and expanses: they have colours, but are not things to count or
# to move about ("a field in a horse").
EXPANSES = frozenset({
    "water", "grass", "field", "ground", "street", "road", "floor", "land", "sky", "air", "sun", "snow",
    "wall", "ceiling",
})
NON_OBJECT_NOUNS = NOT_A_THING | EXPANSES
# Colour words read as nouns in lists ("a red yellow and blue airplane").
COLOUR_NOUNS = frozenset({
    "red", "yellow", "blue", "green", "white", "black", "purple", "pink", "brown", "gray", "grey",
})
# Places: "in two yards" miscounts the setting, not an object in it.
PLACE_NOUNS = frozenset({
    "yard", "backyard", "park", "room", "kitchen", "bathroom", "bedroom", "office", "beach", "city",
    "town", "lot", "market", "station", "airport", "zoo", "farm", "forest", "mountain", "hill", "lake",
    "river", "ocean", "sea", "pasture", "restaurant", "store", "shop", "bakery", "court", "stadium",
    "runway", "track", "sidewalk", "highway", "intersection", "dirt", "sand", "tarmac", "platform",
    "countryside", "village", "neighborhood", "garden", "woods", "desert", "shore", "harbor",
    "dock", "parking", "restroom", "stall", "arena", "rink", "slope", "trail", "path", "lawn",
})
# Words only used in the plural: "a glass" is not one of "glasses".
PLURALIA_TANTUM = frozenset({
    "glasses", "sunglasses", "scissors", "pants", "jeans", "shorts", "trousers", "goggles", "clothes",
    "cattle", "police", "binoculars", "pajamas", "tongs", "pliers", "electronics", "headphones",
    "earphones", "groceries", "supplies", "goods", "belongings", "surroundings", "stairs", "toiletries",
})


def _wordnet_animacy(lemma: str) -> str | None:
    """PERSON or ANIMAL only when every noun sense of the word agrees:
    "goalkeeper" is a person, but "controller" is also a device."""
    reader = wordnet()
    if reader is None:
        return None
    lexnames = {sense.lexname() for sense in reader.synsets(lemma.replace(" ", "_"), "n")}
    return {frozenset({"noun.person"}): PERSON, frozenset({"noun.animal"}): ANIMAL}.get(frozenset(lexnames))


def _lemma_animacy(lemma: str) -> str | None:
    if lemma in PERSON_NOUNS:
        return PERSON
    if lemma in ANIMAL_NOUNS:
        return ANIMAL
    return _wordnet_animacy(lemma)


def animacy(noun: Token) -> str | None:
    """PERSON, ANIMAL or None (a thing) for a noun token in its context."""
    lemma = noun.lemma_.lower()
    if any(child.lower_ in INANIMATE_MARKERS for child in noun.children if child.dep_ in ("amod", "compound")):
        return None
    if noun.dep_ == "compound" or lemma in INANIMATE_MARKERS:
        return None
    if lemma in GROUP_NOUNS:
        members = [obj for prep in noun.children if prep.lower_ == "of" for obj in prep.children if obj.dep_ == "pobj"]
        if members:
            return animacy(members[0])
        return PERSON if lemma in PERSON_NOUNS else None
    return _lemma_animacy(lemma)


# Nouns in -ing that head real compounds ("brick building"); any other
# "-ing" head of a compound is a participle spaCy misread ("a refrigerator
# standing" parsed as one noun).
ING_NOUNS = frozenset({
    "building", "painting", "clothing", "ceiling", "railing", "wedding", "frosting", "icing", "topping",
    "filling", "siding", "awning", "bedding", "drawing", "carving", "crossing", "lighting", "seating",
    "parking", "flooring", "ring", "wing", "string", "swing", "king", "spring",
})


def is_misread_participle(noun: Token) -> bool:
    return (
        noun.lower_.endswith("ing")
        and noun.lower_ not in ING_NOUNS
        and any(child.dep_ == "compound" for child in noun.children)
    )


def is_object_noun(noun: Token) -> bool:
    """A countable thing a photo can show, as opposed to a time, a part, a
    view or a measure ("day", "side", "picture", "a body of water")."""
    if noun.pos_ != "NOUN" or is_misread_participle(noun):
        return False
    return noun.lemma_.lower() not in NON_OBJECT_NOUNS and noun.lower_ not in NON_OBJECT_NOUNS


def is_describable(noun: Token) -> bool:
    """A noun whose colour, material or size a photo shows: not a group,
    view, part or time ("a large group of horses" is many horses)."""
    if noun.pos_ != "NOUN" or is_misread_participle(noun) or noun.lower_ in COLOUR_NOUNS:
        return False
    return noun.lemma_.lower() not in NOT_A_THING and noun.lower_ not in NOT_A_THING


def is_place(noun: Token) -> bool:
    """A setting rather than an object in it ("a yard", "the kitchen")."""
    return noun.lemma_.lower() in PLACE_NOUNS
