"""The plausibility label of today's code against every hand-judged negative, tuning rows apart from held-out ones.

The judged CSVs (tests/data/perturb-judged*.csv) hold the label a person gave each output (impl: absurd on
its face), but their `plausible` column is whatever engine drew them. This script relabels every judged
negative of the Probe's default families with today's `plausibility` (the changed spans are the words that
differ from the original caption, as the engine's edits would mark them) and prints
`perturb_report.plausibility_markdown` for two disjoint halves:

* tune: rows whose caption id is even, and odd-id rows whose caption hashes even (crc32 of the lower-cased
  caption): the rules were written looking at these;
* held-out: the other odd-id rows; their captions are in no tuning row and not in the shipped caption counts.

A caption judged in several files counts once per distinct output (the last file's label wins).

    python bench/plausibility_judged.py [FILE.csv ...] [--show-flagged]
"""
from __future__ import annotations

import argparse
import csv
import difflib
import re
import sys
import zlib
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]
from perturb_report import plausibility_markdown  # noqa: E402

from backend.perturb import PROBE_DEFAULT_FAMILIES, Variant  # noqa: E402
from backend.perturb.plausibility import implausibilities, is_labelled  # noqa: E402
from backend.perturb.plausibility_parse import Span  # noqa: E402

# The flagged samples were drawn from what the label flags (label9's and label10's: every odd-id output their rules
# hid or removed): they measure precision, and in the pool they would inflate recall, so they are read only when named.
FLAGGED_SAMPLES = frozenset(["perturb-judged-plausibility-flagged.csv", "perturb-judged-label9.csv",
                             "perturb-judged-label10.csv"])
JUDGED = sorted(path for path in (BENCH.parent / "tests" / "data").glob("perturb-judged*.csv")
                if path.name not in FLAGGED_SAMPLES)
_WORD = re.compile(r"\S+")


def judged_negatives(paths: list[Path]) -> list[dict]:
    """Distinct (original, output) judged negatives of the Probe's default families."""
    rows: dict[tuple[str, str], dict] = {}
    for path in paths:
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row.get("kind") == "negative" and row["family"] in PROBE_DEFAULT_FAMILIES and row["label"]:
                    rows[(row["original"], row["output"])] = {**row, "label": row["label"].strip().lower()}
    return list(rows.values())


def half(row: dict) -> str:
    """"tune" or "held-out" (see the module docstring)."""
    if not row["id"].isdigit() or int(row["id"]) % 2 == 0:
        return "tune"
    return "held-out" if zlib.crc32(row["original"].lower().encode()) % 2 else "tune"


def changed_words(original: str, output: str) -> list[Span]:
    """Character spans of `output`'s words that differ from `original`'s; an empty span where words went."""
    before = [match.group() for match in _WORD.finditer(original)]
    after = list(_WORD.finditer(output))
    matcher = difflib.SequenceMatcher(a=before, b=[match.group() for match in after], autojunk=False)
    spans = []
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag == "equal":
            continue
        at = after[start].start() if start < len(after) else len(output)
        spans.append((at, after[end - 1].end()) if end > start else (at, at))
    return spans


def relabel(row: dict) -> dict:
    """`row` with `plausible` set by today's label (none for a family it leaves alone: ARO's shuffles)."""
    variant = Variant(row["output"], "negative", row["family"], row["subtype"], ())
    found = implausibilities(row["output"], row["original"],
                             changed_words(row["original"], row["output"]) or None) if is_labelled(variant) else []
    return {**row, "plausible": "no" if found else "yes", "violations": "; ".join(map(str, found))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path,
                        help="judged CSVs (default: every tests/data/perturb-judged*.csv but the flagged sample)")
    parser.add_argument("--show-flagged", action="store_true", help="list each flagged row with its label")
    args = parser.parse_args(argv)
    rows = [relabel(row) for row in judged_negatives(args.files or JUDGED)]
    for name in ("tune", "held-out"):
        part = [row for row in rows if half(row) == name]
        print(f"\n{name}: {len(part)} judged negatives of the Probe's default families\n")
        print(plausibility_markdown(part))
        if args.show_flagged:
            for row in part:
                if row["plausible"] == "no":
                    print(f"  {row['label']:5} {row['output']!r}  [{row['violations']}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
