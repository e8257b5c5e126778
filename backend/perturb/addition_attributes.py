"""Attribute additions (SugarCrepe's add_att): a noun of the caption gains a visual word it did not state.

What is added:

* a colour, material or pattern word that suits the noun (`visual_classes`, and `attribute_fit`: no "leather
  table", "cardboard bench" or "blue pizza"), of a class the noun carries no
  word of yet, that the counts (`caption_stats`) show on such nouns (the class occurs with the noun, or, for a
  colour on a made thing the counts name too seldom, with its lexicon group: "a red kite" from other sports
  equipment), but that is not the usual value (under `IMPLIED_SHARE` of the words of that class: no "white
  toilet");
* on a person, a look a typical photo of the caption does not show (`PERSON_LOOKS`: "a bearded man", "an
  elderly woman", "a red-haired boy"), never where the caption already says the person's age or hair.

Where it goes, in English adjective order: in front of the noun's compound modifiers (and a colour in front of
a material), and only where nothing that may belong to the noun comes right before that place: a determiner, a
number, a size, age or opinion word, another visual word, or a word outside the noun phrase (a preposition, a
verb, a conjunction, a comma: "a group of white sheep", "couch and red chair"), or the caption's start. After
any other modifier it may split a compound ("the front green seat"); in front of one, an unknown word order
("an old yellow fashioned stove").
"""
from __future__ import annotations

from collections.abc import Iterator

from spacy.tokens import Doc, Token

from backend.perturb.attribute_fit import PICTURES, attribute_fits
from backend.perturb.caption_stats import SEP, CaptionStats
from backend.perturb.core import Edit, Request, Variant, build, spread
from backend.perturb.inflect import fit_case
from backend.perturb.lexicon import _synsets, lexicon
from backend.perturb.nlp import find_phrases
from backend.perturb.nouns import animacy, is_describable, is_object_noun, is_place
from backend.perturb.parse_reading import caption_lemmas, in_fixed_phrase, noun_lemma
from backend.perturb.units import HYPHENS, is_hyphenated
from backend.perturb.visual_classes import MANY_COLOURS, NATURAL_COLOURS, VISUAL_CLASSES, visual_values

FAMILY = "addition"
MIN_TOGETHER = 2
IMPLIED_SHARE = 0.2
ADDED_CLASSES = ("colour", "material", "pattern")
# Already coloured: no colour is added ("A brightly colored single black engine plane" was judged err).
MANY_COLOURED = MANY_COLOURS | {"multi-colored", "rainbow", "colored", "coloured"}
COLOUR_NOUNS = frozenset({"color", "colour"})  # "sinks of all different colors", "umbrellas in many colours"
# A count of parts before a compound modifier makes one adjective with it: "a single engine plane", "a double
# decker bus", "twin engine": nothing goes between them.
MULTIPLIERS = frozenset("single double twin triple quadruple".split())
PAINTING = frozenset({"paint", "color", "colour", "dye"})
# Size, age, opinion and state words: an added colour, material or pattern goes after them ("a large brown
# bench"); after any other modifier it may split a compound ("the front green seat").
EARLIER_ADJECTIVES = frozenset("""
    large small big little tiny huge giant tall short long wide narrow thick thin fat skinny enormous massive
    miniature high low old new young antique vintage modern ancient older beautiful pretty nice cute ornate fancy
    empty full clean dirty messy shiny lovely open closed broken single lone only other another half whole
    several many few some various different
""".split())
# Words outside the noun phrase: what comes before the added word cannot be part of a compound with the noun.
PHRASE_BOUNDARIES = frozenset({"ADP", "CCONJ", "SCONJ", "VERB", "AUX", "PUNCT"})
# Groups of made things whose colour is free: a colour the group shows may go on a member the counts name too
# seldom ("a red kite"). Natural things (fruit, animals, plants) keep their own palettes and are left out.
COLOURED_GROUPS = frozenset({
    "vehicle", "furniture", "tableware", "electronics", "appliance", "sports equipment", "container",
    "instrument", "household object",
})
# A person's looks a typical photo of the caption does not show, by the person noun's lemma, each with the
# words that already settle it (an age, a beard, a hair colour) and so bar it.
_AGE = frozenset("young old elderly older teenage teen baby little adult aged senior middle".split())
_HAIR = frozenset("""blonde blond brunette haired bald redhead redheaded beard bearded mustache moustache hair
    curly""".split())
PERSON_LOOKS: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    **dict.fromkeys(("man", "guy", "gentleman"), (("bearded", _HAIR), ("elderly", _AGE))),
    **dict.fromkeys(("woman", "lady", "person"), (("elderly", _AGE), ("red-haired", _HAIR))),
    **dict.fromkeys(("boy", "girl", "child", "kid", "toddler"), (("red-haired", _HAIR), ("curly-haired", _HAIR))),
}


# Words naming a ball game: its ball has the game's colour ("pitching a green ball" was judged absurd: a baseball
# is white), so no colour is added to a ball where the caption names one.
BALL_GAMES = frozenset("""baseball softball tennis soccer golf basketball football volleyball pitch pitcher batter
    catcher umpire bat racket racquet""".split())


def is_compound_word(first: str, second: str) -> bool:
    """WordNet knows the two words as one noun ("big horn" -> bighorn, "home plate"): the counts of the second
    alone say nothing of it, and a word put between them breaks it."""
    return bool(_synsets(first + second, "NOUN") or _synsets(f"{first}_{second}", "NOUN"))


# Holders whose water a caption sees, which shows them to be glass (not a "water bottle": what it is for).
SEE_THROUGH = frozenset({"vase", "jar", "bottle", "tank", "aquarium"})
# Compound words that say what the thing is made of, though no material word of `visual_classes`: "a wire fence"
# is metal ("a metal wire fence" was judged err: still true).
MADE_OF_COMPOUNDS = frozenset({"wire", "chain", "chainlink", "cardboard", "paper", "straw", "wicker"})


def _classes_on(noun: Token, kind: str | None) -> set[str]:
    """Visual classes the noun's own modifiers already state, or a participle after it ("a toilet painted red")."""
    found: set[str] = set()
    for child in noun.children:
        if child.dep_ == "compound" and child.lower_ in MADE_OF_COMPOUNDS:
            found.add("material")
        if child.dep_ in ("amod", "compound", "nmod", "acl") or (child.dep_ == "conj" and child.pos_ == "ADJ"):
            found |= set(visual_values(child.lower_, kind, noun_lemma(noun)))
            for grandchild in child.children:
                found |= set(visual_values(grandchild.lower_, kind, noun_lemma(noun)))
    return found


def _usual(word_count: int, class_count: int) -> bool:
    return class_count > 0 and word_count / class_count >= IMPLIED_SHARE * 2.5


def _group_of(lemma: str) -> str | None:
    return next((name for name, words in lexicon().object_groups.items() if lemma in words), None)


def _class_counts(stats: CaptionStats, visual_class: str, lemma: str, kind: str | None) -> dict[str, int]:
    """How often each word of the class modifies the noun; for a colour the noun shows too seldom
    (`MIN_TOGETHER`) and a made thing of `COLOURED_GROUPS`, how often it modifies the group's members."""
    words = [words[0] for words in VISUAL_CLASSES[visual_class].values()]
    counts = {word: stats.amod.get(f"{word}{SEP}{lemma}", 0) for word in words}
    group = _group_of(lemma)
    if visual_class == "colour" and kind is None and sum(counts.values()) < MIN_TOGETHER and group in COLOURED_GROUPS:
        members = lexicon().object_groups[group]
        counts = {word: sum(stats.amod.get(f"{word}{SEP}{member}", 0) for member in members) for word in words}
    return counts


def added_attributes(noun: Token, stats: CaptionStats) -> list[tuple[str, str]]:
    """(class, word) a photo of this noun could show but that the caption leaves open, from classes the
    counts show on this noun (or its group, `_class_counts`) at least `MIN_TOGETHER` times, the usual value
    left out; for a person, its `PERSON_LOOKS` the caption does not settle."""
    kind = animacy(noun)
    lemma = noun_lemma(noun)
    if kind == "person":
        words = {t.lower_ for t in noun.doc} | {part for t in noun.doc for part in t.lower_.split("-")}
        monochrome = in_monochrome_picture(noun.doc)
        return [("look", look) for look, settled in PERSON_LOOKS.get(lemma, ())
                if not words & settled and not (monochrome and look == "red-haired")]
    taken = _classes_on(noun, kind)
    if any(verb.lemma_.lower() in PAINTING for verb in (noun.head, *noun.children) if verb.pos_ == "VERB"):
        taken.add("colour")  # "a toilet painted red", however it is parsed
    if NATURAL_COLOURS.get(lemma) == NATURAL_COLOURS["tree"]:
        taken.add("colour")  # greenery: a brown or yellow tree is a dead or autumn one, "yellow palm trees"
    if any(child.lower_ in MANY_COLOURED for child in noun.children) or any(
            token.lemma_.lower() in COLOUR_NOUNS for token in noun.subtree):
        taken.add("colour")  # "colorful umbrellas", "sinks of all different colors": one more would contradict it
    if in_monochrome_picture(noun.doc):
        taken.add("colour")  # "a blue chalkboard sign in a vintage black and white photo" was judged absurd
    if lemma in SEE_THROUGH and any(t.lower_ == "water" and t.dep_ != "compound" for t in noun.subtree):
        taken.add("material")  # "a vase filled with water and rocks on bottom" is glass (judged err: still true)
    if lemma == "ball" and {t.lemma_.lower() for t in noun.doc} & BALL_GAMES:
        taken.add("colour")  # a game's ball has the game's colour
    found = []
    for visual_class in ADDED_CLASSES:
        if visual_class in taken:
            continue
        counts = _class_counts(stats, visual_class, lemma, kind)
        total = sum(counts.values())
        if total < MIN_TOGETHER:
            continue
        found += [(visual_class, word) for word in counts if visual_class in visual_values(word, kind, lemma)
                  and not _usual(counts[word], total) and counts[word] < total and attribute_fits(noun, word)]
    return found


def in_monochrome_picture(doc: Doc) -> bool:
    """The caption is of a black and white picture ("in a vintage black and white photo"): no colour shows."""
    text = " ".join(token.lower_ for token in doc)
    return ("black and white" in text or "black & white" in text) and any(
        token.lemma_.lower() in PICTURES for token in doc)


def _attribute_site(noun: Token, visual_class: str) -> int | None:
    """Offset where the word goes, in English adjective order: a material right before the noun's compound
    modifiers ("a metal park bench"), a colour or pattern before those and any material ("a brown wooden
    bench"), both after size, age and the determiner. -1 at the caption's start (the word takes its capital).
    None unless the word before is a determiner, a number right before the noun, a size, age or opinion word
    (`EARLIER_ADJECTIVES`), a visual word of another class or a word outside the noun phrase
    (`PHRASE_BOUNDARIES`): any other modifier may belong to the noun ("the front seat", "a semi truck", "a
    double decker", "a two tier cake"), and a word put after it splits them ("the front green seat"); None too
    where the word before and the first compound word are one noun (`is_compound_word`: "big horn sheep")."""
    doc, start = noun.doc, noun.i
    while start > 0 and doc[start - 1].head.i >= start and doc[start - 1].dep_ in ("compound", "amod", "nmod") and (
            doc[start - 1].dep_ == "compound"
            or (visual_class != "material" and "material" in visual_values(doc[start - 1].lower_, None))):
        start -= 1
    if start == 0:
        return -1 if doc[0].pos_ == "NOUN" and doc[0].text[:1].isupper() and doc[0].text[1:].islower() else None
    if doc[start - 1].text in HYPHENS or not doc[start - 1].whitespace_:
        return None  # inside "double-decker"
    before = doc[start - 1]
    if start < noun.i and (is_compound_word(before.lower_, doc[start].lower_) or before.lower_ in MULTIPLIERS):
        return None  # "big horn sheep" are bighorn sheep, "single engine" one adjective: no "single black engine"
    if before.tag_ in ("DT", "PRP$", "POS", "WP$") or (before.tag_ == "CD" and start == noun.i):
        return doc[start].idx
    if before.lower_ in EARLIER_ADJECTIVES or set(visual_values(before.lower_, None)) - {visual_class}:
        return doc[start].idx
    if before.pos_ in PHRASE_BOUNDARIES and before.head.i < start and before.dep_ not in ("amod", "compound", "nmod"):
        return doc[start].idx
    return None


def _photographers(token: Token) -> bool:
    """"the camera" someone looks into or poses for is the photographer's, outside the photo."""
    return noun_lemma(token) == "camera" and any(c.lower_ == "the" for c in token.children)


def _negated(token: Token) -> bool:
    """The noun, or a noun it is listed with, is under "no": "a street with no cars" is still true with "no red
    cars", and "A No bicycles, skates or skateboards sign" is a sign's own words (its "black skateboards" was
    judged err)."""
    return any(child.dep_ == "det" and child.lower_ == "no" for noun in (token, *token.conjuncts)
               for child in noun.children)


def _attribute_nouns(doc: Doc) -> list[Token]:
    """Object nouns outside a listed compound ("hot dog": no "black hot dogs"), not a possessive ("a children's
    party": the article is the party's), not under "no" (`_negated`) and not the photographer's camera."""
    multiword = find_phrases(doc, lexicon().multiword_nouns, by_lemma=True)
    return [token for token in doc if token.tag_ in ("NN", "NNS") and token.is_alpha and token.dep_ != "compound"
            and token.dep_ != "poss" and not any(c.dep_ == "case" for c in token.children)
            and not _photographers(token) and not _negated(token)
            and is_describable(token) and is_object_noun(token) and not is_place(token)
            and not any(in_fixed_phrase(word, lexicon().fixed_phrases) for word in _with_compounds(token))
            and not is_hyphenated(token) and not any(span.start <= token.i < span.end for span in multiword)]


def _with_compounds(noun: Token) -> list[Token]:
    """The noun and the words compounded into it: an attribute goes before them all, so none may end a set
    phrase ("a no smoking sign" -> "a no red smoking sign" was judged garbled)."""
    return [noun, *(child for child in noun.lefts if child.dep_ == "compound")]


def _insertion(doc: Doc, site: int, word: str) -> Edit:
    """The edit putting `word` at `site`; at the caption's start (-1) it takes the first word's capital."""
    if site >= 0:
        return Edit("", f"{word} ", site, site)
    first = doc[0]
    return Edit(first.text, f"{fit_case(word, first.text, at_sentence_start=True)} {first.text.lower()}",
                first.idx, first.idx + len(first))


def attribute_additions(request: Request, stats: CaptionStats) -> Iterator[Variant]:
    """Variants adding one attribute, spread over the caption's nouns."""
    options = []
    present = caption_lemmas(request.doc)
    for noun in _attribute_nouns(request.doc):
        sites = {cls: _attribute_site(noun, cls) for cls in (*ADDED_CLASSES, "look")}
        options.append([(site, word) for cls, word in added_attributes(noun, stats)
                        if word not in present and (site := sites[cls]) is not None])
    for site, word in spread(options, request.rng):
        yield build(request, [_insertion(request.doc, site, word)], FAMILY, "attribute")
