"""Whole-phrase object swaps: two people, two animals, a group and a person, or two things of one kind trade their
phrases, determiners and adjectives with them, and the verbs are made to agree.

"People sitting in the stands watching a man" -> "A man sitting in the stands watching people"; "a male skier ...
a young girl" -> "a young girl ... a male skier" (not "a male girl"); "A group of people watching a woman cutting a
cake" -> "A woman watching a group of people cutting a cake"; "A motorcycle parked behind two vans" -> "Two vans
parked behind a motorcycle". object_swaps.py decides which two nouns may trade places; this module says which
phrases move and how the verbs then read.
"""
from __future__ import annotations

from spacy.tokens import Span, Token

from backend.perturb.core import Edit, Request, swapped
from backend.perturb.counts import agreement_edits
from backend.perturb.nouns import ANIMAL, ANIMAL_NOUNS, PERSON, PERSON_NOUNS, noun_key
from backend.perturb.object_kinds import kind, preposition
from backend.perturb.parse_reading import SIMPLE_NP_DEPS
from backend.perturb.replace import symmetric_between

# Groups that swap whole with a person or an animal ("a group of people watching a woman").
LIVING_GROUPS = frozenset({"group", "crowd", "herd", "flock", "team", "family", "bunch", "pack", "troop"})


def living_group(noun: Token) -> Token | None:
    """The people or animals a group names ("people" in "a group of people"): the group swaps as one phrase."""
    if noun.lemma_.lower() not in LIVING_GROUPS:
        return None
    members = [obj for prep in noun.children if prep.dep_ == "prep" and prep.lower_ == "of"
               for obj in prep.children if obj.dep_ == "pobj"]
    return members[0] if members and noun_key(members[0]) in PERSON_NOUNS | ANIMAL_NOUNS else None


def _phrase(noun: Token) -> Span | None:
    """The noun with its determiner, number and adjectives ("two little girls"), when nothing else precedes it."""
    words = noun.doc[noun.left_edge.i : noun.i + 1]
    if any(word.dep_ not in SIMPLE_NP_DEPS or word.head.i != noun.i for word in words[:-1]):
        return None
    member = living_group(noun)
    if member is None:
        return words
    # "a group of people", whole, when no verb agrees with it ("a group of people are" reads as plural)
    of = _phrase(member) if not _agreement(noun) and member.head.i == noun.i + 1 else None
    return noun.doc[words.start : member.i + 1] if of is not None and of.start == noun.i + 2 else None


def _agreement(noun: Token) -> bool:
    """A verb agrees with the noun ("a man watches", "people who are"): a swap of another number breaks it."""
    verb = noun.head
    if noun.dep_ in ("nsubj", "nsubjpass"):
        forms = [verb, *(child for child in verb.children if child.dep_ in ("aux", "auxpass"))]
        return any(form.tag_ in ("VBZ", "VBP") or form.lower_ in ("was", "were") for form in forms)
    return any(child.dep_ == "relcl" for child in noun.children)


def _phrase_pair(first: Token, second: Token) -> tuple[Span, Span] | None:
    """Whole phrases for two nouns of one kind whose number, determiner or modifiers do not suit a swap of the
    nouns alone ("People sitting in the stands watching a man" -> "A man sitting in the stands watching people";
    "a male skier ... a young girl" -> "a young girl ... a male skier", not "a male girl"), where no pronoun in
    the caption would then point at the wrong one. Curated people and animals ("bleachers" is a person in
    WordNet), or two things of one kind one behind the other ("a motorcycle parked behind two vans" -> "two vans
    parked behind a motorcycle"), neither in a list nor after "of" ("a group of a woman"), and no change of number
    that puts many on one thing ("a man on a skateboard" -> "food vendors on a skateboard")."""
    if any(token.tag_ in ("PRP", "PRP$") for token in first.doc):
        return None
    living = all(noun_key(living_group(noun) or noun) in PERSON_NOUNS | ANIMAL_NOUNS for noun in (first, second))
    if not (living or _things_in_front(first, second)) or not all(free_standing(noun) for noun in (first, second)):
        return None
    if _many(first) != _many(second) and (_on_one_thing(first) or _on_one_thing(second)):
        return None  # "a man on a skateboard ... food vendors" -> "food vendors on a skateboard"
    phrases = _phrase(first), _phrase(second)
    return (phrases[0], phrases[1]) if phrases[0] is not None and phrases[1] is not None else None


def _many(noun: Token) -> bool:
    return noun.tag_ == "NNS" or living_group(noun) is not None


def _on_one_thing(noun: Token) -> bool:
    """On or riding one thing ("a man on a skateboard", "a woman on a cell phone"): many would not fit there."""
    return not _many(noun) and any(obj.dep_ == "pobj" and obj.tag_ == "NN" for prep in noun.children
                                   if prep.dep_ == "prep" and prep.lower_ == "on" for obj in prep.children)


def _things_in_front(first: Token, second: Token) -> bool:
    """Two things of one kind, not food, the later one behind or in front of the earlier or a verb's object
    ("a motorcycle parked behind two vans"): around, on, in, next to or "covered in", the swap turns absurd
    ("a small table is sitting around some red chairs", "berries covered in a cake") or says the same."""
    later = second if second.i > first.i else first
    where = later.dep_ == "dobj" or (later.dep_ == "pobj" and preposition(later.head) in ("behind", "in front of"))
    return (kind(first) == kind(second) and kind(first) not in {PERSON, ANIMAL, "food"} and where
            and not symmetric_between(first.doc, first, second))


def free_standing(noun: Token) -> bool:
    return (noun.dep_ != "conj" and not any(child.dep_ in ("conj", "cc") for child in noun.children)
            and not (noun.dep_ == "pobj" and noun.head.lower_ == "of"))


def phrase_edits(request: Request, first: Token, second: Token) -> list[Edit] | None:
    """Whole phrases swapped, with the verbs made to agree ("this lady is using controllers and those men are
    watching" -> "those men are using controllers and this lady is watching"); None when no phrase pair fits."""
    phrases = _phrase_pair(first, second)
    if phrases is None:
        return None
    if first.tag_ == second.tag_ or not (_agreement(first) or _agreement(second)):
        return swapped(request, *phrases)
    agreement = [agreement_edits(request, first, second.tag_ == "NNS"),
                 agreement_edits(request, second, first.tag_ == "NNS")]
    if any(edits is None for edits in agreement):
        return None
    return swapped(request, *phrases) + [edit for edits in agreement if edits for edit in edits]
