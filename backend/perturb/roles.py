"""Role reversals: a relation's subject and object trade places.

"a dog chasing a cat" -> "a cat chasing a dog"; "a red circle behind a blue
square" -> "a blue square behind a red circle". A reversal is made only
when the result is a claim a photo can refute, not one that is absurd on
its face or still true:

* verbs: both arguments are people, or both are animals ("a man riding a
  horse" -> "a horse riding a man" and "a picture taking a woman" are
  absurd), and the verb is not symmetric ("hugging", "kissing");
* spatial phrases: horizontal projective ones ("behind", "to the left
  of"), whose reversal is an ordinary scene, and vertical ones ("above",
  "under") between things of one kind; "on", "in" reverse into "a field in
  a horse", "under" between kinds into "a tree underneath a picnic table".
  Two things around a placing verb must be of one kind too, and around
  "be" or a placing verb any other place the subject has must be a ground
  both fit ("a pizza is on a plate in front of a TV" -> "a TV is on a plate"). When
  the phrase hangs on a verb, the verb keeps a fitting subject: people or
  animals for actions ("a dog sitting behind a man" -> "a man sitting
  behind a dog"), things only for verbs that merely place them ("a vase
  sits in front of a map" -> "a map sits in front of a vase");
* arguments are plain noun phrases of countable things: no clause, no
  conjunct, no pronoun, no place or time ("the grass", "a sunny day");
  of one number, or, around a spatial phrase, of two with the verbs made to
  agree ("Two clocks are hung on a wall behind a glass sign" -> "A glass
  sign is hung on a wall behind two clocks") where no pronoun could point
  at the wrong one ("a surfing instructor teaches students" -> "students
  teach a surfing instructor" turns absurd).
"""
from __future__ import annotations

from collections.abc import Iterator

from spacy.tokens import Span, Token

from backend.perturb.attributes import FAMILY, same_object
from backend.perturb.core import Edit, Request, Variant, build, swapped, take_distinct
from backend.perturb.counts import agreement_edits
from backend.perturb.nlp import Relation, is_plural, spatial_relations, verb_relations
from backend.perturb.nouns import animacy, is_object_noun, is_place, noun_senses
from backend.perturb.object_kinds import content, kind
from backend.perturb.object_swaps import HOLDING_VERBS, VAGUE_WORDS
from backend.perturb.object_together import FLOORS, SHARED_VERBS, is_child
from backend.perturb.slots import describes_alike
from backend.perturb.units import SYMMETRIC_VERBS, is_hyphenated

# Horizontal placements only: reversing "above" or "under" between a tree
# and a table ("a tree underneath a picnic table") is absurd on its face.
PROJECTIVE_PHRASES = (
    "in front of", "behind", "to the left of", "to the right of", "on the left of", "on the right of",
    "left of", "right of",
)
# Vertical placements, reversed only between things of one kind ("a cup above a plate" -> "a plate above a
# cup"); between a tree and a table they turn absurd.
VERTICAL_PHRASES = ("above", "below", "under", "over", "beneath", "underneath")
# Verbs that only place a thing ("a vase sits in front of a map"): two
# things may trade places around them.
PLACING_VERBS = frozenset({
    "sit", "stand", "rest", "lie", "lay", "hang", "park", "place", "set", "locate", "position",
})
# Grounds and large surfaces any two movable things may stand on, hang on or lean against ("hung on a wall",
# "parked on the street"), unlike a saucer ("a cup on a saucer in front of a laptop" -> "a laptop on a saucer").
SHARED_GROUNDS = FLOORS | {"wall", "table", "desk", "counter", "shelf", "street", "road", "sidewalk"}
GROUND_PREPOSITIONS = frozenset({"on", "in", "at", "against", "along", "down", "up", "across", "through"})
# What any vehicle does: two vehicles may trade places around it ("a bus traveling down a road behind a car").
MOVING_VERBS = frozenset({"travel", "drive", "move", "go", "head", "roll", "come"})
ARTICLES = ("a", "an", "the")
FIXED_SYNSETS = frozenset({"structure.n.01", "tree.n.01", "geological_formation.n.01", "body_of_water.n.01"})
# Positions of a phrase that is nobody's object: swapping it cannot drag the
# other phrase into a second relation.
FREE_DEPS = frozenset({"nsubj", "nsubjpass", "ROOT", "attr"})


def _plain_argument(span: Span) -> bool:
    """A noun phrase with no clause, conjunct or pronoun, naming a countable
    thing that is not a place ("ride on a forest"), or a pile of such things
    ("a pile of boxes")."""
    root = span.root
    named = content(root) or root
    if root.pos_ != "NOUN" or not is_object_noun(named) or is_place(root) or root.dep_ == "conj":
        return False
    if any(child.dep_ in ("conj", "cc", "appos") for child in root.children):
        return False
    if any(word.pos_ in ("VERB", "AUX", "PRON") and not (word.dep_ == "amod" and word.i < root.i) for word in span):
        return False
    if any(word.lower_ in VAGUE_WORDS for word in span):
        return False
    return not (is_hyphenated(span[0]) or is_hyphenated(span[-1]))


def _anchor(relation: Relation) -> Token:
    """The word a spatial phrase hangs on: a verb, "be" or a noun."""
    anchor = relation.predicate[0].head
    while relation.predicate.start <= anchor.i < relation.predicate.end and anchor.head != anchor:
        anchor = anchor.head
    return anchor


def _anchor_verb(relation: Relation) -> Token | None:
    """The verb (not "be") a spatial phrase hangs on, if any."""
    anchor = _anchor(relation)
    return anchor if anchor.pos_ in ("VERB", "AUX") and anchor.lemma_.lower() != "be" else None


def _other_complements(verb: Token, relation: Relation) -> list[Token]:
    return [c for c in verb.children if c.dep_ in ("prep", "dobj", "advcl") and c.i != relation.predicate.start]


def _reversible_action(relation: Relation) -> bool:
    """Two people or two animals, and a verb that is not mutual."""
    subject, obj = animacy(relation.subject.root), animacy(relation.object.root)
    verb = relation.predicate.root.lemma_.lower()
    if verb in HOLDING_VERBS and is_child(relation.subject.root) != is_child(relation.object.root):
        return False  # "a man holding a baby" -> "a baby holding a man"
    return subject is not None and subject == obj and verb not in SYMMETRIC_VERBS


def _free_subject(relation: Relation) -> bool:
    """A subject, or a phrase hung on a noun ("a scene with a ball behind a
    chair"); not the object of a verb, whose swap would drag the other
    phrase into that verb too ("ride on an elephant in front of a forest")."""
    root = relation.subject.root
    return root.dep_ in FREE_DEPS or (root.dep_ == "pobj" and root.head.head.pos_ in ("NOUN", "PROPN"))


def _only_places(verb: Token, relation: Relation) -> bool:
    """A locative verb, or a verb of motion between two vehicles, whose only other complement is a ground both
    things fit on ("two clocks are hung on a wall behind a glass sign", "a bus traveling down a road behind a
    car"): "a cup sitting on a saucer in front of a laptop" would, reversed, seat the laptop on the saucer."""
    others = _other_complements(verb, relation)
    vehicles = kind(relation.subject.root) == kind(relation.object.root) == "vehicle"
    moving = verb.lemma_.lower() in MOVING_VERBS and vehicles
    return (verb.lemma_.lower() in PLACING_VERBS or moving) and all(_shared_ground(other) for other in others)


def _shared_ground(complement: Token) -> bool:
    """"on a wall", "in a parking lot", "down a road": a place or a `SHARED_GROUNDS` surface after a
    `GROUND_PREPOSITIONS` word."""
    grounds = [obj for obj in complement.children if obj.dep_ == "pobj"]
    return (complement.dep_ == "prep" and complement.lower_ in GROUND_PREPOSITIONS and len(grounds) == 1
            and (is_place(grounds[0]) or grounds[0].lemma_.lower() in SHARED_GROUNDS))


def _one_kind(relation: Relation) -> bool:
    """Both sides are things of one kind (`object_swaps.kind`: two shapes, two pieces of furniture): a TV
    does not go on a plate, a skyscraper does not stand in front of a street sign."""
    found = kind(relation.subject.root)
    return found is not None and found == kind(relation.object.root)


def _alike_in_bulk(relation: Relation) -> bool:
    """Not a large fixed thing and a small movable one ("a skyscraper in front of a street sign", "a window
    set up in front of the christmas tree"): both sides heavy, or neither, or of one kind."""
    sides = (relation.subject.root, relation.object.root)
    return _one_kind(relation) or len({is_place(side) or _fixed(side) for side in sides}) == 1


def _fixed(noun: Token) -> bool:
    """A structure, a tree or a landform: it stands where it was built or grew."""
    senses = noun_senses(noun.lemma_.lower())
    ancestors = {s.name() for s in senses[0].closure(lambda synset: synset.hypernyms())} if senses else set()
    return bool(ancestors & FIXED_SYNSETS)


def _reversible_placement(relation: Relation) -> bool:
    if not _free_subject(relation):
        return False
    verb = _anchor_verb(relation)
    if verb is None:  # "is on a plate in front of a TV" would, reversed, put the TV on the plate
        anchor = _anchor(relation)
        return anchor.lemma_.lower() != "be" or all(map(_shared_ground, _other_complements(anchor, relation)))
    subject, obj = animacy(relation.subject.root), animacy(relation.object.root)
    if subject is None and obj is None:
        return _only_places(verb, relation) and _alike_in_bulk(relation)
    if subject is None or obj is None:
        return False
    return subject == obj or verb.lemma_.lower() in SHARED_VERBS


def _candidates(request: Request) -> list[Relation]:
    doc = request.doc
    actions = [r for r in verb_relations(doc) if _reversible_action(r) and not _numbers_differ(r)]
    placements = [r for r in spatial_relations(doc, PROJECTIVE_PHRASES)
                  if _reversible_placement(r) and _alike_in_bulk(r) and (not _numbers_differ(r) or _number_fits(r))]
    placements += [r for r in spatial_relations(doc, VERTICAL_PHRASES)
                   if _one_kind(r) and _reversible_placement(r) and not _numbers_differ(r)]
    return [
        r
        for r in actions + placements
        if _plain_argument(r.subject)
        and _plain_argument(r.object)
        and not (r.subject.start > 0 and doc[r.subject.start - 1].pos_ == "CCONJ")  # "And antique car": a typo
        and not (same_object(r.subject.root, r.object.root) and describes_alike(r.subject.root, r.object.root))
    ]


def _swap_spans(relation: Relation) -> tuple[Span, Span]:
    """The two phrases to swap. When both start with an article and are of
    one number, the articles stay in place, so "there is a couch behind the
    table" becomes "there is a table behind the couch", not "there is the table..."."""
    spans = (relation.subject, relation.object)
    if all(len(span) > 1 and span[0].lower_ in ARTICLES for span in spans) and not _numbers_differ(relation):
        return spans[0][1:], spans[1][1:]
    return spans


def _numbers_differ(relation: Relation) -> bool:
    return is_plural(relation.subject) != is_plural(relation.object)


def _number_fits(relation: Relation) -> bool:
    """Phrases of two numbers trade places around a phrase that hangs on a verb, or between two things, two
    people or two animals: "school boys sit cross legged in front of a chalkboard sign", read with no verb,
    would seat the sign. Never around "over" or "under" ("a small elephant standing over two large elephants")."""
    return _anchor_verb(relation) is not None or animacy(relation.subject.root) == animacy(relation.object.root)


def _swap_edits(request: Request, relation: Relation) -> list[Edit] | None:
    """The two phrases swapped; where their numbers differ, the subject's verbs made to agree with the phrase
    that takes its place, and None where a pronoun might point at either ("their luggage")."""
    edits = swapped(request, *_swap_spans(relation))
    if not _numbers_differ(relation) and content(relation.subject.root) is None:
        return edits  # a pile's verb may agree with what it is of ("a stack of books are placed")
    if _numbers_differ(relation) and any(token.tag_ in ("PRP", "PRP$") for token in request.doc):
        return None
    agreement = agreement_edits(request, relation.subject.root, is_plural(relation.object))
    return None if agreement is None else edits + agreement


def _role_swaps(request: Request) -> Iterator[Variant]:
    relations = _candidates(request)
    request.rng.shuffle(relations)
    edits = (found for r in relations if (found := _swap_edits(request, r)) is not None)
    return take_distinct(request, (build(request, e, FAMILY, "relation_arguments") for e in edits))


def role_swaps(request: Request) -> list[Variant]:
    return list(_role_swaps(request))
