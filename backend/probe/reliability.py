"""What a model can read of the probe's texts, and when its numbers for a caption say nothing.

A word-level tokenizer (the built-in world's) reads unknown words as <unk>: a variant whose change it cannot
read says nothing about the model, and a caption it mostly cannot read makes every number about its vocabulary.
A model that scores several variants exactly like the text they are judged against cannot tell them apart
either. These checks turn both into notes and warnings beside the model's row (`backend.probe.run_probe`).
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Protocol

JUDGED_KINDS = ("negative", "positive")
# This many variants tying exactly with the text they are judged against means the model cannot tell
# them apart; one tie can be chance at reduced precision, several are not.
MIN_TIES_TO_WARN = 2
MAX_WORDS_LISTED = 12


class ProbeText(Protocol):
    """What these checks read of a `backend.probe.ProbeText`: its words, its kind, the row it is judged against."""
    text: str
    kind: str
    anchor: int


def shared_vocabulary(tokenizers: Sequence) -> frozenset[str] | None:
    """The words every model reads, when every model declares its vocabulary (a word-level tokenizer with an
    unknown token: the built-in world's); None when one does not (BPE reads any word): that model deserves
    the caption's real variants, and those another model cannot read are left out of its metrics instead."""
    declared = [frozenset(word for word in tokenizer.vocab if not word.startswith("<"))
                for tokenizer in tokenizers if hasattr(tokenizer, "unk_id") and hasattr(tokenizer, "vocab")]
    return frozenset.intersection(*declared) if declared and len(declared) == len(tokenizers) else None


def unreadable_variants(tokenizer, texts: Sequence[ProbeText]) -> dict[int, list[str]]:
    """Generated or user variants (by index) with words this model reads as <unk> that the text they are
    judged against does not have: the model cannot see what changed, so they say nothing about it."""
    found = {}
    for index, item in enumerate(texts):
        if item.kind not in JUDGED_KINDS:
            continue
        against = set(unknown_words(tokenizer, texts[item.anchor].text))
        new = [word for word in unknown_words(tokenizer, item.text) if word not in against]
        if new:
            found[index] = new
    return found


def unknown_words(tokenizer, text: str) -> list[str]:
    """Words of `text` that a word-level tokenizer (the built-in world's) reads as <unk>, once each, in order.

    BPE tokenizers read every word, so they have none."""
    unk_id, encode = getattr(tokenizer, "unk_id", None), getattr(tokenizer, "encode", None)
    if unk_id is None or encode is None or not hasattr(tokenizer, "unknown_words"):
        return []
    words = (word for word in text.replace(",", " ").split() if unk_id in encode(word))
    return list(dict.fromkeys(word.lower().rstrip(".!") for word in words))


def vocabulary_notes(tokenizer, texts: Sequence[ProbeText]) -> list[str]:
    """Say which words of any text the model reads as <unk> (the caption's own also get a warning)."""
    words = sorted({word for item in texts for word in unknown_words(tokenizer, item.text)})
    return [f"read as <unk>, outside this model's vocabulary: {', '.join(words)}"] if words else []


def unreliable_reasons(tokenizer, texts: Sequence[ProbeText], margins: Sequence[float]) -> list[str]:
    """Why a model's numbers are not meaningful for this caption; [] when no reason is known.

    A model that reads the caption's words as <unk>, or that scores several different variants exactly like
    the text they are judged against, cannot tell them apart: every such tie counts as a failure, so its
    accuracy measures its vocabulary (or context length, or precision), not composition."""
    reasons = []
    unknown = unknown_words(tokenizer, texts[0].text)
    if unknown:
        reasons.append(f"It reads {len(unknown)} of the caption's {len(texts[0].text.split())} words as <unk> "
                       f"(outside its vocabulary): {listed(unknown)}.")
    judged = [(item, margin) for item, margin in zip(texts, margins) if item.kind in JUDGED_KINDS
              and item.text != texts[0].text]
    tied = [item for item, margin in judged if margin == 0]
    if len(tied) >= MIN_TIES_TO_WARN:
        reasons.append(f"{len(tied)} of the {len(judged)} variants score exactly the same as the text they are "
                       f"judged against: it cannot tell them apart. They change: "
                       f"{listed(changed_words(texts, tied))}.")
    return reasons


def changed_words(texts: Sequence[ProbeText], variants: Sequence[ProbeText]) -> list[str]:
    """The words the variants changed (their side of the diff), once each: what the model did not see."""
    words = (word for item in variants for part, label in diff_segments(texts[item.anchor].text, item.text)
             if label for word in part.lower().split())
    return list(dict.fromkeys(words))


def listed(words: Sequence[str]) -> str:
    shown = ", ".join(words[:MAX_WORDS_LISTED])
    return shown + (f" and {len(words) - MAX_WORDS_LISTED} more" if len(words) > MAX_WORDS_LISTED else "")


def diff_segments(original: str, variant: str) -> list[tuple[str, str | None]]:
    """Word-level diff of a variant against the original: (text, None | 'changed')."""
    before, after = original.split(), variant.split()
    segments: list[tuple[str, str | None]] = []
    matcher = difflib.SequenceMatcher(a=[w.lower() for w in before], b=[w.lower() for w in after],
                                      autojunk=False)
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if j2 > j1:
            segments.append((" ".join(after[j1:j2]), None if op == "equal" else "changed"))
    return segments
