"""Acts that a photo tells from their opposite, as a relation phrase: "A person is holding up a pastry" ->
"A person is putting down a pastry", "A cat looking at a laptop" -> "A cat looking away from a laptop", "A woman
playing a game of tennis" -> "A woman watching a game of tennis", "flying a kite" -> "carrying a kite", "holding
onto" -> "letting go of", "swinging a bat" -> "dropping a bat", "using a laptop" -> "putting away a laptop"
(SugarCrepe's replace_rel replaces a verb with its particle or preposition, often by a phrase: "holding up" ->
"putting down").

The lexicon's action groups swap single verbs and leave verbs with a particle alone ("holding up a sign"
depends on "up"); these phrases are the particle verbs and verb-preposition pairs whose opposite is one
phrase, replaced whole so the new verb gets its own particle. Each phrase is offered only where its doer can
do the opposite: a person puts a thing down or watches a game, anything with eyes looks away.

A place that "has" or "features" a thing becomes one that "lacks" it (SugarCrepe: "features" -> "lacks"): no act,
but its doer is read as an act's is. The other states replaced whole (things "next to each other", "filled with",
"on display") are in state_phrases.py and offered here with the acts.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from backend.perturb.inflect import verb_form
from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import PERSON_PRONOUNS
from backend.perturb.parse_reading import NOUN_TAGS, content_noun, noun_lemma, subject_of, verb_lemma
from backend.perturb.state_phrases import apart_slots, cover_slots, emptied_slots, spread_slots, stored_slots
from backend.perturb.wearing import actor, wearer
from backend.perturb.without import SETTING_NOUNS, plain_object

# Games a person plays and could be watching instead; "playing with a ball" and "playing a guitar" are not
# among them (the first has no object, watching the second is not what a photo of it shows).
GAMES = frozenset({
    "tennis", "baseball", "soccer", "football", "basketball", "volleyball", "frisbee", "golf", "game", "match",
    "chess", "cricket", "hockey", "polo", "rugby", "softball", "wii", "videogame",
})
# What a person takes or poses for: the photographer and the one photographed look different in a photo.
# No "selfie": who takes one poses for it ("posing for a selfie" was judged still true).
PICTURES = frozenset({"picture", "photo", "photograph", "snapshot", "portrait"})
# What a person swings, and could be dropping instead ("A girl swinging a tennis racket" -> "dropping").
SWUNG = frozenset({"bat", "racket", "racquet", "club", "stick"})
# Where a kite flies: "carrying a kite in the sky" or "above a tall building" was judged absurd.
ALOFT = frozenset({"sky", "air", "above", "over", "high", "overhead", "up", "aloft"})
# What a swing hits: "dropping a tennis racket and hitting a ball" was judged absurd.
STRUCK = frozenset({"hit", "hits", "hitting", "ball", "pitch", "at"})
# Balls a player hits and could be catching instead ("getting ready to hit the ball" -> "to catch the ball"); not
# with the bat or racket named after ("catching the ball with a racket" is odd).
BALLS = frozenset({"ball", "baseball", "softball", "birdie", "shuttlecock", "volleyball", "balloon"})
# Devices a person uses and could be putting away instead ("Everyone is using electronic devices").
DEVICES = frozenset({
    "laptop", "computer", "phone", "cellphone", "smartphone", "device", "tablet", "ipad", "iphone", "camera",
    "remote", "controller", "keyboard", "mouse", "headphones", "umbrella",
})
# Slopes a skier goes down and could be climbing up instead (SugarCrepe: "skiing down a snowy, tree-lined path"
# -> "climbing up").
SLOPES = frozenset({"hill", "slope", "mountain", "mountainside", "hillside", "path", "trail", "run", "piste"})
# Words after a run downhill that already say someone goes up: "skiing down hill and going up hill".
_UPHILL = frozenset({"up", "uphill"})
# Ways a person or animal crosses, and could be standing beside instead: "crossing a street" -> "standing next to
# a street" ("crossing a river to shore" keeps its goal: `unless`).
CROSSED = frozenset({
    "street", "road", "intersection", "crosswalk", "river", "stream", "creek", "bridge", "track", "tracks",
    "railroad", "highway", "avenue", "lane",
})
# Ways a person or animal blocks, and could be standing beside instead ("A herd of sheep are blocking the road").
BLOCKED = CROSSED | frozenset({"path", "driveway", "sidewalk", "trail", "way", "entrance", "doorway"})
# What one looks into and could be looking away from ("looking into a mirror"); not "in the distance".
LOOKED_INTO = frozenset({
    "mirror", "window", "camera", "refrigerator", "fridge", "oven", "microwave", "box", "bag", "lens", "telescope",
    "binoculars", "microscope", "cabinet", "drawer", "pot", "bowl", "hole", "cage",
})
# Words between a look and its "at" ("looking down at a laptop"), dropped with it: "looking away from".
_LOOK_ADVERBS = frozenset({"down", "up", "back", "over", "out", "around", "closely", "intently"})
_LOOKS = frozenset({"look", "stare", "gaze", "glance", "peer"})
# What a look through a window or mirror is for: "looking away from the window are making eye contact" was judged
# absurd.
_FACING = frozenset({"contact", "eyes", "reflection"})
# Toys shaped like animals sit or lie as their owner sets them ("A teddy bear sitting on the bed"); the lexicon's
# postures are for the living, and a photo tells sitting from lying for these too.
PLUSH = frozenset({"bear", "teddy", "doll", "toy", "animal", "plush"})
# Directions of a walk or a run, kept when one becomes the other ("walking down a sidewalk" -> "running down a
# sidewalk"); the lexicon's locomotion group leaves these alone where spaCy reads the word as a particle.
_STRIDES = frozenset({"down", "along", "across", "through", "up", "past", "toward", "towards", "on"})
# The other gait, and adverbs of pace between a gait and its direction ("walking slowly across").
_GAITS = {"walk": "run", "run": "walk", "jog": "walk"}
_PACES = frozenset({"slowly", "quickly", "briskly", "leisurely", "fast", "rapidly", "calmly", "casually"})
# Things a person opens or closes, which a photo shows open or shut ("A man opening an oven" -> "closing");
# not a present or a bottle, whose closing is odd, nor an eye or mouth.
OPENED = frozenset({
    "door", "window", "refrigerator", "fridge", "oven", "microwave", "laptop", "box", "suitcase", "umbrella", "book",
    "drawer", "gate", "cabinet", "lid", "hydrant", "dishwasher", "closet", "curtain", "trunk",
})
# Words after the verb that need the thing open: "closing a refrigerator to get a drink", "water flowing out".
_OPEN_FOR = frozenset({"to", "flowing", "spewing", "gushing", "pouring", "spraying", "inside", "into", "out"})
# Things read by leafing through them, and which a photo shows shut instead ("flipping through a large book" ->
# "closing a large book").
LEAFED = frozenset({"book", "magazine", "newspaper", "paper", "menu", "notebook", "album", "catalog", "binder"})
# Feats a person does and could be watching instead ("A person doing a skateboarding trick" -> "watching"), as a
# game played is watched.
FEATS = frozenset({"trick", "stunt", "flip", "jump", "wheelie", "kickflip", "ollie"})
# What people wait for and could be getting off instead ("People waiting for a train" -> "getting off a train"); not
# with a purpose after it ("waiting for the bus to arrive").
RIDES = frozenset({"train", "bus", "subway", "tram", "trolley", "ferry", "shuttle"})
# Phones one talks on and could be putting away instead ("A man talking on a cell phone" -> "putting away").
PHONES = frozenset({"phone", "cellphone", "smartphone", "telephone", "iphone"})
# What a surfer rides and could be wiping out on instead (SugarCrepe: "surfing a large wave" -> "wiping out on").
WAVES = frozenset({"wave"})
# What a person or animal takes and could be getting out of instead ("twins taking a bath" -> "getting out of").
BATHS = frozenset({"bath", "bubblebath"})
# What a grazing animal eats and could be lying in instead (SugarCrepe: "eating hay" -> "sleeping in the hay").
FODDER = frozenset({"grass", "hay", "straw"})
# Verb forms a new phrase can take (a passive or past participle would need its auxiliary rewritten); the base
# form only where the act is about to be done (`readied`).
_TAGS = frozenset({"VBG", "VBZ", "VBP", "VBD"})
_READY = frozenset({"about", "ready"})
_READYING = frozenset({"prepare", "try", "attempt"})
# Prepositions of where a doer is, whose object spaCy often takes for the doer of a participle after it.
_AT_PLACE = frozenset({"at", "in", "on", "by", "near", "inside", "beside"})
# Verbs of moving along, during which one does not stop to watch a game or put a thing down: "running down the
# field watching soccer" and "walking while putting down a ball" were judged doubtful.
LOCOMOTION = frozenset({"walk", "run", "jog", "ride", "skate", "skateboard", "ski", "bike", "cycle", "swim", "hike",
                        "march", "stroll", "race", "dribble", "chase"})
_STILL = frozenset({"watch", "put down"})
# Acts nobody gets ready for: "trying to wipe out on a wave" was judged absurd.
_MISHAPS = frozenset({"wipe out on", "drop", "let go of"})
# Verbs of a place or thing having something, whose opposite is "lacks" ("A bathroom features big mirrors").
_HAVING = frozenset({"have", "feature", "contain", "include"})


@dataclass(frozen=True)
class PhraseSwap:
    """A verb (lemmas) followed by `word` (its particle or preposition, "" for none), replaced whole by
    `new` (a base form, first word inflected like the verb), where `doer` accepts the subject's lemma and,
    when `objects` is given, the object (of the verb, or of `word`) is one of them; no word of `unless` follows."""

    verbs: frozenset[str]
    word: str
    new: str
    doer: Callable[[str], bool]
    objects: frozenset[str] | None = None
    unless: frozenset[str] = frozenset()  # words after the verb that the new act would contradict


def _person(noun: str) -> bool:
    return lexicon().is_person(noun) or noun in PERSON_PRONOUNS  # "Everyone in the group is using ..."


def _animate(noun: str) -> bool:
    return lexicon().is_animate(noun)


def _animal(noun: str) -> bool:
    return _animate(noun) and not _person(noun)


def _holder(noun: str) -> bool:
    """Who holds things up and puts them down: a person, or a hand ("A person's hand holding up a smartphone")."""
    return _person(noun) or noun == "hand"


def _skier(noun: str) -> bool:
    """Who climbs up a slope on skis and could be skiing down it ("Three skiers climb up a snow covered hill")."""
    return noun == "skier"


SWAPS: tuple[PhraseSwap, ...] = (
    PhraseSwap(frozenset({"hold", "pick", "lift"}), "up", "put down", _holder),
    PhraseSwap(frozenset({"put", "set"}), "down", "pick up", _holder),
    PhraseSwap(frozenset({"look", "stare", "gaze", "glance"}), "at", "look away from", _animate),
    PhraseSwap(frozenset({"look", "stare", "gaze"}), "out", "look away from", _animate),
    PhraseSwap(_LOOKS, "in", "look away from", _animate, LOOKED_INTO, _FACING),
    PhraseSwap(_LOOKS, "into", "look away from", _animate, LOOKED_INTO, _FACING),
    PhraseSwap(frozenset({"ski", "snowboard", "sled", "slide"}), "down", "climb up", _person, SLOPES, _UPHILL),
    PhraseSwap(frozenset({"cross"}), "", "stand next to", _animate, CROSSED, frozenset({"to", "toward", "towards"})),
    PhraseSwap(frozenset({"block"}), "", "stand next to", _animate, BLOCKED),
    PhraseSwap(frozenset({"play"}), "", "watch", _person, GAMES),
    PhraseSwap(frozenset({"sit"}), "", "lie", PLUSH.__contains__),
    PhraseSwap(frozenset({"take"}), "", "pose for", _person, PICTURES),
    PhraseSwap(frozenset({"pose"}), "for", "take", _person, PICTURES),
    PhraseSwap(frozenset({"hold", "hang"}), "onto", "let go of", _person),
    PhraseSwap(frozenset({"fly"}), "", "carry", _person, frozenset({"kite"}), ALOFT),
    PhraseSwap(frozenset({"swing"}), "", "drop", _person, SWUNG, STRUCK),
    PhraseSwap(frozenset({"hit", "strike", "smack", "whack"}), "", "catch", _person, BALLS, frozenset({"with"})),
    PhraseSwap(frozenset({"use"}), "", "put away", _person, DEVICES),
    PhraseSwap(frozenset({"talk", "chat"}), "on", "put away", _person, PHONES),
    PhraseSwap(frozenset({"work", "type", "play", "text"}), "on", "put away", _person, DEVICES),
    PhraseSwap(frozenset({"flip", "leaf", "page", "thumb"}), "through", "close", _person, LEAFED),
    PhraseSwap(frozenset({"do", "perform", "attempt"}), "", "watch", _person, FEATS),
    PhraseSwap(frozenset({"wait"}), "for", "get off", _person, RIDES, frozenset({"to", "arrive", "coming", "come"})),
    PhraseSwap(frozenset({"wait"}), "for", "ride", _person, WAVES, frozenset({"to", "coming", "come"})),
    PhraseSwap(frozenset({"take"}), "", "get out of", _animate, BATHS),
    PhraseSwap(frozenset({"climb", "hike", "trek"}), "up", "ski down", _skier, SLOPES),
    PhraseSwap(frozenset({"open"}), "", "close", _person, OPENED, _OPEN_FOR),
    PhraseSwap(frozenset({"close", "shut"}), "", "open", _person, OPENED, _OPEN_FOR),
    PhraseSwap(frozenset({"ride", "surf", "catch"}), "", "wipe out on", _person, WAVES),
    PhraseSwap(frozenset({"eat", "munch"}), "", "lie in", _animal, FODDER),
    PhraseSwap(frozenset({"graze", "feed"}), "on", "lie in", _animal, FODDER),
    *(PhraseSwap(frozenset({"walk"}), way, f"run {way}", _animate) for way in sorted(_STRIDES)),
    *(PhraseSwap(frozenset({"run", "jog"}), way, f"walk {way}", _animate) for way in sorted(_STRIDES)),
)


def while_moving(verb: Token) -> bool:
    """The act is done on the move ("children running down the field playing soccer", "walking while holding a
    ball"): an act that needs one to stand and face a thing would not suit it."""
    return verb.dep_ in ("advcl", "xcomp", "conj") and verb_lemma(verb.head) in LOCOMOTION


def readied(verb: Token) -> bool:
    """A base form of an act about to be done: "is about to catch", "gets ready to fly", "prepares to swing",
    "trying to pick up" (not "to" of a purpose: "using a phone to take a picture")."""
    head = verb.head
    return verb.tag_ == "VB" and verb.dep_ == "xcomp" and (head.lower_ in _READY or verb_lemma(head) in _READYING)


def doer_of(verb: Token) -> str | None:
    """The lemma of who does the act: the verb's subject, or the noun a participle hangs on ("people" for "a
    group of people"), seen past a garment (`_garment_owner`); for an act about to be done (`readied`), who is
    about to do it."""
    if readied(verb):
        verb = verb.head.head if verb.head.lower_ in _READY else verb.head
    if verb.dep_ == "acl" and verb.head.tag_ in NOUN_TAGS:
        subject: Token | None = _place_owner(wearer(verb.head))
    else:
        subject = actor(verb)
    if subject is None or content_noun(subject).tag_ not in NOUN_TAGS:  # "Group of people" is read as a name
        return None
    return noun_lemma(content_noun(_garment_owner(subject)))


def _place_owner(noun: Token) -> Token:
    """The living thing at a place where spaCy hung the participle on the place ("A giraffe at a zoo eating some
    grass": "eating" on "zoo"); else `noun`. Not where the place is itself alive ("a man on a horse riding")."""
    at, owner = noun.head, noun.head.head
    if (noun.dep_ == "pobj" and at.lower_ in _AT_PLACE and owner.tag_ in NOUN_TAGS
            and not _animate(noun_lemma(noun)) and _animate(noun_lemma(content_noun(owner)))):
        return owner
    return noun


def _garment_owner(noun: Token) -> Token:
    """The person a garment belongs to where spaCy hung the participle on the garment in shapes `wearer` does
    not read: joined to the person ("A man in black shirt and blue shorts playing tennis": "shorts" a conj of
    "man"), after "with" ("A little boy with a red baseball cap playing tennis") or worn ("A woman wearing
    headphones looking at ..."); else `noun`."""
    if not lexicon().is_worn(noun_lemma(noun)):
        return noun
    owner: Token | None = noun.head
    if noun.dep_ == "pobj" and noun.head.lower_ == "with":
        owner = noun.head.head
    elif noun.dep_ == "dobj" and verb_lemma(noun.head) == "wear":
        owner = noun.head.head if noun.head.dep_ == "acl" else subject_of(noun.head)
    elif noun.dep_ != "conj":
        return noun
    return owner if owner is not None and owner.tag_ in NOUN_TAGS and _person(noun_lemma(owner)) else noun


def _object_fits(head: Token, swap: PhraseSwap) -> bool:
    """No object list, or the head's object ("playing tennis", "posing for a photo") is in it. A picture
    "of" something other than oneself stays ("taking a picture of a dog": no one poses for it)."""
    if swap.objects is None:
        return True
    for child in head.children:
        if child.dep_ in ("dobj", "pobj") and noun_lemma(child) in swap.objects:
            pictured = noun_lemma(child) in PICTURES
            return not pictured or not any(grand.lower_ == "of" and not _reflexive(grand) for grand in child.children)
    return False


def _reflexive_word(token: Token) -> bool:
    return token.lower_.endswith(("self", "selves"))


def _reflexive(of: Token) -> bool:
    return any(_reflexive_word(child) for child in of.children)


def has_purpose(verb: Token) -> bool:
    """The act has a purpose ("using a phone to take a picture"), which the opposite act would not serve."""
    return any(child.dep_ in ("xcomp", "advcl") and any(grand.lower_ == "to" and grand.dep_ == "aux"
                                                        for grand in child.children) for child in verb.children)


def _phrase(verb: Token, swap: PhraseSwap) -> Span | None:
    """The verb with its particle or preposition right after it, when that is `swap`'s word and it hangs on the
    verb; the verb alone for a swap without a word."""
    doc = verb.doc
    if any(token.lower_ in swap.unless for token in doc[verb.i + 1 :]):
        return None
    if has_purpose(verb):
        return None  # "using a laptop to watch a movie" -> "putting away a laptop to watch a movie"
    if not swap.word:
        return doc[verb.i : verb.i + 1] if _object_fits(verb, swap) else None
    if verb.i + 1 >= len(doc):
        return None
    word = doc[verb.i + 1]
    if word.lower_ != swap.word or word.head.i != verb.i or word.dep_ not in ("prt", "prep"):
        return None
    if verb.i + 2 < len(doc) and doc[verb.i + 2].pos_ == "ADP":  # "looking out at the lake": "at" would dangle
        return None
    if any(_reflexive_word(child) for child in word.children):
        return None  # "looking away from himself in the mirror" was judged absurd
    fits = _object_fits(word, swap) or (word.dep_ == "prt" and _object_fits(verb, swap))  # "skiing down a hill":
    return doc[verb.i : verb.i + 2] if fits else None  # the object may hang on the verb past its particle


def _lacking_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A dining room features wooden cabinets" -> "A dining room lacks wooden cabinets": a thing (not a
    person or animal, who "lacks a stick" oddly, nor a photo's framing: "A closeup ... lacks a fork") having a
    plain object (see `without.plain_object`)."""
    slots = []
    for verb in doc:
        things = [child for child in verb.children if child.dep_ == "dobj" and child.tag_ in NOUN_TAGS]
        if verb_lemma(verb) not in _HAVING or verb.tag_ not in ("VBZ", "VBP") or not things:
            continue
        doer = doer_of(verb)
        if doer is not None and doer not in SETTING_NOUNS and not _animate(doer) and plain_object(things[0]):
            slots.append((doc[verb.i : verb.i + 1], [verb_form("lack", verb.tag_)]))
    return slots


def _paced_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"Two adult pheasants walking slowly across a street" -> "... running across a street": a walk or run with
    an adverb of its pace before the direction, replaced with the adverb, which would not suit the other gait."""
    slots = []
    for verb in doc[:-2]:
        pace, way = doc[verb.i + 1], doc[verb.i + 2]
        lemma = verb_lemma(verb)
        if (verb.pos_ != "VERB" or verb.tag_ not in _TAGS or lemma not in _GAITS or pace.lower_ not in _PACES
                or way.lower_ not in _STRIDES or way.head.i != verb.i):
            continue
        doer = doer_of(verb)
        if doer is not None and _animate(doer):
            slots.append((doc[verb.i : way.i + 1], [verb_form(f"{_GAITS[lemma]} {way.lower_}", verb.tag_)]))
    return slots


def _turned_away_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A man looking down at an open laptop" -> "A man looking away from an open laptop": a look with an adverb
    before its "at" (the adverb goes with the look), by anything animate."""
    slots = []
    for verb in doc[:-2]:
        adverb, at = doc[verb.i + 1], doc[verb.i + 2]
        if (verb.pos_ != "VERB" or verb.tag_ not in _TAGS or verb_lemma(verb) not in _LOOKS
                or adverb.lower_ not in _LOOK_ADVERBS or at.lower_ != "at" or at.head.i not in (verb.i, adverb.i)):
            continue
        doer = doer_of(verb)
        if doer is not None and _animate(doer) and not any(_reflexive_word(child) for child in at.children):
            slots.append((doc[verb.i : at.i + 1], [verb_form("look away from", verb.tag_)]))
    return slots


def _onlooker_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"A woman prepares a pizza while a man watches" -> "... while a man looks away": a person or animal
    ("Cow eating grass while a bull watches nearby") who watches or looks on, with nothing watched named after it
    (the act watched is the rest of the caption)."""
    slots = []
    for verb in doc:
        lemma, tag = verb_lemma(verb), verb.tag_
        if verb.pos_ != "VERB" or tag not in _TAGS or lemma not in ("watch", "look"):
            continue
        on = doc[verb.i + 1] if verb.i + 1 < len(doc) else None
        looks_on = lemma == "look" and on is not None and on.lower_ == "on" and on.dep_ in ("prt", "advmod", "prep")
        watches = lemma == "watch" and not any(child.dep_ not in ("nsubj", "aux", "mark", "punct", "advmod", "cc")
                                               for child in verb.children)
        if on is not None and looks_on and (any(child.dep_ == "pobj" for child in on.children)
                                            or (on.i + 1 < len(doc) and doc[on.i + 1].pos_ == "ADP")):
            continue  # "looking on a computer": a place; "look on from behind a rail" -> "look away from behind"
        doer = doer_of(verb)
        if (looks_on or watches) and verb.dep_ != "ROOT" and doer is not None and _animate(doer):
            end = verb.i + 2 if looks_on else verb.i + 1
            slots.append((doc[verb.i : end], [verb_form("look away", tag)]))
    return slots


def verb_phrase_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each verb phrase of `SWAPS` with its doer, with the opposite phrase in the verb's form (the base form of
    an act about to be done too: "A young boy gets ready to fly a kite" -> "... to carry a kite"); things close
    to each other or together set apart; things filled emptied; things had lacked; looks turned away; things on
    display packed away; toilet seats and lids up set down (`state_phrases.cover_slots`); a walk at a pace run."""
    slots = apart_slots(doc) + spread_slots(doc) + emptied_slots(doc) + _lacking_slots(doc)
    slots += _turned_away_slots(doc) + _onlooker_slots(doc) + stored_slots(doc) + cover_slots(doc)
    slots += _paced_slots(doc)
    for verb in doc:
        if verb.pos_ != "VERB" or (verb.tag_ not in _TAGS and not readied(verb)):
            continue
        lemma, doer = verb_lemma(verb), doer_of(verb)
        for swap in SWAPS:
            span = _phrase(verb, swap) if lemma in swap.verbs else None
            if span is not None and doer is not None and swap.doer(doer) and not (
                    readied(verb) and swap.new in _MISHAPS) and not (swap.new in _STILL and while_moving(verb)):
                slots.append((span, [verb_form(swap.new, verb.tag_)]))
    return slots
