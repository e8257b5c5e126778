"""The one SQLite store: jobs and their metrics, benchmark results, and annotation campaigns (their tables are
written by `backend.benchmarks.results` and `backend.annotate`).

Several processes write to it at once (the app, each job), so it runs in WAL
mode with a busy timeout, and every write is a short transaction. The schema is
versioned: `backend.core.migrations` brings any older database up to date when it
opens.
"""
from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.core import migrations

if TYPE_CHECKING:
    from sqlite_utils.db import Table

# A job's life: queued -> running -> one of the final statuses (`backend.jobs` reads them from here).
JOB_ACTIVE = ("queued", "running")
JOB_FINAL = ("done", "failed", "cancelled")
JOB_STATUSES = JOB_ACTIVE + JOB_FINAL
_JSON_FIELDS = ("args", "result", "target_options")


SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside the store


BUSY_TIMEOUT_S = 30  # how long a connection waits for another process's lock before giving up


class StoreDamaged(ValueError):
    """The store's file is not a sound SQLite database; the message says what was found and what to do."""


class StoreBusy(RuntimeError):
    """Another process held the store's lock longer than `BUSY_TIMEOUT_S`: nothing is wrong with the file."""


def _locked(error: sqlite3.DatabaseError) -> bool:
    """SQLite's "database is locked" (or busy): another connection holds a lock, which says nothing of the file."""
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


def _checked(path: Path, error: sqlite3.DatabaseError) -> StoreDamaged | StoreBusy:
    """What an error met while opening the store means: a lock held elsewhere is not damage (a store refused or
    moved aside as damaged because a job held it would be lost to its users)."""
    if _locked(error):
        return StoreBusy(f"The store {path} was held by another process for over {BUSY_TIMEOUT_S} s (SQLite: {error}). "
                         "Nothing was changed; try again, or stop the process that holds it.")
    return damaged(path, f"SQLite: {error}")


def _use_wal(connection: sqlite3.Connection) -> None:
    """Put the store in WAL mode. On a new file that takes a lock SQLite does not wait for (its busy timeout does not
    apply): processes opening a new store together (an app and its first jobs) got "database is locked" at once,
    one run in fifteen with six of them, so this waits as the busy timeout would."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if not _locked(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def damaged(path: Path | None, finding: str) -> StoreDamaged:
    """The refusal of a damaged store (`path` None: one whose path is not known here)."""
    store = f"The store {path}" if path else "The store"
    return StoreDamaged(f"{store} is damaged ({finding}). Nothing was changed. Put back a copy (the Campaigns tab's "
                        "database download, or a file backup), or move the damaged file aside to start with an "
                        "empty store; on a Space with a campaign backup the app does this itself and restores the "
                        "campaigns.")


def check_integrity(path: Path | str) -> None:
    """`StoreDamaged` unless SQLite's ``PRAGMA quick_check`` finds the store sound (a missing store is sound: it
    will be created). O(size of the store): run once at start, not per command."""
    path = Path(path)
    if not path.exists():
        return
    try:
        with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)) as connection:
            found = [row[0] for row in connection.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as error:
        raise _checked(path, error) from None
    if found != ["ok"]:
        raise damaged(path, "SQLite's quick_check: " + "; ".join(map(str, found)))


def move_aside(path: Path | str) -> Path:
    """Rename a damaged store (and its side files) to ``<name>.damaged-<time>``, where it is kept for whoever
    wants to recover rows by hand; returns the new name of the store file."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", *SIDE_FILES):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    return aside


class Store:
    """Small typed API over the SQLite file; callers never write SQL."""

    def __init__(self, path: Path | str | None = None):
        if path is None:
            from backend.core.settings import get_settings
            path = get_settings().db
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        try:
            _use_wal(connection)
            self.applied_migrations = migrations.migrate(connection, str(self.path))
        except sqlite3.DatabaseError as error:  # "file is not a database", "database disk image is malformed"
            connection.close()
            raise _checked(self.path, error) from None
        import sqlite_utils  # here: it imports pandas (seconds), which naming a status or an error must not cost

        self.db = sqlite_utils.Database(connection)

    @property
    def schema_version(self) -> int:
        return migrations.version(self.db.conn)

    def table(self, name: str) -> Table:
        """One of the store's tables (`db[name]` may also be a view, which cannot be written)."""
        return self.db.table(name)

    def insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row; its new id (the caller's transaction, if any, still holds)."""
        row_id = self.table(table).insert(row).last_pk
        assert row_id is not None, "sqlite-utils sets last_pk after every plain insert"
        return int(row_id)

    # jobs
    def create_job(self, kind: str, args: dict, name: str = "", target: str = "local", actor: str = "",
                   target_options: dict | None = None, resumed_from: int | None = None) -> int:
        now = time.time()
        row = {"kind": kind, "name": name or kind, "args": json.dumps(args), "target": target, "actor": actor,
               "target_options": json.dumps(target_options or {}), "resumed_from": resumed_from,
               "status": "queued", "progress": 0.0, "created_at": now, "updated_at": now}
        return self.insert("jobs", row)

    def resumed_by(self, job_id: int) -> dict | None:
        """The job that resumed `job_id` (`jobs resume`), or None."""
        rows = list(self.table("jobs").rows_where("resumed_from = ?", [job_id], order_by="id desc", limit=1))
        return _decode(rows[0]) if rows else None

    def update_job(self, job_id: int, **fields: Any) -> None:
        if "status" in fields and fields["status"] not in JOB_STATUSES:
            raise ValueError(f"unknown job status {fields['status']!r}; one of {JOB_STATUSES}")
        for key in _JSON_FIELDS:
            if key in fields and not isinstance(fields[key], (str, type(None))):
                fields[key] = json.dumps(fields[key])
        self.table("jobs").update(job_id, {**fields, "updated_at": time.time()})

    def get_job(self, job_id: int) -> dict:
        return _decode(self.table("jobs").get(job_id))

    def list_jobs(self, kind: str | None = None, limit: int | None = 100,
                  statuses: tuple[str, ...] = ()) -> list[dict]:
        """Jobs newest first, optionally of one kind and only in the given statuses; `limit` None: all of them."""
        clauses, params = ([], [])
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if statuses:
            clauses.append(f"status in ({', '.join('?' * len(statuses))})")
            params.extend(statuses)
        rows = self.table("jobs").rows_where(" and ".join(clauses) or None, params or None, order_by="id desc",
                                             limit=limit)
        return [_decode(row) for row in rows]

    def last_change(self, kind: str | None = None) -> tuple[int, float]:
        """(number of jobs, latest update time): a cheap fingerprint views poll to know when to redraw."""
        where, params = ("where kind = ?", [kind]) if kind else ("", [])
        count, latest = self.db.execute(f"select count(*), max(updated_at) from jobs {where}", params).fetchone()
        return count, latest or 0.0

    # metrics
    def log_metrics(self, job_id: int, step: int, values: dict[str, float], split: str = "train") -> None:
        now = time.time()
        self.table("metrics").insert_all(
            {"job_id": job_id, "step": step, "split": split, "name": name, "value": float(value), "time": now}
            for name, value in values.items())

    def metrics(self, job_id: int, split: str | None = None) -> list[dict]:
        where, params = ("job_id = ?", [job_id]) if split is None else ("job_id = ? and split = ?", [job_id, split])
        return list(self.table("metrics").rows_where(where, params, order_by="step, rowid"))

    def latest_metrics(self, job_id: int, split: str) -> dict[str, float]:
        """The last value of every metric in a split (e.g. a run's final evaluation)."""
        return {row["name"]: row["value"] for row in self.metrics(job_id, split)}


def _decode(row: dict) -> dict:
    for key in _JSON_FIELDS:
        if row.get(key):
            row[key] = json.loads(row[key])
    return row
