"""Words tied to the subject an addition joins, made plural with it or refusing the join.

Joining a second thing to the subject breaks a word that named the subject alone ("a zebra and a giraffe have
its nose"). SugarCrepe's own additions make such words plural ("A man is sleeping with his head on a pillow" ->
"A man and a woman are sleeping with their heads on pillows"), and so does `reference_edits`, where the word
can only name the subject: a personal pronoun of a being that is the caption's only being, its possessed thing
made plural too ("their heads": two people have two heads). A plural subject keeps "each other" and
"themselves" ("Two zebras and a giraffe walk along close to each other"). Everything else still refuses the
join: "it" (it may name any thing: "a bird on a table with peels in it"), "both" ("two men who are both" would
count three), "by himself" (the subject was alone), a relative clause on the subject (its verb stays singular:
"a cat and a dog that is"), a pronoun beside another being ("kissing the young woman on top of her head").
The one thing a person rides or throws becomes one each (`own_object_edits`).
"""
from __future__ import annotations

from spacy.tokens import Token

from backend.perturb.core import Edit
from backend.perturb.inflect import fit_case, pluralize, verb_form
from backend.perturb.lexicon import _synsets, lexicon
from backend.perturb.lists import one_object_verb
from backend.perturb.nouns import animacy, is_physical

# Words that may name any subject and have no plural that keeps the meaning.
ANY_REFERENCES = frozenset({"it", "both"})  # "who are both sitting"
# A being's subject pronouns: "they" would need its verb made plural too ("as he holds").
SUBJECT_PRONOUNS = frozenset({"he", "she"})
# Words naming a plural subject, which still name it once a thing joins it ("each other", "themselves").
GROUP_REFERENCES = frozenset({"each", "themselves"})
# A being's pronouns and their plurals; "its" and "itself" name an animal or a baby as often as a thing.
PLURAL_PRONOUNS = {"his": "their", "her": "their", "its": "their", "him": "them", "himself": "themselves",
                   "herself": "themselves", "itself": "themselves"}
OBJECT_PRONOUN_TAGS = frozenset({"PRP"})
# Relative words: a relative clause on the subject keeps its singular verb ("a cat and a dog that is").
RELATIVE_WORDS = frozenset({"that", "which", "who"})
# "by himself": the subject was alone, so no second one may join it.
ALONE_PREPOSITIONS = frozenset({"by"})
PLURAL_VERBS = {"is": "are", "was": "were", "has": "have", "does": "do"}


def _possessed_edit(pronoun: Token) -> list[Edit] | None:
    """The edit making a possessive pronoun's thing plural ("his head" -> "their heads"); [] where it is
    plural already or the pronoun stands alone; None where the plural would change what is said (a counted
    thing, "his head and one paw"; a mass noun; a person, "her date"; a plural misread as singular, "his
    skiis")."""
    owned = pronoun.head
    if pronoun.dep_ != "poss" or owned.tag_ == "NNS":
        return []
    if owned.tag_ != "NN" or not owned.is_alpha or owned.lower_.endswith("s") or any(
            c.dep_ in ("nummod", "conj") for c in owned.children):
        return None
    if owned.lemma_.lower() in lexicon().mass_nouns or animacy(owned) is not None:
        return None
    if not _countable_thing(owned.lemma_.lower()):
        return []  # "making his way" -> "making their way"
    return [Edit(owned.text, pluralize(owned.text), owned.idx, owned.idx + len(owned))]


def _countable_thing(lemma: str) -> bool:
    """A thing or a body part WordNet knows as a noun ("laptop", "head"), which each person has one of; not a
    way or a time ("making his way" -> "making their way"), nor a misspelling ("ride a big")."""
    senses = _synsets(lemma, "NOUN")
    return bool(senses) and (senses[0].lexname() == "noun.body" or is_physical(lemma))


def _pronoun_edits(token: Token) -> list[Edit] | None:
    """The edits making a being's pronoun plural, with what it owns."""
    if token.lower_ == "her" and token.tag_ in OBJECT_PRONOUN_TAGS:
        plural = "them"
    else:
        plural = PLURAL_PRONOUNS[token.lower_]
    owned = _possessed_edit(token) if plural == "their" else []
    if owned is None:
        return None
    after = fit_case(plural, token.text, at_sentence_start=bool(token.is_sent_start))
    return [Edit(token.text, after, token.idx, token.idx + len(token)), *owned]


def _other_being(subject: Token, noun: Token) -> bool:
    """Another person or animal in the caption, whom a pronoun may name instead."""
    return any(t.tag_ in ("NN", "NNS") and t.i not in (subject.i, noun.i) and animacy(t) is not None
               for t in noun.doc)


def reference_edits(subject: Token, noun: Token, in_front: bool = False) -> list[Edit] | None:
    """Edits making the words that point back to the subject plural once a thing joins `noun` (see the module
    docstring); [] where none does, None where one cannot be made plural or may name something else. A thing
    joined `in_front` of the subject leaves the phrases on its right to it, and what they say of it ("A
    sandwich and a pizza with tomatoes on it", "A bench and a hydrant that is sitting in the grass")."""
    kind, plural, doc = animacy(noun), noun.tag_ == "NNS", noun.doc
    own = {t.i for c in noun.children if c.i > noun.i and c.dep_ != "acl" for t in c.subtree} if in_front else set()
    edits: list[Edit] = []
    for token in [token for token in doc if token.i not in own]:
        word = token.lower_
        if word in ANY_REFERENCES or (word in GROUP_REFERENCES and not plural) or (
                word in SUBJECT_PRONOUNS and kind is not None):
            return None
        elsewhere = token.head.dep_ == "relcl" and token.head.head not in (subject, noun)  # "a bus by a man who"
        if word in RELATIVE_WORDS and token.dep_ != "det" and not elsewhere:
            return None
        if word not in PLURAL_PRONOUNS or (kind is None and word not in ("its", "itself")):
            continue  # "his" or "her" cannot point back to a thing
        if kind is None or plural or _other_being(subject, noun):
            return None
        if token.i > 0 and doc[token.i - 1].lower_ in ALONE_PREPOSITIONS:
            return None
        pronoun = _pronoun_edits(token)
        if pronoun is None:
            return None
        edits += pronoun
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


def _can_be_verb(token: Token) -> bool:
    return bool(_synsets(token.lemma_.lower(), "VERB"))


def verb_agreement(caption: str, subject: Token) -> list[Edit] | None:
    """Edits making the subject's verb plural ("A cat is" -> "A cat and a dog are"); [] when none is needed
    (a plural subject, a past tense, no verb), None when the verb cannot be told."""
    if subject.dep_ != "ROOT" and not _can_be_verb(subject.head):
        return None  # "An old doctors office": a noun read as the verb
    if subject.dep_ == "ROOT" or subject.tag_ == "NNS":
        return []
    verb = subject.head
    finite = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i] or [verb]
    first = finite[0]
    if any(c.tag_ == "VBZ" and c.dep_ == "dep" for c in verb.children):
        return None  # "This computer set up has": "set" misread as the verb, "has" left singular
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
    if first.tag_ != "VBZ" and first.lower_ != "was":
        return None
    if any(c.dep_ == "conj" and c.tag_ == "VBZ" for c in verb.children) or any(
            t.dep_ == "conj" and t.tag_ == "NNS" and not list(t.children) and _can_be_verb(t) for t in verb.doc):
        return None  # "A cat sits ... and watches": a second verb to make plural, maybe read as a noun
    plural = PLURAL_VERBS.get(first.lower_) or verb_form(first.lemma_.lower(), "VBP")
    after = fit_case(plural, first.text, at_sentence_start=bool(first.is_sent_start))
    return [Edit(caption[first.idx:first.idx + len(first)], after, first.idx, first.idx + len(first))]
