"""Moving or standing still, as a relation phrase of vehicles: "A bus drives down the slow lane" -> "A bus
is parked in the slow lane", "A large jetliner sitting on top of an airport runway" -> "A large jetliner
flying over an airport runway" (SugarCrepe's replace_rel: "drives down" -> "is stuck in").

The whole phrase, verb and preposition, is replaced, so the preposition fits the new verb. Only vehicles
(the lexicon's vehicle group, and aircraft names): a photo shows whether one moves or stands; a person
"parked on the road" would be absurd. Ground vehicles move only along a way ("down the street": a road,
a lane, a track...), so "driving down the field" never appears; aircraft stand still on ground they land
on, so "parked in the sky" never appears.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.inflect import verb_form
from backend.perturb.lexicon import NOUN, lexicon
from backend.perturb.nouns import is_physical, noun_key
from backend.perturb.parse_reading import NOUN_TAGS, content_noun, noun_lemma, subject_of, verb_lemma

AIRCRAFT = frozenset({"airplane", "plane", "jet", "jetliner", "airliner", "aircraft", "helicopter", "airplanes"})
MOVING_VERBS = frozenset({"drive", "travel", "go", "ride", "move", "head", "roll", "speed", "cruise", "come"})
MOVING_PREPOSITIONS = frozenset({"down", "along", "on", "through", "across", "up", "past", "in", "into", "onto"})
STILL_VERBS = frozenset({"park", "sit", "stand", "rest", "stop", "wait"})
STILL_PREPOSITIONS = frozenset({"on", "in", "at", "along", "by", "near", "beside", "outside"})
WAYS = frozenset({
    "road", "street", "highway", "lane", "track", "tracks", "freeway", "avenue", "roadway", "intersection",
    "bridge", "runway", "path", "city", "town", "traffic", "parking", "lot", "curb", "driveway", "tarmac",
})
SKY = frozenset({"sky", "air", "skies"})
AIR_PREPOSITIONS = frozenset({"through", "in", "across", "into"})
AIR_GROUND = frozenset({"runway", "tarmac", "airport", "field", "ground", "grass", "gate", "terminal", "strip"})
# Verbs of an aircraft going up or along in the sky; "take" only with "off".
AIRBORNE_VERBS = frozenset({"fly", "soar", "take", "ascend", "climb", "glide", "cruise"})
_MANNER_DEPS = ("prt", "advmod", "prep", "pobj", "det", "amod", "cc", "compound")
AFTER_SKY = frozenset({"over", "above", "overhead", "smoke", "trail", "contrail", "tail", "across", "toward",
                       "towards", "high", "upward", "upwards", "formation", "tricks"})
_TRAINS = frozenset({"train", "tram", "trolley", "locomotive", "subway"})


def _vehicle(token: Token | None) -> str | None:
    """"air" for aircraft, "ground" for a road vehicle, None for anything else (trains and boats are left
    alone: "parked" does not suit them)."""
    if token is None or token.tag_ not in NOUN_TAGS:
        return None
    lemma = noun_lemma(token)
    if lemma in AIRCRAFT or lexicon().canonical(lemma) in AIRCRAFT:
        return "air"
    vehicles = set(lexicon().co_hyponyms("car", NOUN)) | {"car"}
    return "ground" if lemma in vehicles - _TRAINS - {"boat", "airplane", "helicopter"} else None


def _mover(verb: Token) -> Token | None:
    """The vehicle the verb is said of: its subject, or the noun a participle hangs on ("a bus parked")."""
    if verb.dep_ == "acl" and verb.head.tag_ in NOUN_TAGS:
        return verb.head
    return subject_of(verb)


def _place(prep: Token) -> Token | None:
    objects = [child for child in prep.children if child.dep_ == "pobj"]
    return objects[0] if objects else None


def _ground_of(verb: Token, prep: Token) -> Token | None:
    """The preposition's object, or the verb's object after it where spaCy read the preposition as a particle
    ("drives down the lane", "flying over some trees": the noun hangs on the verb)."""
    place = _place(prep)
    if place is None and prep.dep_ in ("prt", "advmod"):
        place = next((child for child in verb.children if child.dep_ in ("dobj", "pobj") and child.i > prep.i), None)
    return place


def _following_prep(verb: Token) -> Token | None:
    """The preposition right after the verb ("drives down", "parked on top of" -> "on")."""
    doc = verb.doc
    if verb.i + 1 >= len(doc):
        return None
    word = doc[verb.i + 1]
    return word if word.dep_ in ("prep", "prt", "advmod") and word.head.i == verb.i else None


def _phrase_end(prep: Token) -> int:
    """"on top of" and "next to" are one preposition: the phrase ends after them."""
    doc = prep.doc
    words = [token.lower_ for token in doc[prep.i : prep.i + 3]]
    return prep.i + 3 if words[:3] == ["on", "top", "of"] else prep.i + 1


def _new_phrase(verb: Token, moving: bool, kind: str) -> str | None:
    """The replacing phrase in the verb's form: "parked on" for a participle, "is parked on" for a finite
    present verb; "driving down", "flying over" the other way."""
    if moving:
        tail = "parked on"
        if verb.tag_ == "VBZ":
            return f"is {tail}"
        if verb.tag_ == "VBP":
            return f"are {tail}"
        return tail if verb.tag_ == "VBG" else None
    lemma, tail = ("fly", "over") if kind == "air" else ("drive", "down")
    if any(child.dep_ == "aux" and child.lemma_.lower() == "have" for child in verb.children):
        return None  # "A green car has parked on the curb" -> "has driving down" was judged err
    tag = "VBG" if verb.tag_ == "VBN" else verb.tag_
    if tag not in ("VBG", "VBZ", "VBP"):
        return None
    return f"{verb_form(lemma, tag)} {tail}"


# Words of a place beside a thing, after which a parked vehicle could instead be driving past it.
BESIDE_PHRASES = (
    ("at",), ("outside", "of"), ("outside",), ("by",), ("near",), ("beside",), ("next", "to"), ("around",),
    ("in", "front", "of"), ("behind",), ("alongside",), ("close", "to"),
)
# Vehicles nobody reads as driving by themselves ("A red bike is driving past a window").
_RIDDEN = frozenset({"bike", "bicycle", "scooter", "skateboard"})


def _beside_end(verb: Token) -> int | None:
    """The index after a `BESIDE_PHRASES` phrase right after the verb, when it names a thing that is no way."""
    doc = verb.doc
    for phrase in BESIDE_PHRASES:
        end = verb.i + 1 + len(phrase)
        if tuple(token.lower_ for token in doc[verb.i + 1 : end]) != phrase or doc[verb.i + 1].head.i != verb.i:
            continue
        objects = [child for child in doc[end - 1].children if child.dep_ == "pobj" and child.tag_ in NOUN_TAGS]
        return end if objects and _thing_passed(objects[0]) else None
    return None


def _thing_passed(noun: Token) -> bool:
    """A physical thing ("a traffic light" by its compound) that is no way, ground, place or sky: a vehicle drives
    along a way, not past it ("driving past a sidewalk")."""
    lemma = noun_lemma(noun)
    way = lemma in WAYS | SKY or any(lexicon().in_class(lemma, kind) for kind in ("ground_place", "place"))
    return not way and (is_physical(lemma) or is_physical(noun_key(noun)))


def passing_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A road vehicle parked beside a thing that is no way -> driving past it ("A red car is parked at a traffic
    light" -> "A red car is driving past a traffic light"), and one driving past such a thing -> parked near it
    ("A yellow dump truck driving past a forest" -> "... parked near a forest")."""
    slots = []
    for verb in doc:
        vehicle = _mover(verb) if verb.pos_ == "VERB" else None
        if _vehicle(vehicle) != "ground" or vehicle is None or noun_lemma(vehicle) in _RIDDEN:
            continue
        lemma = verb_lemma(verb)
        if lemma == "park" and verb.tag_ in ("VBN", "VBD"):
            end = _beside_end(verb)
            new = "drove past" if verb.tag_ == "VBD" and verb.dep_ == "ROOT" else "driving past"
        elif lemma in MOVING_VERBS and verb.i + 1 < len(doc) and doc[verb.i + 1].lower_ == "past":
            end, phrase = verb.i + 2, _new_phrase(verb, True, "ground")
            new = phrase.replace("parked on", "parked near") if phrase else ""
            objects = [child for child in doc[verb.i + 1].children if child.dep_ == "pobj"]
            end = end if objects and _thing_passed(objects[0]) else None
        else:
            continue
        if end is not None and new:
            slots.append((doc[verb.i : end], [new]))
    return slots


def motion_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Verb-and-preposition phrases of a vehicle moving or standing still, with the opposite phrase; aircraft
    aloft further from their verb (`aloft_slots`), kites and birds brought down (`landed_slots`); road vehicles
    passing or parked by a thing (`passing_slots`)."""
    slots = aloft_slots(doc) + passing_slots(doc) + landed_slots(doc)
    for verb in doc:
        lemma = verb.lemma_.lower()
        if verb.pos_ not in ("VERB", "AUX") or lemma not in MOVING_VERBS | STILL_VERBS | {"fly"}:
            continue
        kind, prep = _vehicle(_mover(verb)), _following_prep(verb)
        if kind is None or prep is None:
            continue
        end = _phrase_end(prep)
        place = _place(doc[end - 1]) if end - prep.i == 3 else _ground_of(verb, prep)
        if place is None:
            continue
        ground = noun_lemma(place)
        moving = lemma in MOVING_VERBS and prep.lower_ in MOVING_PREPOSITIONS and kind == "ground"
        still = lemma in STILL_VERBS and prep.lower_ in STILL_PREPOSITIONS
        if (moving and ground not in WAYS) or (still and ground not in (AIR_GROUND if kind == "air" else WAYS)):
            continue
        if still and ground == "traffic":
            continue  # "A school bus waits in traffic" -> "drives down traffic" was judged err
        if _airborne(lemma, prep, ground, kind) and not placed_aloft(place):
            phrase = _new_phrase(verb, True, kind)
            if phrase is not None:
                slots.append((doc[verb.i : place.i + 1], [f"{phrase} a runway"]))
            continue
        phrase = _new_phrase(verb, moving, kind) if moving or still else None
        if phrase is not None:
            slots.append((doc[verb.i : end], [phrase]))
    return slots


def _airborne(lemma: str, prep: Token, ground: str, kind: str) -> bool:
    """"flying through the air", "flying in the sky": an aircraft aloft, whose opposite is one parked on a runway
    (the sky itself is replaced: "parked in the sky" is absurd)."""
    return kind == "air" and lemma == "fly" and prep.lower_ in AIR_PREPOSITIONS and ground in SKY


def placed_aloft(sky: Token) -> bool:
    """Words after the sky that only an aircraft aloft suits: "parked on a runway over some trees", "above a
    bridge", "with a trail of white smoke" would be absurd."""
    return any(token.lower_ in AFTER_SKY for token in sky.doc[sky.i + 1 :])


def _sky_phrase(verb: Token) -> Token | None:
    """The sky an aircraft's verb flies in, through words that say how ("flying high in the sky", "flying in
    formation in the sky", "taking off into the sky"): its noun, when only manner words and particles stand
    between verb and sky."""
    doc = verb.doc
    for token in doc[verb.i + 1 :]:
        if token.dep_ == "pobj" and noun_lemma(token) in SKY and token.head.lower_ in AIR_PREPOSITIONS | {"to"}:
            return token
        if token.dep_ not in _MANNER_DEPS or token.head.i < verb.i:
            return None
    return None


# Things that fly without an engine, and where the opposite photo has them: a kite on the ground, a bird perched.
LANDED = {"kite": "lying on the ground", "bird": "perched on a branch"}
FLYING = frozenset({"fly", "soar", "glide"})
# Birds that perch on branches (not ducks or geese, which sit on water).
PERCHING = frozenset({"bird", "seagull", "gull", "pigeon", "eagle", "hawk", "crow", "sparrow", "parrot", "owl", "dove"})


def _flier(verb: Token) -> str | None:
    """"kite" or "bird" (a perching bird) for the verb's subject, alone (not joined to another), else None."""
    mover = _mover(verb)
    if mover is None or mover.tag_ not in NOUN_TAGS or mover.dep_ == "conj" or any(
            child.dep_ == "conj" for child in mover.children):
        return None  # "A couple of cows and some birds perched on branches": the cows would perch too
    lemma = noun_lemma(content_noun(mover))
    return "kite" if lemma == "kite" else "bird" if lemma in PERCHING else None


def _many(verb: Token) -> bool:
    mover = _mover(verb)
    return mover is not None and (mover.tag_ == "NNS" or content_noun(mover).i != mover.i)


def landed_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """A kite or bird flying in the sky -> lying on the ground or perched on a branch ("A kite flying high in the
    sky" -> "A kite lying on the ground"), the sky replaced with the verb, as for aircraft (`aloft_slots`)."""
    slots = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) not in FLYING or verb.tag_ not in ("VBG", "VBZ", "VBP"):
            continue
        flier, sky = _flier(verb), _sky_phrase(verb)
        if flier is not None and sky is not None and not placed_aloft(sky):
            landed = LANDED[flier]
            if flier == "bird" and _many(verb):
                landed = landed.replace("a branch", "branches")  # "A flock of seagulls perched on branches"
            new = landed if verb.tag_ == "VBG" else f"{'is' if verb.tag_ == 'VBZ' else 'are'} {landed}"
            slots.append((doc[verb.i : sky.i + 1], [new]))
    return slots


def aloft_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """An aircraft flying, climbing or taking off, with the sky further on ("The plane is flying high in the sky"),
    -> parked on a runway (the sky replaced with the verb); one flying over or above a thing ("A passenger jet is
    flying over some trees") -> parked near it."""
    slots = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) not in AIRBORNE_VERBS or _vehicle(_mover(verb)) != "air":
            continue
        if verb_lemma(verb) == "take" and not any(child.lower_ == "off" for child in verb.children):
            continue
        sky, phrase = _sky_phrase(verb), _new_phrase(verb, True, "air")
        if phrase is None:
            continue
        if sky is not None and not placed_aloft(sky):
            slots.append((doc[verb.i : sky.i + 1], [f"{phrase} a runway"]))
        prep = _following_prep(verb)
        if prep is None or prep.lower_ not in ("over", "above"):
            continue
        place = _ground_of(verb, prep)
        if place is not None and noun_lemma(place) not in SKY and is_physical(noun_lemma(place)):
            slots.append((doc[verb.i : prep.i + 1], [phrase.replace("parked on", "parked near")]))
    return slots
