"""Where a thing rests or a body is, as a relation the lexicon's head classes do not reach: "A pen is sitting
on top of a laptop" -> "A pen is sitting next to a laptop", "Two bears in the water" -> "Two bears next to the
water" (SugarCrepe's replace_rel: "on top of a calculator" -> "next to a calculator", "sitting on" -> "standing
next to").

The word slots turn "on" into "next to" only for the lexicon's `surface` nouns (a table, a plate, a box); a thing
set on any other made object (a calculator, a tripod, a sculpture) is as clearly beside it instead. Only a thing
rests so: a person or an animal "on" an object may be riding or using it. Objects that show what is "on" them
(a screen, a wall, a shirt) or are ground are left out: "a picture next to the screen", "toilets next to a dirt
ground" would be odd or absurd.

A person or animal "in" or "on" the water is, in the opposite photo, beside it, unless the caption names what
only happens in water (swimming, a surfboard, a wave): "a polar bear swimming next to the water" is absurd.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.inflect import verb_form
from backend.perturb.lexicon import lexicon
from backend.perturb.motion import AIRCRAFT, PERCHING, placed_aloft
from backend.perturb.nouns import LIVING, is_physical, noun_class, noun_key, noun_senses
from backend.perturb.parse_reading import NOUN_TAGS, content_noun, noun_lemma, subject_of, verb_lemma
from backend.perturb.without import BODY_PARTS

BESIDE = "next to"
# Verbs of a thing lying where it was put: "a pen sitting on a laptop", "luggage placed on a carrier".
RESTING = frozenset({
    "sit", "rest", "lie", "lay", "stand", "perch", "place", "set", "put", "stack", "pile", "balance", "leave", "be",
})
# Verbs of a body lying, sitting or perched where it is, which a person or animal beside the thing is not.
RESTING_BODIES = frozenset({"sleep", "nap", "perch", "curl", "sit", "lie", "lay", "rest", "lounge", "sprawl", "stand"})
# Made objects whose "on" shows or fixes rather than sets down ("shown on a screen", "a sticker on a laptop
# lid", "a sign on a wall"), or that are worn: "next to" would be odd there.
SHOWING = frozenset({
    "screen", "monitor", "television", "tv", "display", "wall", "ceiling", "door", "window", "shirt", "jacket",
    "sign", "poster", "page", "menu", "canvas", "side", "top", "front", "back", "bottom", "edge", "corner",
    "middle", "end", "surface", "phone", "cellphone", "desktop", "light", "leg",
})
# Made grounds and ways, which a thing stands on and is never merely beside ("a bench next to a sidewalk",
# "toilets next to a dirt ground", "a train next to the tracks").
GROUNDS = frozenset({
    "ground", "floor", "road", "street", "sidewalk", "court", "runway", "track", "tarmac", "bridge", "curb", "rail",
    "pavement", "platform", "lot", "deck", "patio", "path", "trail", "dock", "pier", "driveway", "highway",
    "freeway", "lane", "parking", "porch", "balcony", "terrace", "stage", "carpet", "rug", "mat", "lawn",
    "tablecloth", "cloth", "linen", "sheet",
})
# Where a noun a thing is said of sits in the sentence: a subject or the sentence's head. An object's "on"
# may belong to the verb ("A man holds a tennis racket on a tennis court").
_SAID_OF = frozenset({"ROOT", "nsubj", "nsubjpass", "attr", "conj", "appos"})
# What a thing set "on" an object can be: not writing or paint, which is on its surface ("letters next to a
# truck").
MARKINGS = frozenset({
    "sticker", "decal", "graffiti", "writing", "word", "letter", "logo", "paint", "picture", "image", "photo",
    "design", "pattern", "print", "label", "stain", "snow", "frosting", "icing", "topping", "cheese", "sauce",
})
_THING_LEXNAMES = ("noun.artifact", "noun.food")
# Verbs of where one is or waits, after which "by" names a place ("standing by some pastries").
STAYING = frozenset({"sit", "stand", "wait", "park", "lie", "lay", "rest", "be", "stop", "perch", "pose", "play"})
_AWAY = "far from"
# The lexicon's classes whose "on" the word slots and other rules already replace, or that are places.
_CLASSED = ("surface", "ground_place", "open_ground", "place", "bounded")
_NOUNS = ("NOUN", "PROPN")  # "A stuffed teddy bear": spaCy tags "bear" a proper noun
WATERS = frozenset({"water", "ocean", "sea", "lake", "river", "pond", "stream", "creek", "bay", "surf", "waves"})
# Words that put a body in water for good: "swimming next to the water", "on a surfboard next to the water".
IN_WATER_ONLY = frozenset({
    "swim", "float", "paddle", "wade", "splash", "dive", "surf", "soak", "bathe", "drown", "sink", "sail", "row",
    "kayak", "snorkel", "surfboard", "board", "boat", "canoe", "raft", "wave", "wetsuit", "tube", "fish",
    "submerge", "boogie", "bodyboard", "ski", "swimmer", "surfer", "duck", "swan", "goose", "dolphin",
})


def _made_thing(noun: Token) -> bool:
    """A made thing or food (some WordNet sense says so: "calculator" is first a person who calculates), that is
    no person or animal here."""
    senses = noun_senses(noun_key(noun)) or noun_senses(noun_lemma(noun))
    return any(sense.lexname() in _THING_LEXNAMES for sense in senses) and noun_class(noun) not in LIVING


def _support_fits(noun: Token) -> bool:
    """A made object (a calculator, a tripod) that shows nothing on it and that the word slots' `surface` class
    leaves out."""
    lemma, lex = noun_lemma(noun), lexicon()
    if lemma in SHOWING | GROUNDS | BODY_PARTS or any(child.dep_ == "poss" for child in noun.children):
        return False  # "on their shoulder", "on its track", "on the lap of a woman": a part or a place of its own
    return _made_thing(noun) and not any(lex.in_class(lemma, kind) for kind in _CLASSED)


def _resting_thing(on: Token) -> Token | None:
    """The thing set on the object: the noun "on" hangs on ("a phone on top of a calculator"), or the subject
    of a resting verb ("a pen is sitting on a laptop"); a thing, not a marking, and not a person or animal,
    who may ride or use it, unless the verb says its body rests there ("A cat sleeping on top of a laptop")."""
    holder: Token | None = on.head
    verb = on.head if on.head.pos_ in ("VERB", "AUX") else None
    if verb is not None:  # the verb right before "on", or before its particle: "is up on the bowl" is no resting
        adjacent = on.i - verb.i == 1 or (on.i - verb.i == 2 and on.doc[on.i - 1].dep_ == "prt")
        resting = verb_lemma(verb) in RESTING | RESTING_BODIES and adjacent
        holder = subject_of(verb) if resting else None
    elif on.head.dep_ not in _SAID_OF:
        return None
    if holder is None or holder.pos_ not in _NOUNS or noun_lemma(holder) in MARKINGS | BODY_PARTS:
        return None
    if any(child.dep_ == "compound" and noun_class(child) in LIVING for child in holder.children):
        return None  # "A woman types on a laptop" read as one noun: the verb's "on" is no resting
    if lexicon().is_animate(noun_lemma(content_noun(holder))):
        return holder if verb is not None and verb_lemma(verb) in RESTING_BODIES else None
    return holder if _made_thing(holder) else None


def _support(on: Token) -> tuple[int, Token] | None:
    """The end of the phrase ("on", or "on top of") and the object it names."""
    doc, end, prep = on.doc, on.i + 1, on
    if [token.lower_ for token in doc[on.i + 1 : on.i + 3]] == ["top", "of"]:
        end, prep = on.i + 3, doc[on.i + 2]
    objects = [child for child in prep.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
    return (end, objects[0]) if objects else None


def set_beside_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"on (top of)" a made object, said of a thing resting there, -> "next to"."""
    slots = []
    for on in doc:
        if on.lower_ != "on" or on.dep_ != "prep":
            continue
        support, holder = _support(on), _resting_thing(on)
        if support is None or holder is None or not _support_fits(support[1]):
            continue
        if lexicon().is_animate(noun_lemma(content_noun(holder))) and not _bed_for_a_body(support[1]):
            continue
        slots.append((doc[on.i : support[0]], [BESIDE]))
    return slots


def _bed_for_a_body(noun: Token) -> bool:
    """A made thing a body can rest on, not food or drink ("a cat stands on a table drinking water" parsed
    "on ... water"), and no noun spaCy built from a verb ("drinking water")."""
    senses = noun_senses(noun_key(noun)) or noun_senses(noun_lemma(noun))
    return (any(sense.lexname() == "noun.artifact" for sense in senses)
            and not any(sense.lexname() == "noun.food" for sense in senses)
            and not any(child.dep_ == "compound" and child.lower_.endswith("ing") for child in noun.children))


def _body(head: Token) -> Token | None:
    """The person or animal said to be somewhere: the noun itself, or the subject of the verb."""
    holder = head if head.pos_ in _NOUNS else subject_of(head) if head.pos_ in ("VERB", "AUX") else None
    return holder if holder is not None and lexicon().is_animate(noun_lemma(holder)) else None


def ashore_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A person or animal "in" or "on" the water -> "next to" it, where nothing says they are in it for good."""
    if any(verb_lemma(token) in IN_WATER_ONLY or token.lemma_.lower() in IN_WATER_ONLY for token in doc):
        return []
    slots = []
    for word in doc:
        if word.lower_ not in ("in", "on") or word.dep_ != "prep":
            continue
        objects = [child for child in word.children if child.dep_ == "pobj" and noun_lemma(child) in WATERS
                   and all(token.dep_ in ("det", "amod") for token in doc[word.i + 1 : child.i])]
        if objects and _body(word.head) is not None:
            slots.append((doc[word.i : word.i + 1], [BESIDE]))
    return slots


def held_beside_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A plate holding a grilled cheese sandwich" -> "A plate next to a grilled cheese sandwich", "The vase is
    holding an arrangement" -> "The vase is next to an arrangement": a container or dish (the lexicon's
    `container` class) that holds a thing, in the participle only ("A bowl holds soup" -> "next to" lacks a verb)."""
    slots = []
    for verb in doc:
        if verb.tag_ != "VBG" or verb_lemma(verb) != "hold" or not any(child.dep_ == "dobj" for child in verb.children):
            continue
        holder = verb.head if verb.dep_ == "acl" else subject_of(verb)
        if holder is not None and holder.tag_ in NOUN_TAGS and lexicon().in_class(noun_lemma(holder), "container"):
            slots.append((doc[verb.i : verb.i + 1], [BESIDE]))
    return slots


def far_from_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A woman sitting by a table" -> "A woman sitting far from a table", as the lexicon does for "next to" and
    "beside": only a "by" of place, right after a verb of where one is or a noun ("a white cake is by a bunch of
    flowers"), never the "by" of a passive ("surrounded by trees") or of a way ("by himself", "by bus")."""
    slots = []
    for by in doc[1:]:
        before = doc[by.i - 1]
        if by.lower_ != "by" or by.dep_ != "prep" or by.head.i != before.i:
            continue
        placed = before.tag_ in NOUN_TAGS or (before.tag_ != "VBN" and verb_lemma(before) in STAYING)
        objects = [child for child in by.children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
        if placed and objects and any(child.dep_ == "det" for child in objects[0].children):
            slots.append((doc[by.i : by.i + 1], [_AWAY]))
    return slots


# How far from the camera a thing is, and the opposite depth: "with the skyline in the background" -> "... in the
# foreground" (SugarCrepe: "the inside view" -> "the outside view").
DEPTHS = {"background": "foreground", "distance": "foreground", "foreground": "background"}
# What is only ever far off: "as the sun rises in the foreground" was judged absurd.
FAR_ONLY = frozenset({"sun", "moon", "sky", "horizon", "sunset", "sunrise", "cloud", "star"})
GAZING = frozenset({"look", "stare", "gaze", "peer", "off", "out", "into", "point", "head"})
# Verbs of a thing propped on another, which lying beside it is not ("A bike leaning against a wall" -> "A bike
# lying next to a wall").
PROPPED = frozenset({"lean", "rest", "prop", "stand", "sit", "set", "place", "stack", "pile", "park"})
LYING_BESIDE = "lie next to"
# Verbs of bodies coming together round a thing, whose opposite is walking away from it ("People are gathered
# around a cake" -> "People are walking away from a cake").
GATHERED = frozenset({"gather", "huddle", "crowd", "cluster", "congregate"})
LEAVING = "walk away from"
# Verb forms the new phrase takes ("gathered" read as a past tense reads as one: "walked away from").
_VERB_TAGS = frozenset({"VBG", "VBZ", "VBP", "VBN", "VBD"})


def depth_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"in the background" -> "in the foreground", "in the distance" -> "in the foreground", and back; not where
    the caption names two depths ("a parasailer in the distance with two surfers in the foreground", "at the
    forefront ... in the background"), nor for what is only ever far off (`FAR_ONLY`)."""
    named = {token.lower_ for token in doc} & {*DEPTHS, "forefront"}
    slots = []
    for word in doc[2:]:
        new = DEPTHS.get(word.lower_)
        in_the = [token.lower_ for token in doc[word.i - 2 : word.i]] == ["in", "the"]
        gaze = word.i > 2 and doc[word.i - 3].lemma_.lower() in GAZING  # "looks in the distance": where, not what
        if new is None or not in_the or gaze or word.dep_ != "pobj" or len(named) > 1:
            continue
        holder = _doer(word.head.head) if word.head.head.pos_ in ("VERB", "AUX") else word.head.head
        if holder is None or noun_lemma(holder) not in FAR_ONLY:
            slots.append((doc[word.i : word.i + 1], [new]))
    return slots


# Words after "in the air" that only a thing aloft suits: "A frisbee is on the ground over a field", "a man on the
# ground with a skateboard above a half pipe".
ALOFT_AFTER = frozenset({"over", "above", "across", "toward", "towards", "high", "overhead", "against"})


def _how_high(word: Token) -> bool:
    """"up", "high" or another adverb right before "in the air/sky", which "on the ground" cannot take ("is high on
    the ground" was judged garbled)."""
    before = word.doc[word.i - 1] if word.i > 0 else None
    return before is not None and (before.lower_ in ("up", "high") or before.pos_ == "ADV")


def grounded_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A thing or body "in the air" or "in mid air", said of the noun or after "is" -> "on the ground" ("A
    skateboarder in the air doing a trick" -> "A skateboarder on the ground doing a trick"); not after a verb or
    its object, where the air is where a thing was sent or jumps ("jumping on the ground"), nor "up" or "high in
    the air", nor before a place only a thing aloft has (`ALOFT_AFTER`)."""
    slots = []
    for word in doc[:-2]:
        words = [token.lower_ for token in doc[word.i : word.i + 3]]
        end = word.i + 3 if words in (["in", "the", "air"], ["in", "mid", "air"]) else word.i + 2
        if word.lower_ != "in" or doc[end - 1].lower_ not in ("air", "midair") or word.dep_ != "prep":
            continue
        head = word.head
        thing = head.pos_ in _NOUNS and head.dep_ != "dobj" and is_physical(noun_lemma(head))  # "get his kite in
        aloft = any(token.lower_ in ALOFT_AFTER for token in doc[end:])  # the air": where it is sent
        if (thing or head.lemma_ == "be") and not _how_high(word) and not aloft:
            slots.append((doc[word.i : end], ["on the ground"]))
    return slots


# Things seen in the sky that stand on the ground in the opposite photo.
FLIERS = AIRCRAFT | PERCHING | {"kite"}
# Boats afloat, which a photo shows out of the water instead ("several sail boats in the water" -> "out of the
# water"), and what they do only afloat.
BOATS = frozenset({"boat", "sailboat", "ship", "canoe", "kayak", "yacht", "ferry", "rowboat", "motorboat", "barge"})
AFLOAT = frozenset({"sail", "row", "float", "paddle", "cruise", "travel", "speed", "head", "go", "move", "drift",
                    "race", "tow", "pull", "carry", "swim", "surf", "ride", "fish"})


def _said_of(word: Token) -> Token | None:
    """The noun a preposition is said of: the noun it hangs on, or the subject of "be" ("The boats are in the
    water"); through "a group of"; None for a noun joined to another ("cows and birds")."""
    head = word.head
    holder = head if head.pos_ in _NOUNS else subject_of(head) if head.lemma_ == "be" else None
    if holder is None or holder.dep_ == "conj" or any(child.dep_ == "conj" for child in holder.children):
        return None
    return content_noun(holder)


def _plain_place(word: Token, places: frozenset[str]) -> Token | None:
    """The preposition's object when it is one of `places` with only a determiner or adjectives before it."""
    objects = [child for child in word.children if child.dep_ == "pobj" and noun_lemma(child) in places]
    if not objects or any(token.dep_ not in ("det", "amod", "compound") for token in word.doc[word.i + 1:objects[0].i]):
        return None
    return objects[0]


def sky_grounded_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """An aircraft, kite or bird "in the sky" (said of the noun, or after "is") -> "on the ground" ("Two airplanes
    in the sky" -> "Two airplanes on the ground"); not before what only a thing aloft does (`motion.placed_aloft`:
    a trail of smoke, tricks, "over the city")."""
    slots = []
    for word in doc:
        sky = _plain_place(word, frozenset({"sky"})) if word.lower_ == "in" and word.dep_ == "prep" else None
        if sky is None or placed_aloft(sky) or _how_high(word):
            continue
        holder = _said_of(word)
        if holder is not None and noun_lemma(holder) in FLIERS:
            slots.append((doc[word.i : sky.i + 1], ["on the ground"]))
    return slots


def beached_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A boat "in the water" (said of the noun, or after "is") -> "out of the water", where no act of the caption
    needs it afloat (`AFLOAT`: "a boat sailing out of the water" is absurd)."""
    if any(token.pos_ == "VERB" and verb_lemma(token) in AFLOAT for token in doc):
        return []
    slots = []
    for word in doc:
        water = _plain_place(word, WATERS) if word.lower_ == "in" and word.dep_ == "prep" else None
        holder = _said_of(word) if water is not None else None
        before = doc[word.i - 1].lower_ if word.i > 0 else ""
        if water is not None and holder is not None and noun_lemma(holder) in BOATS and before != "out":
            slots.append((doc[word.i : word.i + 1], ["out of"]))
    return slots


def _participle_tag(verb: Token) -> str:
    """The tag the new verb takes: a passive's participle becomes a present one ("is propped against" -> "is
    lying next to")."""
    return "VBG" if verb.tag_ == "VBN" else verb.tag_


def _doer(verb: Token) -> Token | None:
    """The noun the verb is said of: the noun a participle hangs on, or the subject; through "a group of"."""
    holder = verb.head if verb.dep_ == "acl" and verb.head.tag_ in NOUN_TAGS else subject_of(verb)
    return None if holder is None or holder.tag_ not in NOUN_TAGS else content_noun(holder)


def _verb_to(verb: Token, word: str) -> Token | None:
    """`word` hanging on the verb right after it, or after its particle ("propped up against"), with an object."""
    doc, at = verb.doc, verb.i + 1
    if at < len(doc) and doc[at].dep_ == "prt":
        at += 1
    found = doc[at] if at < len(doc) else None
    objects = [] if found is None else [child for child in found.children if child.dep_ == "pobj"]
    if found is None or found.lower_ != word or found.head.i != verb.i or not objects:
        return None
    return found if is_physical(noun_lemma(objects[0])) else None


def leaning_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A thing (no person or animal, who may lean on purpose) leaning or propped against another -> lying next
    to it: "A surfboard is propped up against a fence" -> "A surfboard is lying next to a fence"."""
    slots = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) not in PROPPED or verb.tag_ not in _VERB_TAGS:
            continue
        against, thing = _verb_to(verb, "against"), _doer(verb)
        if against is not None and thing is not None and not lexicon().is_animate(noun_lemma(thing)):
            slots.append((doc[verb.i : against.i + 1], [verb_form(LYING_BESIDE, _participle_tag(verb))]))
    return slots


def dispersal_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """People or animals gathered or huddled around a thing -> walking away from it."""
    slots = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) not in GATHERED or verb.tag_ not in _VERB_TAGS:
            continue
        around, bodies = _verb_to(verb, "around"), _doer(verb)
        if around is not None and bodies is not None and lexicon().is_animate(noun_lemma(bodies)):
            slots.append((doc[verb.i : around.i + 1], [verb_form(LEAVING, _participle_tag(verb))]))
    return slots


def placement_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Things set beside what they rested on or what held them, bodies set beside the water they were in,
    things by others set far from them; depths swapped; things aloft grounded; boats beached; things leaning set
    down beside; gatherings left."""
    slots = set_beside_slots(doc) + held_beside_slots(doc) + ashore_slots(doc) + far_from_slots(doc)
    slots += depth_slots(doc) + grounded_slots(doc) + sky_grounded_slots(doc) + beached_slots(doc)
    return slots + leaning_slots(doc) + dispersal_slots(doc)
