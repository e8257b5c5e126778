"""What a noun names (a person, an animal, a figure, a thing, or unknown), and nouns that are no countable object.

Two kinds of rule ask what a noun names, and they need opposite caution.
Swaps must keep the doer of a posture or action alive ("a grassy field
grazing in a group of sheep" is absurd on its face), so they act only on
nouns that surely name a person or an animal. The plausibility check flags
"a plate grasping a sandwich" only when the doer surely names a thing. One
classifier, `noun_class`, answers both on one scale: PERSON, ANIMAL, BEING
(alive, but WordNet's senses do not say which), FIGURE, INANIMATE, and
UNKNOWN kept apart from INANIMATE. `animacy` narrows it to what the swaps
need (PERSON or ANIMAL for sure, and not "a stuffed dog": None otherwise);
the plausibility rules read INANIMATE and LIVING (PERSON, ANIMAL or BEING)
from it.

Curated lists decide first, so results do not hinge on WordNet being
installed; WordNet (lexicographer files) only fills gaps: a person or an
animal when all of a word's senses agree ("goalkeeper"), a being when the
most frequent sense is alive and no sense is a thing ("ostrich" is first a
person who hides from reality), unknown when a sense is a person and
another a thing ("controller"), to be safe.
"""
from __future__ import annotations

import functools

from spacy.tokens import Doc, Token

from backend.perturb.lexicon import NOUN, lexicon, wordnet
from backend.perturb.parse_reading import verb_lemma

PERSON, ANIMAL, BEING = "person", "animal", "being"  # BEING: a person or an animal, WordNet cannot say which
FIGURE, INANIMATE, UNKNOWN = "figure", "inanimate", "unknown"
LIVING = frozenset({PERSON, ANIMAL, BEING})
BABIES = frozenset({"baby", "infant", "toddler", "newborn"})

PERSON_NOUNS = frozenset({
    "man", "woman", "boy", "girl", "person", "child", "kid", "baby", "lady", "guy", "gentleman",
    "player", "skier", "surfer", "skateboarder", "snowboarder", "biker", "rider", "cyclist", "chef",
    "cook", "officer", "policeman", "soldier", "student", "tourist", "worker", "batter", "catcher",
    "pitcher", "umpire", "teenager", "teen", "toddler", "adult", "father", "mother", "son", "daughter",
    "friend", "bride", "groom", "husband", "wife", "customer", "vendor", "driver", "pilot", "doctor",
    "nurse", "farmer", "fan", "spectator", "passenger", "pedestrian", "shopper", "couple", "family",
    "crowd", "team", "people", "athlete", "girlfriend", "boyfriend", "grandmother", "grandfather",
    "infant", "mom", "dad", "brother", "sister", "audience",
})
ANIMAL_NOUNS = frozenset({
    "dog", "cat", "horse", "cow", "sheep", "bird", "elephant", "giraffe", "zebra", "bear", "goat",
    "pig", "duck", "deer", "rabbit", "monkey", "lion", "tiger", "squirrel", "puppy", "kitten", "cattle",
    "bull", "calf", "lamb", "pigeon", "seagull", "pony", "ox", "goose", "swan", "parrot", "owl",
    "chicken", "mouse", "animal", "dolphin", "whale", "fish", "cub", "foal", "donkey", "camel",
    "gull", "rat", "mule", "llama", "buffalo", "bison", "moose", "elk", "rhino", "hippo", "herd", "flock",
    "gaggle",
})
# Drawn or built as people and animals: they "wear" and "hold" in captions.
FIGURE_NOUNS = frozenset({
    "teddy bear", "stuffed animal", "toy", "doll", "statue", "sculpture", "figurine", "snowman", "mannequin",
    "scarecrow", "robot", "puppet", "bear toy", "action figure",
})
INANIMATE_NOUNS = frozenset("""
    bench table desk couch sofa bed chair stool dresser cabinet shelf counter car truck bus train boat ship airplane
    plane jet helicopter motorcycle bicycle bike scooter tractor van building house tower bridge church barn fence
    wall door window roof floor field grass tree bush flower plant park street road sidewalk beach ocean sea lake
    river mountain hill forest desert city sky snow water sand rock ground plate bowl cup mug tray fork knife spoon
    pizza sandwich cake donut salad hamburger soup pie cookie apple banana orange lemon carrot broccoli tomato
    potato onion shirt jacket dress coat sweater skirt scarf vest hat helmet tie shoe boot sandal sneaker laptop
    computer phone television tv keyboard camera remote monitor refrigerator fridge oven microwave toaster stove
    toilet sink bathtub shower ball frisbee kite skateboard surfboard snowboard racket umbrella box bag backpack
    basket suitcase bucket kitchen bathroom bedroom office clock vase book bottle glass sign pole stroller wagon
    cart saddle
""".split()) | frozenset(["hot dog", "fire hydrant", "stop sign", "tennis racket", "baseball bat",
                          "cell phone", "traffic light", "living room", "parking meter"])
# Nouns that stand for their "of" phrase: "a group of sheep" is sheep. Alone,
# "a crowd" is people and "a herd" animals (listed above); "a group" (or
# "a litter": more often rubbish than puppies) is unknown.
GROUP_NOUNS = frozenset("""
    group bunch herd flock couple pair lot lots number crowd team pack line row few dozen set troop gaggle litter
    school swarm family bevy rest part half majority
""".split())
# Pictures stand for what they show when the parser hangs a participle on
# them: in "a photo of a dog eating" the dog eats (see `referent`). Alone,
# what "a picture" shows the caption does not say: unknown.
DEPICTION_NOUNS = frozenset("picture photo photograph image view painting drawing shot closeup".split())
PERSON_PRONOUNS = frozenset("he she him her someone somebody everyone everybody anyone anybody".split())
# Modifiers that turn an animal word into a figure or a thing: "teddy bear",
# "stuffed dog", "hot dog", "toy horse", "a dog statue" (compound heads handled too).
INANIMATE_MARKERS = frozenset({
    "teddy", "stuffed", "toy", "hot", "plastic", "wooden", "ceramic", "porcelain", "glass", "stone",
    "metal", "paper", "fake", "cartoon", "plush", "statue", "figurine", "sculpture", "painting",
})
_CURATED = PERSON_NOUNS | ANIMAL_NOUNS | FIGURE_NOUNS | INANIMATE_NOUNS | GROUP_NOUNS
_THING_LEXNAMES = frozenset(["noun.artifact", "noun.food", "noun.object", "noun.plant"])
_LIVING_LEXNAMES = frozenset(["noun.person", "noun.animal"])

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


def noun_senses(key: str) -> list:
    """WordNet's noun senses of `key`, most frequent first; none when the corpus is not installed."""
    reader = wordnet()
    return reader.synsets(key.replace(" ", "_"), "n") if reader is not None else []


@functools.lru_cache(maxsize=8192)
def first_sense_ancestors(key: str) -> frozenset[str]:
    """WordNet synset names above (and including) the most frequent noun
    sense of `key`: what the word usually names. Empty when WordNet does
    not know it (or is not installed), so no rule fires on it."""
    senses = noun_senses(key)
    if not senses:
        return frozenset()
    return frozenset({senses[0].name()} | {s.name() for s in senses[0].closure(lambda synset: synset.hypernyms())})


def is_kind_of(key: str, other: str) -> bool:
    """Whether what `key` usually names (its first WordNet sense) is a kind of what `other` usually names: a jet
    of an airplane, a puppy of a dog (not of itself)."""
    senses, others = noun_senses(key), noun_senses(other)
    if not senses or not others or others[0] == senses[0]:
        return False
    return others[0].name() in first_sense_ancestors(key)


# Groups whose kinds take no sisters: a lawn, a meadow or a pasture is a field, and a field's sisters include a
# forest and a mountain ("broken toilets sitting out on a forest" was made); WordNet's first sense of a word
# often names a person where a caption means a thing ("some small tarts" -> "some small girls" was made), and a
# kind of person keeps a role the refill drops ("husband and wife" -> "husband and man").
_NO_KIND_GROUPS = frozenset(["outdoor place", "ground", "room", "person"])


@functools.cache
def group_kind(lemma: str) -> str | None:
    """For a noun that no lexicon group lists (nor a synonym of it), the one group word it is a kind of in WordNet
    ("jet" and "jetliner" an airplane, "puppy" a dog, "pickup" a truck), None where it is a kind of none or of
    several, or of a place or a person (`_NO_KIND_GROUPS`)."""
    lex = lexicon()
    if lex.co_hyponyms(lemma, NOUN) or any(lemma in words for words in lex.object_groups.values()):
        return None  # a group's own word, even with no sister left ("duck": the bird species all overlap)
    kinds = [word for name, words in lex.object_groups.items() if name not in _NO_KIND_GROUPS for word in words
             if is_kind_of(lemma, word)]
    return kinds[0] if len(kinds) == 1 else None


def sisters_of_kind(lemma: str) -> list[str]:
    """The sisters of the group word a noun no group lists is a kind of (`group_kind`), less those it overlaps:
    "a jet" -> "a helicopter" (held to that word's fit class by `refill_fit`, even where the word's own refills
    are not: "a bowl of broth" -> "a bowl of pizza", "a duck floating" -> "a cat floating" were made)."""
    kind = group_kind(lemma)
    if kind is None:
        return []
    lex = lexicon()
    return [word for word in lex.co_hyponyms(kind, NOUN) if lex.may_replace(lemma, word)]


def takes_article(word: str) -> bool:
    """Whether "a" or "an" may stand before `word`: a count noun, or a dish counted as a serving ("a salad", "a
    soup"), not a mass noun ("a bacon", "next to a rice" were made when meat and starches joined the groups)."""
    lex = lexicon()
    return word not in lex.mass_nouns or word in lex.object_groups["dish"]


def may_name_being(key: str) -> bool:
    """Some WordNet sense of `key` is a person or an animal ("ram", though RAM comes first)."""
    return any(sense.lexname() in _LIVING_LEXNAMES for sense in noun_senses(key))


@functools.lru_cache(maxsize=4096)
def _wordnet_class(key: str) -> str:
    """PERSON, ANIMAL, BEING, INANIMATE or UNKNOWN from WordNet lexicographer files (UNKNOWN without WordNet).

    A person (an animal) when every sense is one: swaps pair people with
    people, so the kind must be sure. A being when the most frequent sense
    is a person or an animal and no sense is a thing ("ostrich", "wolf":
    alive, the kind unsure; but "trailer" is first a dawdler and "monitor"
    first a person, and both are things too: unknown). Inanimate only when
    no sense is a person or an animal and the most frequent one is no group,
    top-level word ("people", "person") or body part ("hands holding a
    phone"): nouns like "fan" or "star" with a person sense stay unknown.
    """
    lexnames = [sense.lexname() for sense in noun_senses(key)]
    if not lexnames:
        return UNKNOWN
    if set(lexnames) == {"noun.person"} or set(lexnames) == {"noun.animal"}:
        return PERSON if lexnames[0] == "noun.person" else ANIMAL
    if lexnames[0] in _LIVING_LEXNAMES:
        return UNKNOWN if _THING_LEXNAMES.intersection(lexnames) else BEING
    if lexnames[0] in ("noun.group", "noun.Tops", "noun.body") or _LIVING_LEXNAMES.intersection(lexnames):
        return UNKNOWN
    return INANIMATE


def noun_key(token: Token) -> str:
    """Lower-case lemma, or "modifier lemma" when the two name one thing
    ("teddy bear", "hot dog"), so the modifier is not read past. WordNet
    is asked about noun compounds only: it knows "white horse" as a wave."""
    return _noun_key(token.doc, token.i)


@functools.lru_cache(maxsize=16384)
def _noun_key(doc: Doc, index: int) -> str:
    """`noun_key` of the token at `index`, remembered: the label's rules ask it of each noun many times, and spaCy
    builds a new Token for every look."""
    token = doc[index]
    lemma = token.lemma_.lower()
    left = token.doc[token.i - 1] if token.i > 0 else None
    if left is not None and left.head == token and left.dep_ in ("compound", "amod"):
        compound = f"{left.lower_} {lemma}"
        if compound in _CURATED or (left.dep_ == "compound" and _wordnet_class(compound) != UNKNOWN):
            return compound
    return lemma


def referent(token: Token, *, through_depictions: bool = True) -> Token:
    """The noun a group stands for, "sheep" in "a group of sheep"; and,
    `through_depictions`, the noun a picture shows, "dog" in "a photo of a
    dog" (for reading who does what, not what the picture is)."""
    followed = GROUP_NOUNS | DEPICTION_NOUNS if through_depictions else GROUP_NOUNS
    if token.pos_ in ("NOUN", "PROPN") and noun_key(token) in followed:
        for prep in token.children:
            if prep.dep_ == "prep" and prep.lower_ == "of":
                objects = [child for child in prep.children if child.dep_ == "pobj"]
                if objects:
                    return referent(objects[0], through_depictions=through_depictions)
    return token


def is_name(token: Token) -> bool:
    """A capitalised proper noun inside the sentence ("Max"), not "Frisbee"
    opening it: WordNet's senses are the common word's, not the named one's."""
    return token.pos_ == "PROPN" and token.text[:1].isupper() and not token.is_sent_start


def is_capitalised_thing(token: Token) -> bool:
    """"Frisbee" in "a dog catching a Frisbee", "Zebras" in "Some Zebras and cattle": a capitalised word inside the
    sentence that spaCy read as a proper noun, but that the curated lists or the lexicon's object groups know as a
    thing, an animal or a person ("Dad"). Only one standing alone ("Polar Bear", "Eiffel Tower" are names) and
    heading its own phrase ("an Apple user", "a Windows laptop" name a brand before a noun)."""
    if token.tag_ not in ("NNP", "NNPS") or token.is_sent_start or not token.text.istitle() or token.dep_ == "compound":
        return False
    doc = token.doc
    neighbours = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
    if any(word.text.istitle() and not word.is_sent_start for word in neighbours):
        return False
    reader = wordnet()
    word = token.lower_
    key = (reader.morphy(word, "n") if reader is not None else None) or word
    return key in _CURATED or any(key in group for group in lexicon().object_groups.values())


def _curated_class(key: str) -> str | None:
    if key in FIGURE_NOUNS:
        return FIGURE
    if key in PERSON_NOUNS:
        return PERSON
    if key in ANIMAL_NOUNS:
        return ANIMAL
    if key in INANIMATE_NOUNS:
        return INANIMATE
    # "a group" or "a picture" alone: of what, the caption does not say
    return UNKNOWN if key in GROUP_NOUNS or key in DEPICTION_NOUNS else None


def names_no_being(noun: Token) -> bool:
    """A noun that names no living being here, whatever its word: a modifier
    makes it a figure or a thing ("stuffed dog", "toy horse", "ceramic
    pitcher"), or it only modifies another noun ("dog statue", "baby
    elephant")."""
    modifiers = (child.lower_ for child in noun.children if child.dep_ in ("amod", "compound"))
    return (
        noun.dep_ == "compound"
        or noun.lemma_.lower() in INANIMATE_MARKERS
        or any(word in INANIMATE_MARKERS for word in modifiers)
    )


def noun_class(token: Token) -> str:
    """PERSON, ANIMAL, BEING, FIGURE, INANIMATE or UNKNOWN: what a noun or pronoun token's words name.

    The words are the lemma, or a listed compound ("teddy bear": FIGURE,
    "hot dog": INANIMATE, see `noun_key`). A group is what its "of" phrase
    names ("a herd of zebras": animals); a picture is no more than UNKNOWN
    (`referent` reads what it shows). A name is never INANIMATE by WordNet
    ("Max" is no maximum), and pronouns other than personal ones are
    UNKNOWN. Other modifiers are not read here ("a wooden woman" is PERSON):
    the plausibility rules need the word ("a bench on a wooden woman" is as
    absurd as "on a woman"), the swaps ask `animacy`, which reads them.
    """
    if token.pos_ == "PRON":
        return PERSON if token.lower_ in PERSON_PRONOUNS else UNKNOWN
    if token.pos_ not in ("NOUN", "PROPN"):
        return UNKNOWN
    member = referent(token, through_depictions=False)
    if member.i != token.i:
        return noun_class(member)
    key = noun_key(token)
    kind = _curated_class(key)
    if kind is None:
        kind = _wordnet_class(key)
        kind = UNKNOWN if kind == INANIMATE and is_name(token) else kind
    return kind


def animacy(noun: Token) -> str | None:
    """PERSON, ANIMAL or None, what swaps ask: is this a real person or
    animal, for sure? `noun_class` narrowed to PERSON and ANIMAL (a BEING of
    unsure kind, figures, things and unknowns are None), and None where the
    noun, or the member a group noun stands for, `names_no_being`: a stuffed
    dog takes any colour and does not trade roles with a cat."""
    member = referent(noun, through_depictions=False)
    if names_no_being(noun) or names_no_being(member):
        return None
    kind = noun_class(member)
    return kind if kind in (PERSON, ANIMAL) else None


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


# Things whose bare name after a verb is the activity, not the thing: "playing frisbee" is the game, "watching tv"
# the programmes. For each verb: those things, the things that may stand for one of them ("playing ball"; "tv" and
# "television" say the same) and the verbs that may stand for the verb ("watching frisbee"; "painting tv" is no
# act on programmes).
ACTIVITY_THINGS = {"play": frozenset({"frisbee", "ball"}), "watch": frozenset({"tv", "television"})}
ACTIVITY_REFILLS = {"play": frozenset({"frisbee", "ball"}), "watch": frozenset()}
ACTIVITY_VERBS = {"play": frozenset({"watch"}), "watch": frozenset()}


def activity_of(noun: Token) -> str | None:
    """"play" for "frisbee" in "dogs playing frisbee", "watch" for "tv" in "kids watching tv": the verb whose
    activity the noun names (`ACTIVITY_THINGS`), so it takes no colour ("playing red frisbee"), no companion
    ("playing ball and a kite") and no other thing ("playing tennis ball", "watching laptop"). Bare: no article,
    number, owner or modifier ("playing with a red ball", "watching the tv" name the thing)."""
    verb = verb_lemma(noun.head)
    bare = not any(child.dep_ in ("det", "amod", "compound", "nummod", "poss") for child in noun.children)
    return verb if noun.dep_ == "dobj" and noun.lower_ in ACTIVITY_THINGS.get(verb, ()) and bare else None


def is_object_noun(noun: Token) -> bool:
    """A countable thing a photo can show, as opposed to a time, a part, a
    view, a measure or an activity ("day", "side", "picture", "a body of water", "playing frisbee")."""
    if noun.pos_ != "NOUN" or is_misread_participle(noun) or activity_of(noun) is not None:
        return False
    lemma = noun.lemma_.lower()
    return lemma not in NON_OBJECT_NOUNS and noun.lower_ not in NON_OBJECT_NOUNS and is_physical(lemma)


# WordNet files of nouns that name no thing in a photo: "several years of paint", "under construction",
# "behind his back" (a body part, whose position is fixed to its owner).
ABSTRACT_LEXNAMES = frozenset({
    "noun.time", "noun.act", "noun.body", "noun.state", "noun.event", "noun.process", "noun.attribute",
    "noun.feeling", "noun.cognition", "noun.communication", "noun.relation", "noun.motive", "noun.phenomenon",
})


def is_physical(lemma: str) -> bool:
    """The noun's most frequent WordNet sense is no time, act, body part, state, event or other abstraction
    (true when WordNet does not know it: the curated lists decide elsewhere)."""
    if lemma in _CURATED:
        return True
    senses = noun_senses(lemma)
    return not senses or senses[0].lexname() not in ABSTRACT_LEXNAMES


# "top" is a side in `NOT_A_THING`, and a garment where someone wears it (`_worn_top`).
TOPS = frozenset({"top", "tops"})


def is_describable(noun: Token) -> bool:
    """A noun whose colour, material or size a photo shows: not a group,
    view, part, time or activity ("a large group of horses" is many horses), except a
    top that a person is in or wears (`_worn_top`)."""
    if noun.pos_ != "NOUN" or is_misread_participle(noun) or noun.lower_ in COLOUR_NOUNS:
        return False
    if activity_of(noun) is not None:
        return False
    return (noun.lemma_.lower() not in NOT_A_THING and noun.lower_ not in NOT_A_THING) or _worn_top(noun)


def _worn_top(noun: Token) -> bool:
    """"top" as a garment: "a girl in a white top", "a woman wearing a pink top" (elsewhere a top is a side:
    "the top of a cake")."""
    if noun.lower_ not in TOPS:
        return False
    head = noun.head
    if noun.dep_ == "dobj" and head.lemma_.lower() == "wear":
        return True
    return noun.dep_ == "pobj" and head.lower_ == "in" and animacy(head.head) == PERSON


def is_place(noun: Token) -> bool:
    """A setting rather than an object in it ("a yard", "the kitchen")."""
    return noun.lemma_.lower() in PLACE_NOUNS
