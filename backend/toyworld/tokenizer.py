"""Word-level tokenizer over the grammar's vocabulary, shaped like open_clip's.

open_clip's text tower pools the token with the largest id (``argmax`` pool),
which for its BPE tokenizer is end-of-text. Here the ids are laid out the
same way: 0 pad, 1 unknown, 2 start-of-text, the words, and end-of-text last,
so ``EOT_ID == vocab_size - 1`` is the maximum of every row.
"""
from __future__ import annotations

import threading
import warnings
from collections import Counter
from collections.abc import Iterable

import torch

from .grammar import ARTICLES, LOCATION_MEANING, NOUNS, RELATION_MEANING, SIZE_MEANING, tokenize_words
from .scene import COLOURS

PAD, UNK, SOT, EOT = "<pad>", "<unk>", "<start_of_text>", "<end_of_text>"
PROMPT_WORDS: tuple[str, ...] = ("photo", "of")
"""Words of the zero-shot prompt template "a photo of a {class}"."""


_WARNED_WORDS: set[str] = set()
"""Unknown words already warned about in this process, by any ``ToyTokenizer``.

Module-level on purpose: every load of a toy model builds its own tokenizer,
so a per-instance record warned again for each model of a probe, and Python's
own once-per-location filter does not help because ``load_model`` changes the
warning filters (which resets that record) on every load.
"""
_WARNED_LOCK = threading.Lock()


def _warn_unknown_once(word: str) -> None:
    with _WARNED_LOCK:
        if word in _WARNED_WORDS:
            return
        _WARNED_WORDS.add(word)
    warnings.warn(f"ToyTokenizer: unknown word {word!r} mapped to <unk>: the toy model knows only its "
                  "grammar's words (shapes, colours, sizes, relations; see grammar_words()). "
                  "Each unknown word is warned about once per process.",
                  stacklevel=4)  # the caller of ToyTokenizer.__call__


def grammar_words() -> list[str]:
    """Every word the grammar or the zero-shot prompts can produce, in a fixed order."""
    words: list[str] = []
    phrases = [*ARTICLES, *SIZE_MEANING, *COLOURS, *NOUNS, "and",
               *RELATION_MEANING, *LOCATION_MEANING, *PROMPT_WORDS]
    for phrase in phrases:
        for word in phrase.split():
            if word not in words:
                words.append(word)
    return words


class ToyTokenizer:
    """Callable like ``open_clip.tokenize``: text(s) -> LongTensor (N, context_length).

    Unknown words map to ``UNK_ID``; they are counted in ``unknown_words``
    and the first sighting of each in the process triggers a warning, so
    out-of-grammar prompts do not pass unnoticed. Rows longer than the
    context are truncated, keeping EOT last.
    """

    def __init__(self, context_length: int = 16):
        self.context_length = context_length
        self.vocab: list[str] = [PAD, UNK, SOT, *grammar_words(), EOT]
        self.word_to_id = {w: i for i, w in enumerate(self.vocab)}
        self.pad_id, self.unk_id, self.sot_id = 0, 1, 2
        self.eot_id = len(self.vocab) - 1
        self.unknown_words: Counter[str] = Counter()

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        """Word ids of one text, without SOT/EOT."""
        ids = []
        for word in tokenize_words(text.replace(",", " ")):
            if word not in self.word_to_id:
                _warn_unknown_once(word)
                self.unknown_words[word] += 1
            ids.append(self.word_to_id.get(word, self.unk_id))
        return ids

    def __call__(self, texts: str | Iterable[str], context_length: int | None = None) -> torch.Tensor:
        texts = [texts] if isinstance(texts, str) else list(texts)
        length = context_length or self.context_length
        out = torch.full((len(texts), length), self.pad_id, dtype=torch.long)
        for row, text in enumerate(texts):
            ids = [*[self.sot_id, *self.encode(text)][:length - 1], self.eot_id]
            out[row, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Text of one row of ids, dropping SOT, EOT and padding."""
        specials = {self.pad_id, self.sot_id, self.eot_id}
        return " ".join(self.vocab[int(i)] for i in ids if int(i) not in specials)
