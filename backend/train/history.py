"""A run's numbers over its whole life: its base model's evaluation before the first step, the history a resumed
run carries over, and every evaluated metric against the base model's.

Why a baseline: a finetune can lose what it was meant to gain (a 300-step NegCLIP
run on the built-in world took toy-sugarcrepe's add_obj from 82.5 to 56.5) and a
final number alone does not show it. The loop evaluates the base model on the
run's benchmarks at step 0 (split ``baseline``), and the Train tab, ``jobs show``
and ``train``'s summary print each metric beside it with the difference.
No torch here: the views and the CLI read it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from backend.core.files import write_text_atomic

if TYPE_CHECKING:
    from backend.core.store import Store
    from backend.jobs.reporter import Reporter

METRICS_FILE = "metrics.jsonl"  # in the run folder: one line per (step, split) the run recorded


def carry_over(run_dir: Path, step: int, reporter: Reporter) -> dict[str, float]:
    """Report again what the run folder's metrics file holds up to `step` (the checkpoint a run resumes from), so a
    resumed run's curves start at step 0; drop the lines a stopped attempt wrote after it (those steps run again).
    Returns the base model's numbers ({} when the run has none)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return {}
    kept = [line for line in map(json.loads, path.read_text().splitlines()) if line["step"] <= step]
    write_text_atomic(path, "".join(json.dumps(line) + "\n" for line in kept))
    baseline: dict[str, float] = {}
    for line in kept:
        at, split = line.pop("step"), line.pop("split")
        reporter.metrics(at, line, split)
        baseline = line if split == "baseline" else baseline
    return baseline


def against_base(baseline: dict[str, float], final: dict[str, float]) -> list[dict]:
    """Each metric evaluated both before training and at the end: base, final and change (final - base), as
    fractions, in the final metrics' order."""
    return [{"metric": name, "base": baseline[name], "final": value, "change": value - baseline[name]}
            for name, value in final.items() if name in baseline]


def run_against_base(store: Store, job: dict) -> list[dict]:
    """`against_base` for a train job: its result's numbers once done, else what the store holds so far (the
    latest evaluation)."""
    result = job["result"] if isinstance(job.get("result"), dict) else {}
    baseline = result.get("baseline_metrics") or store.latest_metrics(job["id"], "baseline")
    final = result.get("final_metrics") or store.latest_metrics(job["id"], "eval")
    return against_base(baseline, final)


def summary_lines(rows: list[dict]) -> list[str]:
    """One line per metric, in percent: "name  base -> final (change points)", regressions marked."""
    return [f"{row['metric']}\t{100 * row['base']:.1f} -> {100 * row['final']:.1f} "
            f"({100 * row['change']:+.1f} points{', worse than the base model' if row['change'] < 0 else ''})"
            for row in rows]
