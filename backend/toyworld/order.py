"""ARO's four word-order perturbations, applied to toy captions.

ARO tags words with spaCy; the toy grammar knows each word's class exactly:
nouns are the shape nouns, adjectives the colour and size words. The four
perturbations (ARO's COCO-/Flickr-Order): shuffle nouns and adjectives (each
class among its own positions), shuffle every other word, shuffle trigrams
(consecutive 3-word chunks, the last may be shorter), shuffle the words
within each trigram. Each perturbation is redrawn until its text differs
from the caption, so a model cannot score it as the original by accident.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .grammar import NOUNS, SIZE_MEANING, tokenize_words
from .scene import COLOURS

ADJECTIVES: frozenset[str] = frozenset([*COLOURS, *SIZE_MEANING])
NOUN_WORDS: frozenset[str] = frozenset(NOUNS)
PERTURBATIONS: tuple[str, ...] = (
    "shuffle_nouns_and_adjectives", "shuffle_all_but_nouns_and_adjectives",
    "shuffle_trigrams", "shuffle_within_trigrams",
)


def _shuffle_positions(words: list[str], positions: list[int], rng: np.random.Generator) -> list[str]:
    out = list(words)
    for src, dst in zip(rng.permutation(positions), positions):
        out[dst] = words[src]
    return out


def _nouns_and_adjectives(words: list[str], rng: np.random.Generator) -> list[str]:
    nouns = [i for i, w in enumerate(words) if w in NOUN_WORDS]
    adjectives = [i for i, w in enumerate(words) if w in ADJECTIVES]
    return _shuffle_positions(_shuffle_positions(words, nouns, rng), adjectives, rng)


def _all_but(words: list[str], rng: np.random.Generator) -> list[str]:
    others = [i for i, w in enumerate(words) if w not in NOUN_WORDS | ADJECTIVES]
    return _shuffle_positions(words, others, rng)


def _trigrams(words: list[str]) -> list[list[str]]:
    return [words[i:i + 3] for i in range(0, len(words), 3)]


def _shuffle_trigrams(words: list[str], rng: np.random.Generator) -> list[str]:
    chunks = _trigrams(words)
    return [w for k in rng.permutation(len(chunks)) for w in chunks[k]]


def _within_trigrams(words: list[str], rng: np.random.Generator) -> list[str]:
    return [chunk[k] for chunk in _trigrams(words) for k in rng.permutation(len(chunk))]


_FUNCTIONS: dict[str, Callable[[list[str], np.random.Generator], list[str]]] = dict(zip(
    PERTURBATIONS, (_nouns_and_adjectives, _all_but, _shuffle_trigrams, _within_trigrams)))


def order_perturbations(text: str, rng: np.random.Generator, tries: int = 50) -> list[str]:
    """The four ARO perturbations of ``text``, each different from it.

    Raises ValueError when some perturbation cannot change the text (for
    example a caption with a single noun and no adjective).
    """
    words = tokenize_words(text)
    original = " ".join(words)
    out = []
    for name in PERTURBATIONS:
        for _ in range(tries):
            perturbed = " ".join(_FUNCTIONS[name](words, rng))
            if perturbed != original:
                out.append(perturbed)
                break
        else:
            raise ValueError(f"{name} cannot change {text!r}")
    return out
