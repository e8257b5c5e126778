"""Where a caption lists two things ("a cat and a dog", "broccoli and noodles"), and how a third joins the list.

SugarCrepe's add_obj negatives often lengthen a list ("A tram, bus, and car make their way through town",
"A plate is filled with broccoli, noodles, and carrots"): the list is plural already, so no verb changes, and the
new member takes the form of the one after "and" (an article, a bare plural, or the shared article of "a cat and
dog"). Only plain two-member lists are read: the first member ends right before "and" (nothing hangs on its right
that the new member would steal: "a man in a hat and a woman"), and the second is a noun with nothing but an
article, adjectives or compounds before it, so the form it gives is the list's. spaCy often hangs the second member
of "with X and Y" on what X hangs on ("a plate topped with broccoli and a dumpling": "dumpling" a conjunct of
"topped"); where both are things and Y ends the caption's phrase, X and Y are read as the list they are.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from spacy.tokens import Doc, Token

from backend.perturb.inflect import verb_form
from backend.perturb.nouns import animacy

Form = Literal["article", "plural", "bare"]
LIST_DETERMINERS = frozenset({"a", "an"})
MODIFIER_DEPS = frozenset({"det", "amod", "compound", "nummod"})


@dataclass(frozen=True)
class ListSite:
    """`offset`: where ", <new member>" is inserted (right after the first member of two, the last but one of a
    longer list); `members`: the nouns."""

    offset: int
    form: Form
    members: tuple[Token, ...]


def _form(first: Token, second: Token) -> Form | None:
    """How the new member is written: like the second member ("a dog" -> "a rabbit", "noodles" -> "carrots"),
    or bare singular where the two share the first's article ("A cat and dog" -> "A cat, rabbit and dog")."""
    determiners = [c.lower_ for c in second.children if c.dep_ == "det"]
    if determiners:
        return "article" if determiners[0] in LIST_DETERMINERS else None
    if second.tag_ == "NNS" and not any(c.dep_ == "det" for c in first.children):
        return "plural"
    first_articles = [c.lower_ for c in first.children if c.dep_ == "det"]
    if second.tag_ == "NN" and first.tag_ == "NN" and first_articles and first_articles[0] in LIST_DETERMINERS:
        return "bare"
    return None


def list_sites(doc: Doc) -> list[ListSite]:
    """Every plain two-member list of nouns in the caption (see the module docstring)."""
    sites = []
    for first in doc:
        if first.tag_ not in ("NN", "NNS") or not first.is_alpha or first.i + 2 >= len(doc):
            continue
        cc = doc[first.i + 1]
        conjuncts = [c for c in first.children if c.dep_ == "conj"] or _misattached_conjunct(first, cc)
        if len(conjuncts) != 1 or cc.lower_ != "and" or cc.head.i not in (first.i, conjuncts[0].head.i):
            continue
        second = conjuncts[0]
        between = doc[cc.i + 1:second.i]
        if second.tag_ not in ("NN", "NNS") or not second.is_alpha or any(
                t.head.i != second.i or t.dep_ not in MODIFIER_DEPS for t in between):
            continue
        if first.dep_ in MODIFIER_DEPS or second.dep_ in MODIFIER_DEPS:
            continue  # "a cheese and pepperoni pizza": the list names a kind, not things
        if any(c.dep_ == "conj" for c in second.children) or first.dep_ == "conj":
            continue  # a longer list, read otherwise
        form = _form(first, second)
        if form is not None:
            sites.append(ListSite(first.idx + len(first), form, (first, second)))
    return sites


def _misattached_conjunct(first: Token, cc: Token) -> list[Token]:
    """The noun after "and" that spaCy hung on what `first` hangs on ("broccoli and a dumpling" in "topped with
    broccoli and a dumpling"): both things (no person or animal, who may be a second subject), `first` the object
    of a verb or a preposition with nothing on its right, the other ending its phrase."""
    later = [c for c in cc.head.children if c.dep_ == "conj" and c.i > cc.i] if cc.dep_ == "cc" else []
    if len(later) != 1 or first.dep_ not in ("pobj", "dobj") or cc.head not in first.ancestors:
        return []
    second = later[0]
    if any(c.i > first.i for c in first.children) or any(c.i > second.i and not c.is_punct for c in second.children):
        return []
    return [second] if all(animacy(noun) is None for noun in (first, second)) else []


def _chain(first: Token) -> list[Token] | None:
    """The members of a list spaCy reads as a chain of conjuncts ("potatoes, carrots and chicken"), or None
    where a member has more on its right than the next one, a comma and "and"."""
    members = [first]
    while conjuncts := [c for c in members[-1].children if c.dep_ == "conj"]:
        nxt = conjuncts[0]
        between = first.doc[members[-1].i + 1:nxt.i]
        if len(conjuncts) > 1 or nxt.tag_ not in ("NN", "NNS") or not nxt.is_alpha or any(
                not (t.is_punct or t.dep_ == "cc" or (t.head.i == nxt.i and t.dep_ in MODIFIER_DEPS)) for t in between):
            return None
        if any(c.i > members[-1].i and c.dep_ not in ("conj", "cc", "punct") for c in members[-1].children):
            return None
        members.append(nxt)
    return members


def long_list_sites(doc: Doc) -> list[ListSite]:
    """Lists of three or more nouns with "and" before the last ("a sink, tub, and toilet"): the new member goes
    after the last but one, in its form ("a sink, tub, rug, and toilet"; "potatoes, carrots, onions and ...")."""
    sites = []
    for first in doc:
        if first.tag_ not in ("NN", "NNS") or not first.is_alpha or first.dep_ in MODIFIER_DEPS | {"conj"}:
            continue
        members = _chain(first)
        if members is None or len(members) < 3 or "and" not in {t.lower_ for t in doc[members[-2].i:members[-1].i]}:
            continue
        middle = members[-2]
        determiners = [c.lower_ for c in middle.children if c.dep_ == "det"]
        form: Form | None = ("article" if determiners[0] in LIST_DETERMINERS else None) if determiners else (
            "plural" if middle.tag_ == "NNS" else "bare")
        if form is not None:
            sites.append(ListSite(middle.idx + len(middle), form, tuple(members)))
    return sites


# Prepositions after which "X and Y" still says where both are ("next to a toilet and a plant"); "on", "in" and
# "under" are left out: "a cat on a couch and a chair" puts it on both.
NEARBY_PREPOSITIONS = frozenset({"near", "by", "beside", "to", "behind", "around"})
# Prepositions that go on describing the noun before them whatever the parse says.
TOPIC_PREPOSITIONS = frozenset({"about", "of", "for", "from"})
# Verbs that take one object at a time: "riding a horse and a cow", "driving a car and a truck", "hit the ball
# and a kite", "reading a book and a clock".
ONE_OBJECT_VERBS = frozenset({"ride", "drive", "fly", "steer", "pilot", "sail", "pull", "tow", "push", "sit", "park",
                              "paddle", "row", "hit", "kick", "throw", "catch", "swing", "read"})


def one_object_verb(verb: Token) -> bool:
    """A verb of `ONE_OBJECT_VERBS`, known by its form too: spaCy lemmatises "riding" as "rid"."""
    return verb.lemma_.lower() in ONE_OBJECT_VERBS or any(
        verb_form(lemma, verb.tag_) == verb.lower_ for lemma in ONE_OBJECT_VERBS)


def one_noun_sites(doc: Doc, is_person: Callable[[Token], bool]) -> list[Token]:
    """Nouns a second one may join with "and" ("a man holding a phone" -> "... a phone and a camera"): a
    verb's object (not of a verb in `ONE_OBJECT_VERBS`), the object of a preposition in `NEARBY_PREPOSITIONS`
    or of "with" after a verb or a person, that ends its phrase (nothing hangs on its right: "a cup of
    coffee" stays whole), heads no compound ("home plate") and is no list member already."""
    sites = []
    for noun in doc:
        if noun.tag_ not in ("NN", "NNS") or not noun.is_alpha or noun.dep_ not in ("dobj", "pobj"):
            continue
        if any(c.i > noun.i or c.dep_ in ("conj", "compound") for c in noun.children):
            continue  # a compound names another thing: "home plate" is no plate to put a cup beside
        head = noun.head
        if noun.dep_ == "dobj" and (head.pos_ != "VERB" or one_object_verb(head)):
            continue
        if noun.dep_ == "pobj" and head.dep_ == "agent":
            continue  # "served by a woman": who acts, not where
        if noun.dep_ == "pobj" and head.lower_ not in NEARBY_PREPOSITIONS and not (
                head.lower_ == "with" and (head.head.pos_ == "VERB" or is_person(head.head))):
            continue
        after = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
        if after is not None and after.lower_ in TOPIC_PREPOSITIONS:
            continue  # "a book about the topic": spaCy may hang "about" on the verb, but it belongs to the noun
        if after is None or after.is_punct or after.pos_ in ("ADP", "SCONJ"):
            sites.append(noun)
    return sites
