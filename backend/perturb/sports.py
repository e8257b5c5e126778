"""Which sport, as an object: "Several basketball players" -> "Several volleyball players", "a youth baseball
game" -> "a youth soccer game" (SugarCrepe's replace_obj: "baseball team" -> "swim team").

The sport is a noun modifier, which the word slots leave alone ("stop sign" must not become "go sign"), so
it is replaced here, and only in front of a word any sport has (game, team, player, match...). Not where
the caption names the sport's gear or positions ("swinging a bat", "the catcher"): the new sport would
clash with them, an absurd negative a text-only model rejects.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span

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


def sport_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each sport word in front of a word any sport has, with other sports (team sports before "team")."""
    words = {token.lower_ for token in doc}
    if words & SPORT_BOUND:
        return []
    slots = []
    for token in doc[:-1]:
        head = doc[token.i + 1]
        if token.lower_ not in SPORTS or head.lemma_.lower() not in SHARED_HEADS or head.pos_ != "NOUN":
            continue
        if sum(word.lower_ == token.lower_ for word in doc) > 1:
            continue  # "Baseball players ... on a baseball field": one of the two would stay
        choices = TEAM_SPORTS if head.lemma_.lower() in ("team", "league") else SPORTS
        others = [sport for sport in choices if sport != token.lower_ and sport not in words]
        slots.append((doc[token.i : token.i + 1], others[:PER_SLOT]))
    return slots
