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
from backend.annotate.backup import Backup, restore, tables_dir
from backend.core.settings import Settings

TABLES = ("campaigns", "items", "candidates", "annotators", "assignments", "answers", "exclusions",  # replay order
          "prolific_studies", "prolific_submissions", "prolific_bonuses", "prolific_bonus_lines")
log = logging.getLogger(__name__)
_failure = ""  # why the last `start` could not back up (shown to admins by `warning`)
_running: Backup | None = None  # the backup `start` started, for `shutdown`


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


def tables_folder(settings: Settings) -> Path:
    """Where this app's backup tables (annotator ids, answers) are written: never served by the web app."""
    return tables_dir(settings.data_dir / "campaigns")


def start(settings: Settings, api: Any = None, every_minutes: float = 5) -> Backup | None:
    """Restore if the store is empty, then mirror every campaign row from now on.

    None when there is no backup: none configured, no token (logged; `warning` says it on the page), or the
    Hub refused or could not be reached (logged; `warning` says it). The app then runs without one rather than
    not at all; after a failed restore nothing is mirrored, so new rows never mix with a backup not restored.
    """
    global _failure
    _failure = ""
    if not settings.backup_repo:
        return None
    if not settings.hf_token:
        log.warning(warning(settings))
        return None
    try:
        return _restore_and_mirror(settings, api, every_minutes)
    except Exception as error:  # any failure to reach or write the Hub: the page and the log say it
        _failure = f"The campaign backup to `{settings.backup_repo}` is not running: {str(error).rstrip('.')}"
        log.error("%s", _failure)
        return None


def _restore_and_mirror(settings: Settings, api: Any, every_minutes: float) -> Backup:
    folder = settings.data_dir / "campaigns"
    restored: list[Path] = []
    if not db.rows(settings.db, "select id from campaigns limit 1"):
        records, restored = restore(folder, settings.backup_repo, settings.hf_token, api=api)
        if records:
            log.info("restored %d campaign rows from %s", replay(settings.db, records), settings.backup_repo)
    backup = Backup(folder, settings.backup_repo, settings.hf_token, every_minutes=every_minutes, api=api,
                    restored=restored).start()
    db.set_sink(lambda table, row: backup.append(table, {**row, "_mirrored_at": time.time()}))
    global _running
    _running = backup
    return backup


def warning(settings: Settings) -> str:
    """What an admin must be told about campaign data on this server ('' when the backup is fine or not wanted).

    On a Space the backup is on by default (`Settings.backup_repo`); without a token it cannot run, and the
    Space's disk does not survive a restart.
    """
    if _failure:
        return (f"{_failure}. {'Campaign data will be lost at restart: ' if settings.on_space else ''}check that "
                "HF_TOKEN has write access to it and that the Hub can be reached, then restart.")
    if not settings.backup_repo or settings.hf_token:
        return ""
    if settings.on_space:
        return (f"Campaign data will be lost at restart: set the HF_TOKEN secret with write access (this Space's "
                f"disk is ephemeral; with it, campaigns are backed up to the private dataset repo "
                f"`{settings.backup_repo}`).")
    return (f"The campaign backup to `{settings.backup_repo}` is off: set HF_TOKEN to a token with write access "
            "to it.")


def stop(backup: Backup | None) -> None:
    """Stop mirroring and commit what is left. None (`start` found no backup, so set no sink): nothing to stop,
    and a mirror this process already runs (a generate job's caller's) goes on."""
    if backup is None:
        return
    db.set_sink(None)
    backup.stop()


def shutdown() -> None:
    """Before the process exits (SIGTERM: a Space restarting, sleeping or rebuilt): no campaign write from now on,
    and everything written so far committed to the backup repo. A transaction under way finishes and is mirrored
    first; one that had not begun never happens, so its answer is never acknowledged."""
    db.hold_writes()
    if _running is not None:
        log.info("shutting down: committing the campaign backup to %s", _running.repo_id)
        stop(_running)
