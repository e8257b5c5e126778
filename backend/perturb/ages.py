"""Adults for children: "A child holding a toothbrush" -> "A man holding a toothbrush", "A group of children
standing next to each other" -> "A group of adults standing next to each other" (SugarCrepe's replace_obj:
"children" -> "adults"). The reverse of `gendered.people_slots` ("people" -> "children").

Only where the child is the caption's one person and nothing else marks childhood: with "a little child",
"a school", "a teddy bear" or a parent beside it, the adult would be absurd or the caption still true of
the photo ("a mother and her child" -> "a mother and her man"); nor a child's things ("a child's pair of
scissors" -> "a man's pair of scissors" was judged doubtful: the things may be the same). "Young" marks no
childhood: "young children" -> "young adults" is SugarCrepe's own negative.

A person, said of no age or gender, becomes a child ("A person is holding up a half eaten pastry" -> "A child is
holding up ..."): a typical photo of "a person" shows an adult, as `gendered.people_slots` has it for "people",
with its guard (no children, family or school named, no adults or adults' things) and adults' habits besides
("a child smoking a cigarette" is absurd).

Also a little girl for a little boy and back ("A little girl is standing between several orange cones" -> "A
little boy ..."): the lexicon keeps "little girl" whole (a "big girl" is another thing), so the word slots
never reach its noun; like `gendered.gender_swap`, not with a gendered pronoun or a word bound to one gender.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span

from backend.perturb.gendered import COUNTERPARTS, GENDER_BOUND, YOUNG_OR_ADULT_WORDS
from backend.perturb.lexicon import lexicon
from backend.perturb.parse_reading import GENDERED_PRONOUNS, NOUN_TAGS, PLURAL_PRONOUNS, noun_lemma

# Each child noun and the adult that replaces it; "man" for one child (the caption says no gender, and "an
# adult" reads like a form), "adults" for many.
ADULTS = {"child": "man", "kid": "man", "children": "adults", "kids": "adults"}
# Words that tie a caption to childhood: the photo's child cannot be an adult there.
CHILDHOOD = frozenset({
    "little", "small", "tiny", "baby", "babies", "toddler", "toddlers", "infant", "school", "schools",
    "student", "students", "toy", "toys", "teddy", "doll", "dolls", "crib", "stroller", "playground", "diaper",
    "potty", "bib", "highchair", "high", "birthday", "family", "parent", "parents", "mother", "father", "mom",
    "dad", "mommy", "daddy", "kindergarten", "preschool", "daycare", "nursery", "cartoon", "lollipop",
})

_LITTLE = frozenset({"girl", "boy", "girls", "boys"})
# Adults' habits and tools, beside `gendered.YOUNG_OR_ADULT_WORDS`: a child doing these reads as absurd.
_ADULT_HABITS = frozenset({
    "smoking", "smokes", "smoke", "cigarette", "cigar", "pipe", "alcohol", "drink", "drinks", "cocktail", "gun",
    "rifle", "chainsaw", "knife", "razor", "shaving", "truck", "bus", "taxi", "car", "uniform", "briefcase",
})


def child_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """The one child's adult (`adult_slots`), the one little girl's little boy (`little_slots`), a person's
    child (`person_slots`)."""
    return adult_slots(doc) + little_slots(doc) + person_slots(doc)


def person_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"a person" -> "a child" where nothing names an age, a gender's person or an adult's thing or habit."""
    if any(token.lower_ in YOUNG_OR_ADULT_WORDS | _ADULT_HABITS | GENDERED_PRONOUNS for token in doc):
        return []
    return [(doc[token.i : token.i + 1], ["child"]) for token in doc
            if token.lower_ == "person" and token.tag_ == "NN" and token.dep_ not in ("compound", "poss")]


def little_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """"little girl" -> "little boy" and back, for the caption's one gendered person (see the module's doc)."""
    if any(token.lower_ in GENDERED_PRONOUNS or token.lower_ in GENDER_BOUND for token in doc):
        return []
    people = [token for token in doc if token.lower_ in COUNTERPARTS]
    if len(people) != 1 or people[0].lower_ not in _LITTLE or people[0].i == 0:
        return []
    child = people[0]
    if doc[child.i - 1].lower_ != "little" or child.tag_ not in NOUN_TAGS or child.dep_ == "compound":
        return []
    return [(doc[child.i : child.i + 1], [COUNTERPARTS[child.lower_]])]


def adult_slots(doc: Doc) -> list[tuple[Span, list[str]]]:
    """The caption's one child noun with its adult, or nothing (see the module's guard)."""
    if any(token.lower_ in CHILDHOOD for token in doc):
        return []
    people = [token for token in doc if token.tag_ in NOUN_TAGS and lexicon().is_person(noun_lemma(token))]
    if len(people) != 1 or people[0].lower_ not in ADULTS or people[0].dep_ in ("compound", "poss"):
        return []
    child = people[0]
    if child.tag_ == "NN" and any(token.lower_ in PLURAL_PRONOUNS for token in doc):
        return []  # "A child ... their mouth": "A man ... their mouth" reads as two people
    return [(doc[child.i : child.i + 1], [ADULTS[child.lower_]])]
