"""What every part of the job system shares: statuses, the error type, reading a job's row and its log."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from backend.core.store import Store

from backend.core.store import JOB_ACTIVE, JOB_FINAL

ACTIVE, FINAL = JOB_ACTIVE, JOB_FINAL  # a job's statuses, defined once with the jobs table
TAIL_LINES = 30


class JobError(ValueError):
    """A launch or cancel request that cannot be honoured; the message says why and what to do."""


def get(store: Store, job_id: int | str) -> dict:
    """The job row, or a `JobError` naming the missing id (given as typed: a dropdown or the CLI sends text)."""
    from sqlite_utils.db import NotFoundError

    try:
        return store.get_job(int(job_id))
    except (NotFoundError, TypeError, ValueError):
        raise JobError(f"No job {job_id!r}; `python -m backend jobs list` shows the existing ones") from None


def result_of(job: dict) -> dict:
    """The job's result ({} until it has one: the row holds null while it runs, and after it fails)."""
    result = job.get("result")
    return result if isinstance(result, dict) else {}


def resume_links(store: Store, job: dict) -> str:
    """'resumes job 4; resumed as job 6 (running)': where a job sits in its chain of attempts ('' alone)."""
    links = [f"resumes job {job['resumed_from']}"] if job.get("resumed_from") else []
    later = store.resumed_by(job["id"])
    if later is not None:
        links.append(f"resumed as job {later['id']} ({later['status']})")
    return "; ".join(links)


def log_tail(path: str | Path | None, lines: int = TAIL_LINES) -> str:
    """The last lines of a log; progress bars' carriage-return redraws collapse to their last state."""
    if not path or not Path(path).exists():
        return ""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - 64 * 1024))
        text = handle.read().decode("utf-8", errors="replace")
    rows = [row.rsplit("\r", 1)[-1] for row in text.splitlines()]
    return "\n".join(row for row in rows[-lines:])


def follow(store: Store, job_id: int, out: TextIO, poll: float = 0.5) -> str:
    """Copy a job's log to `out` as it grows until the job is settled; return its final status."""
    offset = 0
    while True:
        job = store.get_job(job_id)
        path = job.get("log_path")
        if path and Path(path).exists():
            with open(path, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
            offset += len(chunk)
            if chunk:
                out.write(chunk.decode("utf-8", errors="replace"))
                out.flush()
        if job["status"] in FINAL and not _pending(path, offset):
            return job["status"]
        time.sleep(poll)


def _pending(path: str | None, offset: int) -> bool:
    """Whether a log has bytes past `offset` (written between the last read and the status check)."""
    return bool(path and Path(path).exists() and Path(path).stat().st_size > offset)
