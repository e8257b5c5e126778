"""A full disk under the store: the annotator reads "could not save, try again", the answer is not acknowledged,
and nothing stored before is lost; once there is room again, the same answer goes through.

The disk is real: a 3 MiB tmpfs holds the SQLite store (and its WAL), filled up with a file until no byte is left.
Mounting needs root (CAP_SYS_ADMIN); where the tests run without it, the test is skipped, and says why.
"""
from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest

from backend.annotate import db
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.clients import local_client

pytestmark = pytest.mark.system


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path) -> Path:
    """Write a file on `disk` until the disk has no room left; returns it."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:  # unbuffered: the write that finds no room raises here
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return filler


def message(outputs) -> str:
    return " ".join(str(value) for value in outputs if isinstance(value, str) and "could not save" in value.lower())


def test_a_full_disk_refuses_the_answer_with_a_message_and_the_next_try_saves_it(tmp_path, small_disk):
    settings = workspace_settings(tmp_path / "ws", db_path=small_disk / "lab.db")
    Store(settings.db)
    toy_campaign(settings.db, settings.data_dir, "study", 4,
                 CampaignConfig.from_dict({"overlap": 1, "gold_rate": 0, "tasks_per_session": 3}))
    with annotate_app(settings) as url:
        client = local_client(url, download_files=False)
        first = task_token(client.predict("study", "ann", api_name="/start"))
        second = task_token(client.predict(first, "1", api_name="/answer"))
        filler = fill(small_disk)

        refused = client.predict(second, "2", api_name="/answer")
        assert "Could not save: the server's disk is full" in message(refused) and "try again" in message(refused)
        assert not [value for value in refused if isinstance(value, str) and value.isdigit()], \
            "nothing but the message changes: the same task stays on screen"
        rows = db.rows(settings.db, "select assignment_id, choice from answers order by id")
        assert [(row["assignment_id"], row["choice"]) for row in rows] == [(int(first), "1")]

        filler.unlink()  # room again: the same click saves it
        saved = client.predict(second, "2", api_name="/answer")
        assert not message(saved) and task_token(saved) not in (first, second)
    rows = db.rows(settings.db, "select assignment_id, choice from answers order by id")
    assert [(row["assignment_id"], row["choice"]) for row in rows] == [(int(first), "1"), (int(second), "2")]
