"""Text-only ("blind") scorers: how far a caption's negatives can be told from it without the image.

SugarCrepe (Hsieh et al., 2023) showed that a model reading only the text can pick the true caption of earlier
benchmarks far above chance, because their negatives are less plausible or less fluent. A scorer here gives each
text a number, higher for text that reads more like a caption; its **blind accuracy** on (caption, negative)
pairs is the share where the caption scores strictly higher (a tie counts as wrong, as in every metric here).

Two kinds, one interface (`TextScorer.score`):

* `NgramScorer` (the default, offline): the shipped trigram model (`textlm`, counts from public caption text,
  see `caption_stats`), per-word log probability;
* `HFScorer`: any Hugging Face causal language model (per-token log probability of the text) or masked one
  (pseudo-log-likelihood: each token masked in turn, Salazar et al., 2020), by hub id or local folder.

`load_scorer("ngram")` or `load_scorer("gpt2")` gives either. Scores are per word or token, so a negative that
adds words (the addition family) is not rejected for its length alone.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from backend.core import env
from backend.core.errors import first_line

DEFAULT_SCORER = "ngram"
_EXAMPLE = "--blind-model /path/to/gpt2"


class ScorerError(ValueError):
    """A text scorer that cannot be loaded; the message says what was tried and what to do."""


class TextScorer(Protocol):
    name: str

    def score(self, texts: Sequence[str]) -> list[float]:
        """One number per text: higher reads more like a caption."""
        ...


@dataclass
class NgramScorer:
    """The shipped trigram model (or another `TrigramLM`): mean natural-log probability per word."""

    lm: Any = None
    name: str = "ngram (trigram Kneser-Ney over the shipped COCO caption counts)"

    def __post_init__(self) -> None:
        if self.lm is None:
            from backend.perturb.textlm import shipped_lm

            self.lm = shipped_lm()

    def score(self, texts: Sequence[str]) -> list[float]:
        return [self.lm.mean_logprob(text) for text in texts]


def looks_like_path(source: str) -> bool:
    """A local folder, existing or meant: hub ids are "name" or "org/name"."""
    return (Path(source).expanduser().exists() or source.startswith(("/", ".", "~", "\\"))
            or source.count("/") > 1 or "\\" in source)


def load_message(what: str, source: str, error: Exception, example: str) -> str:
    """One message for a model that did not load: the id, what was tried, why it failed and what to do
    (`example`: the option naming a local folder). The grammar filter words its failures with it too."""
    from huggingface_hub import constants

    if looks_like_path(source):
        folder = Path(source).expanduser()
        tried = f"the local folder {folder}" + ("" if folder.exists() else " (it does not exist)")
    else:
        tried = (f"the Hugging Face hub id '{source}': the local cache ({constants.HF_HUB_CACHE}) first, "
                 + ("no download, since HF_HUB_OFFLINE=1 is set" if env.hub_offline() else "then a download"))
    cause = first_line(error).rstrip(".") + "."
    return (f"Could not load the {what} '{source}': tried {tried}. Cause: {type(error).__name__}: {cause} To fix: "
            "connect to the network so it downloads once (and unset HF_HUB_OFFLINE), set HF_TOKEN if the "
            "repository is gated or private, or pass a local folder holding the model and its tokenizer (saved "
            f"with save_pretrained), e.g. {example}.")


@dataclass
class HFScorer:
    """A Hugging Face language model: causal (log P of each token given the ones before) or masked
    (pseudo-log-likelihood). `score` is the mean over the text's tokens."""

    tokenizer: Any
    model: Any
    causal: bool
    name: str
    device: str = "cpu"
    batch_size: int = 16

    @classmethod
    def from_pretrained(cls, source: str, device: str | None = None) -> HFScorer:
        """Load by hub id or folder; causal when the config says it is a decoder (or names a causal LM head),
        else masked."""
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

        path = str(Path(source).expanduser()) if looks_like_path(source) else source
        if looks_like_path(source) and not Path(path).is_dir():
            raise ScorerError(load_message("text scorer", source, FileNotFoundError(f"no folder at {path}"), _EXAMPLE))
        try:
            config = AutoConfig.from_pretrained(path)
            causal = bool(getattr(config, "is_decoder", False)) or any(
                name.endswith(("CausalLM", "LMHeadModel")) for name in (config.architectures or []))
            tokenizer = AutoTokenizer.from_pretrained(path)
            auto: Any = AutoModelForCausalLM if causal else AutoModelForMaskedLM
            model = auto.from_pretrained(path)
        except (OSError, ValueError, KeyError) as error:
            raise ScorerError(load_message("text scorer", source, error, _EXAMPLE)) from error
        device = env.pick_device(device)
        return cls(tokenizer, model.to(device).eval(), causal, f"{source} ({'causal' if causal else 'masked'} LM)",
                   device)

    def score(self, texts: Sequence[str]) -> list[float]:
        import torch

        with torch.inference_mode():
            return [self._causal(text) if self.causal else self._masked(text) for text in texts]

    def _ids(self, text: str):
        import torch

        ids = self.tokenizer(text, return_tensors="pt", truncation=True, max_length=128)["input_ids"][0]
        return ids.to(self.device) if isinstance(ids, torch.Tensor) else ids

    def _causal(self, text: str) -> float:
        ids = self._ids(text)
        bos = self.tokenizer.bos_token_id
        if bos is not None and (len(ids) == 0 or int(ids[0]) != bos):
            import torch

            ids = torch.cat([torch.tensor([bos], device=ids.device), ids])
        if len(ids) < 2:
            return 0.0
        logits = self.model(ids[None]).logits[0, :-1].float()
        logprobs = logits.log_softmax(-1).gather(1, ids[1:, None])[:, 0]
        return float(logprobs.mean())

    def _masked(self, text: str) -> float:
        ids = self._ids(text)
        special = set(self.tokenizer.all_special_ids)
        positions = [i for i, token in enumerate(ids.tolist()) if token not in special]
        if not positions:
            return 0.0
        total = 0.0
        for start in range(0, len(positions), self.batch_size):
            chunk = positions[start : start + self.batch_size]
            batch = ids.repeat(len(chunk), 1)
            for row, position in enumerate(chunk):
                batch[row, position] = self.tokenizer.mask_token_id
            logits = self.model(batch).logits.float()
            for row, position in enumerate(chunk):
                total += float(logits[row, position].log_softmax(-1)[ids[position]])
        return total / len(positions)


def load_scorer(spec: str | None = None, device: str | None = None) -> TextScorer:
    """"ngram" (or None): the shipped offline model; anything else: a Hugging Face id or folder."""
    if spec in (None, "", DEFAULT_SCORER):
        return NgramScorer()
    return HFScorer.from_pretrained(spec, device)


def blind_margins(scorer: TextScorer, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """score(caption) - score(negative) per pair: positive when the blind scorer prefers the caption."""
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    scores = dict(zip(texts, scorer.score(texts)))
    return [scores[caption] - scores[negative] for caption, negative in pairs]


def blind_accuracy(scorer: TextScorer, pairs: Sequence[tuple[str, str]]) -> float | None:
    """Share of (caption, negative) pairs where the caption scores strictly higher; None for no pairs."""
    if not pairs:
        return None
    margins = blind_margins(scorer, pairs)
    return sum(margin > 0 and not math.isnan(margin) for margin in margins) / len(margins)
