"""Probe one image + caption: perturb the caption, score every variant with every model.

Shared by the Probe tab and ``python -m backend probe``. A row per text
(original, the ARO reference when there is one, generated variants, user
extras), per model a score, the margin against the text it is judged against,
and a verdict:
  - a negative that scores at or above that text is a failure (ties are
    wrong, as in every strict benchmark metric);
  - a positive that scores below some negative is brittle.
ARO shuffles are lower-cased, stripped of punctuation and cut to 30 words
(as ARO does), so they are judged against the caption normalised the same way
(the "reference" row), not against the caption as typed: case and punctuation
are not what the model is judged on. Every other text is judged against the
original. Scores are cosine similarities; logit scaling multiplies all of
them by one positive number, so verdicts and metrics are the same either way.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PIL import Image

from backend.core.auth import Actor
from backend.core.images import ImageFileError, open_image, rgb
from backend.core.limits import MAX_CAPTION_CHARS
from backend.core.text import normalise as normalise_text
from backend.core.text import problem as text_problem
from backend.core.worker import TimeLimitExceeded, time_limit
from backend.metrics import caption_probe_metrics
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.models.spec import ModelLoadError, local_path, parse_spec
from backend.probe.reliability import (
    listed,
    shared_vocabulary,
    unreadable_variants,
    unreliable_reasons,
    vocabulary_notes,
)

if TYPE_CHECKING:  # the encoder (torch, open_clip) and the engine (spaCy) load on the first probe
    from backend.models.encoder import Encoder
    from backend.perturb.grammar import GrammarFilter

MAX_EXTRA_CAPTIONS = 50
DEFAULT_BLIND = "default"

Progress = Callable[[float, str], None]


class ProbeInputError(ValueError):
    """Input the user must fix; the message is shown as is."""


@dataclass
class ProbeText:
    text: str
    kind: str  # original | reference | negative | positive | custom
    family: str = ""
    subtype: str = ""
    edit: str = ""
    plausible: bool = True  # False: a negative absurd on its face (backend/perturb/plausibility.py)
    anchor: int = 0  # index of the text it is judged against: the original, or the reference for ARO shuffles


@dataclass
class ProbeResult:
    texts: list[ProbeText]
    models: list[dict]  # identity + metrics + notes, one per model that loaded
    scores: dict[str, list[float]]  # model spec -> a score per text
    errors: list[str] = field(default_factory=list)
    blind: dict = field(default_factory=dict)  # the text-only scorer's row: name, accuracy, n_negatives, scores

    def margins(self, spec: str) -> list[float]:
        """Each text's score minus that of the text it is judged against (the original or the ARO reference)."""
        scores = self.scores[spec]
        return [score - scores[item.anchor] for score, item in zip(scores, self.texts)]

    def verdicts(self, spec: str) -> list[str]:
        margins = self.margins(spec)
        return [verdict(index, self.texts, margins) for index in range(len(self.texts))]

    def rows(self, digits: int | None = 4) -> list[dict]:
        """Flat rows: one per text, score/margin/verdict columns per model.

        `digits` rounds for people reading a terminal; None keeps full precision, so a file keeps what the
        verdicts were decided on (two scores that round alike may still differ)."""
        def shown(value: float) -> float:
            return value if digits is None else round(value, digits)
        columns = {spec: (scores, self.margins(spec), self.verdicts(spec)) for spec, scores in self.scores.items()}
        rows = []
        for index, item in enumerate(self.texts):
            row = {"text": item.text, "kind": item.kind, "family": item.family,
                   "subtype": item.subtype, "edit": item.edit, "plausible": item.plausible}
            for spec, (scores, margins, verdicts) in columns.items():
                row[f"{spec} score"] = shown(scores[index])
                row[f"{spec} margin"] = shown(margins[index])
                row[f"{spec} verdict"] = verdicts[index]
            rows.append(row)
        return rows

    def verdict(self, spec: str, index: int) -> str:
        return verdict(index, self.texts, self.margins(spec))

    def as_dict(self) -> dict:
        """Everything at full precision (downloads and `--json`)."""
        return {"rows": self.rows(digits=None), "models": self.models, "errors": self.errors, "blind": self.blind}


def percent(value: float | None) -> str:
    """A metric for display; None (nothing to average, e.g. no positives) reads as n/a."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def verdict(index: int, texts: Sequence[ProbeText], margins: Sequence[float]) -> str:
    """The rule for one text, on margins over the text each is judged against.

    A text identical to the original can only tie with it: flagged as such, so a tie is not mistaken for
    a finding about the model (a negative that repeats the caption is still a failure, as ties are)."""
    item = texts[index]
    if item.kind == "reference":
        return ""  # judged against, not judged
    if index and item.text == texts[0].text:
        return "FAIL: same text as the original" if item.kind == "negative" else "same text as the original"
    if item.kind == "negative":
        against = texts[item.anchor].kind
        return f"FAIL: not below {against}" if margins[index] >= 0 else "ok"
    if item.kind == "positive":
        above = sum(1 for m, t in zip(margins, texts) if t.kind == "negative" and m > margins[index])
        return f"BRITTLE: below {above} negative(s)" if above else "ok"
    return ""


def load_image(source: Image.Image | str | bytes, name: str | None = None) -> Image.Image:
    """Accept a PIL image, a path or raw bytes, upright as its EXIF orientation says (as a viewer shows it);
    a file that is not an image, is damaged or declares too many pixels is the user's to fix. `name` is how
    the message calls the file (an upload's own name rather than the server's copy of it)."""
    try:
        if isinstance(source, Image.Image):
            return rgb(source, name or "(image)")
        return open_image(source, name, upright=True)
    except ImageFileError as error:
        raise ProbeInputError(f"{error} Pick another file.") from error


def validate_caption(caption: str | None) -> str:
    """The caption as it is scored: normalised (`backend.core.text`: NFKC, stripped), or why it cannot be."""
    caption = normalise_text(caption)
    if not caption:
        raise ProbeInputError("The caption is empty: type what the image shows.")
    if len(caption) > MAX_CAPTION_CHARS:
        raise ProbeInputError(f"The caption has {len(caption):,} characters; the limit is "
                              f"{MAX_CAPTION_CHARS:,} (CLIP text towers read ~77 tokens anyway).")
    problem = text_problem(caption)
    if problem:
        raise ProbeInputError(f"The caption {problem}.")
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


def build_texts(caption: str, families: Sequence[str] | None, seed: int, extra=None,
                vocabulary: frozenset[str] | None = None) -> list[ProbeText]:
    """The original, the ARO reference (only when ARO shuffles are scored and normalising changes the
    caption), the generated variants and the user's captions.

    `families` None means every family; an empty list means none (only the user's captions), never all.
    `vocabulary`: the words every probed model reads, when they declare them: new words come from it.
    A caption left with nothing to compare it with is refused: a table of one row says nothing."""
    from backend.perturb import order as aro
    from backend.perturb import perturb

    caption = validate_caption(caption)
    variants = ([] if families is not None and len(families) == 0
                else perturb(caption, families=families, seed=seed, vocabulary=vocabulary))
    texts = [ProbeText(caption, "original")]
    reference = aro.normalised(caption)  # shuffles and reference then differ only in word order
    if reference != caption and any(variant.family == aro.FAMILY for variant in variants):
        texts.append(ProbeText(reference, "reference", aro.FAMILY, "as ARO reads it",
                               "lower-cased, punctuation removed, at most 30 words, as ARO does before shuffling"))
    anchor = len(texts) - 1
    for variant in variants:
        texts.append(ProbeText(variant.text, variant.kind, variant.family, variant.subtype, variant.description,
                               variant.plausible, anchor if variant.family == aro.FAMILY else 0))
    texts += parse_extras(extra)
    if len(texts) == 1:
        unreadable = vocabulary is not None and (families is None or len(families) > 0) and bool(
            perturb(caption, families=families, seed=seed, scorer=None))
        raise ProbeInputError(_nothing_to_compare(families, unreadable))
    return texts


def _nothing_to_compare(families: Sequence[str] | None, unreadable: bool = False) -> str:
    """Why a caption has nothing to compare it with; `unreadable`: the families made variants, but each with a
    word outside the vocabulary the probed models declare (the built-in world's model reads only its grammar)."""
    if families is not None and len(families) == 0:
        return ("No perturbation family is checked and there are no extra captions, so there is nothing to "
                "compare the caption with: check a family, or add extra captions (one per line).")
    if unreadable:
        return ("The checked families made variants of this caption, but each uses a word outside the "
                "vocabulary of the models you probe (the built-in world's model reads only its own grammar's "
                "words: shapes, colours, sizes, relations), so there is nothing to compare it with: probe a real "
                "CLIP model, describe the image in the model's words, or add extra captions.")
    return ("The checked families made no variant of this caption and there are no extra captions, so there is "
            "nothing to compare it with: check other families, write a longer caption, or add extra captions.")


def check_model_access(spec: str, actor: Actor | None, guest_models: Sequence[str]) -> None:
    """Anyone may probe `guest_models` (what the web app lets visitors load: `ui.context.AppContext.guest_models`);
    any other spec is an admin's to load: a server path, a hub id, a pretrained tag or catalog entry whose weights
    are not on this machine (each a download, and a model of any size to build). `actor` None means a trusted
    caller (the command line)."""
    if actor is None or actor.is_admin or spec in guest_models:
        return
    try:
        on_server = local_path(parse_spec(spec)) is not None
    except ModelLoadError:
        on_server = False
    if on_server:
        raise ModelLoadError(f"'{spec}' names a file on the server: without an admin sign-in, pick a model "
                             "from the list")
    raise ModelLoadError(f"'{spec}' is not a model this server lets visitors probe: loading it would download "
                         "or build a model, which needs an admin sign-in. Pick a model from the list that is on "
                         "this machine (not marked 'not downloaded').")


def check_request(caption: str, extra, model_specs: Sequence[str], actor: Actor | None,
                  guest_models: Sequence[str]) -> None:
    """What a probe must pass before any work: a usable caption and extra captions, at least one model, and at
    least one of them that `actor` may load (`check_model_access`). Cheap, so that the web app runs it before
    counting a visitor's probe: a refused one costs nothing of their allowance."""
    validate_caption(caption)
    parse_extras(extra)
    if not model_specs:
        raise ProbeInputError("Pick at least one model.")
    refusals = []
    for spec in model_specs:
        try:
            check_model_access(spec, actor, guest_models)
        except ModelLoadError as error:
            refusals.append(str(error))
    if len(refusals) == len(model_specs):
        raise ProbeInputError("No model could be loaded:\n" + "\n".join(refusals))


def run_probe(image, caption: str, model_specs: Sequence[str], registry: ModelRegistry,
              cache: EmbeddingCache, families: Sequence[str] | None = None, seed: int = 0,
              extra=None, progress: Progress | None = None, actor: Actor | None = None,
              guest_models: Sequence[str] = (), plausible_only: bool = False,
              grammar_filter: GrammarFilter | None = None, blind_scorer=DEFAULT_BLIND,
              image_name: str | None = None, texts_limit_s: float | None = None) -> ProbeResult:
    """Score every variant with every model that loads; models that fail (or are refused) are reported, not fatal.

    Models load first, so that variants draw new words from the vocabulary they declare (the built-in
    world's); a variant a model reads with <unk> where the change is left out of that model's metrics.
    plausible_only: each model's metrics count plausible negatives only (the rows still list every text).
    grammar_filter: also marks generated negatives its CoLA classifier finds unacceptable as not plausible.
    blind_scorer: a `backend.perturb.blind` text scorer for the blind row ("default": the shipped n-gram
    model; None: no row).
    image_name: what a message about the image calls it (an upload's own name, not the server's copy).
    texts_limit_s: how long writing the variants may take (`backend.core.worker.time_limit`: in a worker).
    """
    if image is None:
        raise ProbeInputError("No image: upload one, paste one, or pick an example.")
    if not model_specs:
        raise ProbeInputError("Pick at least one model.")
    from backend.models.encoder import Encoder

    picture = load_image(image, name=image_name)
    validate_caption(caption)
    errors, loaded_models = [], {}
    for index, spec in enumerate(model_specs):
        if progress:
            progress(index / (2 * len(model_specs)), f"Loading {spec}")
        try:
            check_model_access(spec, actor, guest_models)
            loaded_models[spec] = registry.get(spec)
        except ModelLoadError as error:
            errors.append(str(error))
    if not loaded_models:
        raise ProbeInputError("No model could be loaded:\n" + "\n".join(errors))
    vocabulary = shared_vocabulary([loaded.tokenizer for loaded in loaded_models.values()])
    try:
        with time_limit(texts_limit_s, "writing the variants"):
            texts = build_texts(caption, families, seed, extra, vocabulary)
    except TimeLimitExceeded:
        raise ProbeInputError(_stuck(texts_limit_s or 0)) from None
    if grammar_filter is not None:
        texts = _grammar_checked(texts, grammar_filter)
    result = ProbeResult(texts, models=[], scores={}, errors=errors, blind=blind_row(texts, blind_scorer))
    for index, (spec, loaded) in enumerate(loaded_models.items()):
        if progress:
            progress(0.5 + index / (2 * len(loaded_models)), f"Scoring {spec}")
        result.scores[spec] = score_texts(Encoder(loaded, cache), picture, texts)
        margins = result.margins(spec)  # metrics on margins: ARO shuffles count against their reference
        unreadable = unreadable_variants(loaded.tokenizer, texts)
        notes = loaded.notes + vocabulary_notes(loaded.tokenizer, texts)
        warnings = unreliable_reasons(loaded.tokenizer, texts, margins)
        if unreadable:
            warnings.append(f"{len(unreadable)} variant(s) use words it reads as <unk> and are left out of its "
                            f"metrics: {listed(sorted({w for i in unreadable for w in unreadable[i]}))}.")
        result.models.append({**loaded.identity, **_metrics(margins, texts, plausible_only, set(unreadable)),
                              "notes": notes, "warnings": warnings, "n_unreadable": len(unreadable)})
    return result


def _stuck(seconds: float) -> str:
    return (f"Writing this caption's variants took over {seconds:g} s and was stopped: a perturbation rule may be "
            "stuck on it (please report the caption). Try again with fewer families checked, or reword it.")


def blind_row(texts: Sequence[ProbeText], scorer) -> dict:
    """What a text-only scorer gets on these variants: its accuracy vs negatives (the text a negative is
    judged against must score strictly higher) and its score per text. {} without a scorer."""
    if scorer is None:
        return {}
    from backend.perturb.blind import NgramScorer

    scorer = NgramScorer() if scorer == DEFAULT_BLIND else scorer
    scores = scorer.score([item.text for item in texts])
    negatives = [index for index, item in enumerate(texts) if item.kind == "negative"]
    wins = sum(scores[texts[i].anchor] > scores[i] for i in negatives)
    return {"scorer": scorer.name, "accuracy": wins / len(negatives) if negatives else None,
            "n_negatives": len(negatives), "scores": scores}


def score_texts(encoder: Encoder, picture: Image.Image, texts: Sequence[ProbeText]) -> list[float]:
    """A cosine score per text; texts the model reads as the same tokens are scored once and share it.

    A matrix product may round one column differently from an identical other (its blocking depends on the
    position), so a user negative that repeated the caption scored a hair below it and passed. The same
    tokens (the same text, or one that differs only where the tokenizer does not look: case for CLIP,
    words past the context length) are the same input, so they get the very same score: an exact tie."""
    inputs = [tuple(row) for row in encoder.loaded.tokenizer([item.text for item in texts]).tolist()]
    first_text: dict[tuple, str] = {}
    for item, tokens in zip(texts, inputs):
        first_text.setdefault(tokens, item.text)
    distinct = list(first_text.values())
    by_text = dict(zip(distinct, encoder.score([picture], distinct).cosine[0].tolist()))
    return [by_text[first_text[tokens]] for tokens in inputs]


def _grammar_checked(texts: list[ProbeText], grammar_filter: GrammarFilter) -> list[ProbeText]:
    """Generated negatives go through the grammar filter; a user's own captions are taken as written."""
    generated = [i for i, t in enumerate(texts) if t.kind == "negative" and t.family != "user"]
    checked = list(texts)
    for index, item in zip(generated, grammar_filter.filter_variants([texts[i] for i in generated])):
        checked[index] = item
    return checked


def _metrics(scores: list[float], texts: list[ProbeText], plausible_only: bool = False,
             left_out: Collection[int] = frozenset()) -> dict:
    """Metrics over every negative, or over plausible ones only: an absurd
    negative ("a bench sitting on a man") can be rejected from the text alone.
    `left_out`: indices of variants the model cannot read (see `unreadable_variants`)."""
    kept = [(s, t) for i, (s, t) in enumerate(zip(scores, texts)) if i not in left_out]
    negatives = [s for s, t in kept if t.kind == "negative" and (t.plausible or not plausible_only)]
    positives = [s for s, t in kept if t.kind == "positive"]
    implausible = sum(1 for t in texts if t.kind == "negative" and not t.plausible)
    return {**caption_probe_metrics(scores[0], negatives, positives),
            "plausible_only": plausible_only, "n_implausible": implausible}
