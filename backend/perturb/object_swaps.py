"""Object swaps (SugarCrepe's swap_obj): two nouns of compatible kinds trade places, their modifiers stay.

"A man with a ball facing a girl with a racquet" -> "A girl with a ball facing a man with a racquet";
"a cat sitting on a chair next to a table" -> "a cat sitting on a table next to a chair". Unlike CE-CLIP's
noun swaps, which trade any two nouns ("a sandwich eating a woman"), the two nouns must be of one kind, so
the result stays a scene a photo could show:

* both people, or both animals (`nouns.animacy`: no stuffed toys), never a baby with an older person (who
  holds whom would turn absurd); or a person and an animal that only do what both do (`SHARED_VERBS`: "a dog
  rests on a bed where a woman is sitting" -> "a woman rests on a bed where a dog is sitting"), in a caption
  with no pronoun that would point at the wrong one ("his surfboard") and not across "next to";
* or both things of one kind (`object_kinds.kind`: "plane" a vehicle, "cupcake" food, "jug" tableware); a
  compound moves whole ("holding a tennis racket and lunging for a tennis ball"), but never a compound "dish"
  ("a chicken dish" is food, "a soap dish" is not);
* or two small things a hand holds (`HANDHELD`: food, tableware, electronics, ...) of different kinds, each
  in a slot that does not care which ("holding a fork and reaching for a slice of pizza" -> "holding a slice
  of pizza and reaching for a fork"): the object of a verb of holding, reaching or looking done by a person
  or an animal, or of a preposition that puts it beside something, or a subject that only sits somewhere;
  never after "eating", "on", "with" or "of", where the kind matters ("eating a fork", "a plate on a cupcake");
* not a noun and its conjunct or its "with" ("an umpire is talking with two players": the swap says the same),
  unless the "with" noun stands somewhere of its own ("a cat sitting on a couch with a dog on the floor") or
  beside the seat it trades with ("sits on a bed with a chair next to it" -> "on a chair with a bed next to it"), does
  something else ("a woman holding a game controller with a man looking on") or the "with" is a room's or a
  container's and one of the two has a feature of its own ("a bed with stacked pillows is in a bedroom with a
  chair"); no man and woman trading places where a dress, a beard or a "bride" stays behind; a man and a woman
  who are the caption's only people take their pronouns with them ("The young man is kissing the young woman on
  top of her head" -> "The young woman is kissing the young man on top of his head");
* nothing one sits on lands where a body sits "in" ("sitting in a table", `object_kinds.sat_in`);
* not where one holds, carries or covers the other ("a spoon in a pot" -> "a pot in a spoon", "an airplane over
  a van"), nor where a thing has things "with" it, which would stay with the other ("a wooden table with two
  chairs next to a sink" -> "a wooden sink with two chairs next to a table");
* same grammatical number and the same kind of determiner, or whole phrases (`object_phrases`: "People watch a
  man" -> "A man watches people", "A group of people watching a woman" -> "A woman watching a group of
  people"), no hyphenated word, and not a swap
  that gives a verb the object it is usually seen with where the caption had an unusual one (`typical`).
  Swaps of conjuncts or of a symmetric relation's sides stay true: `binding_swap` drops them, as every swap.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator

from spacy.tokens import Span, Token

from backend.perturb.attributes import FAMILY
from backend.perturb.core import Edit, Request, Variant, build, replacement, swapped, take_distinct
from backend.perturb.counts import agreement_edits
from backend.perturb.gendered import COUNTERPARTS, FEMALE, GENDER_BOUND, new_pronoun
from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import token_span
from backend.perturb.nouns import ANIMAL_NOUNS, BABIES, PERSON_NOUNS, animacy, is_object_noun, is_place, noun_key
from backend.perturb.object_kinds import content, kind, may_be_sat_in, one_names_the_other, preposition, sat_in
from backend.perturb.object_phrases import living_group, phrase_edits
from backend.perturb.object_together import SHARED_VERBS, in_one_part, is_child
from backend.perturb.parse_reading import (
    COLLECTIVE_NOUNS,
    GENDERED_PRONOUNS,
    PORTION_NOUNS,
    has_gendered_pronoun,
    in_fixed_phrase,
    next_to_another_noun,
    of_holder,
    verb_lemma,
)
from backend.perturb.replace import ARGUMENT_DEPS, FRAME_NOUNS, determiner_kind
from backend.perturb.typical import swap_repairs_caption
from backend.perturb.units import in_compound, is_hyphenated, noun_unit

SUBTYPE = "object"
HOLDING_VERBS = frozenset({"hold", "carry", "lift", "cradle"})
# Where one thing holds, carries, covers or hangs over another.
HOLDING_PREPOSITIONS = frozenset({
    "in", "inside", "into", "within", "on", "onto", "atop", "top", "over", "above", "under", "below", "beneath",
    "underneath",
})
FOOD_OR_DISH = frozenset({"dish"})
# A thing holding another in "X has Y on it", "X holds Y".
HAVING_VERBS = frozenset({"have", "hold", "contain", "carry", "support"})
# What hits a ball: a ball and its bat never trade places ("hitting a tennis racket").
STRIKERS = frozenset({"racket", "racquet", "bat", "club", "stick", "paddle"})
SEX_WORDS = frozenset({"male", "female"})
FEMALE_PRONOUNS = frozenset({"she", "her", "hers", "herself"})
SEXED_NOUNS = frozenset("""
    man woman boy girl lady gentleman guy mother father son daughter husband wife bride groom king queen brother
    sister grandmother grandfather
""".split())
# Quantities and vague words: "a few stores", "different locations".
VAGUE_WORDS = frozenset({
    "few", "couple", "lot", "lots", "bunch", "different", "various", "other", "another", "same",
})
BESIDE = frozenset({"next", "beside", "near", "by", "alongside"})
# Kinds of small things a person holds, that may trade places across kinds in slots that do not care which.
HANDHELD = frozenset({"food", "tableware", "electronics", "sports equipment", "household object"})
HANDLING_VERBS = frozenset({
    "hold", "carry", "grab", "reach", "look", "stare", "gaze", "watch", "point", "examine", "show", "display",
    "photograph", "hand", "offer", "pick", "lift",
})
# Where a thing is beside another, not on or under it: "a plate on a cupcake" is absurd, "a cupcake near a plate"
# is not.
PLACE_PREPOSITIONS = frozenset({"near", "beside", "by", "behind", "next", "in front of"})
RESTING_VERBS = frozenset({"sit", "rest", "lie", "lay", "be", "place", "set", "stand"})


def _indifferent_slot(noun: Token) -> bool:
    """A slot any small thing fits: held, reached for, looked at, placed by or on, or a subject that rests."""
    head = noun.head
    if noun.dep_ == "dobj":
        return _handled_by_someone(head)
    if noun.dep_ == "pobj":
        if head.lower_ in ("at", "for"):
            return _handled_by_someone(head.head)
        return preposition(head) in PLACE_PREPOSITIONS and verb_lemma(head.head) not in HANDLING_VERBS
    if noun.dep_ in ("nsubj", "nsubjpass"):
        return verb_lemma(head) in RESTING_VERBS
    # A caption that is a noun phrase: the noun may rest somewhere, not hold anything ("a plate holding food").
    return noun.dep_ == "ROOT" and all(verb_lemma(child) in RESTING_VERBS for child in noun.children
                                       if child.dep_ in ("acl", "relcl"))


def _handled_by_someone(verb: Token) -> bool:
    """A verb of holding or looking whose doer is a person or an animal ("a baby holding a spoon"), not a
    thing ("a plate holding a sandwich"), found through the verbs it is joined to."""
    if verb_lemma(verb) not in HANDLING_VERBS:
        return False
    while True:
        subjects = [child for child in verb.children if child.dep_ in ("nsubj", "nsubjpass")]
        if subjects:
            return animacy(subjects[0]) is not None
        if verb.dep_ in ("acl", "relcl") and verb.head.pos_ == "NOUN":
            return animacy(verb.head) is not None
        if verb.dep_ not in ("conj", "advcl", "xcomp") or verb.head == verb:
            return False
        verb = verb.head


def _verb_of(noun: Token) -> str:
    """The verb a noun is the subject or object of, or the one its participle clause has ("a man holding")."""
    if noun.dep_ in ("nsubj", "nsubjpass", "dobj"):
        return verb_lemma(noun.head)
    clauses = [child for child in noun.children if child.dep_ == "acl"]
    return verb_lemma(clauses[0]) if clauses else ""


def _sex_lands_on_sexed(noun: Token, other: Token) -> bool:
    """"a male skier" and "a young girl" would swap into "a male girl"."""
    return (noun_key(other) in SEXED_NOUNS
            and any(child.lower_ in SEX_WORDS for child in noun.children if child.dep_ in ("amod", "compound")))


def _genders_differ(first: Token, second: Token) -> bool:
    """A man and a woman, a boy and a girl: a pronoun pointing at one would point at the other after a swap."""
    words = first.lower_, second.lower_
    return all(word in COUNTERPARTS for word in words) and (words[0] in FEMALE) != (words[1] in FEMALE)


def _doing_what_both_do(noun: Token) -> bool:
    """The noun's only doing is a `SHARED_VERBS` verb, not on top of a living thing ("sitting on a horse")."""
    verb = noun.head if noun.dep_ in ("nsubj", "nsubjpass") else None
    if noun.dep_ == "ROOT":
        verbs = [child for child in noun.children if child.dep_ in ("acl", "relcl")]
        verb = verbs[0] if len(verbs) == 1 else None
    elif noun.dep_ == "pobj" and noun.head.dep_ == "prep" and preposition(noun.head) in PLACE_PREPOSITIONS:
        return noun.head.head.pos_ in ("NOUN", "VERB", "AUX") and verb_lemma(noun.head.head) in SHARED_VERBS | {"be"}
    if verb is None or verb_lemma(verb) not in SHARED_VERBS:
        return False
    places = [obj for prep in verb.children if prep.dep_ == "prep" for obj in prep.children if obj.dep_ == "pobj"]
    return all(animacy(place) is None for place in places)


def _said_alike(first: Token, second: Token) -> bool:
    """`symmetric_between`, save that an "and" joining two verbs is no conjunct of the nouns ("holding a fork
    and reaching for a slice of pizza": each noun keeps its verb, so the swap changes what is held)."""
    earlier, later = (first, second) if first.i < second.i else (second, first)
    words = [word.lower_ for word in first.doc[earlier.i + 1 : later.i]
             if not (word.dep_ == "cc" and word.head.pos_ == "VERB" and word.head.i < word.i)]
    between = f" {' '.join(words)} "
    return any(f" {phrase} " in between for phrase in lexicon().symmetric_relations) or " , " in between


def _described(noun: Token) -> bool:
    """Whether a colour describes `noun`: across "next to" only such a pair may swap (judged still true:
    "A white toilet ... next to a shower" -> "A white shower ... next to a toilet": showers are white too)."""
    return any(child.dep_ == "amod" and "color" in lexicon().attribute_classes(child.lower_)
               for child in noun.children)


def _living_pair(first: Token, second: Token) -> bool:
    doc = first.doc
    return ({kind(first), kind(second)} == {"person", "animal"}
            and {noun_key(first), noun_key(second)} <= PERSON_NOUNS | ANIMAL_NOUNS and _doing_what_both_do(first)
            and _doing_what_both_do(second) and not any(token.tag_ in ("PRP", "PRP$") for token in doc)
            and not _said_alike(first, second))


def _handheld_pair(first: Token, second: Token) -> bool:
    """Two small things of different kinds in slots that do not care which; not across "next to" or "with"
    ("a laptop on a desk next to a cup" -> "a cup on a desk next to a laptop" says the same)."""
    kinds = {kind(_named(first)), kind(_named(second))}
    return (kinds <= HANDHELD and len(kinds) == 2 and _indifferent_slot(first) and _indifferent_slot(second)
            and not _said_alike(first, second))


def _candidate(token: Token) -> bool:
    """A noun that may trade places: a thing or a living being, or a group or portion named by what it is of
    ("a group of people", "a slice of pizza"); no frame, container content or vague quantity."""
    plain = living_group(token) is None and content(token) is None
    if plain and (token.lemma_.lower() in FRAME_NOUNS | COLLECTIVE_NOUNS | PORTION_NOUNS
                  or _in_of_phrase(token) or not is_object_noun(token)):
        return False
    return (token.tag_ in ("NN", "NNS") and token.is_alpha and token.dep_ in ARGUMENT_DEPS
            and _whole_noun(token) and not is_hyphenated(token)
            and not in_fixed_phrase(token, lexicon().fixed_phrases)
            and not is_place(token) and not next_to_another_noun(token)
            and not any(child.lower_ in VAGUE_WORDS for child in token.children))


def _whole_noun(token: Token) -> bool:
    """A one-word noun, or the last word of a compound that moves whole ("a tennis racket", "french fries"), but
    not a compound "dish", which may be food ("a chicken dish") or a plate ("a soap dish"), nor one with a word
    of its own ("deep dish pizza" is no "dish pizza")."""
    if not in_compound(token):
        return True
    unit = _unit(token)
    return (token.dep_ != "compound" and unit.start < token.i and token.lemma_.lower() not in FOOD_OR_DISH
            and all(child.i in range(unit.start, unit.end) for word in unit[:-1] for child in word.children))


def _unit(noun: Token) -> Span:
    """The whole noun a swap moves: "tennis racket" for "racket", "slice of pizza" for "slice"."""
    whole = noun_unit(noun) or token_span(noun)
    inner = content(noun)
    return whole if inner is None else noun.doc[whole.start : _unit(inner).end]


def _named(noun: Token) -> Token:
    """The noun that says what a phrase is: "pizza" for "a slice of pizza", else the noun itself."""
    return content(noun) or noun


def _in_of_phrase(noun: Token) -> bool:
    """A container and its content ("a cup of coffee", "bowls of snacks"): a swap makes "a glass of pizza".
    Not "in front of" or "on top of", whose "of" only places the noun."""
    holder = of_holder(noun)
    after_of = holder is not None and holder.lemma_.lower() not in FRAME_NOUNS
    return after_of or any(child.dep_ == "prep" and child.lower_ == "of" for child in noun.children)


def _beside_each_other(first: Token, second: Token) -> bool:
    """Two nouns with nothing of their own (no adjective, number or clause) where the later one is beside the
    first ("a toilet in a bathroom next to a sink"): the swap says the same."""
    later = second if second.i > first.i else first
    earlier = first if later is second else second
    own = ("amod", "compound", "nummod", "acl", "relcl")
    if any(child.dep_ in own for noun in (first, second) for child in noun.children):
        return False
    return (later.dep_ == "pobj" and preposition(later.head) in BESIDE
            and earlier in later.head.ancestors)


def _one_holds_the_other(first: Token, second: Token) -> bool:
    """One noun holds, carries or covers the other, or hangs over it ("a spoon in a pot", "bananas on top of a
    pastry", "an airplane over a van", "a racket has a ball on it"): reversed, a small thing holds a big one."""
    later, earlier = (second, first) if second.i > first.i else (first, second)
    if later.dep_ == "dobj" and verb_lemma(later.head) in HAVING_VERBS:  # "a tennis racket has a ball on it"
        return any(subject.i == earlier.i for subject in later.head.children if subject.dep_ == "nsubj")
    if later.dep_ != "pobj" or preposition(later.head) not in HOLDING_PREPOSITIONS:
        return False
    holder = later.head.head
    return holder in (earlier, earlier.head) or (holder.dep_ == "acl" and earlier == holder.head)


def _keeps_company(noun: Token, other: Token) -> bool:
    """A thing with a "with" phrase naming things (`other` aside): what it has or comes with stays where the
    thing was and goes to the thing that takes its place ("a wooden table with two chairs next to a sink" ->
    "a wooden sink with two chairs next to a table"). Not between two pieces of tableware, which hold what either
    held ("a wooden handle in a pot with soup next to an empty bowl" -> "in a bowl with soup next to an empty
    pot")."""
    if kind(noun) in (None, "person", "animal") or kind(noun) == kind(other) == "tableware":
        return False
    return any(obj.dep_ in ("pobj", "conj") and obj != other and kind(obj) not in (None, "person", "animal")
               for prep in noun.children if prep.dep_ == "prep" and prep.lower_ == "with" for obj in prep.subtree)


def _striker(noun: Token) -> bool:
    return noun.lemma_.lower() in STRIKERS


def compatible(first: Token, second: Token, *, loose: bool = False) -> bool:
    """Two nouns of one kind that may trade places (see the module docstring); `loose` lets their number and
    determiners differ (the caller then swaps whole phrases)."""
    found, keys = kind(_named(first)), (noun_key(_named(first)), noun_key(_named(second)))
    if found is None or not (found == kind(_named(second)) or _handheld_pair(first, second)
                             or _living_pair(first, second)):
        return False
    if (content(first) or content(second)) and not _handheld_pair(first, second):
        return False  # "two hot dogs sandwiched between two slices of bread": a portion only trades with a fork
    if keys[0] == keys[1] or not lexicon().may_replace(*keys):
        return False
    if one_names_the_other(_named(first), _named(second)):
        return False
    if found == "person" and (noun_key(first) in BABIES) != (noun_key(second) in BABIES):
        return False
    if found == "person" and any(_verb_of(noun) in HOLDING_VERBS for noun in (first, second)):
        if is_child(first) != is_child(second):
            return False
    if not loose and (_sex_lands_on_sexed(first, second) or _sex_lands_on_sexed(second, first)):
        return False  # a phrase swap moves "male" with its skier
    if _genders_differ(first, second) and has_gendered_pronoun(first.doc) and not _pronouns_follow(first, second):
        return False  # "a woman sits while a man looks at her, holding a child" -> "a man ... looks at her"
    if _beside_each_other(first, second):
        return False  # "a toilet in a bathroom next to a sink": the swap says the same
    if {_striker(first), _striker(second)} == {True, False} and "ball" in (noun_key(first) + noun_key(second)):
        return False  # "swinging a tennis racket and hitting a ball" -> "swinging a ball and hitting a racket"
    if any(sat_in(a) and not may_be_sat_in(b) for a, b in ((first, second), (second, first))):
        return False  # "a man sitting in a chair across from a table" -> "sitting in a table"
    if any(_keeps_company(noun, other) for noun, other in ((first, second), (second, first))):
        return False  # "a wooden table with two chairs next to a sink" -> "a wooden sink with two chairs"
    if _one_holds_the_other(first, second):
        return False  # "a wooden spoon in a soup pot" -> "a wooden soup pot in a spoon"
    if in_one_part(first, second) or in_one_part(second, first):
        return False  # "an umpire is talking with two players", "a young man and a small boy": the same
    if _genders_differ(first, second) and any(token.lower_ in GENDER_BOUND for token in first.doc):
        return False  # "a woman in a white dress and a man in gray" -> "a man in a white dress"
    if GENDER_BOUND.intersection((first.lower_, second.lower_)):
        return False  # "a girl in a floral dress ... a boy in a blue shirt" -> "a boy in a blue dress"
    return loose or (first.tag_ == second.tag_ and determiner_kind(first) == determiner_kind(second))


def _pronouns_follow(first: Token, second: Token) -> bool:
    """A man and a woman, each one alone, are the caption's only people: every "he" or "her" points at one of
    them, and turning each pronoun to the other gender keeps it on the same place in the scene ("The young man
    is kissing the young woman on top of her head" -> "The young woman is kissing the young man on top of his
    head"). Not with a third person, whose "her" would turn too, nor with a group ("two men"), whose pronouns
    are "they", nor where a pronoun is a swapped noun's own ("his wife"), which a phrase swap moves."""
    doc = first.doc
    people = {token.i for token in doc if token.pos_ in ("NOUN", "PROPN") and kind(token) == "person"}
    owned = any(token.lower_ in GENDERED_PRONOUNS and token.head in (first, second) for token in doc)
    return people == {first.i, second.i} and first.tag_ == second.tag_ == "NN" and not owned


def _pronoun_edits(request: Request, first: Token, second: Token) -> list[Edit]:
    """The gendered pronouns turned to the other gender, when a man and a woman trade places
    (`_pronouns_follow`)."""
    if not _genders_differ(first, second):
        return []
    return [replacement(request, token_span(token), new_pronoun(token, token.lower_ not in FEMALE_PRONOUNS))
            for token in request.doc if token.lower_ in GENDERED_PRONOUNS]


def _swap_edits(request: Request, first: Token, second: Token) -> list[Edit] | None:
    """The nouns swapped alone, or whole phrases with their verbs made to agree ("this lady is using
    controllers and those men are watching" -> "those men are using controllers and this lady is watching")."""
    if swap_repairs_caption(first, second):
        return None
    if compatible(first, second) and living_group(first) is None and living_group(second) is None:
        if _said_alike(first, second) and _described(first) != _described(second):
            return None  # a colour moves to a thing that may have it: "a white shower ... next to a toilet"
        agreement = _portion_agreement(request, first, second)
        if agreement is None:
            return None
        return swapped(request, _unit(first), _unit(second)) + agreement + _pronoun_edits(request, first, second)
    if not compatible(first, second, loose=True):
        return None
    edits = phrase_edits(request, first, second)
    return None if edits is None else edits + _pronoun_edits(request, first, second)


def _portion_agreement(request: Request, first: Token, second: Token) -> list[Edit] | None:
    """A stack or a portion as a subject may have a verb that agrees with its content ("a stack of random books
    are placed"): the verb is made to agree with the noun that takes its place ("a computer is placed")."""
    edits: list[Edit] = []
    for noun, other in ((first, second), (second, first)):
        if content(noun) is not None and noun.dep_ in ("nsubj", "nsubjpass"):
            agreement = agreement_edits(request, noun, other.tag_ == "NNS")
            if agreement is None:
                return None
            edits += agreement
    return edits


def _object_swaps(request: Request) -> Iterator[Variant]:
    nouns = [token for token in request.doc if _candidate(token)]
    pairs = [edits for a, b in itertools.combinations(nouns, 2) if (edits := _swap_edits(request, a, b)) is not None]
    request.rng.shuffle(pairs)
    return take_distinct(request, (build(request, edits, FAMILY, SUBTYPE) for edits in pairs))


def object_swaps(request: Request) -> list[Variant]:
    return list(_object_swaps(request))
