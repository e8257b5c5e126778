"""Where a joined addition goes: the caption's subject noun, and the front of its phrase when a phrase on its right
must stay with it ("A cargo van with a chip sign is parked" -> "A bus and a cargo van with a chip sign are
parked"). Read by `addition`'s subject joins; who may join is `addition_partners`', words that point back are
`addition_references`'."""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_partners import PERSON_PREPOSITIONS, compound_key, person_described
from backend.perturb.addition_references import is_relative_subject, relative_clauses
from backend.perturb.kindred import KIND_COMPOUNDS
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import find_phrases
from backend.perturb.nouns import animacy
from backend.perturb.parse_reading import COLLECTIVE_NOUNS, PORTION_NOUNS
from backend.perturb.units import is_hyphenated

JOIN_FOLLOWERS = frozenset({"VERB", "AUX", "ADP", "ADV", "PUNCT", "SCONJ", "PART"})
# Words saying the subject is alone: "a lone bicycle and a truck" contradicts itself.
ALONE = frozenset({"lone", "single", "only", "solitary", "alone"})
# Words saying a place holds nothing: they bar a join only on the joined noun ("an empty bench and a chair"), not
# elsewhere ("a train and a tram at an empty train station").
EMPTY = frozenset({"empty", "deserted", "vacant"})
# Nouns that show what follows their "of" in a caption without a verb: "A display of pizzas and a salad".
DEPICTIONS = frozenset({"view", "picture", "photo", "photograph", "image", "display", "closeup", "close", "shot"})
PLACE_PREPOSITIONS = frozenset({"on", "in", "at", "near", "by", "beside", "inside", "atop"})
# What may stand before the noun of a phrase a thing joins in front of.
PREMODIFIER_DEPS = frozenset({"det", "amod", "compound", "nummod", "poss", "advmod", "quantmod", "nmod", "punct"})


def subject_noun(doc: Doc) -> tuple[Token, Token, Token | None] | None:
    """(subject, noun the addition joins) of the caption's first subject or head noun (or what "There is"
    names), through a group's or a portion's "of" ("a herd of sheep" -> sheep, "Two slices of pizza" -> pizza, but
    not "the hand of a person"), or a depiction's
    in a caption with no verb ("A picture of a cat sitting"). None where either is already a list or the noun
    part of a listed compound (but those `kindred.KIND_COMPOUNDS` names by their noun), and unless the joined
    noun ends its phrase but for a participle ("A sheep standing in a field") or a predicative adjective ("asleep"),
    or, for a thing or an animal, a
    place phrase ("A dog on a couch"), so "and a cow" joins it and nothing else ("a man and a dog in a white
    shirt" would move the shirt). Where another phrase is on its right, the third item is the word before which
    the addition goes instead, with "and" after it ("A cargo van with a chip sign is parked" -> "A bus and a
    cargo van with a chip sign are parked": the phrase stays with the nearer noun); else None. Words that point
    back to the subject are `addition_references`'."""
    subject = next((t for t in doc if t.dep_ in ("ROOT", "nsubj", "nsubjpass")), None)
    if subject is not None and any(c.dep_ == "expl" for c in subject.children):  # "There is a dog": the dog
        subject = next((c for c in subject.children if c.dep_ == "attr" and c.i > subject.i), None)
    if subject is None or subject.tag_ not in ("NN", "NNS") or not subject.is_alpha:
        return None
    if any(token.lower_ in ALONE for token in doc):
        return None
    noun = subject
    frames = DEPICTIONS if subject.dep_ == "ROOT" else frozenset()  # "A picture of a cat is": the verb stays
    while noun.lemma_.lower() in COLLECTIVE_NOUNS | PORTION_NOUNS | frames and (of := _of_phrases(noun)):
        objects = [c for c in of[0].children if c.dep_ == "pobj" and c.tag_ in ("NN", "NNS")]
        if not objects or (noun.lemma_.lower() in PORTION_NOUNS and any(c.dep_ == "det" for c in objects[0].children)):
            return None  # "A piece of a broken car and a bike": a part of one thing, which the join would share
        noun = objects[0]
    multiword, front = find_phrases(doc, lexicon().multiword_nouns, by_lemma=True), None
    for token in {subject, noun}:
        right = [c for c in token.children if c.i > token.i and not c.is_punct
                 and not (c.dep_ == "prep" and c.lower_ == "of" and token is not noun)
                 and not (token is noun and person_described(noun) and c.lower_ in PERSON_PREPOSITIONS)
                 and not (token is noun and _placed_there(noun, c))]
        if any(c.dep_ in ("conj", "cc") for c in token.children) or token.dep_ == "conj":
            return None
        if any(not _describes(c) and c not in relative_clauses(token) for c in right):
            front = front_of(subject, noun)
            if front is None:
                return None
    if any(t.lower_ in EMPTY for t in [*subject.children, *noun.children]):
        return None
    if any(span.start <= noun.i < span.end and compound_key(span) not in KIND_COMPOUNDS for span in multiword) or (
            not noun.is_alpha or is_hyphenated(noun)):
        return None
    after = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
    if after is not None and after.pos_ not in JOIN_FOLLOWERS and not is_relative_subject(after) and not (
            after.head.i == noun.i and _describes(after)):
        return None  # "An old doctors office": the noun was a modifier, not the head
    return subject, noun, front


def _describes(child: Token) -> bool:
    """A word on the noun's right that a joined thing shares: a participle ("A sheep standing", and "standing"
    that spaCy tagged a noun) or a predicative adjective ("A big brown bear asleep in a hammock")."""
    if child.dep_ == "acl":
        return child.tag_ in ("VBG", "VBN") or (child.tag_ == "NN" and child.lower_.endswith("ing"))
    return child.dep_ == "amod" and child.tag_ == "JJ" and not list(child.children)  # not "A vase full of flowers"


def _of_phrases(noun: Token) -> list[Token]:
    """The "of" phrases on the noun's right, or on its "up": "a close up of sheep" hangs "of" on "up"."""
    heads = [noun, *(c for c in noun.children if c.lower_ == "up" and c.i == noun.i + 1)]
    return [c for head in heads for c in head.children if c.dep_ == "prep" and c.lower_ == "of" and c.i > noun.i]


def front_of(subject: Token, noun: Token) -> Token | None:
    """The first word of the noun phrase a thing may join in front of: the depicted noun's, else the subject's
    ("A display of a sandwich and different pizzas", "A cow and a herd of sheep"). None where the phrase has more
    than modifiers before its noun (spaCy hung a clause on it: "Two adult hands touching cell phones"), or where
    the caption has a verb that a subject it reads as verbless would leave singular ("A bench and a sign with the
    word Pub hangs"), or an apposition counts the subject's members ("2 women, one holding a cake, the other")."""
    head = noun if subject.lemma_.lower() in DEPICTIONS else subject
    first = head.left_edge
    if first.tag_ in ("EX", "RB", "IN", "UH"):
        return None  # "There white cows in grassy area": a misspelt "Three" read as "There"
    if any(t.dep_ not in PREMODIFIER_DEPS for t in head.doc[first.i:head.i]):
        return None
    if any(c.dep_ == "appos" for c in head.children):
        return None
    if subject.dep_ == "ROOT" and any(t.tag_ == "VBZ" and not any(a.dep_ == "relcl" for a in [t, *t.ancestors])
                                      for t in head.doc):
        return None
    return first


def _placed_there(noun: Token, child: Token) -> bool:
    """A thing or an animal with a place phrase on its right ("a sandwich on a plate", "a dog on a couch"): a
    thing joined to it is there too ("a sandwich and a salad on a plate"), and no look of it moves."""
    return animacy(noun) != "person" and child.dep_ == "prep" and child.lower_ in PLACE_PREPOSITIONS and not any(
        grandchild.dep_ == "prep" for object_ in child.children for grandchild in object_.children)
