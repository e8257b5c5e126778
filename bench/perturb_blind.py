"""Can a text-only model tell our negatives from the caption? Blind accuracy, next to SugarCrepe's.

For every SugarCrepe subset, on held-out items (odd ids whose caption no even id has: neither the rules nor
the shipped caption counts saw them), two blind accuracies with one scorer: on SugarCrepe's own
human-validated negative of each item, and on the engine's negatives of the matching kind for the same
captions (`perturb_coverage.MAPPING`), over the captions where the Probe's default families have one. Blind
accuracy is the share of (caption, negative) pairs the scorer ranks the caption strictly above. The gap
(ours minus SugarCrepe's) is what the issue bounds: at most 5 points per subset. Also per family and
subtype, over every negative of the Probe's default families on the held-out captions.

    .venv/bin/python bench/perturb_blind.py --data /work/shared/data/sugar-crepe [--outputs FILE] \
        [--scorer ngram|HF-ID] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]
from perturb_coverage import MAPPING, SUBSETS, covered_by, distinct_captions, load_items, run_engine  # noqa: E402

from backend.perturb import PROBE_DEFAULT_FAMILIES  # noqa: E402
from backend.perturb.blind import blind_accuracy, load_scorer  # noqa: E402

MAX_GAP = 0.05


def subset_rows(subsets, outputs, scorer) -> dict:
    rows = {}
    for name in SUBSETS:
        ours_of = {item.id: [v.text for v in covered_by(outputs[item.caption], MAPPING[name])
                             if v.family in PROBE_DEFAULT_FAMILIES] for item in subsets[name]}
        items = [item for item in subsets[name] if ours_of[item.id]]  # both sides over the same captions
        ours = [(item.caption, text) for item in items for text in ours_of[item.id]]
        theirs = [(item.caption, item.negative) for item in items]
        row = {"items": len(subsets[name]), "items_with_ours": len(items), "our_negatives": len(ours),
               "sugarcrepe": blind_accuracy(scorer, theirs), "ours": blind_accuracy(scorer, ours)}
        row["gap"] = None if None in (row["ours"], row["sugarcrepe"]) else row["ours"] - row["sugarcrepe"]
        rows[name] = row
    return rows


def family_rows(outputs, scorer) -> dict:
    pairs: dict[tuple[str, str], list] = defaultdict(list)
    for caption, variants in outputs.items():
        for v in variants:
            if v.kind == "negative" and v.family in PROBE_DEFAULT_FAMILIES:
                pairs[(v.family, v.subtype)].append((caption, v.text))
                pairs[(v.family, "(all)")].append((caption, v.text))
    return {f"{family}/{subtype}": {"n": len(found), "blind_accuracy": blind_accuracy(scorer, found)}
            for (family, subtype), found in sorted(pairs.items())}


def pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--outputs", type=Path, default=None, help="engine outputs saved by perturb_coverage.py")
    parser.add_argument("--scorer", default="ngram", help="'ngram' (default) or a Hugging Face LM id/folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    subsets = load_items(args.data, None, "odd")
    outputs = run_engine(distinct_captions(subsets), args.seed, args.outputs)
    scorer = load_scorer(args.scorer)
    report = {"scorer": scorer.name, "subsets": subset_rows(subsets, outputs, scorer),
              "families": family_rows(outputs, scorer)}
    print(f"Blind accuracy (scorer: {scorer.name}), held-out odd-id captions")
    print(f"{'subset':<12} {'items':>5} {'covered':>7} {'ours n':>6}  {'SugarCrepe':>10} {'ours':>7} {'gap':>7}")
    for name, row in report["subsets"].items():
        gap = "-" if row["gap"] is None else f"{100 * row['gap']:+.1f}"
        flag = "  OVER" if row["gap"] is not None and row["gap"] > MAX_GAP else ""
        print(f"{name:<12} {row['items']:>5} {row['items_with_ours']:>7} {row['our_negatives']:>6}  "
              f"{pct(row['sugarcrepe']):>10} {pct(row['ours']):>7} {gap:>7}{flag}")
    print("\nPer family and subtype (default families, every negative)")
    for name, row in report["families"].items():
        print(f"{name:<40} {row['n']:>6} {pct(row['blind_accuracy']):>7}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
