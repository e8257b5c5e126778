"""A word trigram language model with interpolated Kneser-Ney smoothing (Chen and Goodman, 1998, eq. 12-15).

The offline default of the text-only ("blind") scorer: it needs no download and no torch, and scores a caption
in microseconds. Counts come from `caption_stats` (public caption text; the shipped file's source and licence
are in that module). One discount D for every order; the lowest order is interpolated with the uniform
distribution over the vocabulary plus one unknown word, so an unseen word has a small, non-zero probability.

    lm = TrigramLM.from_counts(shipped().trigrams)
    lm.mean_logprob("a man riding a horse")   # natural log, per word (the end of the sentence counts as one)
"""
from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping

from backend.perturb.caption_stats import END, START, shipped, words

DISCOUNT = 0.75


class TrigramLM:
    """P(w | u v) by interpolated Kneser-Ney over trigram counts (with two start symbols and an end symbol)."""

    def __init__(self, trigrams: Mapping[tuple[str, str, str], int], discount: float = DISCOUNT):
        self.discount = discount
        self.trigrams = dict(trigrams)
        self.history: Counter = Counter()  # c(u v .)
        self.followers: Counter = Counter()  # N1+(u v .)
        middle_types: set[tuple[str, str]] = set()
        self.continuation_bigram: Counter = Counter()  # N1+(. v w)
        for (u, v, w), count in self.trigrams.items():
            self.history[(u, v)] += count
            self.followers[(u, v)] += 1
            self.continuation_bigram[(v, w)] += 1
            middle_types.add((v, w))
        self.middle_history: Counter = Counter()  # N1+(. v .)
        self.middle_followers: Counter = Counter()  # N1+(v .) among continuation bigrams
        self.continuation_unigram: Counter = Counter()  # N1+(. w)
        for (v, _), count in self.continuation_bigram.items():
            self.middle_history[v] += count
            self.middle_followers[v] += 1
        for _, w in middle_types:
            self.continuation_unigram[w] += 1
        self.bigram_types = len(middle_types)
        self.vocabulary = {w for _, w in middle_types}
        self.vocabulary.discard(START)

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], discount: float = DISCOUNT) -> TrigramLM:
        """From "u v w" -> count, as `caption_stats` stores them."""
        parsed: dict[tuple[str, str, str], int] = {}
        for key, count in counts.items():
            u, v, w = key.split(" ")
            parsed[(u, v, w)] = count
        return cls(parsed, discount)

    def _unigram(self, word: str) -> float:
        d, total = self.discount, self.bigram_types
        seen = max(self.continuation_unigram.get(word, 0) - d, 0) / total
        return seen + d * len(self.continuation_unigram) / total / (len(self.vocabulary) + 1)

    def _bigram(self, v: str, w: str) -> float:
        total = self.middle_history.get(v, 0)
        if not total:
            return self._unigram(w)
        d = self.discount
        seen = max(self.continuation_bigram.get((v, w), 0) - d, 0) / total
        return seen + d * self.middle_followers[v] / total * self._unigram(w)

    def prob(self, u: str, v: str, w: str) -> float:
        """P(w | u v)."""
        total = self.history.get((u, v), 0)
        if not total:
            return self._bigram(v, w)
        d = self.discount
        seen = max(self.trigrams.get((u, v, w), 0) - d, 0) / total
        return seen + d * self.followers[(u, v)] / total * self._bigram(v, w)

    def logprobs(self, text: str) -> list[float]:
        """Natural-log probability of each word of `text` and of its end."""
        padded = [START, START, *words(text), END]
        return [math.log(self.prob(*padded[i : i + 3])) for i in range(len(padded) - 2)]

    def mean_logprob(self, text: str) -> float:
        """Per-word log probability: longer texts are not penalised for their length alone."""
        scores = self.logprobs(text)
        return sum(scores) / len(scores)


@functools.cache
def shipped_lm() -> TrigramLM:
    """The model over the shipped caption counts."""
    return TrigramLM.from_counts(shipped().trigrams)


def counts_of(texts: list[str]) -> dict[str, int]:
    """Trigram counts of `texts` in the stored form, for a model built on the fly (tests, other corpora)."""
    from backend.perturb.caption_stats import count_trigrams

    return dict(count_trigrams(texts))
