"""Probe one image + caption: perturb the caption, score every variant with every model.

Shared by the Probe tab and ``python -m backend probe``. A row per text
(original, generated variants, user extras), per model a score, the margin
against the original, and a verdict:
  - a negative that scores at or above the original is a failure (ties are
    wrong, as in every strict benchmark metric);
  - a positive that scores below some negative is brittle.
Scores are cosine similarities; logit scaling multiplies all of them by one
positive number, so verdicts and metrics are the same either way.
"""
from __future__ import annotations

import difflib
import io
from dataclasses import dataclass, field
from typing import Callable, Sequence

from PIL import Image, UnidentifiedImageError

from backend.encoder import EmbeddingCache, Encoder
from backend.metrics import caption_probe_metrics
from backend.auth import Actor
from backend.models import ModelLoadError, ModelRegistry, local_path, parse_spec
from backend.perturb import MAX_CAPTION_CHARS, perturb
from backend.perturb.grammar import GrammarFilter

MAX_EXTRA_CAPTIONS = 50

Progress = Callable[[float, str], None]


class ProbeInputError(ValueError):
    """Input the user must fix; the message is shown as is."""


@dataclass
class ProbeText:
    text: str
    kind: str  # original | negative | positive | custom
    family: str = ""
    subtype: str = ""
    edit: str = ""
    plausible: bool = True  # False: a negative absurd on its face (backend/perturb/plausibility.py)


@dataclass
class ProbeResult:
    texts: list[ProbeText]
    models: list[dict]  # identity + metrics + notes, one per model that loaded
    scores: dict[str, list[float]]  # model spec -> a score per text
    errors: list[str] = field(default_factory=list)

    def rows(self) -> list[dict]:
        """Flat table rows: one per text, score/margin/verdict columns per model."""
        rows = []
        for index, item in enumerate(self.texts):
            row = {"text": item.text, "kind": item.kind, "family": item.family,
                   "subtype": item.subtype, "edit": item.edit, "plausible": item.plausible}
            for spec, scores in self.scores.items():
                row[f"{spec} score"] = round(scores[index], 4)
                row[f"{spec} margin"] = round(scores[index] - scores[0], 4)
                row[f"{spec} verdict"] = self.verdict(spec, index)
            rows.append(row)
        return rows

    def verdict(self, spec: str, index: int) -> str:
        return verdict(self.texts[index].kind, self.scores[spec][index], self.scores[spec], self.texts)

    def as_dict(self) -> dict:
        return {"rows": self.rows(), "models": self.models, "errors": self.errors}


def percent(value: float | None) -> str:
    """A metric for display; None (nothing to average, e.g. no positives) reads as n/a."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def verdict(kind: str, score: float, scores: Sequence[float], texts: Sequence[ProbeText]) -> str:
    original = scores[0]
    if kind == "negative":
        return "FAIL: not below original" if score >= original else "ok"
    if kind == "positive":
        above = sum(1 for s, t in zip(scores, texts) if t.kind == "negative" and s > score)
        return f"BRITTLE: below {above} negative(s)" if above else "ok"
    return ""


def load_image(source: Image.Image | str | bytes) -> Image.Image:
    """Accept a PIL image, a path or raw bytes; a file that is not an image is the user's to fix."""
    if isinstance(source, Image.Image):
        return source.convert("RGB")
    try:
        opened = Image.open(io.BytesIO(source) if isinstance(source, bytes) else source)
        opened.load()
    except (UnidentifiedImageError, OSError) as error:
        raise ProbeInputError(f"Could not read the image: {error}") from error
    return opened.convert("RGB")


def validate_caption(caption: str | None) -> str:
    caption = (caption or "").strip()
    if not caption:
        raise ProbeInputError("The caption is empty: type what the image shows.")
    if len(caption) > MAX_CAPTION_CHARS:
        raise ProbeInputError(f"The caption has {len(caption):,} characters; the limit is "
                              f"{MAX_CAPTION_CHARS:,} (CLIP text towers read ~77 tokens anyway).")
    return caption


def parse_extras(extra: str | Sequence[str] | None) -> list[ProbeText]:
    """One caption per line; a leading '-' marks a negative, '+' a positive, else it is just scored."""
    lines = extra.splitlines() if isinstance(extra, str) else list(extra or [])
    texts = []
    for line in (line.strip() for line in lines):
        if not line:
            continue
        kind = {"-": "negative", "+": "positive"}.get(line[0], "custom")
        text = line[1:].strip() if kind != "custom" else line
        if text:
            texts.append(ProbeText(validate_caption(text), kind, family="user"))
    if len(texts) > MAX_EXTRA_CAPTIONS:
        raise ProbeInputError(f"{len(texts)} extra captions; at most {MAX_EXTRA_CAPTIONS} per probe.")
    return texts


def build_texts(caption: str, families: Sequence[str] | None, seed: int, extra=None) -> list[ProbeText]:
    caption = validate_caption(caption)
    texts = [ProbeText(caption, "original")]
    for variant in perturb(caption, families=families, seed=seed):
        texts.append(ProbeText(variant.text, variant.kind, variant.family, variant.subtype,
                               variant.description, variant.plausible))
    return texts + parse_extras(extra)


def check_model_access(spec: str, actor: Actor | None, offered: Sequence[str]) -> None:
    """Anyone may probe the offered models, hub ids and pretrained tags; naming another server path needs an admin.

    `actor` None means a trusted caller (the command line).
    """
    if actor is None or actor.is_admin or spec in offered:
        return
    if local_path(parse_spec(spec)) is not None:
        raise ModelLoadError(f"'{spec}' names a file on the server: without an admin sign-in, pick a model "
                             "from the list (or a hub id such as hf-hub:org/name)")


def run_probe(image, caption: str, model_specs: Sequence[str], registry: ModelRegistry,
              cache: EmbeddingCache, families: Sequence[str] | None = None, seed: int = 0,
              extra=None, progress: Progress | None = None, actor: Actor | None = None,
              offered: Sequence[str] = (), plausible_only: bool = False,
              grammar_filter: GrammarFilter | None = None) -> ProbeResult:
    """Score every variant with every model that loads; models that fail (or are refused) are reported, not fatal.

    plausible_only: each model's metrics count plausible negatives only (the rows still list every text).
    grammar_filter: also marks generated negatives its CoLA classifier finds unacceptable as not plausible.
    """
    if image is None:
        raise ProbeInputError("No image: upload one, paste one, or pick an example.")
    if not model_specs:
        raise ProbeInputError("Pick at least one model.")
    picture = load_image(image)
    texts = build_texts(caption, families, seed, extra)
    if grammar_filter is not None:
        texts = _grammar_checked(texts, grammar_filter)
    result = ProbeResult(texts, models=[], scores={})
    for index, spec in enumerate(model_specs):
        if progress:
            progress(index / len(model_specs), f"Loading and scoring {spec}")
        try:
            check_model_access(spec, actor, offered)
            loaded = registry.get(spec)
        except ModelLoadError as error:
            result.errors.append(str(error))
            continue
        scores = Encoder(loaded, cache).score([picture], [t.text for t in texts]).cosine[0].tolist()
        result.scores[spec] = scores
        notes = loaded.notes + _vocabulary_notes(loaded.tokenizer, texts)
        result.models.append({**loaded.identity, **_metrics(scores, texts, plausible_only), "notes": notes})
    if not result.scores:
        raise ProbeInputError("No model could be loaded:\n" + "\n".join(result.errors))
    return result


def _vocabulary_notes(tokenizer, texts: list[ProbeText]) -> list[str]:
    """A word-level tokenizer (the built-in world's) reads unknown words as <unk>: say which."""
    unknown = getattr(tokenizer, "unknown_words", None)
    if not unknown:
        return []
    words = sorted({word for t in texts for word in t.text.lower().split() if word in unknown})
    return [f"read as <unk>, outside this model's vocabulary: {', '.join(words)}"] if words else []


def _grammar_checked(texts: list[ProbeText], grammar_filter: GrammarFilter) -> list[ProbeText]:
    """Generated negatives go through the grammar filter; a user's own captions are taken as written."""
    generated = [i for i, t in enumerate(texts) if t.kind == "negative" and t.family != "user"]
    checked = list(texts)
    for index, item in zip(generated, grammar_filter.filter_variants([texts[i] for i in generated])):
        checked[index] = item
    return checked


def _metrics(scores: list[float], texts: list[ProbeText], plausible_only: bool = False) -> dict:
    """Metrics over every negative, or over plausible ones only: an absurd
    negative ("a bench sitting on a man") can be rejected from the text alone."""
    negatives = [s for s, t in zip(scores, texts) if t.kind == "negative" and (t.plausible or not plausible_only)]
    positives = [s for s, t in zip(scores, texts) if t.kind == "positive"]
    implausible = sum(1 for t in texts if t.kind == "negative" and not t.plausible)
    return {**caption_probe_metrics(scores[0], negatives, positives),
            "plausible_only": plausible_only, "n_implausible": implausible}


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
