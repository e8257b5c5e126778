"""Count swaps and same-noun binding swaps (SugarCrepe's swap_att, 40% of it).

* "count": two counted objects trade their numbers, with agreement:
  "Two giraffes and a zebra are standing" -> "A giraffe and two zebras are
  standing"; "A dog is chasing two cats" -> "Two dogs are chasing a cat".
  One kind of object trades counts only where modifiers tell its groups
  apart ("a baby elephant near four adult elephants").
* "same_noun_attribute": two groups of the same kind of object, counted
  differently, trade an attribute: "a black goat and two white goats" ->
  "a white goat and two black goats". With equal counts the swap would say
  the same thing ("a white goat and a black goat"), so it is never made.

Only explicit counts take part ("a", "one", "two" ... "twelve", digits,
"several", "many", "some", "a couple of", and "a group of", "a herd of"...,
which give another noun "several"): "the dogs" or a bare "dogs" has no
number to trade. When a number change would strand a pronoun ("a man with his two
dogs"; a pronoun follows its noun only as `count_checks.pronoun_edits` allows) or
a word that needs a number ("each", "both", "another"), nothing is made.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from backend.perturb.attributes import FAMILY, compound_head, same_object, tradeable, visual_attributes
from backend.perturb.core import Edit, Request, Variant, build, replacement, swapped, take_distinct
from backend.perturb.count_checks import (
    MANY,
    NUMBER_WORDS,
    NUMBERS,
    PLURAL_WORDS,
    may_take,
    preposition_of,
    pronoun_edits,
    swap_outnumbers_sitters,
)
from backend.perturb.inflect import indefinite_article, pluralize, verb_form
from backend.perturb.lexicon import lexicon, wordnet
from backend.perturb.nlp import SUBJECT_DEPS, token_span
from backend.perturb.nouns import (
    DEPICTION_NOUNS,
    PLURALIA_TANTUM,
    is_object_noun,
    is_physical,
    is_place,
    may_name_being,
    noun_key,
)
from backend.perturb.parse_reading import noun_lemma
from backend.perturb.units import is_hyphenated

# Vague plurals; "some" pairs only with one ("some oranges" may be two).
VAGUE = MANY | {"some"}
# Lists of many counts ("two chocolate doughnuts, one strawberry, one
# glaze...") are often elliptical: a count need not belong to the noun.
MAX_COUNTED = 3
# Where a counted noun may stand: a predicate noun ("one is a baby") or an
# apposition has its number fixed by something else.
COUNTABLE_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "conj", "ROOT"})
_AGREEMENT = {"is": "are", "was": "were", "has": "have", "does": "do"}
_AGREEMENT.update({plural: singular for singular, plural in list(_AGREEMENT.items())})
_SINGULAR_FORMS = frozenset({"is", "was", "has", "does"})
# "a couple of people" counts two; "a group of people", "a herd of cows" count several, and give another noun
# "several" ("a cow" -> "several cows"): "a herd of men" would be absurd. Not "a row of" or "a pile of", which
# say how things stand, nor "a team of", which says who they are.
_SEVERAL = ("group", "herd", "flock", "bunch", "crowd", "pack", "fleet")
COUNTING_GROUPS: dict[str, int | str] = {"couple": 2, **dict.fromkeys(_SEVERAL, "several")}
# Plurals whose singular is another word, which spaCy's lemma keeps as it is ("people" -> "people").
_SUPPLETIVE_SINGULARS = {"people": "person"}


@dataclass(frozen=True)
class Counted:
    """A noun with explicit count words: "two" + "giraffes", "a couple of" + "people". `anchor` stands where
    the phrase stands in its clause, and takes its verbs: the noun, or "couple". `said` is how another noun
    takes the count ("two", "a couple of", "several" for "a group of")."""

    words: Span
    noun: Token
    value: int | str
    anchor: Token
    said: str

    @property
    def count(self) -> Token:
        return self.words[0]

    @property
    def plural(self) -> bool:
        return self.value != 1


def _count_value(word: Token) -> int | str | None:
    text = word.lower_
    if text in NUMBERS:
        return NUMBERS[text]
    if text.isdigit() and 1 <= int(text) <= 99:
        return int(text)
    return text if text in VAGUE else None


def _rule_singular(plural: str) -> str:
    """Singular by spelling alone: "boxes" -> "box", "vases" -> "vase"."""
    if plural.endswith("ies"):
        return plural[:-3] + "y"
    if plural.endswith(("sses", "shes", "ches", "xes", "zzes", "uses")):
        return plural[:-2]
    return plural[:-1] if plural.endswith("s") else plural


def singular_of(noun: Token) -> str | None:
    """The noun's singular, or None when unsure. spaCy's lemma and the
    spelling rule must agree wherever both fit ("vases": spaCy says "vas")."""
    text, lemma = noun.lower_, noun.lemma_.lower()
    if noun.tag_ == "NN":
        return text if text == lemma else None
    if text in _SUPPLETIVE_SINGULARS:
        return _SUPPLETIVE_SINGULARS[text]
    fits = [word for word in (lemma, _rule_singular(text)) if word.isalpha() and pluralize(word) == text]
    return fits[0] if fits and len(set(fits)) == 1 else None


def _forms_are_regular(noun: Token, value: int | str) -> bool:
    """The noun can be re-inflected: a known singular, a regular plural, and
    a tag matching the count ("two giraffe", a caption typo, passes too)."""
    singular = singular_of(noun)
    if singular is None or singular in PLURALIA_TANTUM or noun.lower_ in PLURALIA_TANTUM:
        return False
    if value == 1:
        return noun.tag_ == "NN"
    return value != "some" or noun.tag_ == "NNS"


def _countable_position(noun: Token) -> bool:
    """Subject, object or existential noun; not the object of "of" ("a box
    of six pastries", "the side of a boat"), whose number the head governs,
    unless the head is a picture ("a view of several billboards"); and in
    plain lower case ("TV" would come back as "tvs")."""
    if noun.dep_ == "pobj" and preposition_of(noun) == "of" and noun_key(noun.head.head) not in DEPICTION_NOUNS:
        return False  # not "in front of"
    if noun.text != noun.lower_ and not (noun.is_sent_start and noun.text == noun.lower_.capitalize()):
        return False
    existential = noun.dep_ == "attr" and any(child.dep_ == "expl" for child in noun.head.children)
    return noun.dep_ in COUNTABLE_DEPS or existential


def _group_of(noun: Token) -> Counted | None:
    """"a couple of people", "a herd of cows": counted by the phrase that heads the noun (`COUNTING_GROUPS`;
    "a couple is sitting" counts no noun, "a large group of" is left alone)."""
    preposition, group = noun.head, noun.head.head
    if noun.dep_ != "pobj" or noun.tag_ != "NNS" or preposition.lower_ != "of" or group.lower_ not in COUNTING_GROUPS:
        return None
    article = group.doc[group.i - 1] if group.i else None
    if article is None or article.lower_ != "a" or article.head != group or preposition.i != group.i + 1:
        return None
    words = group.doc[article.i : preposition.i + 1]
    value = COUNTING_GROUPS[group.lower_]
    return Counted(words, noun, value, group, words.text.lower() if value == 2 else str(value))


def _counted(noun: Token) -> Counted | None:
    """The noun with the count words its phrase starts with, if any; spaCy may hang them on the first word of a
    compound ("A" on "stop" in "A red stop sign")."""
    group = _group_of(noun)
    if group is not None:
        return group if _countable_position(group.anchor) and noun.text == noun.lower_ else None
    if not _countable_position(noun):
        return None
    first = noun.doc[noun.left_edge.i]
    value = _count_value(first)
    deps = ("det", "nummod", "amod") if value in MANY else ("det", "nummod")
    if value is None or compound_head(first.head) != noun or first.dep_ not in deps:
        return None
    return Counted(noun.doc[first.i : first.i + 1], noun, value, noun, first.lower_)


def counted_nouns(doc: Doc) -> list[Counted]:
    """Object nouns whose phrase starts with count words."""
    found = []
    for noun in doc:
        if noun.tag_ not in ("NN", "NNS") or not is_object_noun(noun) or is_place(noun) or is_hyphenated(noun):
            continue
        counted = _counted(noun)
        if counted is None:
            continue
        value = counted.value
        if any(child.lower_ in NUMBER_WORDS for child in noun.children) or not _forms_are_regular(noun, value):
            continue
        if _shares_its_count(noun) or lexicalised(noun) or noun_lemma(noun) in lexicon().mass_nouns:
            continue  # "a woman and boy": the count is said of the pair; "greens" are no green things; no "a footwear"
        if _possessive(noun) or _misread_verb(noun):
            continue
        found.append(counted)
    return found


def _possessive(noun: Token) -> bool:
    """A noun with "'s": it names another noun's owner ("two dogs' bowls"), or it is a plural written with an
    apostrophe ("four ripe banana's", tagged singular); re-inflected, it reads "a ripe banana's"."""
    return any(child.dep_ == "case" for child in noun.children)


def _misread_verb(noun: Token) -> bool:
    """The head of a compound after a word that may name a person or animal, the head also a verb that takes an
    adverb or a preposition, in a caption spaCy found no verb in: "Two sheep and a ram stand next to a fence"
    is the ram's verb read as "a ram stand", which would become "two ram stands". Without the adverb or
    preposition it is a noun ("two computer monitors and a laptop")."""
    compounds = [child for child in noun.children if child.dep_ == "compound"]
    if not compounds or not may_name_being(noun_lemma(compounds[-1])):
        return False
    if not any(child.dep_ in ("advmod", "prep") for child in noun.children):
        return False
    if any(token.pos_ in ("VERB", "AUX") for token in noun.doc):
        return False
    reader = wordnet()
    return reader is not None and bool(reader.synsets(noun.lower_, pos="v"))


def counts_differ(first: Counted, second: Counted) -> bool:
    """Would trading the counts change what the caption claims?"""
    a, b = first.value, second.value
    if a == b:
        return False
    if (isinstance(a, int) and isinstance(b, int)) or 1 in (a, b):
        return True
    return {a, b} & {2} != set() and {a, b} & MANY != set()


def _noun_form(counted: Counted, plural: bool) -> str:
    singular = singular_of(counted.noun) or counted.noun.lower_
    return pluralize(singular) if plural else singular


def _finite_words(verb: Token) -> list[Token]:
    """The verb and its auxiliaries that carry number ("is" in "is eating")."""
    return [verb] + [child for child in verb.children if child.dep_ in ("aux", "auxpass")]


def _agreeing_verbs(noun: Token) -> list[Token]:
    """Verbs whose number follows the noun: its clause (unless the subject is
    coordinated, which stays plural), an existential "there is", and
    relative clauses ("a dog that is running")."""
    verbs = []
    coordinated = noun.dep_ == "conj" or any(child.dep_ == "conj" for child in noun.children)
    if noun.dep_ in SUBJECT_DEPS and not coordinated:
        verbs.append(noun.head)
        # "A woman has headphones on and is holding...": one subject, two verbs.
        verbs += [v for v in noun.head.conjuncts if not any(c.dep_ in SUBJECT_DEPS for c in v.children)]
    if noun.dep_ == "attr" and any(child.dep_ == "expl" for child in noun.head.children):
        verbs.append(noun.head)
    for clause in noun.children:
        relative = any(c.dep_ in SUBJECT_DEPS and c.tag_ in ("WDT", "WP") for c in clause.children)
        if clause.dep_ == "relcl" and relative:
            verbs.append(clause)
    return verbs


def agreement_edits(request: Request, noun: Token, plural: bool) -> list[Edit] | None:
    """Edits making the noun's verbs agree; None when the subject's verb is
    mis-tagged ("a pole sports signs", "sports" read as a noun)."""
    if noun.dep_ in SUBJECT_DEPS and noun.head.pos_ not in ("VERB", "AUX"):
        return None
    edits = []
    for verb in _agreeing_verbs(noun):
        for word in _finite_words(verb):
            text = word.lower_
            if text in _AGREEMENT:
                wanted = _AGREEMENT[text] if (text in _SINGULAR_FORMS) == plural else text
            elif word.tag_ == "VBZ" and plural:
                wanted = verb_form(word.lemma_.lower(), "VBP")
            elif word.tag_ == "VBP" and not plural:
                wanted = verb_form(word.lemma_.lower(), "VBZ")
            else:
                continue
            if wanted != text:
                edits.append(replacement(request, token_span(word), wanted))
    return edits


def _count_edits(request: Request, target: Counted, source: Counted) -> list[Edit] | None:
    """`target` takes `source`'s count: the count word, the noun's number,
    "a"/"an" by the next word, and verb agreement (None if that fails)."""
    noun_text = _noun_form(target, source.plural)
    edits = [replacement(request, token_span(target.noun), noun_text)] if noun_text != target.noun.lower_ else []
    count_text = source.said
    if source.value == 1 and count_text in ("a", "an"):
        following = request.doc[target.words.end]
        count_text = indefinite_article(noun_text if following == target.noun else following.text)
    edits.append(replacement(request, target.words, count_text))
    agreement = agreement_edits(request, target.anchor, source.plural)
    return None if agreement is None else edits + agreement


def _count_swap(request: Request, first: Counted, second: Counted) -> Variant | None:
    counting = {word.i for counted in (first, second) for word in counted.words}
    harmless = PLURAL_WORDS if first.plural and second.plural else frozenset()
    if any(word.lower_ in NUMBER_WORDS - harmless and word.i not in counting for word in request.doc):
        return None
    changed = {c.noun.i for c, other in ((first, second), (second, first)) if c.plural != other.plural}
    pronouns = pronoun_edits(request.doc, changed)
    first_edits, second_edits = _count_edits(request, first, second), _count_edits(request, second, first)
    if pronouns is None or first_edits is None or second_edits is None:
        return None
    followed = [replacement(request, token_span(pronoun), new) for pronoun, new in pronouns]
    return build(request, first_edits + second_edits + followed, FAMILY, "count")


def _shares_its_count(noun: Token) -> bool:
    """A conjunct whose partner has no count of its own ("a woman and boy"): which nouns the count covers
    is unclear, so it does not move."""
    partners = [child for child in noun.children if child.dep_ == "conj"] + ([noun.head] if noun.dep_ == "conj" else [])
    return any(not any(_count_value(c) is not None for c in partner.children) for partner in partners)


def lexicalised(noun: Token) -> bool:
    """A plural whose singular first names no thing ("greens": "green" is a colour), so it cannot take a
    count of one."""
    singular = singular_of(noun)
    return noun.tag_ == "NNS" and singular is not None and not is_physical(singular)


def _refers_back(doc: Doc) -> bool:
    """"one" as a pronoun ("Two men riding mopeds, one with a woman"): it counts off a group whose size a
    count swap would change."""
    return any(token.lower_ == "one" and token.dep_ != "nummod" for token in doc)


def _modifiers(counted: Counted) -> frozenset[str]:
    """The words between the count and the noun: "larger adult" in "four larger adult elephants"."""
    return frozenset(word.lower_ for word in counted.noun.doc[counted.words.end : counted.noun.i])


def _told_apart(first: Counted, second: Counted) -> bool:
    """One kind of object in two groups that modifiers tell apart ("a baby elephant near four adult
    elephants"): trading the counts changes which group is the larger. Without a modifier on each ("a black
    goat and two goats") which one the bare noun means is unclear."""
    mine, theirs = _modifiers(first), _modifiers(second)
    return bool(mine) and bool(theirs) and mine != theirs


def _same_kind(first: Counted, second: Counted) -> bool:
    """One kind of object, whatever the number: "people" and "person" too. A third count of a swapped kind
    counts off its group ("a group of people ... one person holding an umbrella"), so no swap changes it."""
    return same_object(first.noun, second.noun) or singular_of(first.noun) == singular_of(second.noun) is not None


def _may_take(counted: Counted, plural: bool) -> bool:
    """`count_checks.may_take` on the noun and on its anchor, which takes the verbs ("a couple of people")."""
    return all(may_take(word, counted.plural, plural) for word in {counted.noun, counted.anchor})


def _count_swaps(request: Request) -> Iterator[Variant]:
    counted = counted_nouns(request.doc)
    if len(counted) > MAX_COUNTED or _refers_back(request.doc):
        return iter(())
    pairs = [
        (a, b)
        for a, b in itertools.combinations(counted, 2)
        if counts_differ(a, b)
        and (not _same_kind(a, b) or _told_apart(a, b))
        and not any(_same_kind(c, d) for c in (a, b) for d in counted if d not in (a, b))
        and _may_take(a, b.plural)
        and _may_take(b, a.plural)
        and not swap_outnumbers_sitters({a.noun, a.anchor}, a.value, b.noun, b.value)
        and not swap_outnumbers_sitters({b.noun, b.anchor}, b.value, a.noun, a.value)
    ]
    request.rng.shuffle(pairs)
    return take_distinct(request, (v for v in (_count_swap(request, a, b) for a, b in pairs) if v is not None))


def _same_noun_swaps(request: Request) -> Iterator[Variant]:
    counted = {c.noun.i: c for c in counted_nouns(request.doc)}
    attributes = [a for a in visual_attributes(request.doc) if a.noun.i in counted]
    pairs = [
        (a, b)
        for a, b in itertools.combinations(attributes, 2)
        if same_object(a.noun, b.noun) and tradeable(a, b) and counts_differ(counted[a.noun.i], counted[b.noun.i])
    ]
    request.rng.shuffle(pairs)
    variants = (
        build(request, swapped(request, a.span, b.span), FAMILY, "same_noun_attribute")
        for a, b in pairs
    )
    return take_distinct(request, variants)


def count_swaps(request: Request) -> list[Variant]:
    return list(_count_swaps(request))


def same_noun_swaps(request: Request) -> list[Variant]:
    return list(_same_noun_swaps(request))
