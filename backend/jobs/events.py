"""A job's reports as a file of JSON lines, for a job that cannot write the store: it runs on another machine.

A Slurm job runs on compute nodes that share the workspace's file system with the
app but must not write its SQLite store: SQLite's WAL needs shared memory, which a
network file system does not give, and a store corrupted by a compute node would
lose every job's record. So the job's `Reporter` appends each report (progress,
metrics, run folder, error, result) as one JSON line to ``events.jsonl`` in the
job's folder, and the process that watches the job (`backend.jobs.slurm`) applies
new lines to the store. Only that process writes the row.

Several processes may watch the same job (the app and a ``jobs launch --follow``);
an exclusive lock on ``events.lock`` and the applied byte offset kept beside it make
each line apply exactly once. A line cut short by a crash is left until it is whole.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from backend.core.store import Store

EVENTS = "events.jsonl"
OFFSET = "events.offset"
LOCK = "events.lock"


def append(path: Path, kind: str, payload: Any) -> None:
    """One report as one line, written in a single `write` (O_APPEND), so that a reader sees whole lines."""
    line = (json.dumps({"kind": kind, "payload": payload}) + "\n").encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def apply_new(store: Store, job_id: int, folder: Path) -> list[dict]:
    """Apply the lines added to ``folder/events.jsonl`` since the last call (in any process); return them."""
    path = folder / EVENTS
    if not path.is_file():
        return []
    with open(folder / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        offset_file = folder / OFFSET
        offset = int(offset_file.read_text() or 0) if offset_file.is_file() else 0
        with open(path, "rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
        whole = chunk[:chunk.rfind(b"\n") + 1]
        events = [json.loads(line) for line in whole.decode("utf-8", errors="replace").splitlines() if line]
        for event in events:
            _apply(store, job_id, event)
        offset_file.write_text(str(offset + len(whole)))
    return events


def _apply(store: Store, job_id: int, event: dict) -> None:
    """One report onto the job's row, as `Reporter` would have written it with the store at hand."""
    kind, payload = event.get("kind"), event.get("payload") or {}
    if kind == "metrics":
        store.log_metrics(job_id, payload["step"], payload["values"], payload["split"])
    elif kind == "update":
        store.update_job(job_id, **{k: v for k, v in payload.items() if k in UPDATABLE})
    elif kind == "result":
        store.update_job(job_id, result=payload, progress=1.0)


# The row fields a job may set through its events (never its status, pid or target: those are the watcher's).
UPDATABLE = ("progress", "message", "run_dir", "error")


def result_of(folder: Path) -> dict | None:
    """The result the job reported, read from its events without the store (None: it reported none)."""
    path = folder / EVENTS
    if not path.is_file():
        return None
    found = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("kind") == "result":
            found = event.get("payload")
    return found
