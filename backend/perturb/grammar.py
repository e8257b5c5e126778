"""Optional grammar filter: a CoLA (linguistic acceptability) classifier.

A negative that reads as broken English ("court tennis a on man") can be
told from the caption without the image, like an absurd one. BiVLC (Miranda
et al., 2024; TROHN-Img, step 1, and appendix E.3) kept only negatives that
scored well with VERA (plausibility) and a CoLA model, "RoBERTa base model
fine-tuned in CoLA released by [Morris et al., 2020]", i.e. TextAttack's
https://huggingface.co/textattack/roberta-base-CoLA: DEFAULT_GRAMMAR_MODEL.

`GrammarFilter.filter_variants` sets `plausible=False` on negatives whose
probability of "acceptable" is below the threshold, instead of adding a
second flag: both giveaways let a text-only model find the negative, BiVLC
and SugarCrepe folded plausibility and acceptability into one keep/drop
decision, and the probe's "plausible only" metrics then need one switch
and one column. The raw probabilities stay available from `.acceptable()`.
ARO's order shuffles are ungrammatical by design, so the filter marks most
of them.

transformers and torch are imported when a model is loaded, so importing
this module (the CLI's --help, backend.probe) stays cheap.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from backend.core import env
from backend.perturb.blind import load_message, looks_like_path

DEFAULT_GRAMMAR_MODEL = "textattack/roberta-base-CoLA"
_ACCEPTABLE = frozenset(["acceptable", "grammatical", "correct", "good", "ok", "yes"])
_UNACCEPTABLE = frozenset(["unacceptable", "ungrammatical", "incorrect", "bad", "no"])
_GENERIC_LABEL = re.compile(r"label_?\d+")


class GrammarModelError(ValueError):
    """The grammar model could not be loaded or read; the message says what was tried and how to fix it.

    A ValueError: the model id or path is the user's to fix (the CLI reports it and exits 2).
    """


class Judged(Protocol):
    """What `filter_variants` reads and sets: a Variant or a probe row's text (dataclasses both: the flag is set on
    a copy, `dataclasses.replace`)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    text: str
    kind: str
    plausible: bool


J = TypeVar("J", bound=Judged)


def acceptable_index(id2label: Mapping[int, str], acceptable_label: str | None = None) -> int:
    """Which output is "acceptable", read from the model config's labels.

    Named labels decide ("acceptable", or the one that is not
    "unacceptable"). Generic names (LABEL_0, LABEL_1), as in
    textattack/roberta-base-CoLA, follow the GLUE CoLA convention that 1
    means acceptable (TextAttack's model card: "1=acceptable /
    0=unacceptable"). Anything else is an error naming the labels, rather
    than a guess; `acceptable_label` names the label outright.
    """
    names = {int(index): str(name) for index, name in id2label.items()}
    folded = {index: re.sub(r"[^a-z0-9_]", "", name.lower()) for index, name in names.items()}
    if acceptable_label is not None:
        wanted = acceptable_label.lower()
        matches = [index for index, name in names.items() if name == acceptable_label or folded[index] == wanted]
        if len(matches) == 1:
            return matches[0]
        raise GrammarModelError(f"The grammar model has no label {acceptable_label!r}; its labels: {names}.")
    accepting = [index for index, name in folded.items() if name in _ACCEPTABLE]
    rejecting = [index for index, name in folded.items() if name in _UNACCEPTABLE]
    if len(accepting) == 1:
        return accepting[0]
    if len(names) == 2 and len(rejecting) == 1:
        return next(index for index in names if index != rejecting[0])
    if sorted(names) == [0, 1] and all(_GENERIC_LABEL.fullmatch(name) for name in folded.values()):
        return 1
    raise GrammarModelError(f"Cannot tell which label of the grammar model means 'acceptable': {names}. "
                            "Pass acceptable_label= with the right name, or use a CoLA classifier.")


def _load_error(source: str, error: Exception) -> GrammarModelError:
    """One message: the id, what was tried, why it failed and what to do (worded as for every loaded model)."""
    message = load_message("grammar (CoLA) model", source, error, "--grammar-model /path/to/roberta-base-CoLA")
    return GrammarModelError(f"{message} The default model is {DEFAULT_GRAMMAR_MODEL}.")


@dataclass
class GrammarFilter:
    """A loaded sequence classifier and the rule that turns its output into a judgement."""

    tokenizer: Any
    model: Any
    acceptable_index: int
    threshold: float = 0.5
    device: str = "cpu"
    model_id: str = DEFAULT_GRAMMAR_MODEL
    batch_size: int = 32

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold is a probability, between 0 and 1, not {self.threshold!r}.")

    @classmethod
    def from_pretrained(cls, model_id_or_path: str = DEFAULT_GRAMMAR_MODEL, threshold: float = 0.5,
                        device: str | None = None, *, acceptable_label: str | None = None,
                        batch_size: int = 32) -> GrammarFilter:
        """Load a CoLA classifier (a hub id or a save_pretrained folder) with AutoTokenizer and
        AutoModelForSequenceClassification; raise GrammarModelError with one clear message if it fails.

        device: None picks the best available (backend.core.env.pick_device).
        """
        from transformers import AutoModelForSequenceClassification, AutoTokenizer


        source = str(Path(model_id_or_path).expanduser()) if looks_like_path(model_id_or_path) else model_id_or_path
        if looks_like_path(model_id_or_path) and not Path(source).is_dir():
            raise _load_error(model_id_or_path, FileNotFoundError(f"no folder at {source}"))
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForSequenceClassification.from_pretrained(source)
        except (OSError, ValueError, KeyError) as error:  # hub, cache, file and config errors alike
            raise _load_error(model_id_or_path, error) from error
        index = acceptable_index(model.config.id2label, acceptable_label)
        device = env.pick_device(device)
        return cls(tokenizer, model.to(device).eval(), index, threshold, device, model_id_or_path, batch_size)

    @property
    def max_length(self) -> int:
        """Longest input the model reads: the tokenizer's limit, capped by the position table."""
        limits = [512, getattr(self.tokenizer, "model_max_length", 512),
                  getattr(self.model.config, "max_position_embeddings", 512)]
        return int(min(limits))

    def acceptable(self, texts: Sequence[str]) -> list[float]:
        """Probability that each text is acceptable English, in [0, 1], in batches."""
        import torch

        texts = list(texts)
        scores: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(texts[start:start + self.batch_size], padding=True, truncation=True,
                                       max_length=self.max_length, return_tensors="pt").to(self.device)
                logits = self.model(**batch).logits.float()
                scores += logits.softmax(dim=-1)[:, self.acceptable_index].tolist()
        return scores

    def filter_variants(self, variants: Sequence[J]) -> list[J]:
        """`variants` in order; negatives scoring below the threshold come back
        with plausible=False. Positives are not scored; a flag already False stays False."""
        negatives = [index for index, variant in enumerate(variants) if variant.kind == "negative"]
        scores = self.acceptable([variants[index].text for index in negatives])
        judged = list(variants)
        for index, score in zip(negatives, scores):
            if score < self.threshold:
                judged[index] = dataclasses.replace(judged[index], plausible=False)
        return judged
