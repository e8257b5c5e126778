"""Mirror campaign data to a Hugging Face dataset repo: a Space's disk is ephemeral.

Every change the campaign code wants to survive a restart is appended as one
JSON line to `folder/_tables/<table>-<process id>.jsonl`, and huggingface_hub's
`CommitScheduler` uploads the folder to `backup/` in the repo every few
minutes. `restore` brings the files back onto a fresh disk and returns their
records, from which the caller rebuilds its database.

Why it is safe:
- Files are append-only and each process writes only its own files (the id
  holds the UTC start time, the pid and a random part), so two processes, or
  an old Space and its replacement, never write the same file and a commit
  never has to merge anything.
- Appends take the scheduler's lock, which the scheduler also holds while it
  lists files and records their sizes; it then uploads each file cut at that
  size (`PartialFileIO`), so a commit ends on a line boundary.
- The scheduler re-uploads a file only when its mtime changed since the last
  commit. On a filesystem with coarse timestamps two appends within one clock
  tick share an mtime, and the second would never be uploaded if a commit
  listed the file in between; `append` therefore makes every append move the
  mtime forward.
A line can still be torn if the process dies in the middle of a write (a
lock orders threads, it does not survive a crash); `read_backup` skips and
counts such lines instead of failing the whole restore.

A restore must never damage the backup it reads. Each file is copied in under a
temporary name and renamed (a restore killed mid-copy left a truncated file, which
the next commit uploaded over the good copy: 15 of 30 answers lost), a local file
whose size differs from the repo's is copied again, and the files a restore
placed are never uploaded back (`Backup(restored=...)`): the repo already has them.

huggingface_hub is imported inside the functions, like backend.jobs.hf; the
API object is a parameter so tests drive this module with a fake.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import re
import tempfile
import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from backend.core.files import copy_atomic

PATH_IN_REPO = "backup"
# The tables' own sub-folder: campaign images beside it are served to annotators, the tables (annotator ids,
# answers) never are (app.never_served). No campaign can be called this: campaign names start with a letter or digit.
TABLES_DIR = "_tables"
# the tables, and the campaigns' images beside them (fnmatch's "*" crosses folders)
ALLOW_PATTERNS = ["*.jsonl", "*.json", "*.png", "*.webp", "*.jpg", "*.jpeg"]
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*")
BACKUP_FILE = re.compile(r"([a-z][a-z0-9_]*)-[^/]+\.jsonl")
MTIME_STEP_NS = 1_000  # the scheduler compares float seconds: ~240 ns apart is the finest it can tell

log = logging.getLogger(__name__)


class BackupError(ValueError):
    """A backup that cannot run as configured; the message says what to set."""


def _check(repo_id: str, token: str) -> None:
    if not repo_id:
        raise BackupError("no backup repo: set the dataset repo id ('owner/name') to back the campaign up")
    if not token:
        raise BackupError(f"backing up to the dataset repo {repo_id} needs a Hugging Face token with write "
                          "access: set HF_TOKEN (https://huggingface.co/settings/tokens)")


def _default(value: Any) -> str:
    """JSON for the two non-JSON types campaign rows carry; anything else is a bug to surface."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} {value!r} cannot be written to the backup")


class Backup:
    """Append-only JSONL tables in `folder`, committed to `repo_id`'s `backup/` every `every_minutes`.

    Use `start()` (or `with Backup(...) as backup:`), then `append` for every
    record, `flush()` where a commit must happen now (an admin's "back up
    now"), and `stop()` at shutdown, which commits what is left. The repo is
    created private if it does not exist: it holds annotators' answers.
    """

    def __init__(self, folder: Path, repo_id: str, token: str, every_minutes: float = 5, api: Any = None,
                 restored: Sequence[Path] = ()) -> None:
        """`restored`: files `restore` placed in `folder` from the repo; they are not uploaded again unless they
        change."""
        _check(repo_id, token)
        self.restored = list(restored)
        if not every_minutes > 0:
            raise BackupError(f"every_minutes must be positive, not {every_minutes}")
        self.folder = Path(folder)
        self.repo_id, self.token, self.every_minutes, self.api = repo_id, token, every_minutes, api
        # sorts by start time (to the microsecond), so restored records come oldest process first
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.process_id = f"{stamp}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._scheduler: Any = None

    def start(self) -> Backup:
        """Create the repo if needed and start the background commits (the first one right away)."""
        if self._scheduler is not None:
            raise BackupError("this backup is already started")
        from huggingface_hub import HfApi
        tables_dir(self.folder).mkdir(parents=True, exist_ok=True)
        try:  # the scheduler creates the repo (exist_ok) before it starts its thread
            self._scheduler = _scheduler_class()(
                restored=self.restored,
                repo_id=self.repo_id, folder_path=self.folder, every=self.every_minutes, path_in_repo=PATH_IN_REPO,
                repo_type="dataset", private=True, token=self.token, allow_patterns=ALLOW_PATTERNS,
                hf_api=self.api if self.api is not None else HfApi(token=self.token))
        except Exception as error:
            raise BackupError(f"cannot create or reach the backup repo {self.repo_id} with this token "
                              f"(does it have write access to that namespace?): {error}") from error
        return self

    def path(self, table: str) -> Path:
        """This process's file for `table`."""
        if not TABLE_NAME.fullmatch(table):
            raise BackupError(f"table name {table!r} must be lowercase letters, digits and _")
        return tables_dir(self.folder) / f"{table}-{self.process_id}.jsonl"

    def append(self, table: str, record: dict) -> None:
        """Append `record` as one JSON line to this process's file for `table`.

        Runs under the scheduler's lock so a commit never lists the file in the
        middle of a line. "table" is the key `restore` adds, so a record may
        not carry it.
        """
        if self._scheduler is None:
            raise BackupError("start() the backup before appending to it")
        if "table" in record:
            raise BackupError("a backed-up record may not have a 'table' key: restore adds it")
        line = json.dumps(record, ensure_ascii=False, sort_keys=True, default=_default) + "\n"
        path = self.path(table)
        with self._scheduler.lock:
            before = path.stat().st_mtime_ns if path.exists() else None
            with path.open("a", encoding="utf-8") as handle:
                handle.write(line)
            after = path.stat()
            if before is not None and after.st_mtime_ns < before + MTIME_STEP_NS:
                os.utime(path, ns=(after.st_atime_ns, before + MTIME_STEP_NS))

    def flush(self) -> Any:
        """Commit now and wait; returns the commit info, or None when nothing changed."""
        if self._scheduler is None:
            raise BackupError("start() the backup before flushing it")
        try:
            return self._scheduler.trigger().result()
        except Exception as error:
            raise BackupError(f"backing up to {self.repo_id} failed: {error}") from error

    def stop(self, final_commit: bool = True) -> None:
        """Commit what is left (unless `final_commit` is False) and stop the scheduler.

        A stopped CommitScheduler ignores later triggers, including the one it
        registered with atexit; its thread ends after its current sleep.
        """
        if self._scheduler is None:
            return
        try:
            if final_commit:
                self.flush()
        finally:
            self._scheduler.stop()
            self._scheduler = None

    def __enter__(self) -> Backup:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _scheduler_class() -> type:
    """huggingface_hub's CommitScheduler, told which files came from the repo (imported when a backup starts)."""
    from huggingface_hub import CommitScheduler

    class RestoredAware(CommitScheduler):
        """Uploads what changed since the last commit, as CommitScheduler does, except the files a restore
        placed while they keep the size and mtime they were restored with: the repo holds them already, and a
        damaged local copy must never replace its good original there."""

        def __init__(self, *args: Any, restored: Sequence[Path] = (), **kwargs: Any) -> None:
            # before super().__init__, which starts the thread that commits (the first time at once)
            self._restored = {Path(path): Path(path).stat().st_mtime for path in restored if Path(path).is_file()}
            super().__init__(*args, **kwargs)

        def push_to_hub(self) -> Any:
            with self.lock:
                for path, mtime in self._restored.items():
                    self.last_uploaded.setdefault(path, mtime)
            return super().push_to_hub()

    return RestoredAware


def tables_dir(folder: Path | str) -> Path:
    """Where a backup folder keeps its JSONL tables."""
    return Path(folder) / TABLES_DIR


def read_backup(folder: Path) -> tuple[list[dict], int]:
    """Every record of every `<table>-<id>.jsonl` in `folder`'s tables (and, from backups written before the
    tables had their own sub-folder, in `folder` itself), with its "table" added, and the skipped count.

    Order: by file name (so by table, then by the writing process's start
    time), then by line. Lines that are not a JSON object (a torn last line
    from a process that died mid-write) are skipped and counted; blank lines
    are ignored. Other files are not backup tables and are left alone.
    """
    records: list[dict] = []
    skipped = 0
    for path in sorted([*Path(folder).glob("*.jsonl"), *tables_dir(folder).glob("*.jsonl")],
                       key=lambda path: path.name):
        match = BACKUP_FILE.fullmatch(path.name)
        if not match:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                skipped += 1
                continue
            records.append({**record, "table": match.group(1)})
    return records, skipped


def restore(folder: Path, repo_id: str, token: str, api: Any = None) -> tuple[list[dict], list[Path]]:
    """Download the repo's `backup/` files into `folder`; return every record in it (see `read_backup`) and the
    files that now match the repo's (for `Backup(restored=...)`).

    Call it before `Backup.start()` on a fresh disk. A file already in `folder` with the repo's size is kept as
    it is (only its own process wrote it); one of another size (cut short by a restore killed mid-copy) and a
    missing one are copied in, each under a temporary name then renamed (`backend.core.files.copy_atomic`), so
    new appends, which go to new files, continue alongside them. A repo that does not exist yet means nothing
    was backed up: no records. Skipped (torn) lines are logged with their count.
    """
    _check(repo_id, token)
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError
    api = api if api is not None else HfApi(token=token)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    placed: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="backup-restore-") as download:
        try:
            api.snapshot_download(repo_id, repo_type="dataset", allow_patterns=f"{PATH_IN_REPO}/*",
                                  local_dir=download, token=token)
        except RepositoryNotFoundError:
            log.warning("backup repo %s not found (or not readable with this token): nothing to restore", repo_id)
            return [], []
        copied = 0
        root = Path(download) / PATH_IN_REPO
        for source in sorted(path for path in root.rglob("*") if path.is_file() and any(
                fnmatch.fnmatch(str(path.relative_to(root)), pattern) for pattern in ALLOW_PATTERNS)):
            target = folder / source.relative_to(root)
            if not target.is_file() or target.stat().st_size != source.stat().st_size:
                target.parent.mkdir(parents=True, exist_ok=True)
                copy_atomic(source, target)
                copied += 1
            placed.append(target)
    records, skipped = read_backup(folder)
    log.info("restored %d records from %s (%d files copied)", len(records), repo_id, copied)
    if skipped:
        log.warning("restore from %s skipped %d unreadable line(s) (torn writes)", repo_id, skipped)
    return records, placed
