"""Word units that no swap may split, and swaps that leave a caption true.

Two kinds of swap output were judged invalid most often (audit of real COCO
captions):

* Split units. "stop sign" is one noun: swapping "sign" with "post" gives
  "a post sign on a broken stop". Noun-noun compounds (spaCy's `compound`
  arc, plus the lexicon's multi-word nouns such as "hot dog"), hyphenated
  words ("close-up", "black-and-white"), coordinated adjectives ("red and
  white", a two-colour object) and shaded colours ("light blue", "baby
  blue") move whole or not at all.
* Still-true rewrites. Conjuncts ("a man and woman" -> "a woman and man"),
  the arguments of a symmetric relation ("a man sitting by a cake" -> "a
  cake sitting by a man", "a man hugging a woman"), and two modifiers of
  one noun ("large brown dog" -> "brown large dog") can trade places
  without changing the claim.
  `still_true_swaps` lists those swaps so that no family offers their text
  as a negative.
"""
from __future__ import annotations

import itertools

from spacy.tokens import Doc, Span, Token

from backend.perturb.lexicon import lexicon
from backend.perturb.nlp import NOUNISH, find_phrases, spatial_relations, token_span, verb_relations
from backend.perturb.visual_classes import VISUAL_CLASSES, visual_values

HYPHENS = frozenset({"-", "\u2010", "\u2011", "\u2013"})
# Words that shade a colour rather than describe the object: "light blue".
SHADES = frozenset({"light", "dark", "pale", "bright", "deep", "navy", "baby", "sky", "royal", "hot", "neon", "lime"})
COLOUR_WORDS = frozenset(word for words in VISUAL_CLASSES["colour"].values() for word in words) | {"gold", "golden"}
COORDINATORS = frozenset({"and", "or", "&"})
# Words of degree that move with their adjective ("very small", "extremely tall").
DEGREE_WORDS = frozenset({"very", "extremely", "really", "quite", "fairly", "rather", "incredibly", "unusually",
                          "relatively", "super"})
# Compound nouns frequent in COCO captions, kept whole even when spaCy
# misses the compound arc.
COMMON_COMPOUNDS = (
    "street sign", "stop sign", "traffic sign", "traffic light", "stop light", "street light", "teddy bear",
    "cell phone", "tennis court", "tennis player", "tennis racket", "tennis racquet", "tennis ball",
    "baseball player", "baseball bat", "baseball field", "baseball cap", "soccer ball", "fire hydrant",
    "fire truck", "fire place", "parking meter", "parking lot", "video game", "game controller",
    "laptop computer", "clock tower", "double decker", "bathroom sink", "toilet seat", "toilet bowl",
    "side walk", "skate board", "surf board", "snow board", "dining table", "dining room", "train track",
    "train station", "train car", "park bench", "picnic table", "coffee table", "computer monitor",
    "computer desk", "display case", "hospital bed", "kitchen counter", "counter top", "tooth brush",
    "hotel room", "rest room", "book shelf", "hair dryer", "television set", "lap top", "suit case",
    "motor bike", "wine glass", "ice cream", "polar bear", "high chair", "remote control", "police officer",
    "home plate", "ski lift", "ski pole", "hot dog", "living room",
)
# Verbs that only say where something is: "a cake sitting by a man" makes
# the same claim as "a man sitting by a cake" for a symmetric relation.
LOCATIVE_VERBS = frozenset({
    "sit", "stand", "lie", "lay", "rest", "park", "place", "locate", "position", "set", "perch", "be",
    "see", "show", "picture", "display", "hang",
})
# Verbs whose two arguments do the same to each other: two people hugging
# hug each other, so "a man hugging a woman" -> "a woman hugging a man" is true.
SYMMETRIC_VERBS = frozenset({
    "hug", "embrace", "kiss", "meet", "greet", "face", "marry", "fight", "wrestle", "race", "join",
    "accompany", "resemble", "touch", "cuddle", "date", "play", "chat", "talk", "shake", "nuzzle",
})
# Dependents that carry no claim of their own about one conjunct.
_NEUTRAL_DEPS = frozenset({"det", "predet", "punct", "cc", "conj", "case"})


def is_hyphenated(token: Token) -> bool:
    """Part of a hyphenated word: "close" and "up" in "close-up"."""
    doc = token.doc
    if any(hyphen in token.text for hyphen in HYPHENS) and len(token) > 1:
        return True
    before = token.i > 0 and doc[token.i - 1].text in HYPHENS and not doc[token.i - 1].whitespace_
    after = token.i + 1 < len(doc) and doc[token.i + 1].text in HYPHENS and not token.whitespace_
    return bool(before or after)


def is_coordinated(token: Token) -> bool:
    """A modifier in "red and white" or "white and glass": one half of a
    two-part attribute."""
    return token.dep_ == "conj" or any(child.dep_ == "conj" for child in token.children)


def _multiword_nouns(doc: Doc) -> list[Span]:
    """Known compound nouns, found by lemma whatever spaCy's arcs say (it
    reads "sniffs a fire hydrant" as "fire" the object, "hydrant" an adverb)."""
    return find_phrases(doc, [*lexicon().multiword_nouns, *COMMON_COMPOUNDS], by_lemma=True)


def _compound_parts(token: Token) -> list[Token]:
    """Tokens joined to `token` by compound arcs, recursively."""
    parts = [child for child in token.children if child.dep_ == "compound"]
    return parts + [part for child in parts for part in _compound_parts(child)]


def in_compound(token: Token) -> bool:
    """Inside a compound noun: "stop" and "sign" in "stop sign", "hot" and
    "dog" in "hot dog"."""
    if token.dep_ == "compound" or any(child.dep_ == "compound" for child in token.children):
        return True
    return any(span.start <= token.i < span.end for span in _multiword_nouns(token.doc))


def noun_unit(token: Token) -> Span | None:
    """The whole noun whose last word is `token` ("stop sign" for "sign"),
    or None when `token` is not the last word of its noun ("stop"), or the
    noun cannot move whole (hyphenated, or its parts are not contiguous)."""
    doc = token.doc
    start = token.i
    for span in _multiword_nouns(doc):
        if span.start <= token.i < span.end - 1:
            return None
        if token.i == span.end - 1:
            start = span.start
    while start > 0 and doc[start - 1].dep_ == "compound" and doc[start - 1].head.i >= start:
        start -= 1
    unit = doc[start : token.i + 1]
    if any(not unit.start <= part.i < unit.end for part in _compound_parts(token)):
        return None
    if any(is_hyphenated(word) or is_shaded(word) for word in unit):
        return None
    return unit


def is_shaded(token: Token) -> bool:
    """A colour with a shade word right before it ("light blue", "neon
    green"), or that shade word itself."""
    doc = token.doc
    if token.lower_ in SHADES and token.i + 1 < len(doc) and doc[token.i + 1].lower_ in COLOUR_WORDS:
        return True
    return token.lower_ in COLOUR_WORDS and token.i > 0 and doc[token.i - 1].lower_ in SHADES


def in_colour_list(token: Token) -> bool:
    """One colour of several given together, with or without "and" and
    commas ("red yellow and blue", "red, white and blue"): a many-coloured
    object, not one colour to trade."""
    if token.lower_ not in COLOUR_WORDS:
        return False
    doc = token.doc
    for step in (-1, 1):
        i = token.i + step
        while 0 <= i < len(doc) and doc[i].lower_ in (",", "and", "&", "/", "or"):
            i += step
        if 0 <= i < len(doc) and doc[i].lower_ in COLOUR_WORDS:
            return True
    return False


def is_whole_adjective(token: Token) -> bool:
    """An adjective that can move alone: not half of "red and white", not
    part of "light blue", "red yellow and blue", "snow-covered" or a
    compound, and not modified ("very nice": the modifier would stay behind)."""
    return _stands_apart(token) and not _modifiers(token)


def degree_word(token: Token) -> Token | None:
    """"very" in "a very small kitchen": the one modifier of an adjective that would otherwise move alone
    (`is_whole_adjective`), a `DEGREE_WORDS` word right before it; the two move together ("A red toilet in a
    very small bathroom" -> "A very small toilet in a red bathroom")."""
    modifiers = _modifiers(token) if _stands_apart(token) else []
    if len(modifiers) != 1:
        return None
    word = modifiers[0]
    return word if word.lower_ in DEGREE_WORDS and word.i == token.i - 1 and not list(word.children) else None


def _stands_apart(token: Token) -> bool:
    """Not half of "red and white", nor part of "light blue", "red yellow and blue", "snow-covered" or a compound."""
    return not (is_hyphenated(token) or is_coordinated(token) or is_shaded(token) or in_colour_list(token)
                or in_compound(token))


def _modifiers(token: Token) -> list[Token]:
    """The words modifying an adjective that would stay behind if it moved alone."""
    return [child for child in token.children
            if child.dep_ in ("advmod", "npadvmod", "amod", "compound") and not _misattached(child, token)]


def _misattached(child: Token, adjective: Token) -> bool:
    """An adjective of another visual class hung on this one ("small" on "purple" in "a small purple square"):
    spaCy's slip, both describe the noun, so neither stays behind when one moves."""
    mine, theirs = visual_values(adjective.lower_, None), visual_values(child.lower_, None)
    return child.dep_ == "amod" and bool(theirs) and bool(mine) and not set(mine) & set(theirs)


def _content_span(token: Token, limit: int) -> Span | None:
    """The token with every dependent before index `limit` that says
    something about it (not its determiner or coordinator), if contiguous.
    Dependents from `limit` on are shared: "sitting" in "a man and woman
    sitting" is said of both conjuncts."""
    kept = [child for child in token.children if child.dep_ not in _NEUTRAL_DEPS and child.i < limit]
    start = min([token.i] + [child.left_edge.i for child in kept])
    end = max([token.i] + [child.right_edge.i for child in kept]) + 1
    covered = {word.i for child in kept for word in child.subtree} | {token.i}
    return token.doc[start:end] if covered == set(range(start, end)) and end <= limit else None


def _full_span(token: Token, content: Span) -> Span:
    """The content span with the determiners in front: "the open door"."""
    start = content.start
    while start > 0 and token.doc[start - 1].dep_ in ("det", "predet", "nummod") and token.doc[start - 1].head == token:
        start -= 1
    return token.doc[start : content.end]


def conjunct_pairs(doc: Doc) -> list[tuple[Token, Token]]:
    """(first, second) members of one coordination with the same part of speech, any two of a list ("a
    couch, chair, table and television": commas join its members, one "and"/"or" makes it a list), in text
    order. Any two members trade places and the claim stays: "a couch, table, chair and television"."""
    pairs = []
    for token in doc:
        if token.dep_ == "conj":
            continue
        chain, member = [token], token
        while next_one := [child for child in member.children if child.dep_ == "conj"]:
            member = next_one[0]
            chain.append(member)
        if len(chain) < 2 or not any(word.lower_ in COORDINATORS for word in doc[chain[0].i + 1 : chain[-1].i]):
            continue
        pairs += [(first, second) for first, second in itertools.combinations(chain, 2)
                  if first.pos_ == second.pos_ or (first.pos_ in NOUNISH and second.pos_ in NOUNISH)]
    return pairs


def _argument_pairs(
    first: Token, second: Token, limit: int, second_limit: int | None = None
) -> list[tuple[Span, Span]]:
    """Swaps of two arguments that move everything said about each (`first`
    up to index `limit`: what follows is shared, or is the relation;
    `second` up to `second_limit`, by default the end)."""
    spans = []
    one = _content_span(first, limit)
    two = _content_span(second, len(second.doc) if second_limit is None else second_limit)
    if one is None or two is None or one.end > two.start:
        return []
    spans.append((one, two))
    full_one, full_two = _full_span(first, one), _full_span(second, two)
    if full_one.end <= full_two.start:
        spans.append((full_one, full_two))
    return spans


def _locative_gap(subject: Span, predicate: Span) -> bool:
    """Nothing but a copula or a locative verb ("sitting", "is parked")
    between a symmetric relation's subject and its phrase."""
    gap = subject.doc[subject.end : predicate.start]
    verbs = [word for word in gap if word.pos_ in ("VERB", "AUX")]
    others = [word for word in gap if word.pos_ not in ("VERB", "AUX", "ADV", "PART", "PUNCT")]
    return not others and all(word.lemma_.lower() in LOCATIVE_VERBS for word in verbs)


def _symmetric_swaps(doc: Doc) -> list[tuple[Span, Span]]:
    """Arguments of "near", "next to", "with"... (when nothing but a locative
    verb stands between) and of symmetric verbs ("hugging")."""
    relations = spatial_relations(doc, lexicon().symmetric_relations)
    relations = [r for r in relations if _locative_gap(r.subject, r.predicate)]
    relations += [r for r in verb_relations(doc) if r.predicate.root.lemma_.lower() in SYMMETRIC_VERBS]
    found = []
    for relation in relations:
        found.append((relation.subject, relation.object))
        found += _argument_pairs(relation.subject.root, relation.object.root, relation.predicate.start)
    return found


def _same_head_modifiers(doc: Doc) -> list[tuple[Span, Span]]:
    """Two single-word modifiers of one noun: "large brown dog", "smiling man sitting"."""
    pairs = []
    for noun in doc:
        if noun.pos_ not in NOUNISH:
            continue
        modifiers = [child for child in noun.children if child.dep_ in ("amod", "acl")]
        for i, first in enumerate(modifiers):
            for second in modifiers[i + 1 :]:
                pairs.append((token_span(first), token_span(second)))
    return pairs


def still_true_swaps(doc: Doc) -> list[tuple[Span, Span]]:
    """Span pairs whose swap keeps the caption's claim: conjuncts with all
    their modifiers, symmetric-relation arguments, modifiers of one noun.
    Pairs are disjoint and in text order."""
    pairs = []
    for first, second in conjunct_pairs(doc):
        pairs += _argument_pairs(first, second, second.i)
        # What follows the last conjunct may be said of both: "a dog and a cat on a bed".
        pairs += _argument_pairs(first, second, second.i, second.i + 1)
    pairs += _symmetric_swaps(doc) + _same_head_modifiers(doc)
    ordered = {(a, b) if a.start < b.start else (b, a) for a, b in pairs if a.end <= b.start or b.end <= a.start}
    return sorted(ordered, key=lambda pair: (pair[0].start, pair[0].end, pair[1].start, pair[1].end))

