"""Transactions for annotation: one SQLite connection per thread, writes under ``BEGIN IMMEDIATE``.

Assignment must be exact under concurrent submits (Argilla over-collects
when two annotators submit at once). Gradio runs handlers on many threads and
the CLI or a job may write from another process, so a read-decide-write step
runs inside ``BEGIN IMMEDIATE``: SQLite then serialises the deciders, across
threads and processes alike. Sharing one connection between threads would
interleave their transactions, hence one connection per thread.
"""
from __future__ import annotations

import errno
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backend.core import migrations

_local = threading.local()
# Threads of one process queue on a lock that wakes the next one at once; SQLite's busy handler (which still
# orders processes) sleeps with growing back-off instead, which gave the annotation page a long latency tail.
_write_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
FULL = "could not save: the server's disk is full. Nothing was recorded; try again in a moment"


class StoreFull(ValueError):
    """A write the disk had no room for: rolled back, so nothing of it was stored (or acknowledged)."""


# Where committed rows go besides SQLite (the Space backup, `backend.annotate.mirror`); None: nowhere.
_sink: Callable[[str, dict], None] | None = None


def set_sink(sink: Callable[[str, dict], None] | None) -> None:
    """Send every row that `changed` names to `sink(table, row)` once its transaction has committed."""
    global _sink
    _sink = sink


def changed(conn: sqlite3.Connection, table: str, row_id: int | str) -> None:
    """Note that a row was written in the current transaction (read back whole, mirrored after commit); Prolific's
    submissions have text ids."""
    if _sink is not None:
        row = conn.execute(f"select * from {table} where id = ?", (row_id,)).fetchone()
        _local.pending.append((table, dict(row)))


def insert(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> int:
    """Run one INSERT; the new row's id."""
    row_id = conn.execute(sql, params).lastrowid
    assert row_id is not None, "sqlite3 sets lastrowid after every INSERT"
    return row_id


def connection(path: Path | str) -> sqlite3.Connection:
    """This thread's connection to the store at `path` (autocommit mode: transactions are explicit)."""
    cache = getattr(_local, "connections", None)
    if cache is None:
        cache = _local.connections = {}
    key = str(path)
    if key not in cache:
        Path(key).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(key, timeout=30, isolation_level=None, check_same_thread=True)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA journal_mode = WAL")
        migrations.migrate(conn, key)  # a store opened here first is brought up to date like `Store` does
        cache[key] = conn
    return cache[key]


@contextmanager
def write(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A transaction that holds the write lock from its first statement: read, decide, write, commit."""
    conn = connection(path)
    with _locks_guard:
        lock = _write_locks.setdefault(str(path), threading.Lock())
    _local.pending = []
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            _local.pending = []
            if _disk_full(error):
                raise StoreFull(FULL) from error
            raise
        # Still under the lock: whoever holds every write lock (`hold_writes`) knows each committed row is mirrored.
        pending, _local.pending, sink = _local.pending, [], _sink
        if sink is not None:
            for table, row in pending:
                sink(table, row)


def _disk_full(error: BaseException) -> bool:
    """SQLite's "database or disk is full", or the system's "no space left on device"."""
    return (isinstance(error, sqlite3.OperationalError) and getattr(error, "sqlite_errorcode", None) ==
            sqlite3.SQLITE_FULL) or (isinstance(error, OSError) and error.errno == errno.ENOSPC)


def hold_writes() -> None:
    """Stop every write of this process for good (for a shutdown that must flush the mirror): waits for the
    transactions under way, whose rows are then mirrored, and blocks every later one. Returns once it holds them."""
    _locks_guard.acquire()  # no new store path gets a lock; `write` waits here from now on
    for lock in _write_locks.values():
        lock.acquire()


def rows(path: Path | str, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
    """Read-only query as a list of dicts (a snapshot: WAL readers never block writers); `params` by position
    (?) or by name (:name)."""
    return [dict(row) for row in connection(path).execute(sql, params).fetchall()]


def loads(value: str | None, default: Any = None) -> Any:
    return json.loads(value) if value else default
