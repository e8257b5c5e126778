"""Object swaps (SugarCrepe's swap_obj): two nouns of compatible kinds trade places, their modifiers stay.

"A man with a ball facing a girl with a racquet" -> "A girl with a ball facing a man with a racquet";
"a cat sitting on a chair next to a table" -> "a cat sitting on a table next to a chair". Unlike CE-CLIP's
noun swaps, which trade any two nouns ("a sandwich eating a woman"), the two nouns must be of one kind, so
the result stays a scene a photo could show:

* both people, or both animals (`nouns.animacy`: no stuffed toys), never a baby with an older person (who
  holds whom would turn absurd);
* or both things of one curated kind (`KINDS`: lexicon groups, joined where their members stand in for each
  other in a scene: fruit, vegetables and dishes are food);
* same grammatical number and the same kind of determiner, no compound or hyphenated word, and not a swap
  that gives a verb the object it is usually seen with where the caption had an unusual one (`typical`).
  Swaps of conjuncts or of a symmetric relation's sides stay true: `binding_swap` drops them, as every swap.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator

from spacy.tokens import Token

from backend.perturb.attributes import FAMILY
from backend.perturb.core import Request, Variant, build, swapped, take_distinct
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import token_span
from backend.perturb.nouns import LIVING, animacy, is_object_noun, is_place, noun_class, noun_key
from backend.perturb.parse_reading import COLLECTIVE_NOUNS, PORTION_NOUNS, in_fixed_phrase, next_to_another_noun
from backend.perturb.replace import ARGUMENT_DEPS, FRAME_NOUNS, determiner_kind
from backend.perturb.typical import swap_repairs_caption
from backend.perturb.units import in_compound, is_hyphenated

SUBTYPE = "object"
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
BABIES = frozenset({"baby", "infant", "toddler", "newborn"})


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
    return _kind_of_thing(noun_key(noun)) if noun_class(noun) not in LIVING else None


def _candidate(token: Token) -> bool:
    return (token.tag_ in ("NN", "NNS") and token.is_alpha and token.dep_ in ARGUMENT_DEPS
            and not in_compound(token) and not is_hyphenated(token) and is_object_noun(token)
            and not in_fixed_phrase(token, lexicon().fixed_phrases)
            and not is_place(token) and not next_to_another_noun(token)
            and token.lemma_.lower() not in FRAME_NOUNS | COLLECTIVE_NOUNS | PORTION_NOUNS)


def compatible(first: Token, second: Token) -> bool:
    """Two nouns of one kind that may trade places (see the module docstring)."""
    found = kind(first)
    if found is None or found != kind(second) or first.tag_ != second.tag_:
        return False
    if noun_key(first) == noun_key(second) or not lexicon().may_replace(noun_key(first), noun_key(second)):
        return False
    if found == "person" and (noun_key(first) in BABIES) != (noun_key(second) in BABIES):
        return False
    return determiner_kind(first) == determiner_kind(second)


def _object_swaps(request: Request) -> Iterator[Variant]:
    doc = request.doc
    nouns = [token for token in doc if _candidate(token)]
    pairs = [(a, b) for a, b in itertools.combinations(nouns, 2)
             if compatible(a, b) and not swap_repairs_caption(a, b)]
    request.rng.shuffle(pairs)
    return take_distinct(request, (build(request, swapped(request, token_span(a), token_span(b)), FAMILY, SUBTYPE)
                                   for a, b in pairs))


def object_swaps(request: Request) -> list[Variant]:
    return list(_object_swaps(request))
