"""Words that do not fit the words kept around them, read from the negative alone.

Generation-time checks stop REPLACE, CE-CLIP and ADDITION from making such negatives; negatives made by other
families, or before those checks, still hold them, and the hand-judged samples call them absurd. Each rule here
calls such a check as it is, asking it about the word that is there:

  neighbour_misfit  a noun its neighbours cannot describe (`refill_neighbours.neighbours_fit`, the noun taken as
                    its own refill): "Two brown zebras", "A slice of soup", "Cats with long orange beaks",
                    "A small bedroom, with a commode", "a beach of grass", "a selfie with a remote".
  attribute_misfit  an adjective the noun cannot take (`attribute_fit.attribute_fits`): a mammal of no coat
                    colour ("A green cat"), fruit or a picture of a colour it has not ("blue granny smith apples",
                    "Green and white photograph"), a material the thing is not made of ("a brick upholstered
                    chair", "a paper desk").
  partner_misfit    a dog or another animal joined to people whose acts only people do (`addition_partners`:
                    "Two women and a dog are squatting down and petting goats", "A woman and a dog are cooking").

Like every plausibility rule, a violation counts only where the perturbation touched it and the original breaks
no rule with the same predicate (`plausibility.implausibilities`).
"""
from __future__ import annotations

from spacy.tokens import Doc, Token

from backend.perturb.addition_partners import PERSON_ACTS, own_verbs, person_only
from backend.perturb.attribute_fit import MATERIAL_FITS, PICTURES, attribute_fits
from backend.perturb.kindred import TOY_MARKS
from backend.perturb.nouns import ANIMAL, PERSON, noun_key
from backend.perturb.parse_reading import noun_lemma, verb_lemma
from backend.perturb.plausibility_parse import Violation, kind_of, make_violation
from backend.perturb.refill_neighbours import PHOTOS, SLICES, UNSLICED, neighbours_fit
from backend.perturb.visual_classes import COAT_COLOURS, NATURAL_COLOURS

# Colours no mammal's coat has: "A green cat", "a blue cow" (red and orange ones are: a setter, a tabby).
UNNATURAL_COATS = frozenset("green blue purple pink violet lavender turquoise teal magenta".split())
AUTUMN = frozenset("red orange gold golden".split())
DOG_TOYS = frozenset("frisbee ball stick toy disc disk leash bone".split())
# The one material labelled: paper makes nothing heavy ("a paper desk", "paper floors", "paper archways" were judged
# absurd); stone, brick and glass things of kinds `attribute_fits` does not list are made ("a glass fence", "a stone
# board", "a stone spoon" were judged fine or in doubt).
FLIMSY = frozenset(["paper"])
VAGUE_THINGS = frozenset("object thing item structure stuff".split())


def _asked_of_refills_only(noun: Token) -> bool:
    """Parts of `neighbours_fit` that hold for a refill but not for a word a caption chose: "a slice of hot dog"
    is odd rather than absurd (judged doubt), and "a picture of a bathroom with a box" shows the box rather than
    being taken with it; only a picture taken ("takes a selfie with a remote") names its camera."""
    unit = noun.head.head if noun.dep_ == "pobj" and noun.head.lower_ == "of" else None
    if unit is not None and noun_lemma(unit) in SLICES and noun_key(noun) not in UNSLICED:
        return True
    holder = noun.head.head if noun.dep_ == "pobj" and noun.head.lower_ == "with" else None
    return holder is not None and noun_lemma(holder) in PHOTOS and verb_lemma(holder.head) != "take"


def _neighbour_misfits(doc: Doc) -> list[Violation]:
    """Nouns `neighbours_fit` rejects as their own refill."""
    return [make_violation("neighbour_misfit", noun_key(noun), [noun], None) for noun in doc
            if noun.pos_ == "NOUN" and not _asked_of_refills_only(noun)
            and not neighbours_fit(noun, noun_key(noun), noun_key(noun))]


def _modifiers(noun: Token) -> list[Token]:
    """`noun`'s adjectives and their conjuncts ("brown and blue dog"), and `FLIMSY` materials on its left, which
    spaCy reads as compounds ("a paper desk") or hangs on another modifier ("a brick upholstered chair")."""
    adjectives = [child for child in noun.children if child.dep_ == "amod"]
    adjectives += [conj for adjective in adjectives for conj in adjective.children if conj.dep_ == "conj"]
    materials = [token for left in noun.lefts for token in left.subtree
                 if token.lower_ in FLIMSY and token not in adjectives]
    return adjectives + materials


def _fits_all_the_same(noun: Token, word: str) -> bool:
    """Where `attribute_fits` is stricter than the judges: a picture's colours (a "pink and white photograph" was
    judged fine, a "green and white" one absurd), a mammal's red or orange coat ("An orange dog", "A red and white
    cat" were judged fine), a coloured toy or ornament ("a stuffed green cat", "a brown vase has four pink horses
    on it"), a tree in autumn ("a red tree"), a material other than paper (`FLIMSY`), a word for any thing."""
    key = noun_key(noun)
    if key in PICTURES or key in VAGUE_THINGS or word in COAT_COLOURS.get(key, ()):
        return True
    if word in MATERIAL_FITS:
        return word not in FLIMSY
    if kind_of(noun) == ANIMAL:
        toy = any(token.lower_ in TOY_MARKS for token in noun.subtree) or verb_lemma(noun.head) == "have"
        return toy or word not in UNNATURAL_COATS
    return word in AUTUMN and {"green", "brown"} <= NATURAL_COLOURS.get(key, frozenset())


def _attribute_misfits(doc: Doc) -> list[Violation]:
    """Modifiers `attribute_fits` rejects (but see `_fits_all_the_same`)."""
    return [make_violation("attribute_misfit", f"{modifier.lower_} {noun_key(noun)}", [modifier, noun], None)
            for noun in doc if noun.pos_ == "NOUN" for modifier in _modifiers(noun)
            if not attribute_fits(noun, modifier.lower_) and not _fits_all_the_same(noun, modifier.lower_)]


def _acts_as_people_do(verb: Token) -> bool:
    """A verb acting on an object no dog plays with, or a person's own act (`addition_partners.PERSON_ACTS`):
    not one that only holds something ("walking along the beach with a surfboard" was judged fine for a dog)."""
    objects = [noun_lemma(child) for child in verb.children if child.dep_ == "dobj"]
    return verb_lemma(verb) in PERSON_ACTS or any(obj not in DOG_TOYS for obj in objects)


def _partner_misfits(doc: Doc) -> list[Violation]:
    """An animal joined by "and" to people who do what only people do."""
    found = []
    for animal in doc:
        person = animal.head
        if animal.dep_ != "conj" or kind_of(animal) != ANIMAL or kind_of(person) != PERSON:
            continue
        if person_only([verb for verb in own_verbs(person, animal) if _acts_as_people_do(verb)]):
            found.append(make_violation("partner_misfit", noun_key(animal), [person, animal], None))
    return found


def fit_violations(doc: Doc) -> list[Violation]:
    """The rules here over one parse."""
    return _neighbour_misfits(doc) + _attribute_misfits(doc) + _partner_misfits(doc)
