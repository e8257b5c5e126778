"""Variant and Edit records, and the span-editing helpers every family uses.

Families describe a perturbation as edits on the original caption's
character spans; `build` applies them, fixes "a"/"an" in front of changed
words, and records the edits so the UI can show what changed.
"""
from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from spacy.tokens import Doc, Span

from backend.perturb.inflect import fit_case, indefinite_article

Kind = Literal["negative", "positive"]
FillMask = Callable[[str], Sequence[str]]
T = TypeVar("T")


@dataclass(frozen=True)
class Edit:
    """`before` (the original caption's characters start:end) became `after`."""

    before: str
    after: str
    start: int
    end: int


@dataclass(frozen=True)
class Variant:
    """One perturbed caption and how it was made.

    `plausible` is False for a negative that is absurd on its face (see
    plausibility.py): a text-only model can reject it without the image.
    """

    text: str
    kind: Kind
    family: str
    subtype: str
    edits: tuple[Edit, ...]
    plausible: bool = True

    @property
    def description(self) -> str:
        """One line for people, e.g. "white -> brown, brown -> white"."""
        return ", ".join(f"{edit.before} -> {edit.after}" for edit in self.edits)


@dataclass(frozen=True)
class Request:
    """Everything a family needs to perturb one caption.

    `doc` parses `caption`, or its lower-cased copy when the caption is all
    capitals (spaCy mis-tags shouted text); offsets are identical, and
    `all_caps` makes `build` shout the inserted text again. `forbidden`
    holds the `normalized` texts no variant may take: the caption itself
    and, for negatives, every hard positive (a rewrite that keeps the
    caption true is no negative), so families move on to their next
    candidate instead of losing a slot. `vocabulary` (lower-case words),
    when a model declares one, is where new words must come from: a
    variant with a word the model reads as unknown is skipped the same way.
    """

    caption: str
    doc: Doc
    rng: random.Random
    max_per_subtype: int
    fill_mask: FillMask | None
    all_caps: bool
    forbidden: frozenset[str]
    vocabulary: frozenset[str] | None = None

    @property
    def text(self) -> str:
        """The text `doc` parses, at the same offsets: the caption, lower-cased when shouted (a capitalised thing
        that the engine read in lower case, "a Frisbee", keeps its capital here; the two readers of this text
        lower-case what they take from it or hand it to a masked model). `Doc.text` would rebuild it token by
        token at every call."""
        return self.caption.lower() if self.all_caps else self.caption


def normalized(text: str) -> str:
    """Comparison key: case, punctuation and spacing do not make a new caption."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def apply_edits(caption: str, edits: Sequence[Edit]) -> str:
    """Caption with non-overlapping `edits` (sorted by start) applied."""
    pieces, cursor = [], 0
    for edit in edits:
        pieces += [caption[cursor : edit.start], edit.after]
        cursor = edit.end
    return "".join(pieces) + caption[cursor:]


def _starts_sentence(span: Span) -> bool:
    return bool(span[0].is_sent_start)


def replacement(request: Request, span: Span, new_text: str) -> Edit:
    """Edit putting `new_text` (lower-case lexicon or model text) where `span` was."""
    before = request.caption[span.start_char : span.end_char]
    template = request.text[span.start_char : span.end_char]
    after = fit_case(new_text, template, at_sentence_start=_starts_sentence(span))
    return Edit(before, after, span.start_char, span.end_char)


def moved(request: Request, source: Span, target: Span) -> Edit:
    """Edit putting the text of `source` where `target` was (one half of a swap)."""
    text = request.text[source.start_char : source.end_char]
    first = source[0]
    keeps_capital = first.pos_ == "PROPN" or first.text == "I" or (len(first.text) > 1 and first.text.isupper())
    template = request.text[target.start_char : target.end_char]
    after = fit_case(text, template, at_sentence_start=_starts_sentence(target), keeps_capital=keeps_capital)
    return Edit(request.caption[target.start_char : target.end_char], after, target.start_char, target.end_char)


def swapped(request: Request, first: Span, second: Span) -> list[Edit]:
    return [moved(request, second, first), moved(request, first, second)]


@functools.lru_cache(maxsize=64)
def _token_starts(doc: Doc) -> dict[int, int]:
    """Each token's index by its start offset, once per parse: `build` asks it for every candidate (read only)."""
    return {token.idx: token.i for token in doc}


def _article_fixes(request: Request, edits: Sequence[Edit]) -> list[Edit]:
    """Edits turning "a" into "an" (or back) in front of changed words."""
    token_at = _token_starts(request.doc)
    fixes = []
    for edit in edits:
        i = token_at.get(edit.start)
        if i is None or i == 0 or not edit.after:
            continue
        article = request.doc[i - 1]
        while article.is_space and article.i > 0:  # "a  green" (two spaces): spaCy makes the extra space a token
            article = request.doc[article.i - 1]
        if article.lower_ not in ("a", "an") or any(e.start <= article.idx < e.end for e in edits):
            continue
        wanted = indefinite_article(edit.after)
        if wanted != article.lower_:
            start, end = article.idx, article.idx + len(article)
            after = fit_case(wanted, article.text, at_sentence_start=bool(article.is_sent_start))
            fixes.append(Edit(request.caption[start:end], after, start, end))
    return fixes


def build(request: Request, edits: Iterable[Edit], family: str, subtype: str, kind: Kind = "negative") -> Variant:
    edits = list(edits)
    edits = sorted(edits + _article_fixes(request, edits), key=lambda edit: edit.start)
    if request.all_caps:
        edits = [Edit(e.before, e.after.upper(), e.start, e.end) for e in edits]
    return Variant(apply_edits(request.caption, edits), kind, family, subtype, tuple(edits))


def spread(options: Sequence[Sequence[T]], rng: random.Random) -> list[T]:
    """All options, in an order that visits every slot before any slot twice.

    With a handful of variants per subtype, this spreads them over the
    caption's words instead of spending them all on the first word.
    """
    queues = [rng.sample(list(slot), len(slot)) for slot in options if slot]
    rng.shuffle(queues)
    rounds = max((len(queue) for queue in queues), default=0)
    return [queue[i] for i in range(rounds) for queue in queues if i < len(queue)]


def readable(text: str, original: str, vocabulary: frozenset[str] | None) -> bool:
    """Every word `text` adds to `original` is in `vocabulary` (always true without one)."""
    if vocabulary is None:
        return True
    known = set(normalized(original).split()) | vocabulary
    return all(word in known for word in normalized(text).split())


def take_distinct(request: Request, variants: Iterable[Variant]) -> Iterator[Variant]:
    """The first `max_per_subtype` allowed variants, without repeats, in the model's vocabulary if it has one."""
    seen = set(request.forbidden)
    count = 0
    for variant in variants:
        if count == request.max_per_subtype:
            return
        key = normalized(variant.text)
        if key not in seen and readable(variant.text, request.caption, request.vocabulary):
            seen.add(key)
            count += 1
            yield variant
