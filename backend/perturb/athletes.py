"""People named by their board or snow sport, for one of the same setting: "A skateboarder is doing tricks on a
ramp" -> "A cyclist is doing tricks on a ramp", "A surfer is on the water" -> "A kayaker is on the water", "A
female skier stops and poses" -> "A female snowboarder ..." (SugarCrepe's replace_obj has these: "skateboarder" ->
"bicyclist", "surfer" -> "kayaker", "skier" -> "snowboarder").

The lexicon's object groups have none of these people (a group there would also let the additions bring a skier
into any scene), so this module keeps its own pairs. Each pair shares a setting (a ramp or a street, the waves, a
snowy slope), so a text-only model cannot reject the refill. Nothing is refilled where the caption names the gear
or the act of either person ("grinding his board", "skiing down", "holding a paddle"): the old gear would be left
with the new person, or the new person's gear would make the caption true again.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span

from backend.perturb.inflect import pluralize
from backend.perturb.parse_reading import NOUN_TAGS, noun_lemma

# Each person and who replaces them, in a setting both share.
COUNTERPARTS = {
    "skier": "snowboarder", "snowboarder": "skier",
    "surfer": "kayaker", "kayaker": "surfer",
    "skateboarder": "cyclist", "cyclist": "skateboarder",
}
# Lemmas naming each person's gear or act (and "board", which several ride).
GEAR = {
    "skier": frozenset("ski skis skiing pole poles".split()),
    "snowboarder": frozenset("snowboard snowboarding board".split()),
    "surfer": frozenset("surf surfing surfboard board".split()),
    "kayaker": frozenset("kayak kayaking paddle canoe boat".split()),
    "skateboarder": frozenset("skateboard skateboarding skate skating board deck".split()),
    "cyclist": frozenset("bike bicycle cycle cycling biking pedal".split()),
}


def athlete_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """Each athlete noun (no compound before it: "cross country skiers") with its counterpart, where the caption
    names neither's gear."""
    words = {token.lower_ for token in doc} | {token.lemma_.lower() for token in doc}
    slots = []
    for token in doc:
        lemma = noun_lemma(token)
        other = COUNTERPARTS.get(lemma)
        if other is None or token.tag_ not in NOUN_TAGS or token.dep_ == "compound":
            continue
        if any(child.dep_ == "compound" for child in token.children) or words & (GEAR[lemma] | GEAR[other]):
            continue
        slots.append((doc[token.i : token.i + 1], [pluralize(other) if token.tag_ == "NNS" else other]))
    return slots
