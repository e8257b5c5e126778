"""ARO order perturbations (Yuksekgonul et al., 2023, Table 1).

Like ARO, the caption is first lower-cased, stripped of punctuation and cut
to 30 words, so the variants are in that normalised form. Nouns are NN*
tags and adjectives JJ* tags; trigrams are consecutive three-word chunks
(the last may be shorter). One variant per subtype, as in ARO's COCO/Flickr
Order tasks; another seed gives other shuffles.
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable

from backend.perturb.core import Edit, Request, Variant, normalized
from backend.perturb.nlp import tag_words

FAMILY = "aro_order"
ARO_MAX_WORDS = 30
# Shuffles tried before a subtype is given up (e.g. a caption whose nouns
# are all the same word cannot change under a noun shuffle).
ATTEMPTS = 10
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")

Shuffle = Callable[[list[str], list[str], random.Random], list[str]]


def _permute(words: list[str], positions: list[int], rng: random.Random) -> list[str]:
    """Shuffle the words at `positions` among those positions only."""
    values = [words[i] for i in positions]
    rng.shuffle(values)
    result = list(words)
    for position, value in zip(positions, values):
        result[position] = value
    return result


def _is_noun_or_adjective(tag: str) -> bool:
    return tag.startswith(("NN", "JJ"))


def shuffle_nouns_adjs(words: list[str], tags: list[str], rng: random.Random) -> list[str]:
    nouns = [i for i, tag in enumerate(tags) if tag.startswith("NN")]
    adjectives = [i for i, tag in enumerate(tags) if tag.startswith("JJ")]
    return _permute(_permute(words, nouns, rng), adjectives, rng)


def shuffle_allbut_nouns_adjs(words: list[str], tags: list[str], rng: random.Random) -> list[str]:
    return _permute(words, [i for i, tag in enumerate(tags) if not _is_noun_or_adjective(tag)], rng)


def _trigrams(words: list[str]) -> list[list[str]]:
    return [words[i : i + 3] for i in range(0, len(words), 3)]


def shuffle_trigrams(words: list[str], tags: list[str], rng: random.Random) -> list[str]:
    trigrams = _trigrams(words)
    rng.shuffle(trigrams)
    return [word for trigram in trigrams for word in trigram]


def shuffle_within_trigrams(words: list[str], tags: list[str], rng: random.Random) -> list[str]:
    return [word for trigram in _trigrams(words) for word in rng.sample(trigram, len(trigram))]


SHUFFLES: dict[str, Shuffle] = {
    "shuffle_nouns_adjs": shuffle_nouns_adjs,
    "shuffle_allbut_nouns_adjs": shuffle_allbut_nouns_adjs,
    "shuffle_trigrams": shuffle_trigrams,
    "shuffle_within_trigrams": shuffle_within_trigrams,
}


def _variant(request: Request, matches: list[re.Match], words: list[str], shuffled: list[str], subtype: str) -> Variant:
    """The normalised shuffled caption, with one edit over the words that moved."""
    changed = [i for i, (old, new) in enumerate(zip(words, shuffled)) if old != new]
    first, last = changed[0], changed[-1]
    start, end = matches[first].start(), matches[last].end()
    edit = Edit(request.caption[start:end], " ".join(shuffled[first : last + 1]), start, end)
    return Variant(" ".join(shuffled), "negative", FAMILY, subtype, (edit,))


def aro_matches(caption: str) -> list[re.Match]:
    """The words ARO keeps (punctuation dropped, at most ARO_MAX_WORDS), with their offsets in the caption."""
    return list(_WORD.finditer(caption))[:ARO_MAX_WORDS]


def normalised(caption: str) -> str:
    """The caption as ARO reads it before shuffling: its kept words, lower-cased, joined by spaces."""
    return " ".join(match.group().lower() for match in aro_matches(caption))


def aro_order(request: Request) -> list[Variant]:
    matches = aro_matches(request.caption)
    words = [match.group().lower() for match in matches]
    if len(words) < 2:
        return []
    tags = [token.tag_ for token in tag_words(tuple(words))]
    variants = []
    for subtype, shuffle in SHUFFLES.items():
        for _ in range(ATTEMPTS):
            shuffled = shuffle(words, tags, request.rng)
            if shuffled != words and normalized(" ".join(shuffled)) not in request.forbidden:
                variants.append(_variant(request, matches, words, shuffled, subtype))
                break
    return variants
