"""Where a caption can take a replacement word, and which words fit there.

A slot is a whole token (or a known multi-word noun or spatial phrase), so
replacing "man" never touches "woman". Its replacements are curated
co-hyponyms or opposites (see lexicon.py) that also fit the sentence:
verbs keep their frame (only people and animals kneel; "holding onto"
takes no object), conditioned opposites only describe their class of
nouns, and no replacement repeats a word already in the caption. A slot
the parse leaves unclear (a compound noun, "a herd of zebra", a gendered
pronoun that would have to change too) gets no replacement at all.
"""
from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from backend.perturb.inflect import pluralize, verb_form
from backend.perturb.lexicon import ADJ, NOUN, SPATIAL, VERB, ActionGroup, lexicon
from backend.perturb.nlp import find_phrases, token_span
from backend.perturb.nouns import LIVING, PERSON, is_physical, noun_class, sisters_of_kind, takes_article
from backend.perturb.parse_reading import (
    COLLECTIVE_NOUNS,
    NOUN_TAGS,
    caption_lemmas,
    content_noun,
    direct_object,
    has_gendered_pronoun,
    has_particle,
    head_noun,
    in_fixed_phrase,
    is_counted_mass,
    next_to_another_noun,
    noun_lemma,
    object_of,
    subject_of,
    verb_lemma,
)
from backend.perturb.verb_fit import refill_fits_clause
from backend.perturb.wearing import actor, introduces_clothing, is_color

# Nouns whose plural is the singular: "A sheep" or "two sheep" is only
# clear from a determiner.
INVARIANT_PLURALS = frozenset({"sheep", "deer", "fish", "moose", "bison", "cattle", "elk"})
SINGULAR_DETERMINERS = frozenset({"a", "an", "one", "this", "that", "each", "every", "another"})
PERSON_PRONOUNS = frozenset({"he", "she", "i", "we", "you", "someone", "somebody", "everyone", "him", "her"})
# Participles that suit nearly any object ("a car parked", "a vase placed");
# others say what was done to this one ("the window rolled down", "a cake
# cut into pieces") and may not suit its replacement.
GENERIC_PARTICIPLES = frozenset({
    "park", "place", "locate", "see", "show", "display", "leave", "set", "cover", "fill", "surround", "make", "use",
    "position", "put", "keep", "hold", "take", "stack", "line", "arrange", "perch", "seat", "mount", "attach", "hang",
})


@dataclass(frozen=True)
class Slot:
    """A replaceable part of the caption and the lemma the lexicon knows it by."""

    span: Span
    lemma: str
    pos: str
    # A compound refilled whole ("a pickup truck" -> "a car", `compounds`): its refill keeps to the head's fit class.
    whole_compound: bool = False


def inflected(slot: Slot, lemma: str) -> str:
    """`lemma` in the form of the slot's word: plural noun, verb tense."""
    if slot.pos == NOUN and _plural(slot.span[-1]):
        return pluralize(lemma)
    if slot.pos == VERB:
        return verb_form(lemma, slot.span[0].tag_)
    return lemma


def head_lemma(token: Token | None) -> str | None:
    """Lemma of a noun or pronoun, seen through "a group of" to what it counts."""
    if token is None:
        return None
    token = content_noun(token)
    if token.pos_ == "PRON":
        return token.lower_
    if token.pos_ not in ("NOUN", "PROPN"):
        return None
    lemma = noun_lemma(token)
    if token.i == 0:
        return lemma
    # "teddy bears" are toys, whatever arc spaCy drew between the two words.
    compound = f"{token.doc[token.i - 1].lower_} {lemma}"
    return compound if compound in lexicon().multiword_nouns else lemma


def taken(doc: Doc) -> tuple[list[Span], list[Span], set[int]]:
    """Spatial phrases, multi-word nouns, and the token indices they cover:
    "left" in "to the left of" is no object, "hot" in "hot dog" no attribute."""
    lex = lexicon()
    phrases = find_phrases(doc, lex.spatial_phrases)
    covered = {i for phrase in phrases for i in range(phrase.start, phrase.end)}
    nouns = find_phrases(doc, lex.multiword_nouns, by_lemma=True)
    multiword = [span for span in nouns if covered.isdisjoint(range(span.start, span.end))]
    covered |= {i for span in multiword for i in range(span.start, span.end)}
    return phrases, multiword, covered


def _counted_many(token: Token) -> bool:
    """"three sheep", "a group of sheep": a number above one, or a collective noun, says an invariant plural
    ("sheep", "deer") is many, so its replacement is plural ("three cows")."""
    if any(child.dep_ == "nummod" and child.lower_ not in ("one", "1") for child in token.children):
        return True
    of = token.head
    return token.dep_ == "pobj" and of.lower_ == "of" and of.head.lemma_.lower() in COLLECTIVE_NOUNS


def _plural(token: Token) -> bool:
    return token.tag_ == "NNS" or (token.lemma_.lower() in INVARIANT_PLURALS and _counted_many(token))


def _number_is_clear(token: Token) -> bool:
    if token.lemma_.lower() not in INVARIANT_PLURALS or token.tag_ == "NNS":
        return not is_counted_mass(token)
    return _counted_many(token) or any(
        child.dep_ == "det" and child.lower_ in SINGULAR_DETERMINERS for child in token.children)


def _described_as_ground(token: Token) -> bool:
    """"tall dry grass", "a grassy field": the adjectives fit only this
    ground or place ("tall dry sand", "a grassy river")."""
    lex = lexicon()
    adjectives = [child.lower_ for child in token.children if child.dep_ == "amod"]
    if noun_lemma(token) in lex.mass_nouns:
        return bool(adjectives)
    return any("ground" in lex.attribute_classes(adjective) for adjective in adjectives)


def _done_to_it(token: Token) -> bool:
    """A participle saying what was done to this very object, attached to
    it or (a common mis-parse) right after it as a verb with a particle."""
    doc = token.doc
    following = [doc[token.i + 1]] if token.i + 1 < len(doc) else []
    return any(
        verb_lemma(verb) not in GENERIC_PARTICIPLES
        and ((verb.dep_ == "acl" and verb.tag_ == "VBN") or (verb.tag_ in ("VBN", "VBD") and has_particle(verb)))
        for verb in [*token.children, *following]
    )


CUT_PIECES = frozenset("log trunk stump plank".split())


def _plain_noun(token: Token, covered: set[int]) -> bool:
    """A head noun with no noun modifier ("rock wall", "kite string" are
    compounds the lexicon does not know: see `_compound_slot`), a clear number, and no
    adjective that only fits it."""
    return not any(child.dep_ == "compound" for child in token.children) and clear_noun(token, covered)


def clear_noun(token: Token, covered: set[int]) -> bool:
    """A head noun whose role and number the parse makes clear, that no set phrase or adjective binds."""
    return (
        token.tag_ in NOUN_TAGS
        and token.is_alpha
        and token.dep_ != "compound"
        and token.i not in covered
        and not next_to_another_noun(token)
        and not in_fixed_phrase(token, lexicon().fixed_phrases)
        and _number_is_clear(token)
        and not _described_as_ground(token)
        and not _done_to_it(token)
        and not _before_participle_modifier(token)
        and not _material_of_cut_pieces(token)
    )


def _material_of_cut_pieces(noun: Token) -> bool:
    """"logs of tree": what wooden pieces are cut from; another plant there was judged garbled ("logs of
    flower")."""
    of = noun.head
    return noun.dep_ == "pobj" and of.lower_ == "of" and of.head.lemma_.lower() in CUT_PIECES


def _before_participle_modifier(noun: Token) -> bool:
    """"a horse drawn carriage": an animal or person and a participle are one modifier of the next noun, which
    spaCy splits; the doer is no thing of the photo to replace ("a bird drawn carriage" was judged garbled).
    A material stays replaceable: "a snow covered slope" -> "a grass covered slope"."""
    doc = noun.doc
    return (noun.i + 2 < len(doc) and doc[noun.i + 1].tag_ == "VBN" and doc[noun.i + 2].tag_ in NOUN_TAGS
            and lexicon().is_animate(noun_lemma(noun)))


def _split_noun(verb: Token) -> bool:
    """"on the side walk": a bare verb right after a noun that is not its subject is the end of a noun spaCy
    split ("side swim" was judged garbled); "watching someone swing a bat" keeps its subject."""
    doc = verb.doc
    before = doc[verb.i - 1] if verb.i > 0 else None
    return (verb.tag_ == "VB" and before is not None and before.tag_ in NOUN_TAGS and before.head.i != verb.i
            and not any(child.dep_ in ("aux", "mark") for child in verb.children))


def object_slots(doc: Doc) -> list[Slot]:
    """Head nouns, and the lexicon's multi-word nouns ("hot dog") as one slot, unless the parse reads the last
    word as a verb with an "s" ("Three teddy bears laying" has "bears" a verb: the refill took its number from it,
    "Three doll laying", judged err)."""
    _, multiword, covered = taken(doc)
    slots = [Slot(span, " ".join(t.lemma_.lower() for t in span), NOUN) for span in multiword
             if span.root.dep_ != "compound" and span[-1].tag_ != "VBZ"]
    slots += [Slot(token_span(t), noun_lemma(t), NOUN) for t in doc if _plain_noun(t, covered)]
    return sorted(slots, key=lambda slot: slot.span.start)


def attribute_slots(doc: Doc) -> list[Slot]:
    """Adjectives describing a noun, plus lexicon attributes used as noun
    modifiers ("metal fence"), outside set phrases ("old time", "hot dog")."""
    _, _, covered = taken(doc)
    lex = lexicon()
    return [
        Slot(token_span(token), token.lower_, ADJ)
        for token in doc
        if token.i not in covered
        and token.is_alpha
        and (token.tag_ == "JJ" or (token.dep_ in ("amod", "compound") and lex.is_attribute_word(token.lower_)))
        and head_noun(token) is not None
        and not in_fixed_phrase(token, lex.fixed_phrases)
    ]


def _subject_fits(verb: Token, who: str) -> bool:
    if who == "any":
        return True
    subject = actor(verb)
    lemma = head_lemma(subject)
    if subject is None or lemma is None:
        return False
    if subject.pos_ == "PRON":
        return lemma in PERSON_PRONOUNS
    # The noun's class from every WordNet sense and the curated lists, not the first sense alone: "a banana
    # peel laying" is no person (Robert Peel), so it neither sits nor kneels.
    kind = noun_class(content_noun(subject))
    return kind == PERSON if who == "person" else kind in LIVING


def _frame_fits(verb: Token, group: ActionGroup) -> bool:
    """The verb's subject and object suit the group, and it has one object at most: "feeding a goat a piece of
    carrot" names two, which no other verb of the group takes ("hugging a goat a piece of carrot" was judged
    garbled)."""
    obj = direct_object(verb)
    if (group.object == "required" and obj is None) or (group.object == "none" and obj is not None):
        return False
    if sum(child.dep_ in ("dobj", "dative") for child in verb.children) > 1:
        return False
    if group.object_class is not None:
        lemma = head_lemma(obj)
        if lemma is None or not lexicon().in_class(lemma, group.object_class):
            return False
    return _subject_fits(verb, group.subject)


def action_slots(doc: Doc) -> list[Slot]:
    """Verbs in the lexicon's action groups, in an active form without a
    particle ("holding up a sign" depends on "up")."""
    return [
        Slot(token_span(token), verb_lemma(token), VERB)
        for token in doc
        if token.pos_ == "VERB" and token.is_alpha and token.tag_ != "VBN" and not has_particle(token)
        and not _split_noun(token)
        and lexicon().actions_for(verb_lemma(token))
    ]


def relation_slots(doc: Doc) -> list[Slot]:
    """Spatial relation phrases with an object, and action verbs."""
    phrases, _, _ = taken(doc)
    spatial = [
        Slot(span, span.text.lower(), SPATIAL)
        for span in phrases
        if object_of(span) is not None and not introduces_clothing(span) and places_a_thing(span)
    ]
    return sorted(spatial + action_slots(doc), key=lambda slot: slot.span.start)


def places_a_thing(phrase: Span) -> bool:
    """The phrase's object is a thing with a place of its own: not "under construction" (an act) nor "behind
    his back" (a body part), whose words are idioms or fixed to their owner."""
    obj = object_of(phrase)
    return obj is None or obj.pos_ != "NOUN" or is_physical(noun_lemma(obj))


def _fits_adjectives(word: str, noun: Token) -> bool:
    """A replacement must suit the noun's adjectives where the lexicon
    knows what they describe: "an open door" may become "an open
    window" but not "an open wall", "an old woman" not "an old girl"."""
    lex = lexicon()
    for child in noun.children:
        classes = {o.head_class for o in lex.opposites_of(child.lower_, ADJ) if child.dep_ == "amod" and o.head_class}
        if classes and not any(lex.in_class(word, head_class) for head_class in classes):
            return False
    return True


def _object_words(slot: Slot) -> list[str]:
    """Sister nouns that suit the noun's adjectives, that no other noun of
    the caption could already describe ("computers and camera" ->
    "computers and laptop" may still be true), and no mass noun where a
    plural goes ("broccolis") or one thing is counted ("a bacon", `_counted_as_one`)."""
    lex, doc = lexicon(), slot.span.doc
    if lex.is_person(slot.lemma) and has_gendered_pronoun(doc):
        return []
    others = {noun_lemma(t) for t in doc if t.tag_ in NOUN_TAGS and not slot.span.start <= t.i < slot.span.end}
    plural, one = _plural(slot.span[-1]), _counted_as_one(slot.span.root)
    return [
        word
        for word in lex.co_hyponyms(slot.lemma, NOUN) or sisters_of_kind(slot.lemma)
        if all(lex.may_replace(word, other) for other in others)
        and not (word in lex.mass_nouns and plural) and not (one and not takes_article(word))
        and _fits_adjectives(word, slot.span.root)
    ]


def _counted_as_one(noun: Token) -> bool:
    """"a sausage", "another jar": a count noun that only a noun taking an article may fill (`nouns.takes_article`:
    not "a bacon", "another rice")."""
    return any(child.dep_ in ("det", "nummod") and child.lower_ in ("a", "an", "another", "each", "every", "one")
               for child in noun.children)


def _attribute_words(slot: Slot, with_antonyms: bool) -> list[str]:
    lex = lexicon()
    token = slot.span[0]
    head = head_noun(token)
    head_word = head_lemma(head) if head is not None and head.pos_ in ("NOUN", "PROPN") else None
    if is_color(slot.lemma) and (head_word is None or lex.is_person(head_word)):
        return []  # "a black man" is about skin, not paint
    words = lex.co_hyponyms(slot.lemma, ADJ)
    if with_antonyms:
        for opposite in lex.opposites_of(slot.lemma, ADJ):
            if opposite.head_class is None or (head_word and lex.in_class(head_word, opposite.head_class)):
                words.append(opposite.word)
    return words


def _action_words(slot: Slot) -> list[str]:
    lex = lexicon()
    verb = slot.span[0]
    words = [w for group in lex.actions_for(slot.lemma) if _frame_fits(verb, group) for w in group.verbs]
    return [w for w in words if lex.may_replace(slot.lemma, w) and refill_fits_clause(verb, w)]


def describes_alike(first: Token, second: Token) -> bool:
    """One noun (up to synonyms), and one phrase's modifiers among the other's: "a big orange square" and
    "a large orange square" or "an orange square" may both name either object, so a relation between them
    and its opposite can both hold."""
    lex = lexicon()
    if lex.canonical(noun_lemma(first)) != lex.canonical(noun_lemma(second)):
        return False
    words = [{lex.canonical(child.lower_) for child in noun.children if child.dep_ in ("amod", "compound", "nmod")}
             for noun in (first, second)]
    return words[0] <= words[1] or words[1] <= words[0]


def _spatial_words(slot: Slot) -> list[str]:
    lex = lexicon()
    obj_token, anchor = object_of(slot.span), slot.span[0].head
    if slot.span.start <= anchor.i < slot.span.end:  # a misparse heads the phrase with itself: the noun before
        before = [token for token in slot.span.doc[: slot.span.start] if token.pos_ in ("NOUN", "PROPN")]
        anchor = before[-1] if before else anchor
    subject = anchor if anchor.pos_ in ("NOUN", "PROPN") else subject_of(anchor)
    if obj_token is not None and subject is not None and describes_alike(subject, obj_token):
        return []
    obj = head_lemma(obj_token)
    return [
        opposite.word
        for opposite in lex.opposites_of(slot.lemma, SPATIAL)
        if opposite.head_class is None or (obj is not None and lex.in_class(obj, opposite.head_class))
    ]


def replacement_lemmas(slot: Slot, *, with_antonyms: bool) -> list[str]:
    """Lemmas that make the caption false in this slot, best first, none
    of them already in the caption."""
    if slot.pos == NOUN:
        words = _object_words(slot)
    elif slot.pos == ADJ:
        words = _attribute_words(slot, with_antonyms)
    elif slot.pos == VERB:
        words = _action_words(slot)
    else:
        words = _spatial_words(slot)
    # Spatial words repeat harmlessly ("on a table on a rug"); a doubled
    # noun, adjective or verb does not ("sitting and sitting").
    present = caption_lemmas(slot.span.doc) if slot.pos != SPATIAL else frozenset()
    return [w for w in dict.fromkeys(words) if w != slot.lemma and not set(w.split()) <= present]
