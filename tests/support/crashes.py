"""What the crash and recovery tests share: kill a job's process group as the OOM killer would, wait for its
row to settle, read a campaign's candidate rows and files; and keep torch on one thread while they run."""
from __future__ import annotations

import os
import signal
from pathlib import Path

from backend import jobs
from backend.annotate import campaigns, db
from backend.core.store import Store
from backend.jobs import process
from tests.support.waiting import wait_for

CANDIDATE_COLUMNS = "c.id, c.item_id, c.slot, c.sha256, c.path, c.display_path, c.seed, c.created_at"


def settled(store: Store, job_id: int, timeout: float = 300.0) -> dict:
    """The job's row once it is done, failed or cancelled."""
    return wait_for(lambda: (job := store.get_job(job_id))["status"] in jobs.FINAL and job, timeout,
                    f"job {job_id} to settle")


def kill_job(store: Store, job_id: int) -> None:
    """SIGKILL the job's whole process group (no handler runs, nothing is flushed) and wait until it is gone."""
    job = store.get_job(job_id)
    os.killpg(job["pid"], signal.SIGKILL)
    wait_for(lambda: process.process_state(job["pid"], job["started_at"]) in (None, "Z"), 30, "the job to die")


def candidate_rows(db_path: Path | str, campaign: str) -> list[dict]:
    """Every candidate image row of a campaign, in (item, slot) order."""
    return db.rows(db_path, f"select {CANDIDATE_COLUMNS} from candidates c join items i on i.id = c.item_id "
                            "join campaigns m on m.id = i.campaign_id where m.name = ? order by c.item_id, c.slot",
                   (campaign,))


def wait_for_candidates(db_path: Path | str, campaign: str, at_least: int, timeout: float = 120.0) -> None:
    wait_for(lambda: len(candidate_rows(db_path, campaign)) >= at_least, timeout, f"{at_least} stored images")


def stored_files(folder: Path) -> dict[str, int]:
    """Every image file under a campaign's images/ and display/ folders (relative path -> mtime in ns); the
    temporary files of unfinished writes are `partial_files`."""
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for sub in ("images", "display")
            for path in (folder / sub).rglob("*") if path.is_file() and not path.name.startswith(".")}


def partial_files(folder: Path) -> list[Path]:
    """Temporary files of writes that never finished (`backend.generate.storage.write_atomic`)."""
    return sorted(folder.rglob(".*.part"))


def toy_campaign(db_path: Path | str, data_dir: Path, n_items: int, name: str = "c1") -> Path:
    """A toyworld campaign of `n_items` items (no gold) in a store; returns its folder."""
    from backend.toyworld.campaign import toy_items

    Store(db_path)  # migrations
    folder = campaigns.campaign_dir(data_dir, name)
    campaigns.create(db_path, name, toy_items(n_items, 0, folder),
                     campaigns.CampaignConfig.from_dict({"generator": "toyworld"}), source="test")
    return folder
