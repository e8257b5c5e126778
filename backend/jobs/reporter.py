"""What a running job tells the world: log lines, progress with a one-line status, metrics, its result.

Every job kind reports through this one object, so the Train tab, the
campaign and benchmark views and ``python -m backend jobs show`` read every kind
the same way. Log lines go to standard output, which the runner has pointed at
the job's log file (and which Hugging Face Jobs streams back). Progress, metrics
and the result go to the job's row in the store when there is one, or to the
job's events file when it runs where the store must not be written (a Slurm
job: `backend.jobs.events`); a job run by hand (``python -m backend train``)
has neither and only prints.

Under ``torchrun`` only rank 0 reports; the other ranks' reporters are silent.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from backend.jobs import events as job_events

if TYPE_CHECKING:
    from backend.core.store import Store


def duration(seconds: float) -> str:
    """Seconds as '42s', '3m05s' or '2h07m': short enough for a progress line."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _write(out: TextIO, text: str) -> None:
    """Write and flush a log line; a log on a full (or vanished) disk must not end the job: the row still
    records its progress and its error."""
    try:
        out.write(text)
        out.flush()
    except OSError:
        pass


class Reporter:
    """A job's voice. `progress` also estimates the time left from the rate since the first report."""

    def __init__(self, store: Store | None = None, job_id: int | None = None, rank: int = 0,
                 out: TextIO | None = None, events: Path | None = None):
        self.store, self.job_id, self.rank = store, job_id, rank
        self.out, self.events = out, events
        self._first: tuple[float, float] | None = None  # (time, fraction) of the first progress report

    @property
    def active(self) -> bool:
        """Whether this process reports at all (rank 0 only)."""
        return self.rank == 0

    @property
    def _row(self) -> tuple[Store, int] | None:
        """The store and job id this process writes to: rank 0 of a job that has a row; None otherwise."""
        if self.active and self.store is not None and self.job_id is not None:
            return self.store, self.job_id
        return None

    def _update_row(self, **fields: Any) -> None:
        """`fields` onto the job's row: in the store, or as an event line the job's watcher applies."""
        if row := self._row:
            store, job_id = row
            store.update_job(job_id, **fields)
        elif self.active and self.events is not None:
            job_events.append(self.events, "update", fields)

    def log(self, message: str) -> None:
        """One line in the job's log, time-stamped."""
        if self.active:
            _write(self.out or sys.stdout, f"[{time.strftime('%H:%M:%S')}] {message}\n")

    def failed(self, message: str) -> None:
        """Why the job stops, in the job's words: the log's last line (every rank) and the row's error.

        The status is still the process's to set (`backend.jobs.process`), which then leads
        the job's error with this message instead of a bare exit code.
        """
        _write(sys.stderr, f"error: {message}\n")
        self._update_row(error=message)

    def eta(self, fraction: float) -> float | None:
        """Seconds left at the rate observed since the first progress report (None until there is a rate)."""
        if self._first is None:
            return None
        started, start_fraction = self._first
        done = fraction - start_fraction
        return (time.monotonic() - started) * (1 - fraction) / done if done > 0 else None

    def progress(self, fraction: float, message: str = "") -> None:
        """Record how far the job is (0..1); a message becomes the job's status line and a log line with the ETA."""
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self._first is None:
            self._first = (time.monotonic(), fraction)
        left = self.eta(fraction)
        line = message + (f", ETA {duration(left)}" if message and left is not None and fraction < 1 else "")
        if line:
            self.log(line)
        fields: dict[str, float | str] = {"progress": round(fraction, 4)}
        if line:
            fields["message"] = line
        self._update_row(**fields)

    def metrics(self, step: int, values: dict[str, float], split: str = "train") -> None:
        """Named numbers at a step (curves, evaluations)."""
        if not values:
            return
        if row := self._row:
            store, job_id = row
            store.log_metrics(job_id, step, values, split)
        elif self.active and self.events is not None:
            job_events.append(self.events, "metrics", {"step": step, "values": values, "split": split})

    def update(self, **fields: Any) -> None:
        """Other facts about the job a view shows (e.g. ``run_dir``)."""
        self._update_row(**fields)

    def result(self, result: dict) -> None:
        """The job's outcome (checkpoint paths, final metrics); a job with a result counts as done."""
        if self._row:
            self._update_row(result=result, progress=1.0)
        elif self.active and self.events is not None:
            job_events.append(self.events, "result", result)
