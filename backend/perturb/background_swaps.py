"""Foreground and background trade places (SugarCrepe's swap_obj on scene captions).

"Two cows in a meadow with a historic structure in the background" -> "A historic structure in a meadow with
two cows in the background". A caption that names its subject and then what stands behind it says which is
near and which is far; swapping the two phrases keeps a scene a photo could show, of any two kinds of thing,
only where the subject merely stands somewhere:

* the subject is the caption's main noun (a noun phrase caption, or the subject of "be", "stand", "sit" ...:
  `object_swaps.RESTING_VERBS`), with no clause of its own ("a man throwing a frisbee" would hand the frisbee
  to the tower), placed, if at all, in an open place ("in a meadow", "at the beach"), never on or in a thing
  ("a cat on a bed with a tree in the background" -> "a tree on a bed") or in water ("a building in a lake");
* the far thing is a plain phrase after "with", then "in the background" (or foreground, distance), not in a
  list ("with bushes and trees in the foreground" would move the bushes alone), and is no landform or body of
  water ("mountains on a lake");
* both are things a photo shows (no time, view or part), of one number where a verb agrees with the subject,
  and the caption has no pronoun that would point at the wrong one ("his", "it").
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from backend.perturb.attributes import FAMILY
from backend.perturb.core import Request, Variant, build, swapped, take_distinct
from backend.perturb.nouns import is_object_noun, is_place, noun_key, noun_senses
from backend.perturb.object_swaps import RESTING_VERBS
from backend.perturb.parse_reading import COLLECTIVE_NOUNS, SIMPLE_NP_DEPS, verb_lemma

SUBTYPE = "background_object"
FAR_WORDS = frozenset({"background", "foreground", "distance"})
# Prepositions that put the subject in a place, not on or under a thing.
PLACING_PREPOSITIONS = frozenset({"in", "at", "near", "by", "outside", "inside"})
OPEN_LAND = "tract.n.01"  # a field, a meadow, a park
# Big natural things that stand nowhere else: "mountains on a lake", "the ocean in a field".
IMMOVABLE = frozenset({"geological_formation.n.01", "body_of_water.n.01"})
WATER = frozenset({"water", "ocean", "sea", "lake", "river", "pond", "wave", "waves", "surf"})


def _ancestors(noun: Token) -> set[str]:
    senses = noun_senses(noun_key(noun))
    return {s.name() for s in [senses[0], *senses[0].closure(lambda s: s.hypernyms())]} if senses else set()


def _open_place(noun: Token) -> bool:
    """"a meadow", "the beach", "a park": land a thing of any kind can stand on; not water."""
    ancestors = _ancestors(noun)
    return ((is_place(noun) or OPEN_LAND in ancestors) and not ancestors & IMMOVABLE
            and noun.lower_ not in WATER)


def _plain_phrase(noun: Token) -> Span | None:
    """The noun with its determiner, number, adjectives and compounds, and a following "of" group ("a group of
    people"), when nothing else precedes it."""
    doc = noun.doc
    words = doc[noun.left_edge.i : noun.i + 1]
    if any(word.dep_ not in SIMPLE_NP_DEPS for word in words[:-1]):
        return None
    groups = [child for child in noun.children if child.lower_ == "of" and child.i == noun.i + 1]
    if groups:
        group = doc[noun.i + 1 : groups[0].right_edge.i + 1]
        if any(word.pos_ in ("VERB", "ADP") and word.i != groups[0].i for word in group):
            return None
        return doc[words.start : group.end]
    return words


def _far_thing(doc: Doc) -> Token | None:
    """The noun after "with" that stands "in the background"."""
    for noun in doc:
        far = [child for child in noun.children if child.dep_ == "prep" and child.lower_ == "in"
               and any(obj.lower_ in FAR_WORDS for obj in child.children if obj.dep_ == "pobj")]
        listed = any(child.dep_ in ("conj", "cc") for child in noun.children)  # "bushes and trees": not alone
        if far and noun.dep_ == "pobj" and noun.head.lower_ == "with" and noun.tag_ in ("NN", "NNS") and not listed:
            return noun
    return None


def _subject(doc: Doc) -> Token | None:
    """The caption's main noun: a noun phrase caption's head, or the subject of a verb of merely being there."""
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None:
        return None
    if root.pos_ == "NOUN":
        return root
    subjects = [child for child in root.children if child.dep_ == "nsubj" and child.pos_ == "NOUN"]
    return subjects[0] if subjects and verb_lemma(root) in RESTING_VERBS else None


def _placed_openly(subject: Token) -> bool:
    """No clause of its own, and every place the subject (or its verb) is put is open land."""
    if any(child.dep_ in ("acl", "relcl", "conj") for child in subject.children):
        return False
    holders = [subject] if subject.dep_ == "ROOT" else [subject, subject.head]
    for prep in (child for holder in holders for child in holder.children if child.dep_ == "prep"):
        if prep.lower_ in ("of", "with"):
            continue
        places = [obj for obj in prep.children if obj.dep_ == "pobj"]
        if prep.lower_ not in PLACING_PREPOSITIONS or not all(_open_place(place) for place in places):
            return False
    return True


def _content(noun: Token) -> Token:
    """"people" for "a group of people": what a collective noun is made of."""
    if noun.lemma_.lower() not in COLLECTIVE_NOUNS:
        return noun
    groups = [obj for prep in noun.children if prep.lower_ == "of" for obj in prep.children if obj.dep_ == "pobj"]
    return groups[0] if groups else noun


def _agrees(subject: Token, far: Token) -> bool:
    """A verb agreeing with the subject keeps agreeing: same number, or no finite verb on the subject."""
    return subject.dep_ == "ROOT" or (subject.tag_ == far.tag_)


def _pair(doc: Doc) -> tuple[Span, Span] | None:
    far, subject = _far_thing(doc), _subject(doc)
    if far is None or subject is None or subject.i >= far.i or any(t.tag_ in ("PRP", "PRP$") for t in doc):
        return None
    if not all(is_object_noun(_content(noun)) and not is_place(noun) for noun in (subject, far)):
        return None
    if _ancestors(far) & IMMOVABLE or not _placed_openly(subject) or not _agrees(subject, far):
        return None
    phrases = _plain_phrase(subject), _plain_phrase(far)
    return (phrases[0], phrases[1]) if phrases[0] is not None and phrases[1] is not None else None


def background_swaps(request: Request) -> list[Variant]:
    pair = _pair(request.doc)
    variants = [] if pair is None else [build(request, swapped(request, *pair), FAMILY, SUBTYPE)]
    return list(take_distinct(request, variants))
