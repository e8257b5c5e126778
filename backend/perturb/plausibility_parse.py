"""Reading a parse for the plausibility rules: who does a verb, what a noun names, and the record of a broken rule.

Shared by `plausibility` (agents, weights, objects) and `selection` (which
things fit which places, verbs and fillers), so both read a caption alike.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Token

from backend.perturb.nouns import ANIMAL, PERSON, first_sense_ancestors, noun_class, noun_key, noun_senses, referent

# Animals larger than a person: one on top of (or riding) someone is absurd.
LARGE_ANIMALS = frozenset("""
    horse pony cow bull ox cattle elephant giraffe zebra bear camel donkey mule buffalo bison moose elk rhino hippo
    llama
""".split())


def is_under(key: str, synsets: frozenset[str]) -> bool:
    """Is what `key` usually names one of `synsets`, or a kind of one?"""
    return bool(first_sense_ancestors(key) & synsets)


DRINK_VERBS = frozenset({"drink", "sip", "gulp", "slurp"})
EATING_VERBS = frozenset({"eat", "bite", "chew", "munch", "nibble"})
DRINK_VESSELS = frozenset({"cup", "glass", "bottle", "mug", "can", "bowl", "straw", "jug", "pitcher", "flask",
                           "thermos", "carton"})
_DRINK_SYNSETS = frozenset(["beverage.n.01", "liquid.n.01", "fluid.n.02", "milk.n.01", "water.n.06"])


def is_drink(noun: Token) -> bool:
    """A beverage or liquid, or a vessel one drinks from ("a cup", "a bottle of water"); a word WordNet does not know
    counts as one (the rules err towards plausible)."""
    key = noun_key(referent(noun))
    if key in DRINK_VESSELS:
        return True
    return not first_sense_ancestors(key) or is_under(key, _DRINK_SYNSETS)


@functools.lru_cache(maxsize=8192)
def sense_ancestors(key: str) -> tuple[frozenset[str], ...]:
    """`first_sense_ancestors` for every noun sense of `key`, most frequent first."""
    return tuple(frozenset({sense.name()} | {s.name() for s in sense.closure(lambda synset: synset.hypernyms())})
                 for sense in noun_senses(key))


def some_sense_under(key: str, synsets: frozenset[str]) -> bool:
    """Can `key` name one of `synsets`, or a kind of one, in any sense ("hot dog" is first a show-off)?"""
    return any(names & synsets for names in sense_ancestors(key))


Span = tuple[int, int]


@dataclass(frozen=True)
class Violation:
    """A rule broken by one predicate: `words` name the nouns (and verb)
    for people, `spans` are the character spans of those tokens."""

    rule: str
    predicate: str
    words: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()

    def touches(self, changed: Sequence[Span]) -> bool:
        """Does one of its tokens overlap a changed span? A deletion (an
        empty span) touches the characters on either side."""
        for c_start, c_end in changed:
            if c_start == c_end:
                c_start, c_end = c_start - 1, c_end + 1
            if any(start < c_end and c_start < end for start, end in self.spans):
                return True
        return False

    def __str__(self) -> str:
        return f"{self.rule}: {' / '.join(self.words)} ({self.predicate})"


def kind_of(token: Token) -> str:
    """`noun_class` of what `token` stands for: in "a group of sheep" the
    sheep, in "a photo of a dog eating" the dog, who eats (`referent`)."""
    return noun_class(referent(token))


def is_passive(verb: Token) -> bool:
    """"a pizza being eaten", "a pizza eaten by": the subject is the patient."""
    if any(child.dep_ in ("nsubjpass", "auxpass") for child in verb.children):
        return True
    return verb.tag_ == "VBN" and verb.dep_ in ("acl", "relcl")


def is_linking(verb: Token) -> bool:
    """"looks incredible", "looks like a dog", "used to have": no action is done."""
    return any(child.dep_ in ("acomp", "attr", "oprd") or (child.dep_ == "prep" and child.lower_ == "like")
               or (child.dep_ == "xcomp" and any(grand.lower_ == "to" for grand in child.children))
               for child in verb.children)


def _enclosing(noun: Token) -> tuple[Token, ...]:
    """`noun` and the nouns it sits inside, for a participle the parser hung
    on it: in "a man in black shorts playing tennis" spaCy attaches
    "playing" to "shorts", but it may as well describe the man."""
    found, node = [noun], noun
    while node.dep_ in ("pobj", "dobj", "conj", "appos"):
        parent = node.head
        while parent.pos_ in ("ADP", "ADV") and parent.head != parent:  # "next to", "in front of"
            parent = parent.head
        if parent.pos_ in ("VERB", "AUX"):
            return tuple(found) + tuple(token for option in agent_options(parent) for token in option)
        if parent.pos_ not in ("NOUN", "PROPN", "PRON") or parent == node:
            break
        found.append(parent)
        node = parent
    return tuple(found)


def _coloured_subject(subject: Token) -> tuple[Token, ...]:
    """The subject, or the noun spaCy joined to a colour it took for the subject: "Brown and black cow sitting on
    the couch" has "Brown" for subject and "cow" for its conjunct."""
    if subject.pos_ != "ADJ":
        return (subject,)
    return tuple(conj for conj in subject.conjuncts if conj.pos_ == "NOUN") or (subject,)


def agent_options(verb: Token) -> list[tuple[Token, ...]]:
    """Who does `verb`, one tuple per agent holding every noun it may be.

    The active subject, or the "by" phrase of a passive, is certain (one
    noun). The noun a participle or relative clause hangs on is a guess, so
    the nouns enclosing it come too (see `_enclosing`). "sitting and
    eating", "trying to eat", "staring while sitting": the agent of the
    verb it hangs off.
    """
    if verb.dep_ != "xcomp" and any(child.dep_ == "aux" and child.lower_ == "to" for child in verb.children):
        return []  # "a sandwich to eat": the noun is eaten
    if is_passive(verb):
        return [(obj,) for agent in verb.children if agent.dep_ == "agent"
                for obj in agent.children if obj.dep_ == "pobj"]
    for child in verb.children:
        if child.dep_ == "nsubj":
            relative = child.tag_ in ("WP", "WDT") and verb.dep_ == "relcl"
            return [_enclosing(verb.head)] if relative else [_coloured_subject(child)]
    if verb.dep_ in ("acl", "relcl") and verb.head.pos_ in ("NOUN", "PROPN"):
        return [_enclosing(verb.head)]
    if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.pos_ in ("VERB", "AUX") and verb.head != verb:
        return agent_options(verb.head)
    return []


def living(option: tuple[Token, ...]) -> tuple[Token, ...]:
    """The people and animals among an agent's possible nouns, where it has some: "A street scene with a horse
    pushing a white carriage" gives the verb the horse or the scene, "A woman in a dress sitting on a bench"
    the dress or the woman, and a scene or a dress does nothing."""
    return tuple(noun for noun in option if kind_of(noun) in (PERSON, ANIMAL)) or option


def make_violation(rule: str, predicate: str, nouns: Sequence[Token], verb: Token | None) -> Violation:
    """A Violation naming `nouns` (and the verb) for people, with their spans."""
    tokens = [*nouns, verb] if verb is not None else list(nouns)
    words = tuple(noun_key(referent(noun)) for noun in nouns) + ((verb.lower_,) if verb is not None else ())
    return Violation(rule, predicate, words, tuple((token.idx, token.idx + len(token)) for token in tokens))


def _placed_object(prep: Token) -> Token | None:
    """The object of a preposition, through "top of": "sheep" in "on top of a sheep"."""
    obj = next((child for child in prep.children if child.dep_ == "pobj"), None)
    if obj is not None and obj.lower_ == "top":
        inner = next((child for child in obj.children if child.dep_ == "prep" and child.lower_ == "of"), None)
        obj = next((child for child in inner.children if child.dep_ == "pobj"), None) if inner else None
    return obj


def placements(doc: Doc, prepositions: frozenset[str]) -> list[tuple[tuple[Token, ...], Token, str]]:
    """(what is placed, where, preposition) for each of `prepositions`: "X on Y",
    "X sitting on top of Y". What a preposition places is the noun it hangs
    on, or the agent of its verb or copula (one tuple of the nouns it may be)."""
    return [placement for placement in _every_placement(doc) if placement[2] in prepositions]


@functools.lru_cache(maxsize=256)
def _every_placement(doc: Doc) -> tuple[tuple[tuple[Token, ...], Token, str], ...]:
    """`placements` for every preposition, read once per parse: a dozen rules ask about each negative, and
    walking the parse again for each was a tenth of the engine's time (spaCy makes a new Token at every step)."""
    pairs: list[tuple[tuple[Token, ...], Token, str]] = []
    for token in doc:
        if token.dep_ == "prep" and (where := _placed_object(token)) is not None:
            head = token.head
            located = ([(head,)] if head.pos_ in ("NOUN", "PROPN")
                       else agent_options(head) if head.pos_ in ("VERB", "AUX") else [])
            pairs += [(thing, where, token.lower_) for thing in located]
    return tuple(pairs)
