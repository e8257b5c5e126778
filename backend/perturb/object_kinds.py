"""What kind of thing a noun names, for the swaps that trade two things of one kind (object_swaps.py, roles.py,
kind_attributes.py, colour_phrases.py): "person", "animal", or a curated kind of thing ("food", "vehicle").

The lexicon's groups decide first, joined where their members stand in for each other in a scene (fruit,
vegetables and dishes are food); a noun no group lists takes the kind of its most frequent WordNet sense ("plane" a
vehicle, "cupcake" food, "jug" tableware, "scissors" a tool).
"""
from __future__ import annotations

import functools

from spacy.tokens import Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import LIVING, animacy, is_object_noun, noun_class, noun_key, noun_senses
from backend.perturb.plausibility_parse import is_under

KINDS = {
    "food": ("fruit", "vegetable", "dish"),
    "tableware": ("tableware", "cutlery", "container"),
    "furniture": ("furniture", "appliance", "bathroom fixture"),
    "vehicle": ("vehicle",),
    "clothing": ("upper garment", "headwear", "neckwear", "footwear"),
    "electronics": ("electronics",),
    "sports equipment": ("sports equipment",),
    "household object": ("household object", "toy", "instrument"),
    "plant": ("plant",),
    "street furniture": ("street furniture",),
    "shape": ("shape",),
}
# A noun no lexicon group lists: the kind its most frequent WordNet sense falls under (first match wins). A drink
# is no food: the swaps made "an iced sandwich ... a pressed coffee" (judged absurd).
WORDNET_KINDS = (
    ("drink", ("beverage.n.01",)), ("food", ("food.n.01", "food.n.02")), ("vehicle", ("vehicle.n.01",)),
    ("furniture", ("furniture.n.01",)),
    ("clothing", ("clothing.n.01",)), ("electronics", ("electronic_equipment.n.01", "computer.n.01")),
    ("sports equipment", ("game_equipment.n.01", "sports_equipment.n.01")), ("tableware", ("tableware.n.01",)),
    ("plant", ("flower.n.01",)), ("tableware", ("bottle.n.01", "jar.n.01", "pot.n.01", "cooking_utensil.n.01")),
    ("tool", ("hand_tool.n.01", "edge_tool.n.01", "writing_implement.n.01")),
)

# Portions and stacks that are what they are of: "a slice of pizza" is food, "a stack of books" books.
PORTIONS = frozenset({"slice", "piece", "stack", "pile", "heap"})


def content(noun: Token) -> Token | None:
    """"pizza" in "a slice of pizza": what a portion or a stack is of, when that is a thing of a kind and the
    phrase ends there ("a slice of pizza with cheese" would leave its cheese behind in a swap)."""
    if noun.lemma_.lower() not in PORTIONS:
        return None
    inner = [obj for prep in noun.children if prep.dep_ == "prep" and prep.lower_ == "of"
             for obj in prep.children if obj.dep_ == "pobj"]
    if len(inner) != 1 or inner[0].right_edge != inner[0] or not is_object_noun(inner[0]):
        return None
    return inner[0] if kind(inner[0]) not in (None, "person", "animal") else None


def _kind_of_thing(key: str) -> str | None:
    groups = lexicon().object_groups
    for kind, names in KINDS.items():
        if any(key in groups.get(name, ()) for name in names):
            return kind
    return None


def kind(noun: Token) -> str | None:
    """"person", "animal", a `KINDS` name, or None (not swapped)."""
    living = animacy(noun)
    if living is not None:
        return living
    # The curated group decides for a thing: "square" is also a person in WordNet, but not in a caption.
    if noun_class(noun) in LIVING:
        return None
    key = noun_key(noun)
    return _kind_of_thing(key) or _wordnet_kind(key, noun.lower_)


@functools.lru_cache(maxsize=4096)
def _wordnet_kind(key: str, word: str) -> str | None:
    """The `WORDNET_KINDS` name of `key`'s most frequent sense, or of the word as written where its lemma has none
    (a noun only plural: "scissors" has no sense as "scissor")."""
    senses = noun_senses(key) or noun_senses(word)
    if not senses:
        return None
    ancestors = {synset.name() for synset in [senses[0], *senses[0].closure(lambda synset: synset.hypernyms())]}
    return next((name for name, synsets in WORDNET_KINDS if ancestors.intersection(synsets)), None)


def one_names_the_other(first: Token, second: Token) -> bool:
    """"a laptop" is "a computer", "a tulip" a "plant": trading them may say the same."""
    senses = [noun_senses(noun_key(noun))[:1] for noun in (first, second)]
    if not all(senses):
        return False
    a, b = senses[0][0], senses[1][0]
    return a in b.closure(lambda s: s.hypernyms()) or b in a.closure(lambda s: s.hypernyms())


def preposition(token: Token) -> str:
    """"next" for "next to", "in front of" for "in front of", else the word."""
    doc = token.doc
    if token.lower_ == "of" and token.i >= 2 and doc[token.i - 1].lower_ == "front":
        return f"{doc[token.i - 2].lower_} front of"
    if token.lower_ == "to" and token.i >= 1:
        return doc[token.i - 1].lower_
    return token.lower_


# A body sits or lies *in* a seat, a vehicle, a container or a bed ("sitting in a chair", "lying in a tub"); a
# table is sat *on*: an object swap made "A man sitting in a table across from a chair", judged absurd.
SAT_IN = frozenset(["seat.n.03", "vehicle.n.01", "container.n.01", "bed.n.01"])
_SITTING_VERBS = frozenset({"sit", "lie", "lay", "sleep", "curl", "relax"})


def sat_in(noun: Token) -> bool:
    """Is `noun` where a body sits or lies "in" ("sitting in a chair")?"""
    return (noun.dep_ == "pobj" and noun.head.lower_ == "in"
            and noun.head.head.lemma_.lower() in _SITTING_VERBS)


def may_be_sat_in(noun: Token) -> bool:
    return is_under(noun_key(noun), SAT_IN)
