"""Draw the engine's outputs for judging by hand (/work/shared/PERTURBATION-RUBRIC.md).

Captions come from SugarCrepe items with ODD ids only: the engine's rules
are tuned on even ids. A caption that appears under an even id in any
subset is left out too (many captions sit in several subsets), since its
authors have seen it. Distinct captions are shuffled with --seed, and
`perturb(caption, families=None, seed=0)` runs on each.

Per family, subtypes take turns, rarest first, each taking the next caption
(in shuffled order) that has an output of that subtype and has not yet
given this family an output: every (family, subtype) present gets an equal
share, a subtype with too few captions gives its unused share to the
others, and no caption gives one family two outputs. When a caption has
several outputs of the subtype, one is drawn with the seed. Each family
gets --per-family outputs (default 60, so six families make 360 >= the
300 the rubric asks for) unless it has fewer captions to give.

Writes a CSV with id, subset, original, output, kind, family, subtype,
plausible (the engine's label), label, note (label and note empty, for the judge), grouped by family and
subtype, and prints what it drew. Deterministic for a given seed and engine.

    NLTK_DATA=... .venv/bin/python bench/perturb_sample.py --data /work/shared/data/sugar-crepe \
        --seed 0 --per-family 60 --out tests/data/perturb-judged.csv [--natural] [--outputs FILE] \
        [--new-since EARLIER_OUTPUTS]

With --new-since, only outputs that an earlier engine pass (saved by perturb_coverage.py --outputs) did not
make for the same caption are drawn: a sample of what a change added.
"""
from __future__ import annotations

import argparse
import csv
import random
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]
from perturb_coverage import SUBSETS, Item, load_items, read_outputs, run_engine  # noqa: E402

from backend.perturb import FAMILIES, PROBE_DEFAULT_FAMILIES, Variant  # noqa: E402

COLUMNS = ("id", "subset", "original", "output", "kind", "family", "subtype", "plausible", "label", "note")
RUBRIC_MINIMUM = 300
ENGINE_SEED = 0


def key(caption: str) -> str:
    """Captions compared ignoring case and spacing, so a re-spaced copy of a tuned-on caption is still excluded."""
    return " ".join(caption.lower().split())


def held_out(subsets: dict[str, list[Item]]) -> list[Item]:
    """One odd-id item per caption that never appears under an even id, in subset and id order."""
    tuned = {key(item.caption) for items in subsets.values() for item in items if int(item.id) % 2 == 0}
    chosen: dict[str, Item] = {}
    for subset in SUBSETS:
        for item in subsets[subset]:
            if int(item.id) % 2 == 1 and key(item.caption) not in tuned:
                chosen.setdefault(key(item.caption), item)
    return list(chosen.values())


def candidates(items: list[Item], outputs: dict[str, list[Variant]]) -> dict[str, dict[str, list[int]]]:
    """family -> subtype -> positions (in shuffled order) of the captions with such an output."""
    table: dict[str, dict[str, list[int]]] = {}
    for position, item in enumerate(items):
        for family, subtype in dict.fromkeys((v.family, v.subtype) for v in outputs[item.caption]):
            table.setdefault(family, {}).setdefault(subtype, []).append(position)
    return table


def take_turns(by_subtype: dict[str, list[int]], wanted: int) -> list[tuple[str, int]]:
    """(subtype, caption position) picks: subtypes in turn, rarest first, one output per caption."""
    order = sorted(by_subtype, key=lambda subtype: (len(by_subtype[subtype]), subtype))
    cursors, used, picks = dict.fromkeys(order, 0), set(), []
    while len(picks) < wanted:
        progressed = False
        for subtype in order:
            positions = by_subtype[subtype]
            while cursors[subtype] < len(positions) and positions[cursors[subtype]] in used:
                cursors[subtype] += 1
            if len(picks) == wanted or cursors[subtype] == len(positions):
                continue
            used.add(positions[cursors[subtype]])
            picks.append((subtype, positions[cursors[subtype]]))
            progressed = True
        if not progressed:
            break
    return picks


def draw(items: list[Item], outputs: dict[str, list[Variant]], per_family: int, seed: int) -> list[dict]:
    """The sample's rows, grouped by family (FAMILIES order, new families after) and subtype."""
    table = candidates(items, outputs)
    rows = []
    for family in [*[f for f in FAMILIES if f in table], *sorted(set(table) - set(FAMILIES))]:
        rng = random.Random(f"{seed}:{family}")
        picks = sorted(take_turns(table[family], per_family), key=lambda pick: (pick[0], pick[1]))
        for subtype, position in picks:
            item = items[position]
            variant = rng.choice([v for v in outputs[item.caption] if (v.family, v.subtype) == (family, subtype)])
            rows.append({"id": item.id, "subset": item.subset, "original": item.caption, "output": variant.text,
                         "kind": variant.kind, "family": family, "subtype": subtype,
                         "plausible": "yes" if variant.plausible else "no", "label": "", "note": ""})
    return rows


def draw_natural(items: list[Item], outputs: dict[str, list[Variant]], per_family: int, seed: int,
                 families) -> list[dict]:
    """The distribution a user sees: per family, outputs drawn uniformly from every output the family gives
    on the held-out captions (a subtype is drawn as often as it is produced), at most one per caption."""
    rows = []
    for family in families:
        rng = random.Random(f"{seed}:{family}:natural")
        pool = [(item, v) for item in items for v in outputs[item.caption] if v.family == family]
        rng.shuffle(pool)
        used: set[str] = set()
        for item, variant in pool:
            if len(used) == per_family:
                break
            if item.caption not in used:
                used.add(item.caption)
                rows.append({"id": item.id, "subset": item.subset, "original": item.caption, "output": variant.text,
                             "kind": variant.kind, "family": family, "subtype": variant.subtype,
                             "plausible": "yes" if variant.plausible else "no", "label": "", "note": ""})
    return rows


def new_outputs(outputs: dict[str, list[Variant]], earlier: dict[str, list[Variant]]) -> dict[str, list[Variant]]:
    """Only the variants an earlier engine pass did not make for the same caption: what a change added, so
    a judged sample can look at the change itself."""
    return {caption: [v for v in variants if v.text not in {e.text for e in earlier.get(caption, [])}]
            for caption, variants in outputs.items()}


def write_csv(rows: list[dict], path: Path) -> None:
    """UTF-8 CSV with a header; csv quoting keeps commas and stray newlines in captions intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def summarize(rows: list[dict], eligible: int, per_family: int) -> None:
    """What was drawn, and any family short of its share or a total below the rubric's minimum."""
    print(f"{eligible} held-out captions (odd ids, never under an even id); {len(rows)} outputs drawn")
    per_family_drawn = Counter(row["family"] for row in rows)
    for (family, subtype), n in Counter((row["family"], row["subtype"]) for row in rows).items():
        print(f"  {family:<14} {subtype:<26} {n:>4}")
    for family, n in per_family_drawn.items():
        if n < per_family:
            print(f"warning: {family} has only {n} captions with an output, fewer than --per-family {per_family}")
    if len(rows) < RUBRIC_MINIMUM:
        print(f"warning: {len(rows)} outputs in all; the rubric's judged sample should have >= {RUBRIC_MINIMUM}")


def main(argv: list[str] | None = None) -> int:
    """Draw, write and summarize; the judge fills in label and note afterwards."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder with SugarCrepe's 7 subset .json files")
    parser.add_argument("--seed", type=int, default=0, help="shuffles the captions and picks among outputs")
    parser.add_argument("--per-family", type=int, default=60, help="outputs per family (default 60)")
    parser.add_argument("--out", type=Path, required=True, help="CSV to write")
    parser.add_argument("--natural", action="store_true",
                        help="draw as a user sees outputs (uniform over each family's outputs) instead of "
                             "balancing subtypes; only the Probe's default families")
    parser.add_argument("--outputs", type=Path, default=None, help="engine outputs saved by perturb_coverage.py")
    parser.add_argument("--new-since", type=Path, default=None,
                        help="outputs an earlier engine saved (perturb_coverage.py --outputs): draw only new ones")
    args = parser.parse_args(argv)
    if args.per_family < 1:
        parser.error("--per-family must be at least 1")
    items = held_out(load_items(args.data))
    random.Random(args.seed).shuffle(items)
    outputs = run_engine([item.caption for item in items], ENGINE_SEED, args.outputs)
    if args.new_since is not None:
        outputs = new_outputs(outputs, read_outputs(args.new_since))
    if args.natural:
        rows = draw_natural(items, outputs, args.per_family, args.seed, PROBE_DEFAULT_FAMILIES)
    else:
        rows = draw(items, outputs, args.per_family, args.seed)
    write_csv(rows, args.out)
    summarize(rows, len(items), args.per_family)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
