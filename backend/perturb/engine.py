"""The engine behind `backend.perturb.perturb`: parse once, run each family in a fixed order, mark plausibility.

Imports spaCy and WordNet (seconds): `backend.perturb` loads this module on first use of `perturb`.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence

from spacy.tokens import Doc

from backend.core.limits import MAX_CAPTION_CHARS
from backend.perturb import FAMILIES
from backend.perturb.addition import addition
from backend.perturb.blind import NgramScorer, TextScorer
from backend.perturb.core import FillMask, Request, Variant, normalized
from backend.perturb.lexicon import lexicon, wordnet
from backend.perturb.nlp import load_spacy, parse
from backend.perturb.nouns import is_capitalised_thing
from backend.perturb.order import aro_order
from backend.perturb.plausibility import mark_plausibility
from backend.perturb.positives import hard_positive
from backend.perturb.replace import ce_clip, replace
from backend.perturb.swap import binding_swap, negclip_swap, still_true_texts

_GENERATORS: dict[str, Callable[[Request], list[Variant]]] = {
    "aro_order": aro_order,
    "negclip_swap": negclip_swap,
    "replace": replace,
    "binding_swap": binding_swap,
    "ce_clip": ce_clip,
    "addition": addition,
    "hard_positive": hard_positive,
}
# Adversarial refinement (SugarCrepe): each subtype makes this many times its quota of candidates, and the
# blind scorer keeps those it separates least from the caption.
REFINE_POOL = 3
DEFAULT_SCORER = "default"


# Families run in this order, each barred from texts earlier ones produced,
# so a text is credited to its most specific origin and later families move
# on to other candidates. Hard positives come first: a rewrite that keeps the
# caption true is never offered as a negative, even if hard_positive was
# not requested. ARO's blind shuffles come last.
_CLAIM_ORDER = ("hard_positive", "binding_swap", "replace", "addition", "negclip_swap", "ce_clip", "aro_order")


def _family_names(families: Sequence[str] | str | None) -> list[str]:
    if families is None:
        return list(FAMILIES)
    names = [families] if isinstance(families, str) else list(families)
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise ValueError(f"Unknown perturbation family {', '.join(map(repr, unknown))}; valid: {', '.join(FAMILIES)}.")
    return list(dict.fromkeys(names))


def _check_caption(caption: str) -> None:
    if not isinstance(caption, str):
        raise TypeError(f"caption must be a string, not {type(caption).__name__}")
    if not caption.strip():
        raise ValueError("The caption is empty; type a sentence to perturb.")
    if len(caption) > MAX_CAPTION_CHARS:
        raise ValueError(f"The caption has {len(caption):,} characters; the limit is {MAX_CAPTION_CHARS:,}.")


def _reading(caption: str) -> Doc:
    """The parse every family reads: a capitalised thing that spaCy took for a name ("catch a green Frisbee",
    `nouns.is_capitalised_thing`) is read again in lower case, so that it is a noun to them ("green" then trades
    with another colour); the edits still apply to the caption as typed, at the same offsets."""
    doc = parse(caption)
    text = caption
    for token in doc:
        if is_capitalised_thing(token) and len(token.lower_) == len(token):
            text = text[: token.idx] + token.lower_ + text[token.idx + len(token) :]
    return doc if text == caption else parse(text)


def _request(caption: str, seed: int, max_per_subtype: int, fill_mask: FillMask | None,
             vocabulary: frozenset[str] | None) -> Request:
    """Parse once (twice where a thing was capitalised: `_reading`); shouted captions are parsed in lower case
    (same offsets). `_run` gives each family its own random stream and forbidden texts."""
    lowered = caption.lower()
    all_caps = caption.isupper() and len(lowered) == len(caption)
    doc = parse(lowered) if all_caps else _reading(caption)
    forbidden = frozenset([normalized(caption)])
    return Request(caption, doc, random.Random(seed), max_per_subtype, fill_mask, all_caps, forbidden, vocabulary)


def _run(request: Request, family: str, seed: int, forbidden: frozenset[str]) -> list[Variant]:
    # A string seed is hashed with SHA-512 by `random`, so this is stable
    # across processes, and families do not share a random stream.
    rng = random.Random(f"{family}:{seed}")
    return _GENERATORS[family](dataclasses.replace(request, rng=rng, forbidden=forbidden))


def perturb(
    caption: str,
    families: Sequence[str] | None = None,
    seed: int = 0,
    max_per_subtype: int = 5,
    *,
    fill_mask: FillMask | None = None,
    vocabulary: frozenset[str] | None = None,
    scorer: TextScorer | str | None = DEFAULT_SCORER,
) -> list[Variant]:
    """Perturbed versions of `caption`, grouped by family in the order of
    `families` (FAMILIES order when None), subtypes in a fixed order.

    families: names from FAMILIES (a single name may be passed as a string);
        None means all (training uses this); the probe's default is
        PROBE_DEFAULT_FAMILIES, which leaves out NegCLIP's noisy swaps.
    max_per_subtype: at most this many variants per subtype (aro_order makes
        one per subtype, as ARO does).
    fill_mask: optional masked-language-model hook for ce_clip's
        attribute/action/object negatives: called with the caption where one
        word is replaced by MASK ("<mask>"), it returns candidate words, best
        first. Without it the curated lexicon supplies co-hyponyms. With a
        transformers pipeline `fill = pipeline("fill-mask", "roberta-base")`:
        `lambda text: [r["token_str"] for r in fill(text.replace(MASK, fill.tokenizer.mask_token), top_k=20)]`.
    vocabulary: the lower-case words a model reads (a word-level tokenizer's); new words come from it only.
    scorer: the text-only scorer of the adversarial refinement (`REFINE_POOL` candidates per kept one, the
        least separable kept); "default" is the shipped n-gram model, None keeps the first candidates.

    No variant repeats another or the caption (ignoring case, spacing and
    punctuation); a text that a hard positive produces is never returned as
    a negative, even when hard_positive is not requested, and neither is a
    swap that keeps the caption true (conjuncts, the two sides of a
    symmetric relation such as "by" or "next to", two modifiers of one
    noun: see `units.still_true_swaps`), whichever family makes it. When
    two families could make the same text, the more specific one (see _CLAIM_ORDER)
    keeps it and the other picks a different candidate. Raises ValueError
    for an empty caption, one over 1,000 characters, or an unknown family.
    """
    _check_caption(caption)
    names = _family_names(families)
    if isinstance(max_per_subtype, bool) or not isinstance(max_per_subtype, int) or max_per_subtype < 1:
        raise ValueError(f"max_per_subtype must be a positive integer, not {max_per_subtype!r}.")
    if fill_mask is not None and not callable(fill_mask):
        raise TypeError("fill_mask must be a callable taking a masked caption and returning words.")
    blind = _scorer(scorer)
    pool = max_per_subtype * REFINE_POOL if blind is not None else max_per_subtype
    request = _request(caption, seed, pool, fill_mask, vocabulary)
    taken, results = request.forbidden, {}
    still_true = still_true_texts(request)
    for family in _CLAIM_ORDER:
        if family in names or family == "hard_positive":
            barred = taken if family == "hard_positive" else taken | still_true
            results[family] = _run(request, family, seed, barred)
            taken |= {normalized(variant.text) for variant in results[family]}
    seen: set[str] = set()
    variants = []
    true_texts = _true_keys(caption, still_true, results["hard_positive"])
    for variant in (variant for family in names for variant in results[family]):
        key = normalized(variant.text)
        if variant.kind == "negative" and lexicon().canonical(variant.text) in true_texts:
            continue  # says what a true text says, in synonyms ("a little cat" for "a small cat")
        if key not in seen:  # two subtypes of one family can meet (e.g. two ARO shuffles)
            seen.add(key)
            variants.append(variant)
    return mark_plausibility(caption, refined(caption, variants, max_per_subtype, blind))


def _true_keys(caption: str, still_true: frozenset[str], positives: list[Variant]) -> set[str]:
    """Synonym-blind keys (`Lexicon.canonical`) of texts known to be true: the caption, the swaps that keep
    it true and the hard positives."""
    lex = lexicon()
    return {lex.canonical(text) for text in [caption, *still_true, *(v.text for v in positives)]}


_NGRAM: list[TextScorer] = []


def _scorer(scorer: TextScorer | str | None) -> TextScorer | None:
    if scorer != DEFAULT_SCORER:
        return scorer if not isinstance(scorer, str) else None
    if not _NGRAM:
        _NGRAM.append(NgramScorer())
    return _NGRAM[0]


def refined(caption: str, variants: list[Variant], keep: int, scorer: TextScorer | None) -> list[Variant]:
    """At most `keep` variants per (family, subtype), in their order. With a scorer, the negatives kept are
    those whose score comes closest to (or above) the caption's: a text-only model separates them least."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, variant in enumerate(variants):
        groups.setdefault((variant.family, variant.subtype), []).append(index)
    kept: set[int] = set()
    for indices in groups.values():
        if scorer is None or len(indices) <= keep or variants[indices[0]].kind != "negative":
            kept.update(indices[:keep])
            continue
        scores = scorer.score([caption, *(variants[i].text for i in indices)])
        ranked = sorted(range(len(indices)), key=lambda k: (scores[0] - scores[k + 1], k))
        kept.update(indices[k] for k in ranked[:keep])
    return [variant for index, variant in enumerate(variants) if index in kept]


def warm_up() -> None:
    """Load spaCy and WordNet now (seconds) so the first probe does not pay for it."""
    load_spacy()
    wordnet()
