"""Noun modifiers that name what kind of thing the head is, as objects: the sport of "Several basketball
players" ("... soccer players"; SugarCrepe's replace_obj: "baseball team" -> "swim team") and the room of
"The bathroom door" ("The bedroom door"), and a baseball position ("batter" -> "pitcher") in a baseball
caption.

A noun modifier is left alone by the word slots ("stop sign" must not become "go sign"), so these are
replaced here, and only in front of a word every sport or room has (game, team, player; door, window,
floor). Not where the caption names a sport's gear or positions ("swinging a bat", "the catcher"): the new
sport would clash with them, an absurd negative a text-only model rejects.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

TEAM_SPORTS = ("soccer", "basketball", "baseball", "football", "volleyball", "hockey", "rugby")
SPORTS = (*TEAM_SPORTS, "tennis")
SHARED_HEADS = frozenset({"game", "team", "player", "match", "practice", "fan", "coach", "league", "tournament"})
# Words tied to one sport: with them in the caption, another sport reads absurd.
SPORT_BOUND = frozenset({
    "racket", "racquet", "bat", "bats", "mitt", "glove", "gloves", "hoop", "basket", "puck", "stick", "club",
    "court", "plate", "mound", "dugout", "pitcher", "batter", "catcher", "umpire", "goal", "goalie", "net",
    "pitch", "serve", "serves", "serving", "dunk", "swing", "swings", "swinging", "inning", "base", "bases",
    "helmet", "ice", "rink", "touchdown", "quarterback", "wimbledon", "ball", "balls",
})
PER_SLOT = 3
BASEBALL_POSITIONS = ("batter", "catcher", "pitcher", "umpire")
BASEBALL_WORDS = frozenset({"baseball", "bat", "base", "plate", "mound", "inning", "dugout", "mitt", "softball"})
ROOMS = ("kitchen", "bathroom", "bedroom", "office")
ROOM_PARTS = frozenset({"door", "window", "wall", "floor", "ceiling", "doorway", "light", "cabinet", "mirror"})


def _room_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"bathroom" in "The bathroom door", with other rooms; not where the caption names a room twice."""
    words = {token.lower_ for token in doc}
    if len(words & set(ROOMS)) != 1:
        return []
    return [(doc[token.i : token.i + 1], [room for room in ROOMS if room != token.lower_][:PER_SLOT])
            for token in doc[:-1]
            if token.lower_ in ROOMS and _heads(doc[token.i + 1], ROOM_PARTS)]


def _heads(token: Token, words: frozenset[str]) -> bool:
    return token.lemma_.lower() in words and token.pos_ == "NOUN"


def _position_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"batter" in "A batter, catcher and umpire during a baseball game" with another position; only where
    the caption is about baseball: a "pitcher" of flowers is a jug, "batter" goes into a cake."""
    words = {token.lower_ for token in doc}
    if not words & BASEBALL_WORDS:
        return []
    return [(doc[token.i : token.i + 1], [other for other in BASEBALL_POSITIONS
                                          if other != token.lemma_.lower() and other not in words])
            for token in doc if token.lemma_.lower() in BASEBALL_POSITIONS and token.tag_ == "NN"]


def kind_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Sport, room and baseball-position words, each with the kinds that would replace it."""
    return _sport_slots(doc) + _room_slots(doc) + _position_slots(doc)


def _sport_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each sport word in front of a word any sport has, with other sports (team sports before "team")."""
    words = {token.lower_ for token in doc}
    if words & SPORT_BOUND:
        return []
    slots = []
    for token in doc[:-1]:
        head = doc[token.i + 1]
        if token.lower_ not in SPORTS or not _heads(head, SHARED_HEADS):
            continue
        if sum(word.lower_ == token.lower_ for word in doc) > 1:
            continue  # "Baseball players ... on a baseball field": one of the two would stay
        choices = TEAM_SPORTS if head.lemma_.lower() in ("team", "league") else SPORTS
        others = [sport for sport in choices if sport != token.lower_ and sport not in words]
        slots.append((doc[token.i : token.i + 1], others[:PER_SLOT]))
    return slots
