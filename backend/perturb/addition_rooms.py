"""Additions to the room, table or street a caption is about: "A corner of a kitchen with a big fridge" -> "...
with a big fridge and a blender", "The kitchen is clean" -> "The kitchen with a clock is clean".

Most room captions have no subject a thing can join (a room takes no partner: "a bathroom and a kitchen" is two
photos) and the caption counts are too few to say what else stands in a room (94 captions name a bathroom, 2 of
them a vase). So the caption's topic (`topic_room`) takes one of its `FURNISHINGS`: movable things a photo of it
may or may not show, never a fixture (`kindred.ROOM_FIXTURES`), one the caption names or may name otherwise
(`kindred.OTHER_NAMES`: no rug beside a carpet), or one that a noun of it implies by the counts
(`addition.added_objects`). The thing goes where the room's own things are listed: after the one thing of its
"with" or "has" ("a kitchen with a big fridge and a blender"), or in the list of them ("A hotel room with a small
television, a plant and a work desk"), or, where the room lists nothing, in a new "with" phrase right after the
room ("The small bathroom with a plant has a toilet"). Nothing is added where a phrase, a list or a clause would
then describe the added thing too ("with a big mirror above the sink", "a living room decorated with a modern
theme", "a bathroom that needs to be fixed up"), nor to a room said to be empty or bare. An outdoor place after a
place preposition takes its own curated things the same way (`PLACE_FURNISHINGS`, placed by `addition`'s "with"
sites: "on a train platform with a bench").
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_attributes import BALL_GAMES
from backend.perturb.addition_subject import EMPTY
from backend.perturb.core import Edit
from backend.perturb.inflect import indefinite_article, pluralize
from backend.perturb.lists import ListSite, list_sites, long_list_sites
from backend.perturb.nouns import is_object_noun

_LIVING = frozenset("plant rug vase clock painting candle".split())
_LIVING_ROOMS = ("room", "bedroom", "office", "suite", "den", "lounge")
# The indoor rooms among the `FURNISHINGS` keys (a street, a table and a desk are none).
ROOMS = frozenset({"bathroom", "kitchen", *_LIVING_ROOMS})
# Movable things that may stand in a room of each kind and that a photo of it often lacks (no lamp: most living
# rooms and desks show one); a kitchen takes its small appliances.
FURNISHINGS = {
    "bathroom": frozenset("plant rug vase candle basket painting".split()),
    "kitchen": frozenset("plant vase clock toaster blender basket".split()),
    **dict.fromkeys(_LIVING_ROOMS, _LIVING),
    **dict.fromkeys(("street", "intersection"), frozenset("bench hydrant mailbox".split())),
    "table": frozenset("vase candle book".split()),
    "desk": frozenset("book plant vase".split()),
}
ROOM_NAMES = {"restroom": "bathroom", "washroom": "bathroom"}
# Things an outdoor place may hold that a photo of it often lacks, added as "on a beach with a sandcastle" where the
# counts know too few such captions (none names a fountain in a park); the counts still bar what they imply (a
# park's bench). No "field" (mostly a ball game's), lake or mountain (a bear in a lake with a boat, a hike beside a
# snowman).
PLACE_FURNISHINGS = {
    **dict.fromkeys(("park", "garden", "plaza"), frozenset("fountain statue bench".split())),
    **dict.fromkeys(("pasture", "meadow", "farm", "grassland"), frozenset("barn tractor windmill".split())),
    **dict.fromkeys(("beach", "sand", "shore"), frozenset("umbrella sandcastle".split())),
    **dict.fromkeys(("platform", "station"), frozenset("bench clock".split())),
    "sidewalk": FURNISHINGS["street"],
    "slope": frozenset({"snowman"}),
}
# Nouns that show what follows their "of": "A view of a bathroom", "A corner of a kitchen".
FRAMES = frozenset("view picture photo photograph image corner inside interior shot part side".split())
# Words saying the room holds little: nothing is added ("an empty room", "bare walls").
BARE = EMPTY | {"bare", "unfurnished"}


def place_furnishings(noun: Token) -> frozenset[str]:
    """The `PLACE_FURNISHINGS` a place noun may take after "with": none in a ball game ("a batter at the plate on
    the sand with a bench"?) or a place said to be empty."""
    words = {t.lower_ for t in noun.doc}
    if words & (BALL_GAMES | BARE):
        return frozenset()
    return PLACE_FURNISHINGS.get(noun.lemma_.lower(), frozenset())


def room_lemma(token: Token) -> str:
    """The token's lemma, with a bathroom written in two words read as one ("a rest room", "a bath room")."""
    if any(c.dep_ == "compound" and c.lower_ in ("rest", "bath", "wash") for c in token.children):
        return "bathroom"
    lemma = token.lemma_.lower()
    return ROOM_NAMES.get(lemma, lemma)


def room_kind(token: Token) -> str | None:
    """The `FURNISHINGS` key of a room noun ("living room" reads its head, "room"), or None."""
    lemma = room_lemma(token)
    return lemma if lemma in FURNISHINGS and token.tag_ in ("NN", "NNS") and token.dep_ != "compound" else None


def topic_room(doc: Doc) -> Token | None:
    """The room the caption is about: its first noun (or what a frame's "of" names: "A view of a bathroom"),
    when that is the root, the subject or what "There is" names."""
    nouns = [t for t in doc if t.pos_ in ("NOUN", "PROPN") and t.dep_ not in ("compound", "amod", "nmod")]
    if not nouns:
        return None
    noun = nouns[0]
    if noun.lemma_.lower() in FRAMES and len(nouns) > 1 and nouns[1].head.lower_ == "of" and (
            noun.i in (nouns[1].head.head.i, nouns[1].head.head.head.i)):
        noun, head = nouns[1], noun
    else:
        head = noun
    if head.dep_ not in ("ROOT", "nsubj", "nsubjpass", "attr") or any(c.dep_ == "conj" for c in noun.children):
        return None
    return noun if room_kind(noun) else None


def _holdings(room: Token) -> Token | None:
    """The first thing the room is said to have: the object of its "with", or of the "has" it is subject of."""
    for child in room.children:
        if child.dep_ == "prep" and child.lower_ == "with":
            return next((c for c in child.children if c.dep_ == "pobj"), None)
    verbs = [room.head] if room.dep_ == "nsubj" else []
    verbs += [c for c in room.children if c.dep_ == "relcl" and any(w.lower_ == "that" and w.dep_ == "nsubj"
                                                                    for w in c.children)]
    return next((c for verb in verbs if verb.lemma_.lower() == "have" for c in verb.children if c.dep_ == "dobj"),
                None)


def _has_with(room: Token) -> bool:
    """The room has a "with" phrase of its own (whose object `_holdings` may not have read as a thing)."""
    return any(c.dep_ == "prep" and c.lower_ == "with" for c in room.children)


def room_edits(room: Token, words: list[str]) -> list[list[Edit]]:
    """Edits adding each of `words` (`FURNISHINGS` that pass `addition.added_objects`) to the room's things."""
    doc = room.doc
    if any(t.lower_ in BARE for t in doc):
        return []  # "an empty room", "bare walls": a thing added there contradicts the caption
    held = _holdings(room)
    if held is None:
        return _new_with(room, words)
    if any(c.dep_ == "det" and c.lower_ == "no" for c in held.children):
        return []  # "a bathroom with no toilets and a bucket"
    site = _list_site(doc, held)
    if site is not None:
        written = {"article": lambda w: f"{indefinite_article(w)} {w}", "plural": pluralize,
                   "bare": lambda w: w}[site.form]
        return [[Edit("", f", {written(word)}", site.offset, site.offset)] for word in words]
    if not is_object_noun(held) or not _ends_phrase(held):
        return []  # "with a stylish feel": no thing
    end = held.idx + len(held)
    return [[Edit("", f" and {indefinite_article(word)} {word}", end, end)] for word in words]


def _ends_phrase(token: Token) -> bool:
    """Nothing hangs on the token's right, and what follows ends the phrase (the caption's end, a full stop, a
    place preposition): a phrase or a list there would be the added thing's too ("with a big mirror above the
    sink", "a table set with dinnerware", "with a fire extinguisher, mugs hanging from a shelf")."""
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if any(c.i > token.i for c in token.children):
        return False
    return after is None or (after.is_punct and after.text != ",") or (
        after.pos_ == "ADP" and after.lower_ not in ("with", "of"))


def _new_with(room: Token, words: list[str]) -> list[list[Edit]]:
    """Edits putting "with a X" right after a room that lists nothing, where the room's phrase ends there (the
    caption's end, a verb of the room's, a place): "The small bathroom with a plant has a toilet". Not before
    "with" ("The view of a bathroom with a wall mounted sink"), a participle, a relative word or a noun spaCy read
    as a verb ("A bathroom sink beside a toilet", "Interior bathroom shot of")."""
    if _has_with(room) or any(c.dep_ in ("conj", "cc") for c in room.children):
        return []
    after = room.doc[room.i + 1] if room.i + 1 < len(room.doc) else None
    own_verb = after is not None and after.tag_ == "VBZ" and room.dep_ == "nsubj" and room.head.i == after.i
    if not (after is None or after.is_punct or after.pos_ == "AUX" or own_verb or (
            after.pos_ == "ADP" and after.lower_ not in ("with", "of"))):
        return []
    end = room.idx + len(room)
    return [[Edit("", f" with {indefinite_article(word)} {word}", end, end)] for word in words]


def _list_site(doc: Doc, held: Token) -> ListSite | None:
    """The list the room's first thing heads ("with sink, tub, and toilet"), if it is one."""
    return next((site for site in [*list_sites(doc), *long_list_sites(doc)] if site.members[0].i == held.i), None)
