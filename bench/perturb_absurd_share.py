"""How many of the negatives the Probe shows by default are absurd on their face, weighted as a user meets them.

A judged natural sample (bench/perturb_sample.py --natural) gives each family the same number of rows, but the
Probe does not show the families equally: on held-out captions, additions and replacements outnumber binding
swaps many times over. This script weights each family's judged absurd (impl) rate by that family's share of the
negatives the Probe shows (default families, labelled plausible, from an engine pass saved by
bench/perturb_coverage.py --outputs), a stratified estimate with a normal 95% interval:

    share = sum_f w_f * p_f,   var = sum_f w_f^2 * p_f (1 - p_f) / n_f

where p_f is the share of family f's judged negatives, among those today's label lets through, judged impl, and
n_f their number. Name the judged files oldest first: each family's rate comes from the last file that judged
it (a family judged again after a change is read from its new sample only). A family with negatives shown but
no judged rows is refused, naming it: leaving it out would understate the share. ARO's word-order shuffles
are ungrammatical by design (none is judged absurd, and a text-only model rejects nearly all of them), so they
dilute the share; `--leave-out aro_order` gives it over the other families.

    python bench/perturb_absurd_share.py --outputs /tmp/odd.json [--leave-out FAMILY] JUDGED.csv [JUDGED.csv ...]
"""
from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]
from perturb_coverage import read_outputs  # noqa: E402
from perturb_report import Z_95  # noqa: E402
from plausibility_judged import judged_negatives, relabel  # noqa: E402

from backend.perturb import PROBE_DEFAULT_FAMILIES  # noqa: E402


def shown_per_family(outputs: Path) -> Counter:
    """Negatives the Probe shows by default, per family: default families, labelled plausible."""
    return Counter(variant.family for variants in read_outputs(outputs).values() for variant in variants
                   if variant.kind == "negative" and variant.plausible and variant.family in PROBE_DEFAULT_FAMILIES)


def newest_per_family(paths: list[Path]) -> list[dict]:
    """Each family's judged negatives from the last of `paths` that judged it."""
    newest: dict[str, list[dict]] = {}
    for path in paths:
        for family, rows in itertools.groupby(sorted(judged_negatives([path]), key=lambda row: row["family"]),
                                              key=lambda row: row["family"]):
            newest[family] = list(rows)
    return [row for rows in newest.values() for row in rows]


def absurd_share(shown: Counter, judged: list[dict]) -> tuple[float, float, float, list[str]]:
    """(share, low, high, one line per family) of judged-absurd negatives among those the Probe shows."""
    total = sum(shown.values())
    missing = [family for family in shown if not any(row["family"] == family for row in judged)]
    if missing:
        raise SystemExit(f"no judged negatives for {', '.join(sorted(missing))}: judge a natural sample of them first")
    share = variance = 0.0
    lines = []
    for family in sorted(shown):
        let_through = [row for row in judged if row["family"] == family and row["plausible"] == "yes"]
        absurd, n = sum(row["label"] == "impl" for row in let_through), len(let_through)
        weight, rate = shown[family] / total, absurd / n
        share += weight * rate
        variance += weight ** 2 * rate * (1 - rate) / n
        lines.append(f"{family:<14} shown {shown[family]:>6} ({weight:6.1%})   "
                     f"judged absurd {absurd:>3}/{n:<3} = {rate:5.1%}")
    half = Z_95 * math.sqrt(variance)
    return share, max(0.0, share - half), min(1.0, share + half), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outputs", type=Path, required=True, help="an engine pass saved by perturb_coverage.py")
    parser.add_argument("--leave-out", action="append", default=[], help="a family not to count (repeatable)")
    parser.add_argument("judged", nargs="+", type=Path, help="natural judged samples (perturb_sample.py --natural)")
    args = parser.parse_args(argv)
    judged = [relabel(row) for row in newest_per_family(args.judged)]
    shown = shown_per_family(args.outputs)
    share, low, high, lines = absurd_share(Counter({f: n for f, n in shown.items() if f not in args.leave_out}), judged)
    print("\n".join(lines))
    print(f"judged absurd among the negatives the Probe shows: {share:.1%} [{low:.1%}, {high:.1%}] (stratified, 95%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
