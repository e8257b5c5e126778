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
  sweet_misfit      a sweet's mark on a food that is no sweet ("A chocolate frosted hot dog", "a frosted salad"): the
                    check on a refill (`refill_neighbours`' taste) needs the noun refilled, so it is asked here
                    of the marks it reads (`SWEET_MARKS`) but "iced" and "glazed" ("iced coffee", "glazed ham").
  partner_misfit    a dog or another animal joined to people whose acts only people do (`addition_partners`:
                    "Two women and a dog are squatting down and petting goats", "A woman and a dog are cooking").

Like every plausibility rule, a violation counts only where the perturbation touched it and the original breaks
no rule with the same predicate (`plausibility.implausibilities`).
"""
from __future__ import annotations

from collections.abc import Iterator

from spacy.tokens import Doc, Token

from backend.perturb.addition_partners import PERSON_ACTS, own_verbs, person_only
from backend.perturb.attribute_fit import MATERIAL_FITS, PICTURES, attribute_fits
from backend.perturb.kindred import TOY, TOY_MARKS
from backend.perturb.nouns import ANIMAL, PERSON, is_physical, noun_key
from backend.perturb.parse_reading import noun_lemma, of_holder, verb_lemma
from backend.perturb.plausibility_parse import Violation, is_under, kind_of, make_violation, some_sense_under
from backend.perturb.refill_neighbours import (
    GRASS_WORDS,
    PHOTOS,
    SAVOURY,
    SLICED,
    SLICES,
    SWEET_MARKS,
    SWEETS,
    UNSLICED,
    neighbours_fit,
)
from backend.perturb.visual_classes import COAT_COLOURS, NATURAL_COLOURS, visual_values

# Colours no mammal's coat has: "A green cat", "a blue cow" (red and orange ones are: a setter, a tabby), nor, for
# the animals of white, grey or striped coats, red or orange ("Red sheep standing in front of a colorful wall").
UNNATURAL_COATS = frozenset("green blue purple pink violet lavender turquoise teal magenta".split())
PALE_COATED = frozenset("sheep lamb zebra elephant panda".split())
PALE_COAT_MISFITS = UNNATURAL_COATS | {"red", "orange"}
FROSTING = SWEET_MARKS - {"iced", "glazed"}
_FOOD = frozenset(["food.n.01", "food.n.02"])
_SWEET_KINDS = frozenset(["baked_goods.n.01", "dessert.n.01", "cereal.n.03", "candy.n.01"])
DOG_TOYS = frozenset("frisbee ball stick toy disc disk leash bone".split())
# The one material labelled: paper makes nothing heavy ("a paper desk", "paper floors", "paper archways" were judged
# absurd); stone, brick and glass things of kinds `attribute_fits` does not list are made ("a glass fence", "a stone
# board", "a stone spoon" were judged fine or in doubt).
FLIMSY = frozenset(["paper"])
TOY_WORDS = TOY_MARKS | {TOY, "toy"}  # "a big pink toy bear"
VAGUE_THINGS = frozenset("object thing item structure stuff device room area place".split())
GRASS_MEASURES = frozenset("bunch tuft clump blade bale pile patch".split())
_ARTIFACTS = frozenset(["artifact.n.01"])
_FRUIT = frozenset(["edible_fruit.n.01"])
_DEVICES = frozenset(["device.n.01"])
SCREENS = frozenset(["television", "tv", "monitor"])


def _sliced(noun: Token) -> bool:
    """"A slice of hot dog" is odd rather than absurd (judged doubt): of the piece checks, only a piece of what
    comes in none ("a slice of soup") is asked."""
    unit = of_holder(noun)
    return unit is not None and noun_lemma(unit) in SLICES and noun_key(noun) not in SLICED | UNSLICED


def _shown_with(noun: Token) -> bool:
    """"A picture of a bathroom with a box", "taking a photo with his right hand": a thing a picture is "with"
    names its camera only where a picture is taken with a device ("takes a selfie with a remote")."""
    holder = noun.head.head if noun.dep_ == "pobj" and noun.head.lower_ == "with" else None
    if holder is None:
        return False
    photo = holder if noun_lemma(holder) in PHOTOS else next(
        (child for child in holder.children if child.dep_ == "dobj" and noun_lemma(child) in PHOTOS), None)
    if photo is None:
        return False
    taken = verb_lemma(photo.head if photo is holder else holder) == "take"
    return not taken or not (is_under(noun_key(noun), _DEVICES) or noun_key(noun) in SCREENS)


def _grass_word_only(noun: Token) -> bool:
    """"A grassy area", "a grassy valley": the grass check reads a refill of a grassy field, and a caption's own
    grassy place may be any; "a beach of grass" is asked."""
    if noun_lemma(noun) in GRASS_MEASURES:  # "a bunch of grass"
        return True
    of_grass = any(prep.lower_ == "of" for prep in noun.children if prep.dep_ == "prep")
    return not of_grass and any(token.lower_ in GRASS_WORDS for left in noun.lefts for token in left.subtree)


def _sweet_by_meat(noun: Token) -> bool:
    """"Donuts in a box and a type of meat on a plate": a sweet is asked about a savoury food only in its own
    phrase, or its piece's ("A cake with meat", "a slice of cake with ham slices on it")."""
    unit = of_holder(noun) or noun  # "a slice of cake with"
    with_words = [token for owner in {noun, unit} for prep in owner.children
                  if prep.dep_ == "prep" and prep.lower_ == "with" for token in prep.subtree]
    return noun_key(noun) in SWEETS and not any(noun_lemma(token) in SAVOURY for token in with_words)


def _greenery(noun: Token) -> bool:
    """Grass, a tree, a leaf, a field: what `NATURAL_COLOURS` gives greenery's palette."""
    return NATURAL_COLOURS.get(noun_key(noun)) == NATURAL_COLOURS["grass"]


def _colour_free(noun: Token, colour: str) -> bool:
    """A colour a thing of `NATURAL_COLOURS` may have all the same: a made thing comes in any ("a blue tennis
    ball", "a white traffic light" were judged fine or in doubt), and fruit is green before it is ripe ("green
    oranges" was judged fine)."""
    key = noun_key(noun)
    return is_under(key, _ARTIFACTS) or (colour == "green" and is_under(key, _FRUIT))


def _coloured_loosely(noun: Token) -> bool:
    """Colours a caption's own words may give: of greenery (autumn leaves, "an orange tree"), of a noun that
    modifies another ("a red water bottle", "a black snow suit") or an adjective ("black orange and yellow"), and
    those `_colour_free`."""
    if _greenery(noun) or noun.dep_ in ("compound", "nmod") or noun.head.pos_ == "ADJ":
        return True
    return any(_colour_free(noun, adjective.lower_) for adjective in _modifiers(noun))


def _asked_of_refills_only(noun: Token) -> bool:
    """Where `neighbours_fit` reads a refill, not a word the caption chose (each predicate above), a word for any
    thing or room ("a room with a sink, bed and toilet"), and a noun joined to others, whose "with" phrase may be
    the last one's ("A dog and a tan horse with a blond mane")."""
    return (noun_key(noun) in VAGUE_THINGS or bool(noun.conjuncts) or _sliced(noun) or _shown_with(noun)
            or _grass_word_only(noun) or _sweet_by_meat(noun) or _coloured_loosely(noun))


def _neighbour_misfits(doc: Doc) -> list[Violation]:
    """Nouns `neighbours_fit` rejects as their own refill."""
    return [make_violation("neighbour_misfit", noun_key(noun), [noun], None) for noun in doc
            if noun.pos_ == "NOUN" and not neighbours_fit(noun, noun_key(noun), noun_key(noun))
            and not _asked_of_refills_only(noun)]  # the cheaper test first: most nouns fit


def _colour_run(noun: Token) -> list[Token]:
    """The colour words just left of `noun`, through "and", commas and a name's words: spaCy may parse a colour as
    a compound or a subject ("a cloudy tan sky", "Green and black dog", "blue granny smith apples"), which no
    dependency reads as `noun`'s. Not through a noun ("a blue stop sign" is the sign's colour, not the stop's), nor
    for a noun that is a colour ("black and orange") or modifies another word ("a blue zebra print umbrella", "a
    blue and apple topped cake")."""
    run: list[Token] = []
    if _is_colour(noun) or noun.dep_ in ("compound", "nmod") or noun.head.pos_ in ("ADJ", "VERB"):
        return run
    for token in _leftwards_in_sentence(noun):
        if _is_colour(token):
            run.append(token)
        elif token.lower_ not in ("and", ",") and token.pos_ != "PROPN":
            break
    return run


def _leftwards_in_sentence(token: Token) -> Iterator[Token]:
    """The words left of `token` in its sentence, nearest first: lazily, as a colour run stops after a word or
    two, and `Token.sent` would find the whole sentence first (it was half the label's time in this rule)."""
    doc, i = token.doc, token.i
    while i > 0 and not doc[i].is_sent_start:
        i -= 1
        yield doc[i]


def _is_colour(token: Token) -> bool:
    return "colour" in visual_values(token.lower_, None)


def _modifiers(noun: Token) -> list[Token]:
    """`noun`'s adjectives and their conjuncts ("brown and blue dog"), the colours just left of it (`_colour_run`),
    and `FLIMSY` materials on its left, which spaCy reads as compounds ("a paper desk") or hangs on another
    modifier ("a brick upholstered chair")."""
    adjectives = [child for child in noun.children if child.dep_ == "amod"]
    adjectives += [conj for adjective in adjectives for conj in adjective.children if conj.dep_ == "conj"]
    adjectives += [colour for colour in _colour_run(noun) if colour not in adjectives]
    materials = [token for left in noun.lefts for token in left.subtree
                 if token.lower_ in FLIMSY and token not in adjectives]
    return adjectives + materials


def _fits_all_the_same(noun: Token, word: str) -> bool:
    """Where `attribute_fits` is stricter than the judges: a picture's colours (a "pink and white photograph" was
    judged fine, a "green and white" one absurd), a mammal's red or orange coat ("An orange dog", "A red and white
    cat" were judged fine), a coloured toy or ornament ("a stuffed green cat", "a brown vase has four pink horses
    on it"), greenery in autumn or in bloom ("a red tree", "pink leaves"), a made thing or unripe fruit
    (`_colour_free`), a material other than paper (`FLIMSY`), a word for any thing."""
    key = noun_key(noun)
    if key in PICTURES or key in VAGUE_THINGS or word in COAT_COLOURS.get(key, ()):
        return True
    if word in MATERIAL_FITS:
        return word not in FLIMSY
    if kind_of(noun) == ANIMAL:
        toy = any(token.lower_ in TOY_WORDS for token in noun.subtree) or verb_lemma(noun.head) == "have"
        return toy or word not in (PALE_COAT_MISFITS if key in PALE_COATED else UNNATURAL_COATS)
    return _greenery(noun) or _colour_free(noun, word)


def _common_noun(token: Token) -> bool:
    """A noun, or a lower-case word spaCy took for a name ("gray granny smith apples")."""
    return token.pos_ == "NOUN" or (token.pos_ == "PROPN" and token.is_lower)


def _attribute_misfits(doc: Doc) -> list[Violation]:
    """Modifiers `attribute_fits` rejects (but see `_fits_all_the_same`)."""
    return [make_violation("attribute_misfit", f"{modifier.lower_} {noun_key(noun)}", [modifier, noun], None)
            for noun in doc if _common_noun(noun) for modifier in _modifiers(noun)
            if not attribute_fits(noun, modifier.lower_) and not _fits_all_the_same(noun, modifier.lower_)]


def _frosted(mark: Token) -> list[Token]:
    """What a frosting word marks: the noun it modifies, or the object of "frosted" read as a verb ("A chocolate
    frosted hot dog")."""
    if mark.dep_ in ("amod", "compound"):
        return [mark.head]
    return [child for child in mark.children if child.dep_ == "dobj"] if mark.pos_ == "VERB" else []


def _sweet_misfits(doc: Doc) -> list[Violation]:
    """A frosted hot dog."""
    return [make_violation("sweet_misfit", noun_key(food), [mark, food], None) for mark in doc
            if mark.lower_ in FROSTING for food in _frosted(mark)
            if noun_key(food) not in SWEETS and some_sense_under(noun_key(food), _FOOD)
            and not is_under(noun_key(food), _SWEET_KINDS)]


def _acts_as_people_do(verb: Token) -> bool:
    """A verb acting on a thing no dog plays with, or a person's own act (`addition_partners.PERSON_ACTS`):
    not one that only holds something ("walking along the beach with a surfboard" was judged fine for a dog), nor
    one whose object is no thing ("A young man and his cute cat enjoy a nap")."""
    objects = [noun_lemma(child) for child in verb.children if child.dep_ == "dobj"]
    return verb_lemma(verb) in PERSON_ACTS or any(obj not in DOG_TOYS and is_physical(obj) for obj in objects)


def _partner_misfits(doc: Doc) -> list[Violation]:
    """An animal joined by "and" to people who do what only people do; not to people's object ("A man carrying a
    sheep and a cow": a verb between them)."""
    found = []
    for animal in doc:
        person = animal.head
        if animal.dep_ != "conj" or kind_of(animal) != ANIMAL or kind_of(person) != PERSON:
            continue
        if any(token.pos_ in ("VERB", "AUX") for token in doc[person.i:animal.i]):
            continue
        if person_only([verb for verb in own_verbs(person, animal) if _acts_as_people_do(verb)]):
            found.append(make_violation("partner_misfit", noun_key(animal), [person, animal], None))
    return found


def fit_violations(doc: Doc) -> list[Violation]:
    """The rules here over one parse."""
    return _neighbour_misfits(doc) + _attribute_misfits(doc) + _sweet_misfits(doc) + _partner_misfits(doc)
