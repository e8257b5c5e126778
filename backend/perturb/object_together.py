"""Whether two nouns are said together, so that trading them says the same (for `object_swaps`): a noun and its
conjunct, two neighbours in a list, or a noun and its "with" ("an umpire is talking with two players", "a man
with a dog"). The exceptions, where a swap does move something, are in `in_one_part`'s docstring: a "with" noun
with a place, a doing or a seat of its own, or two free-standing nouns held by a third. Also who counts as a
child, which decides both this and who may hold whom.
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.nouns import BABIES, is_object_noun, is_place, noun_key
from backend.perturb.object_kinds import kind
from backend.perturb.object_phrases import free_standing

# Who holds whom: a child does not hold, carry or lift an adult ("a child holds a sick woman").
CHILDREN = BABIES | {"child", "kid"}
# Grounds a "with" noun may stand on apart from the other noun ("a dog on the floor").
FLOORS = frozenset({"floor", "ground", "grass", "sand", "snow", "carpet", "rug"})
# Verbs any person or animal does: a person and an animal may trade places around them.
SHARED_VERBS = frozenset({"sit", "stand", "lie", "lay", "rest", "wait", "walk", "run", "sleep", "stay"})
# Where a person or thing is, and what stands beside it: "sits on a bed with a chair next to it".
SEATING_PREPOSITIONS = frozenset({"on", "in", "onto", "inside", "atop", "under"})
BESIDE_IT = (("next", "to"), ("beside",), ("behind",), ("in", "front", "of"), ("near",))


def is_child(noun: Token) -> bool:
    """"a child", "a toddler", "a baby girl"."""
    return noun_key(noun) in CHILDREN or any(child.lower_ in CHILDREN for child in noun.children
                                             if child.dep_ in ("compound", "amod"))


def in_one_part(first: Token, second: Token) -> bool:
    """`second` is `first`'s conjunct, or joined to it or its verb by "with" ("an umpire is talking with two
    players", "cows grazing in a pasture with birds", "a man with a dog"): both sides do one thing, so a swap says
    the same; or a neighbour in a list. Not where the "with" noun has a place of its own ("a cat on a couch with
    a dog on the floor"), does a thing of its own while `first` does another ("a woman holding a controller with a
    man looking on"), or belongs to a third noun while one of the two has a feature of its own ("scissors with
    orange handles are in a container with pens"): the swap then moves the place, the doing or the feature."""
    if (second.dep_ == "conj" and second.head == first) or _listed_together(first, second):
        return not _doing_apart(first, second)  # "a baby sitting and a man standing": each does its own
    while second.dep_ == "conj":  # "with tomato sauce and sausage": the sausage is in the "with" too
        second = second.head
    if not (second.dep_ == "pobj" and second.head.lower_ == "with") or _placed(second) or _beside_it(first, second):
        return False
    if second.head.i == first.i + 1:
        return True  # "a television with a remote", however the parser hangs the "with"
    if _doing_apart(first, second):
        return False
    if _held_by_a_third(first, second) and (_featured(first) or _featured(second)):
        return False
    return any(holder in (first, first.head) for holder in second.head.ancestors)


def _listed_together(first: Token, second: Token) -> bool:
    """Neighbours in a list, only commas and "and" between them ("noodles, a fork, and a knife"), however the
    parser reads the list."""
    earlier, later = (first, second) if first.i < second.i else (second, first)
    between = earlier.doc[earlier.i + 1 : later.left_edge.i]
    return len(between) > 0 and all(word.is_punct or word.pos_ == "CCONJ" for word in between)


def _placed(noun: Token) -> bool:
    """A place of its own: "a dog on the floor", not "a group of people"."""
    return any(obj.dep_ == "pobj" and (is_object_noun(obj) or is_place(obj) or obj.lower_ in FLOORS)
               for prep in noun.children if prep.dep_ == "prep" and prep.lower_ != "of" for obj in prep.children)


def _beside_it(first: Token, second: Token) -> bool:
    """The "with" noun stands beside a pronoun for `first`, and `first` is where someone is: "a boy sits on a bed
    with a chair next to it" -> "on a chair with a bed next to it" moves the seat, however the parser hangs "next
    to it". Not "a table with a chair next to it", where the two only stand together."""
    if not (first.dep_ == "pobj" and first.head.lower_ in SEATING_PREPOSITIONS and first.head.head.pos_ == "VERB"):
        return False
    pronoun = "them" if first.tag_ == "NNS" else "it"
    after = [word.lower_ for word in first.doc[second.i + 1 : second.i + 5]]
    return any(after[: len(place) + 1] == [*place, pronoun] for place in BESIDE_IT)


def _held_by_a_third(first: Token, second: Token) -> bool:
    """The "with" belongs to a room, a field or a container that neither noun is ("a container with pens"),
    the two being free-standing and both adults or both children ("a small child ... with an adult")."""
    holder = second.head.head
    return ((is_place(holder) or kind(holder) == "tableware") and holder not in (first, first.head)
            and free_standing(first) and free_standing(second) and is_child(first) == is_child(second))


def _doing_apart(first: Token, second: Token) -> bool:
    """Each noun has a participle of its own, and they differ ("holding" and "looking on"), where both can do
    either: two people, or verbs any animal does ("three cows standing ... with birds flying" is no swap)."""
    doings = [{child.lemma_ for child in noun.children if child.dep_ == "acl" and child.tag_ == "VBG"}
              for noun in (first, second)]
    both_can = kind(first) == kind(second) == "person" or doings[0] | doings[1] <= SHARED_VERBS
    return all(doings) and not doings[0] & doings[1] and both_can


def _featured(noun: Token) -> bool:
    """An adjective or a "with" phrase of its own ("a brown dog", "a bed with stacked pillows")."""
    return any(child.dep_ == "amod" or (child.dep_ == "prep" and child.lower_ == "with") for child in noun.children)
