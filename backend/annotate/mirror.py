"""Campaigns that survive a Space restart: every committed campaign row is mirrored to a dataset repo.

With the ``backup_repo`` setting, `start` first restores: when the store holds
no campaign (a fresh Space disk) it downloads the repo's backup (the JSONL
tables and the campaigns' images) and replays the rows into SQLite, each row
as last written. Then every row the annotation code writes (`db.changed`) is
appended, after its transaction commits, to this process's JSONL file, which
`Backup`'s CommitScheduler uploads every few minutes. Held tasks are not
mirrored: after a restart they would have been reclaimed anyway.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from backend.annotate import db
from backend.annotate.backup import Backup, restore
from backend.settings import Settings

TABLES = ("campaigns", "items", "candidates", "annotators", "assignments", "answers")  # replay order
log = logging.getLogger(__name__)


def replay(store_path: Path | str, records: list[dict]) -> int:
    """Write restored rows into the store, the latest version of each row winning; returns the rows written."""
    latest: dict[tuple[str, Any], dict] = {}
    for record in sorted(records, key=lambda r: r.get("_mirrored_at", 0.0)):
        table = record["table"]
        if table in TABLES:
            latest[(table, record["id"])] = {k: v for k, v in record.items() if k not in ("table", "_mirrored_at")}
    with db.write(store_path) as conn:
        for table in TABLES:
            columns = [row[1] for row in conn.execute(f"pragma table_info({table})")]
            for (name, _), row in latest.items():
                if name == table:
                    values = {column: row.get(column) for column in columns}
                    conn.execute(f"insert or replace into {table} ({', '.join(values)}) "
                                 f"values ({', '.join('?' * len(values))})", list(values.values()))
    return len(latest)


def start(settings: Settings, api: Any = None, every_minutes: float = 5) -> Backup | None:
    """Restore if the store is empty, then mirror every campaign row from now on (None: no backup configured)."""
    if not settings.backup_repo:
        return None
    folder = settings.data_dir / "campaigns"
    if not db.rows(settings.db, "select id from campaigns limit 1"):
        records = restore(folder, settings.backup_repo, settings.hf_token, api=api)
        if records:
            log.info("restored %d campaign rows from %s", replay(settings.db, records), settings.backup_repo)
    backup = Backup(folder, settings.backup_repo, settings.hf_token, every_minutes=every_minutes, api=api).start()
    db.set_sink(lambda table, row: backup.append(table, {**row, "_mirrored_at": time.time()}))
    return backup


def stop(backup: Backup | None) -> None:
    """Stop mirroring and commit what is left."""
    db.set_sink(None)
    if backup is not None:
        backup.stop()
