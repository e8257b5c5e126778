"""Agreement, resolution and annotator quality for BiVLC-style crowd annotation.

Pure functions over plain answers, no database, so every number a campaign
reports can be checked by hand (tests/test_annotate_agreement.py does).

BiVLC (appendix H.3) measured Cohen's kappa between pairs of annotators on
"picked one of the 4 images" vs "none", not on which image was picked; both
views are offered because they answer different questions: the first is whether
annotators agree that a usable image exists, the second whether they agree on
which one. This is the project's one Cohen's kappa. Its degenerate case follows the
convention set for the project (docs/SCIENCE.md): an undefined 0/0 from everybody
giving the same single label is reported as perfect agreement, 1.0.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULES = ("majority", "third")
NONE = "none"


@dataclass(frozen=True)
class Answer:
    """One annotator's answer to one item in one stage ("select" or "ambiguity")."""

    item_id: int
    annotator: str
    stage: str
    choice: str


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of two annotators over the `n_items` items both answered."""

    annotator_a: str
    annotator_b: str
    n_items: int
    kappa: float | None


@dataclass(frozen=True)
class Resolution:
    """What an item's answers decide: `decision` is None when nothing is decided yet
    (or ever); `needs_more` says the item should be handed to one more annotator."""

    decision: str | None
    needs_more: bool
    votes: dict[str, int]
    reason: str


@dataclass(frozen=True)
class AnnotatorQuality:
    """An annotator's record on gold items (items whose right answer is known)."""

    n_gold: int
    n_correct: int
    accuracy: float

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson 95% interval on `accuracy`: 4/5 correct is not evidence of an 80% annotator."""
        return wilson_interval(self.n_correct, self.n_gold)


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters, one (rater a, rater b) pair of labels per item.

    kappa = (p_o - p_e) / (1 - p_e): p_o is the fraction of items with equal
    labels, p_e = sum over labels c of (share of a's labels that are c) times
    (share of b's labels that are c). Labels are whatever strings occur.

    Degenerate cases: no items -> None (there is nothing to measure). p_e == 1
    -> 1.0: p_e reaches 1 only when both raters gave one and the same label to
    every item, which forces p_o == 1 too (so "p_e == 1 with p_o < 1" cannot
    happen); the formula is then 0/0. scikit-learn's cohen_kappa_score returns
    NaN there (its `replace_undefined_by`, default NaN); this project reports
    the agreement it saw, 1.0, and the caller shows n_items next to it so that
    "1.0 on 3 items" reads as weak.
    """
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(a == b for a, b in pairs) / n
    count_a = Counter(a for a, _ in pairs)
    count_b = Counter(b for _, b in pairs)
    p_e = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if p_e >= 1.0:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)


def picked_or_none(choice: str) -> str:
    """BiVLC's kappa view of a select-stage answer: "image" for any of the 4 slots, "none" for none."""
    if choice == NONE:
        return NONE
    if choice.isdigit():
        return "image"
    raise ValueError(f"{choice!r} is not a select-stage answer (an image slot '1'..'4' or 'none')")


def chosen_image(choice: str) -> str:
    """The stricter view: annotators agree only when they chose the same slot (or both none)."""
    return choice


def pairwise_kappa(answers: list[Answer], stage: str, view: Callable[[str], str]) -> list[PairKappa]:
    """Cohen's kappa for every pair of annotators who answered at least one common item in `stage`.

    Each pair is measured on the items both answered, after mapping choices
    through `view` (`picked_or_none` is BiVLC's definition). If an annotator
    answered the same item twice, the later answer in `answers` counts (it is
    the correction). Pairs come sorted by (annotator_a, annotator_b), a < b.
    """
    by_annotator: dict[str, dict[int, str]] = defaultdict(dict)
    for answer in answers:
        if answer.stage == stage:
            by_annotator[answer.annotator][answer.item_id] = view(answer.choice)
    result = []
    for a, b in itertools.combinations(sorted(by_annotator), 2):
        shared = sorted(by_annotator[a].keys() & by_annotator[b].keys())
        if shared:
            pairs = [(by_annotator[a][item], by_annotator[b][item]) for item in shared]
            result.append(PairKappa(a, b, len(shared), cohen_kappa(pairs)))
    return result


def krippendorff_alpha(units: Mapping[Any, Sequence[str]]) -> float | None:
    """Nominal Krippendorff's alpha over all units (items, by any key), any number of values per unit.

    Units with fewer than 2 values are not pairable and are ignored. With the
    coincidence matrix o[c][k] = sum over units u of (number of ordered pairs of
    values (c, k) from different coders in u) / (m_u - 1), n_c = sum_k o[c][k]
    and n = sum_c n_c (the number of pairable values):

        alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c != k} o[c][k] / sum_{c != k} n_c * n_k

    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", nominal
    case; its 4-observer x 12-unit example gives 0.743.)

    Degenerate cases: no pairable unit -> None. D_e == 0 happens only when
    every pairable value is the same label; then D_o == 0 too and alpha is 0/0,
    which Krippendorff calls undefined (the `krippendorff` package raises). It
    returns 1.0 here, the same convention as `cohen_kappa`: no disagreement
    was observed, and the caller reports how many units stood behind it.
    """
    disagreeing = 0.0  # sum over c != k of o[c][k]
    totals: Counter[str] = Counter()  # n_c
    for values in units.values():
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        totals.update(counts)
        # ordered pairs of values with different labels within the unit, weighted 1/(m_u - 1)
        disagreeing += (m * m - sum(c * c for c in counts.values())) / (m - 1)
    n = sum(totals.values())
    if n == 0:
        return None
    expected = n * n - sum(c * c for c in totals.values())  # sum over c != k of n_c * n_k
    if expected == 0:
        return 1.0
    return 1.0 - (n - 1) * disagreeing / expected


def resolve(choices: list[str], rule: str, overlap: int) -> Resolution:
    """Decide an item from its answers in one stage.

    Fewer than `overlap` answers: nothing is decided yet and the item needs
    more (the ordinary assignment still owes it answers). Then a label chosen by
    a strict majority (more than half) of all answers wins.

    Rule "majority": no strict majority -> unresolved for good ("no majority").
    Rule "third": no strict majority -> one more answer is asked for, so a
    1-1 tie between two annotators calls a third, as long as the item has
    fewer than `overlap + 2` answers and a strict majority can still be
    reached within that cap (the leader winning every remaining answer).
    The second condition matters: with overlap 2, a 1-1-1 split after three
    answers cannot become a majority with a fourth (2 of 4 is not more than
    half), so asking a fourth annotator would waste their time.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, not {rule!r}")
    if overlap < 1:
        raise ValueError(f"overlap must be at least 1, not {overlap}")
    votes = dict(Counter(choices).most_common())
    n = len(choices)
    if n < overlap:
        return Resolution(None, True, votes, f"{n} of {overlap} answers so far")
    leader, top = next(iter(votes.items()))
    if 2 * top > n:
        return Resolution(leader, False, votes, f"majority: {top} of {n} answers")
    cap = overlap + 2
    if rule == "third" and n < cap and 2 * (top + cap - n) > cap:
        return Resolution(None, True, votes, f"no majority in {n} answers: one more answer needed")
    return Resolution(None, False, votes, f"no majority in {n} answers")


def gold_accuracy(answers: list[tuple[str, bool]]) -> dict[str, AnnotatorQuality]:
    """Per-annotator accuracy on gold items from (annotator, answered correctly) pairs."""
    n_gold: Counter[str] = Counter()
    n_correct: Counter[str] = Counter()
    for annotator, correct in answers:
        n_gold[annotator] += 1
        n_correct[annotator] += bool(correct)
    return {annotator: AnnotatorQuality(n, n_correct[annotator], n_correct[annotator] / n)
            for annotator, n in sorted(n_gold.items())}


def flagged(quality: AnnotatorQuality, threshold: float, min_gold: int) -> bool:
    """Whether an annotator's gold record is bad enough to review their answers.

    Flagged when they answered at least `min_gold` gold items and their
    accuracy is below `threshold`; below `min_gold` one unlucky miss would
    flag an honest annotator, so nobody is judged on too few gold items.
    """
    return quality.n_gold >= min_gold and quality.accuracy < threshold


def wilson_interval(k: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for k successes in n trials.

    Chosen over the normal approximation because gold sets per annotator are
    small and accuracies sit near 1, where p +- 1.96 * sqrt(p(1-p)/n) collapses
    to a zero-width interval at p = 1. n == 0 -> (0.0, 1.0): no evidence.
    """
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    z = 1.959963984540054  # the 97.5th percentile of the standard normal
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
