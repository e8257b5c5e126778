"""Words tied to the subject an addition joins: those that refuse the join, and the one thing it rides.

Joining a second thing to the subject breaks a word that named the subject alone ("a zebra and a giraffe have
its nose", "a man and a woman ... with his skis": whose?), so `points_back` refuses such joins: "it", "its" and
"itself" (they may name any subject), a being's "his", "him", "her" or "he", "both" ("two men who are both"
would count three), a relative word that is not the subject of a clause on the joined subject ("a cake that a
man cuts"). A clause whose subject the relative word is has its verb made plural (`relative_agreement`: "A cat
that is laying on a couch" -> "A cat and a dog that are laying on a couch").
A plural subject keeps "each other" and "themselves" ("Two zebras and a giraffe walk along close to each
other"). Making such pronouns plural ("with their heads") was tried and dropped: of 17 judged outputs, 3 were
errs (a reflexive of another clause's subject, "the guest enjoys themselves"; "their kites is"; "making their
ways") and 3 absurd (one bottle up to two mouths). The one thing a person rides or throws becomes one each
(`own_object_edits`). `verb_agreement` makes the subject's verb plural.
"""
from __future__ import annotations

import functools
from collections import Counter

from spacy.tokens import Token

from backend.perturb.caption_stats import SEP, shipped
from backend.perturb.core import Edit
from backend.perturb.inflect import fit_case, pluralize, verb_form
from backend.perturb.lexicon import _synsets, lexicon
from backend.perturb.lists import one_object_verb
from backend.perturb.nouns import animacy, is_physical

# Words that may name any subject ("who are both sitting").
ANY_REFERENCES = frozenset({"it", "its", "itself", "both"})
# Words naming a plural subject, which still name it once a thing joins it ("each other", "themselves").
GROUP_REFERENCES = frozenset({"each", "themselves"})
# A being's pronouns: "his" or "her" cannot point back to a thing ("a truck parked by a man and his dog").
BEING_PRONOUNS = frozenset({"he", "his", "him", "himself", "she", "her", "herself"})
# Relative words: a relative clause on the subject keeps its singular verb ("a cat and a dog that is").
RELATIVE_WORDS = frozenset({"that", "which", "who"})
PLURAL_VERBS = {"is": "are", "was": "were", "has": "have", "does": "do"}


def _countable_thing(lemma: str) -> bool:
    """A thing or a body part WordNet knows as a noun ("skateboard"), which each person may have one of; not a
    misspelling ("ride a big")."""
    senses = _synsets(lemma, "NOUN")
    return bool(senses) and (senses[0].lexname() == "noun.body" or is_physical(lemma))


def points_back(subject: Token, noun: Token, in_front: bool = False) -> bool:
    """A word of the caption that may point back to the subject once a thing joins `noun` (see the module
    docstring). A thing joined `in_front` of the subject leaves the phrases on its right to it, and what they
    say of it ("A sandwich and a pizza with tomatoes on it")."""
    kind, plural, doc = animacy(noun), noun.tag_ == "NNS", noun.doc
    own = {t.i for c in noun.children if c.i > noun.i and c.dep_ != "acl" for t in c.subtree} if in_front else set()
    for token in [token for token in doc if token.i not in own]:
        word = token.lower_
        if word in ANY_REFERENCES or (word in GROUP_REFERENCES and not plural) or (
                word in BEING_PRONOUNS and kind is not None):
            return True
        elsewhere = token.head.dep_ == "relcl" and token.head.head not in (subject, noun)  # "a bus by a man who"
        if word in RELATIVE_WORDS and token.dep_ != "det" and not elsewhere and not is_relative_subject(token):
            return True
    return False


def is_relative_subject(token: Token) -> bool:
    """A relative word that is the subject of its clause ("a cat that is laying"): the clause's verb agrees with
    whatever the clause hangs on, so `relative_agreement` can make it plural."""
    return token.lower_ in RELATIVE_WORDS and token.dep_ in ("nsubj", "nsubjpass") and token.head.dep_ == "relcl"


def relative_clauses(token: Token) -> list[Token]:
    """The verbs of the relative clauses on `token` whose subject is a relative word ("a cat that is laying")."""
    return [c for c in token.children if c.dep_ == "relcl" and c.i > token.i
            and any(is_relative_subject(w) for w in c.children)]


def relative_agreement(caption: str, subject: Token, noun: Token) -> list[Edit] | None:
    """Edits making plural the verbs of the relative clauses on the joined subject whose subject is the relative
    word: "A cat that is laying" -> "A cat and a dog that are laying"; None where one cannot be told."""
    edits: list[Edit] = []
    for verb in [verb for token in {subject, noun} for verb in relative_clauses(token)]:
        found = verb_agreement(caption, next(w for w in verb.children if is_relative_subject(w)))
        if found is None:
            return None
        edits += found
    return edits


def own_object_edits(verbs: list[Token]) -> list[Edit] | None:
    """Edits giving each person joined to the subject a thing of their own where the subject rides, throws or
    swings one (`lists.ONE_OBJECT_VERBS`): "A man riding a skateboard" -> "A man and a woman riding
    skateboards", as SugarCrepe's "A young lady and a boy are swinging tennis racquets"; a second rider of the
    one skateboard would be absurd. [] where no verb takes one object or its objects are a bare plural
    ("ride bikes"), None where its object is not a plain "a/an" noun ("the face of a wave", "his kite", "a pair
    of skis")."""
    edits: list[Edit] = []
    for verb in [verb for verb in verbs if one_object_verb(verb)]:
        thing = next(c for c in verb.children if c.dep_ == "dobj")
        articles = [c for c in thing.children if c.dep_ == "det"]
        if thing.tag_ == "NNS" and not articles and not any(c.i > thing.i for c in thing.children):
            continue  # "Two men ride bikes": one each already
        if (thing.tag_ != "NN" or not thing.is_alpha or thing.lower_.endswith("s") or len(articles) != 1
                or articles[0].lower_ not in ("a", "an") or any(c.i > thing.i for c in thing.children)
                or thing.lemma_.lower() in lexicon().mass_nouns or not _countable_thing(thing.lemma_.lower())):
            return None  # "Two men ride a big": a misspelt "bike" has no plural
        article = articles[0]
        after = thing.doc[article.i + 1]
        edits += [Edit(thing.doc.text[article.idx:after.idx], "", article.idx, after.idx),
                  Edit(thing.text, pluralize(thing.text), thing.idx, thing.idx + len(thing))]
    return edits


def can_be_verb(token: Token) -> bool:
    return bool(_synsets(token.lemma_.lower(), "VERB"))


def _singular(verb: Token) -> bool:
    """A verb in the singular present, itself or through its auxiliary ("is standing")."""
    return verb.tag_ == "VBZ" or any(c.dep_.startswith("aux") and c.tag_ == "VBZ" for c in verb.children)


def _same_in_plural(noun: Token) -> bool:
    """"sheep", "deer", "fish": a plural tag says nothing, the verb says how many ("The sheep ... stands"); "people"
    is plural whatever its verb."""
    return pluralize(noun.lower_) == noun.lower_


def _clause_between(subject: Token, verb: Token) -> bool:
    """A finite verb with a noun subject of its own stands between the subject and the verb found for it: the
    parse hung the subject on another clause's verb ("A sign with the word pub sits on a wall and underneath it
    on a table is a blender": "sits" is the sign's, "is" the blender's)."""
    return any(t.tag_ in ("VBZ", "VBD") and any(c.dep_ in ("nsubj", "nsubjpass") and c.pos_ in ("NOUN", "PROPN")
                                                 for c in t.children)
               for t in subject.doc[subject.i + 1 : verb.i])


def _hidden_verb(token: Token) -> bool:
    """A plural noun that may be a singular verb with its preposition after it ("rides atop", "looks in"), and
    that the caption counts read as a verb more often than as a noun (`_seldom_a_noun`: "taking pictures on" is a
    noun, "flying a kite with two strings on" too)."""
    after = token.nbor(1) if token.i + 1 < len(token.doc) else None
    return (token.tag_ == "NNS" and can_be_verb(token) and after is not None and after.pos_ == "ADP"
            and after.lower_ != "of" and _seldom_a_noun(token.lemma_.lower()))


def _seldom_a_noun(lemma: str) -> bool:
    """The counts read `lemma` as a verb (a subject's or an object's) more often than as a noun: "look" 174 times
    to 22, "ride" 705 to 17, but "string" 2 to 14. spaCy misreads a verb as a noun in a share of the captions it
    counts, so a bare count of nouns grows with the text counted; this ratio does not."""
    return _verb_uses().get(lemma, 0) > shipped().nouns.get(lemma, 0)


@functools.cache
def _verb_uses() -> Counter[str]:
    stats, uses = shipped(), Counter[str]()
    for pair, count in stats.nsubj.items():
        uses[pair.split(SEP)[1]] += count
    for pair, count in stats.dobj.items():
        uses[pair.split(SEP)[0]] += count
    return uses


def verb_agreement(caption: str, subject: Token) -> list[Edit] | None:
    """Edits making the subject's verb plural ("A cat is" -> "A cat and a dog are"); [] when none is needed
    (a plural subject, a past tense, no verb), None when the verb cannot be told."""
    if subject.dep_ != "ROOT" and not can_be_verb(subject.head):
        return None  # "An old doctors office": a noun read as the verb
    if subject.dep_ == "ROOT" and any(_hidden_verb(t) for t in subject.doc[subject.i + 1:]):
        return None  # "The young girl wearing red and black rides atop the pony": "rides" read as a noun
    if subject.dep_ == "ROOT" or (subject.tag_ == "NNS" and not _same_in_plural(subject)):
        return []
    verb = subject.head
    finite = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i] or [verb]
    first = finite[0]
    if any(c.tag_ == "VBZ" and c.dep_ == "dep" for c in verb.children):
        return None  # "This computer set up has": "set" misread as the verb, "has" left singular
    if _clause_between(subject, first):
        return None  # "A sign with the word pub sits on a wall and underneath it ... is": "is" is not the sign's
    if first.i > 0 and verb.doc[first.i - 1].tag_ == "DT":
        return None  # "A man throwing a frisbee as another looks on": "another" is the verb's subject
    if first is verb and verb.tag_ in ("VBG", "VBN"):
        return []  # "A bear walking toward a rock": a participle, no finite verb to agree
    if first.tag_ == "VBD" and first.lower_ != "was":
        return []
    if first.tag_ == "MD":
        return []
    if first.tag_ == "VBP" or first.lower_ in ("are", "were"):
        return []  # "A herd of sheep are grazing": the verb is plural already
    if (first.tag_ != "VBZ" and first.lower_ != "was") or first.lower_.startswith("'"):
        return None  # a clitic ("'s") may be a misspelt possessive: "sitting in it's back" made "itbe back"
    if any(c.dep_ == "conj" and _singular(c) for c in verb.children) or any(
            t.dep_ == "conj" and t.tag_ == "NNS" and not list(t.children) and can_be_verb(t) for t in verb.doc):
        return None  # "A cat sits ... and watches", "has skis and is standing": a second verb to make plural
    if first.lower_ not in PLURAL_VERBS and verb_form(first.lemma_.lower(), "VBZ") != first.lower_:
        return None  # a lemma that does not give the verb back: "rides" lemmatized "rid" made "rid atop"
    plural = PLURAL_VERBS.get(first.lower_) or verb_form(first.lemma_.lower(), "VBP")
    after = fit_case(plural, first.text, at_sentence_start=bool(first.is_sent_start))
    return [Edit(caption[first.idx:first.idx + len(first)], after, first.idx, first.idx + len(first))]
