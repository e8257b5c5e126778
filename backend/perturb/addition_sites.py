"""Where an object may be added after a noun (`addition`): "with a X" after a place preposition's object ("on a
table with a lamp"), else "next to a X" after a caption's last noun.

A site is an object noun that ends its phrase, whose counts speak of it (no frame such as "the top of", no
worn thing, no head of a WordNet compound: "home plate"). "with a X" would give the X to the noun, so no plant
takes it ("a cat is way up in a tree with a train"), nor anything someone looks or points at ("The dog stares at a
cat with a toilet"); such a last noun may still take "next to a X", which places the X in the scene ("The dog
stares at a cat next to a tree").
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_attributes import is_compound_word
from backend.perturb.addition_subject import PLACE_PREPOSITIONS
from backend.perturb.count_checks import AIMING_VERBS
from backend.perturb.lexicon import lexicon
from backend.perturb.nouns import is_object_noun
from backend.perturb.parse_reading import COLLECTIVE_NOUNS, noun_lemma
from backend.perturb.refill_neighbours import seen_in, talked_on

FRAME_NOUNS = frozenset({"top", "front", "side", "back", "middle", "bottom", "edge", "background", "distance",
                         "view", "picture", "photo", "image", "air", "area", "game", "day", "time"}) | COLLECTIVE_NOUNS


def _ends_phrase(token: Token) -> bool:
    """Nothing hangs on the noun's right, and what follows starts a new part (or nothing does)."""
    doc = token.doc
    if any(child.i > token.i for child in token.children):
        return False
    return token.i + 1 == len(doc) or doc[token.i + 1].is_punct or doc[token.i + 1].pos_ in ("CCONJ", "SCONJ")


def _is_plant(noun: Token) -> bool:
    """A tree, bush, flower or cactus: "with a X" after it says the plant holds X ("a cat is way up in a tree with
    a train", "riding elephants beside some trees with a clock" were judged absurd), and the counts, which see
    trees beside buses and clocks in street photos, cannot tell what a tree holds."""
    return noun_lemma(noun) in lexicon().object_groups["plant"]


def _up_in_plant(noun: Token) -> bool:
    """Things are up in the plant ("a cat is way up in a tree"): "next to a X" after it would put X up there too
    ("... in a tree next to a banana"); beside or under one it stands on the ground ("under a tree next to a
    zebra")."""
    return _is_plant(noun) and noun.head.lower_ in ("in", "on", "into", "up", "atop")


def _site_noun(token: Token) -> bool:
    """An object noun ending its phrase, whose counts speak of it: not the head of a WordNet compound ("on home
    plate with a banana" read the counts of a dish's plate)."""
    return (token.tag_ in ("NN", "NNS") and token.is_alpha and is_object_noun(token) and _ends_phrase(token)
            and token.lemma_.lower() not in FRAME_NOUNS and not lexicon().is_worn(noun_lemma(token))
            and not any(c.dep_ == "compound" and is_compound_word(c.lower_, token.lower_) for c in token.children))


def _aimed_at(noun: Token) -> bool:
    """The noun is what someone looks, points or smiles "at" (`count_checks.AIMING_VERBS`), no place: "with a X"
    after it would give it the X ("The dog stares at a cat with a toilet"); or what someone talks on, where "with a
    X" is whom they talk with ("talking on the phone with a car"), or the mirror a reflection is seen in ("a selfie
    in a mirror with a toilet": `refill_neighbours.talked_on`, `seen_in`)."""
    aimed = noun.head.lower_ == "at" and noun.head.head.lemma_.lower() in AIMING_VERBS
    return aimed or talked_on(noun) or seen_in(noun)


def object_sites(doc: Doc) -> list[tuple[Token, str]]:
    """(noun, connective) where an object can be added after the noun: a place preposition's object ("on a
    table with a lamp"; no plant, `_is_plant`; nothing looked at, `_aimed_at`), else a caption's last noun ("next
    to"; not up in a plant, `_up_in_plant`, nor a mirror a reflection is seen in: "in the rear view mirror next to a
    chair")."""
    sites = [(token, "with") for token in doc if token.dep_ == "pobj" and token.head.lower_ in PLACE_PREPOSITIONS
             and _site_noun(token) and not _is_plant(token) and not _aimed_at(token)]
    words = [token for token in doc if not token.is_punct]
    if not sites and words and _site_noun(words[-1]) and not _up_in_plant(words[-1]) and not seen_in(words[-1]) and (
            "next to" not in doc.text.lower()):
        sites.append((words[-1], "next to"))
    return sites


def counted_lemma(noun: Token) -> str:
    """The lemma the counts know the noun's sense by: "woods" (or "a wood" one is in) is a forest, whereas the
    counts' "wood" is mostly a material ("a wooden toilet seat", "a wood plate": "standing in the woods with a
    toilet" was made once "tree" was barred there)."""
    if noun.lower_ == "woods" or (noun.lower_ == "wood" and noun.head.lower_ in ("in", "into", "through")
                                  and any(c.dep_ == "det" for c in noun.children)):
        return "forest"
    return noun_lemma(noun)
