"""Reproduce a paper's published table here: its checkpoints on its benchmarks, ours beside the published numbers.

The tables are the published rows of `backend.benchmarks.reference` that name a ``checkpoint`` and a ``paper``
(one place for every published number: the leaderboard shows the same rows). For a paper, each checkpoint is
evaluated on the benchmarks its rows report, through the evaluate job's own `job.evaluate_models` (in this
process, or as `evaluate` jobs on any target), results stored as usual; then every published number is printed
with ours, our 95% bootstrap interval, the difference (ours - published, in points) and whether the published
number lies inside our interval.

What cannot run is said, not hidden: a benchmark whose data is missing, or a checkpoint that cannot be loaded
(a manual catalog entry not on disk), leaves its numbers "-" with the reason, and the others still run.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks.reference import PUBLISHED


@dataclass(frozen=True)
class Line:
    """One published number and ours (None when it could not be computed: ``note`` says why)."""

    checkpoint: str
    metric: str
    published: float
    source: str
    ours: float | None = None
    interval: tuple[float, float] | None = None
    note: str = ""

    @property
    def difference(self) -> float | None:
        return None if self.ours is None else self.ours - self.published

    @property
    def inside(self) -> bool | None:
        """Whether the published number lies inside our 95% interval (None without one)."""
        return None if self.interval is None else self.interval[0] <= self.published <= self.interval[1]


def papers(rows: Sequence[dict] = PUBLISHED) -> list[str]:
    """The papers with a published table of released checkpoints."""
    return sorted({row["paper"] for row in rows if row.get("checkpoint")})


def paper_rows(paper: str, rows: Sequence[dict] = PUBLISHED) -> list[dict]:
    """The paper's published rows, or a ValueError naming the papers there are."""
    chosen = [row for row in rows if row.get("paper") == paper and row.get("checkpoint")]
    if not chosen:
        raise ValueError(f"no published table of released checkpoints is recorded for {paper!r}; papers with one: "
                         f"{', '.join(papers(rows))} (the tables are in backend/benchmarks/reference.py)")
    return chosen


def metrics_of(row: dict) -> dict[str, float]:
    """A row's published ``<benchmark>/<metric>`` values."""
    return {key: value for key, value in row.items() if "/" in key and isinstance(value, float)}


def plan(rows: Iterable[dict]) -> dict[str, list[str]]:
    """Checkpoint -> the benchmarks its rows report, in the table's order."""
    wanted: dict[str, dict[str, None]] = {}
    for row in rows:
        benchmarks = wanted.setdefault(row["checkpoint"], {})
        benchmarks.update(dict.fromkeys(key.split("/", 1)[0] for key in metrics_of(row)))
    return {checkpoint: list(benchmarks) for checkpoint, benchmarks in wanted.items()}


Evaluate = Callable[[str, list[str]], list[dict]]  # (checkpoint, benchmarks) -> the evaluate job's summaries


def reproduce(rows: Sequence[dict], evaluate: Evaluate, data_root: Path | str | None = None,
              limit: int | None = None) -> list[Line]:
    """Evaluate every checkpoint of ``rows`` on its benchmarks (``evaluate``) and line ours up with theirs.

    A benchmark without data is skipped for every checkpoint and a checkpoint that fails to load is skipped;
    their lines keep the reason.
    """
    from backend.benchmarks.data import DataMissing
    from backend.benchmarks.evaluator import prepare
    from backend.core.errors import first_line

    missing: dict[str, str] = {}
    for benchmark in dict.fromkeys(b for benchmarks in plan(rows).values() for b in benchmarks):
        try:
            prepare(benchmark, limit, data_root)
        except DataMissing as error:
            missing[benchmark] = (f"no data: {first_line(error, limit=300)} (`python -m backend benchmarks --check` "
                                  "gives the steps)")
    summaries: list[dict] = []
    failed: dict[str, str] = {}
    for checkpoint, benchmarks in plan(rows).items():
        ready = [b for b in benchmarks if b not in missing]
        if not ready:
            continue
        try:
            summaries += evaluate(checkpoint, ready)
        except (ValueError, OSError, RuntimeError) as error:  # ModelLoadError and CatalogError are ValueErrors
            failed[checkpoint] = f"{checkpoint} not evaluated: {first_line(error, limit=300)}"
    return compare(rows, summaries, missing, failed)


def compare(rows: Sequence[dict], summaries: Sequence[dict], missing: dict[str, str] | None = None,
            failed: dict[str, str] | None = None) -> list[Line]:
    """Each published number of ``rows`` beside the summary of the same checkpoint and benchmark."""
    missing, failed = missing or {}, failed or {}
    ours = {(s["model"], s["benchmark"]): s for s in summaries}
    lines = []
    for row in rows:
        for metric, published in metrics_of(row).items():
            benchmark, key = metric.split("/", 1)
            summary = ours.get((row["checkpoint"], benchmark))
            if summary is None or key not in summary["metrics"]:
                note = (failed.get(row["checkpoint"]) or missing.get(benchmark)
                        or (f"{benchmark} has no metric {key}" if summary else f"{row['checkpoint']} not evaluated"))
                lines.append(Line(row["checkpoint"], metric, published, row["source"], note=note))
                continue
            bounds = (summary.get("intervals") or {}).get(key)
            lines.append(Line(row["checkpoint"], metric, published, row["source"], float(summary["metrics"][key]),
                              tuple(bounds) if bounds else None))
    return lines


def table(lines: Sequence[Line]) -> list[list[str]]:
    """The printed table: a header, then one row per published number (percent, two decimals)."""
    def pct(value: float) -> str:
        return f"{100 * value:.2f}"

    out = [["checkpoint", "metric", "published", "ours", "ours 95% CI", "difference", "published in CI", "source"]]
    for line in lines:
        interval = f"[{pct(line.interval[0])}, {pct(line.interval[1])}]" if line.interval else "-"
        difference = "-" if line.difference is None else f"{100 * line.difference:+.2f}"
        inside = {True: "yes", False: "no", None: "-"}[line.inside]
        out.append([line.checkpoint, line.metric, pct(line.published), "-" if line.ours is None else pct(line.ours),
                    interval, difference, inside, line.source])
    return out


def notes(lines: Sequence[Line]) -> list[str]:
    """What could not be compared, once per reason."""
    return list(dict.fromkeys(line.note for line in lines if line.note))
