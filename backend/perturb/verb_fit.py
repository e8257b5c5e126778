"""Which action refills suit the rest of their clause.

REPLACE refills an action verb with a sister from its lexicon group
(`lexicon.json` "actions"); the verb's other words stay. Two kinds of
phrase bind the verb, and a sister that cannot take them made garbled
negatives (judged err in a natural sample):

  * a path ("down a snowy slope", "along the beach", "through the air")
    goes with a verb of moving or moving something: "A person washing a
    snowboard down a snowy slope";
  * "in his hand" (her arms, its mouth) goes with holding or carrying: "A
    infant throwing a baby toothbrush in his hand looking at it";
  * an activity named by a bare thing ("playing frisbee", "watching tv",
    `nouns.activity_of`) goes with the verbs of `nouns.ACTIVITY_VERBS` only:
    "watching frisbee", not "painting television";
  * a drink is drunk and a food eaten: "A giraffe drinking leaves" (from
    "eating", which the lexicon's "consuming" group trades with "drinking"),
    "eating coffee" (`plausibility_parse.is_drink`); what one eats or drinks
    "from" ("drinking from a trough", "grazing from a tree") stays a source
    only of eating, drinking and grazing ("sleeping from a trough").
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.nouns import ACTIVITY_VERBS, activity_of
from backend.perturb.parse_reading import verb_lemma
from backend.perturb.plausibility_parse import DRINK_VERBS, EATING_VERBS, is_drink

PATH_PREPOSITIONS = frozenset("down up along across through past".split())
# Verbs of an animal taking food from a place, which a source with "from" keeps as the eating verbs do: "Two
# giraffes grazing from a tree" gave "sleeping from a tree".
GRAZING_VERBS = frozenset({"graze", "feed", "browse"})
MOVING_VERBS = frozenset("""
    ride push pull carry drag drive walk run jump swim crawl ski surf skateboard snowboard chase roll
""".split())
HOLDING_PLACES = frozenset("hand hands arm arms mouth paw paws lap".split())
HOLDING_VERBS = frozenset(["hold", "carry"])


def _prepositions(verb: Token) -> list[Token]:
    return [child for child in verb.children if child.dep_ == "prep"]


def _holds_in(verb: Token) -> bool:
    """`verb` has "in his hand" (or her arms, its mouth, ...): a hand of the doer's own. "throwing game
    controllers in each hand" (one in either hand) was a wanted refill and stays."""
    return any(prep.lower_ == "in" and obj.dep_ == "pobj" and obj.lower_ in HOLDING_PLACES
               and any(child.dep_ == "poss" for child in obj.children)
               for prep in _prepositions(verb) for obj in prep.children)


def refill_fits_clause(verb: Token, word: str) -> bool:
    """Whether the action lemma `word` may stand for `verb` with the verb's path, "in his hand", what it consumes
    and an activity's thing kept."""
    objects = [child for child in verb.children if child.dep_ == "dobj"]
    consuming = DRINK_VERBS | EATING_VERBS
    if objects and word in consuming and (word in DRINK_VERBS) != all(map(is_drink, objects)):
        return False
    feeding = consuming | GRAZING_VERBS
    from_source = verb_lemma(verb) in feeding and any(prep.lower_ == "from" for prep in _prepositions(verb))
    if from_source and word not in feeding:
        return False
    activities = {activity_of(child) for child in verb.children} - {None}
    if activities:
        return all(word in ACTIVITY_VERBS[activity] for activity in activities if activity is not None)
    if any(prep.lower_ in PATH_PREPOSITIONS for prep in _prepositions(verb)) and word not in MOVING_VERBS:
        return False
    return word in HOLDING_VERBS or not _holds_in(verb)
