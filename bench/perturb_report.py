"""Error rates of the perturbation engine from a hand-judged sample, as the Markdown table for docs/SCIENCE.md.

Reads a CSV drawn by bench/perturb_sample.py and labelled by hand as in
/work/shared/PERTURBATION-RUBRIC.md: every row's label is ok, impl, doubt
or err (impl only for negatives). Prints, per family and per (family,
subtype): n judged, err count, error rate err/n with its 95% Wilson
interval, and the impl and doubt shares. Refuses, naming the rows, if any
label is missing or unknown: a half-judged file would understate the rates.

When the file has the engine's `plausible` column (yes/no), also how well
that label finds the negatives judged absurd (impl): recall (absurd ones it
flags), precision (flagged ones judged absurd), and the share of judged
absurd negatives among those it lets through (what plausible-only metrics
still count), each with its Wilson interval.

A family's row pools its subtypes as sampled (each subtype an equal share),
not weighted by how often the engine makes each subtype.

    python bench/perturb_report.py tests/data/perturb-judged.csv
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import Counter
from pathlib import Path

LABELS = ("ok", "impl", "doubt", "err")
REQUIRED_COLUMNS = ("original", "output", "family", "subtype", "label")
Z_95 = 1.959963984540054  # two-sided 95% normal quantile
ALL = "(all)"
SHOWN_PROBLEMS = 10


class JudgedFileError(ValueError):
    """The judged CSV cannot be reported on as it stands (missing column, missing or unknown label)."""


def wilson(errors: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for errors/n: unlike the normal approximation it stays inside [0, 1]
    and gives a useful upper bound when no error was seen (0/60 -> at most ~6.0%)."""
    if n <= 0 or not 0 <= errors <= n:
        raise ValueError(f"need 0 <= errors <= n and n > 0, got {errors}/{n}")
    p = errors / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def problems_in(rows: list[dict]) -> list[str]:
    """One line per row whose label the rubric does not allow, numbered as in a spreadsheet (header = row 1)."""
    problems = []
    for number, row in enumerate(rows, start=2):
        label, where = row["label"], f"row {number} ({row['family']}/{row['subtype']}: {row['output']!r})"
        if not label:
            problems.append(f"{where}: no label")
        elif label not in LABELS:
            problems.append(f"{where}: label {label!r} is not one of {', '.join(LABELS)}")
        elif label == "impl" and row.get("kind") == "positive":
            problems.append(f"{where}: impl is a label for negatives; a positive is ok, doubt or err")
    return problems


def read_judged(path: Path) -> list[dict]:
    """The judged rows, labels lower-cased and stripped; JudgedFileError unless every row is judged."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise JudgedFileError(f"{path} lacks the column(s) {', '.join(missing)}; "
                                  f"a judged file has {', '.join(REQUIRED_COLUMNS)}.")
        rows = [{**row, "label": (row["label"] or "").strip().lower()} for row in reader]
    if not rows:
        raise JudgedFileError(f"{path} has no rows to report on.")
    problems = problems_in(rows)
    if problems:
        shown = "\n  ".join(problems[:SHOWN_PROBLEMS])
        more = f"\n  ... and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
        raise JudgedFileError(f"{path}: {len(problems)} of {len(rows)} rows are not judged as the rubric asks "
                              f"(labels: {', '.join(LABELS)}); finish judging before reporting:\n  {shown}{more}")
    return rows


def tally(rows: list[dict]) -> dict[tuple[str, str], Counter]:
    """Label counts per family (subtype ALL) and per (family, subtype), families in file order."""
    counts: dict[tuple[str, str], Counter] = {}
    families = list(dict.fromkeys(row["family"] for row in rows))
    for family in families:
        mine = [row for row in rows if row["family"] == family]
        counts[(family, ALL)] = Counter(row["label"] for row in mine)
        for subtype in sorted({row["subtype"] for row in mine}):
            counts[(family, subtype)] = Counter(row["label"] for row in mine if row["subtype"] == subtype)
    return counts


def percent(count: int, n: int) -> str:
    """A share as "k (x.x%)", so small counts are not mistaken for precise rates."""
    return f"{count} ({100 * count / n:.1f}%)"


def markdown(rows: list[dict]) -> str:
    """The table docs/SCIENCE.md shows; kinds come from the file's kind column when it has one."""
    kinds: dict[str, set[str]] = {}
    for row in rows:
        kinds.setdefault(row["family"], set()).add(row.get("kind") or "")
    lines = ["| family | subtype | kind | n | err | error rate [95% CI] | impl | doubt |",
             "|---|---|---|---:|---:|---|---:|---:|"]
    for (family, subtype), counts in tally(rows).items():
        n, errors = sum(counts.values()), counts["err"]
        low, high = wilson(errors, n)
        name = f"**{family}**" if subtype == ALL else family
        lines.append(f"| {name} | {subtype} | {'/'.join(sorted(kinds[family] - {''})) or '-'} | {n} | {errors} | "
                     f"{100 * errors / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}] | "
                     f"{percent(counts['impl'], n)} | {percent(counts['doubt'], n)} |")
    return "\n".join(lines)


def interval(hits: int, n: int) -> str:
    """"k/n = x.x% [low, high]" with the Wilson interval, or "-" when n is 0."""
    if n == 0:
        return "-"
    low, high = wilson(hits, n)
    return f"{hits}/{n} = {100 * hits / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def plausibility_markdown(rows: list[dict]) -> str:
    """How the engine's plausibility label agrees with the judged impl label, over judged negatives."""
    negatives = [row for row in rows if row.get("kind") == "negative" and row.get("plausible") in ("yes", "no")]
    absurd = [row for row in negatives if row["label"] == "impl"]
    flagged = [row for row in negatives if row["plausible"] == "no"]
    passed = [row for row in negatives if row["plausible"] == "yes"]
    caught = sum(row["plausible"] == "no" for row in absurd)
    return "\n".join([
        "| measure | value [95% CI] |", "|---|---|",
        f"| judged absurd among all judged negatives | {interval(len(absurd), len(negatives))} |",
        f"| recall: absurd ones the label flags | {interval(caught, len(absurd))} |",
        f"| precision: flagged ones judged absurd | {interval(caught, len(flagged))} |",
        f"| judged absurd among those labelled plausible | {interval(len(absurd) - caught, len(passed))} |"])


def main(argv: list[str] | None = None) -> int:
    """Print the table, or a clear refusal (exit status 2) for a file that is not fully judged."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("judged", type=Path, help="judged CSV (bench/perturb_sample.py output with labels)")
    args = parser.parse_args(argv)
    if not args.judged.is_file():
        print(f"error: {args.judged} does not exist", file=sys.stderr)
        return 2
    try:
        rows = read_judged(args.judged)
    except JudgedFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{len(rows)} judged outputs from {args.judged}; error rate = err / n, 95% Wilson interval\n")
    print(markdown(rows))
    if any(row.get("plausible") for row in rows):
        print("\nThe engine's plausibility label against the judged impl label (negatives)\n")
        print(plausibility_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
