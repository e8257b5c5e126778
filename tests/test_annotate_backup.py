"""The backup against a fake Hub at the HfApi boundary: the real CommitScheduler
runs its real thread and lock and calls the fake's create_repo, run_as_future
and create_commit; restore calls its snapshot_download. The fake keeps the
"remote repo" as a dict of bytes, so the tests see exactly what was committed."""

import json
import logging
import os
import threading
import time

import pytest

from backend.annotate.backup import Backup, BackupError, read_backup, restore, tables_dir
from tests.support.fake_hub import TOKEN, FakeHfApi, FakeHub

REPO = "lab/campaign-backup"
EVERY = 0.002  # minutes: the scheduler thread commits every 0.12 s and ends soon after stop()


@pytest.fixture
def hub():
    return FakeHub()


@pytest.fixture
def make_backup(hub):
    """Backups on fake clients; at the end each is stopped and its scheduler thread must end."""
    made = []

    def make(folder, **kwargs):
        api = FakeHfApi(hub)
        backup = Backup(folder, REPO, TOKEN, every_minutes=EVERY, api=api, **kwargs)
        made.append(backup)
        return backup

    before = set(threading.enumerate())  # schedulers another test of this process left are not this test's
    yield make
    for backup in made:
        backup.stop(final_commit=False)
    # CommitScheduler's thread (named after its target) sleeps `every` minutes, then sees the stop
    schedulers = [thread for thread in set(threading.enumerate()) - before if "_run_scheduler" in thread.name]
    for thread in schedulers:
        thread.join(timeout=5)
    assert not [thread for thread in schedulers if thread.is_alive()]
    for backup in made:
        backup.api.pool.shutdown(wait=True)


def remote_lines(hub: FakeHub) -> dict[str, list[dict]]:
    return {name: [json.loads(line) for line in blob.decode().splitlines()]
            for name, blob in hub.repos[REPO]["files"].items()}


def test_two_processes_back_up_into_one_folder_and_restore_on_a_fresh_disk(tmp_path, hub, make_backup):
    disk = tmp_path / "space-disk"
    first, second = make_backup(disk).start(), make_backup(disk).start()
    assert first.process_id != second.process_id
    for i in range(3):
        first.append("answers", {"item_id": i, "annotator": "ann", "choice": str(i + 1)})
        second.append("answers", {"item_id": i, "annotator": "bob", "choice": "none"})
    first.append("items", {"item_id": 7, "status": "accepted"})
    first.flush()
    second.flush()
    assert hub.repos[REPO]["private"] is True
    remote = remote_lines(hub)
    assert sorted(remote) == sorted(f"backup/_tables/{path.name}" for path in tables_dir(disk).iterdir())
    assert sorted(remote) == sorted([f"backup/_tables/answers-{first.process_id}.jsonl",
                                     f"backup/_tables/answers-{second.process_id}.jsonl",
                                     f"backup/_tables/items-{first.process_id}.jsonl"])
    assert remote[f"backup/_tables/answers-{first.process_id}.jsonl"] == [
        {"item_id": i, "annotator": "ann", "choice": str(i + 1)} for i in range(3)]
    assert [r["annotator"] for r in remote[f"backup/_tables/answers-{second.process_id}.jsonl"]] == ["bob"] * 3

    fresh = tmp_path / "new-space-disk"
    records, _ = restore(fresh, REPO, TOKEN, api=FakeHfApi(hub))
    assert len(records) == 7
    # by file name (table, then process start time and id), then line
    by_file = sorted([(first.process_id, "ann"), (second.process_id, "bob")])
    expected = [{"item_id": i, "annotator": who, "choice": str(i + 1) if who == "ann" else "none",
                 "table": "answers"} for _, who in by_file for i in range(3)]
    assert records == expected + [{"item_id": 7, "status": "accepted", "table": "items"}]
    assert sorted(path.name for path in fresh.iterdir()) == sorted(path.name for path in disk.iterdir())


def test_restored_files_stay_and_new_appends_go_alongside(tmp_path, hub, make_backup):
    with make_backup(tmp_path / "old") as old:
        old.append("answers", {"item_id": 1, "choice": "2"})
    fresh = tmp_path / "fresh"
    assert restore(fresh, REPO, TOKEN, api=FakeHfApi(hub))[0] == [{"item_id": 1, "choice": "2", "table": "answers"}]
    new = make_backup(fresh).start()
    new.append("answers", {"item_id": 2, "choice": "none"})
    new.flush()
    assert len(remote_lines(hub)) == 2  # the old process's file and the new one's
    records, skipped = read_backup(fresh)
    assert [r["item_id"] for r in records] == [1, 2] and skipped == 0


def test_torn_last_line_is_skipped_and_counted(tmp_path, hub, make_backup, caplog):
    with make_backup(tmp_path / "disk") as backup:
        backup.append("answers", {"item_id": 1, "choice": "1"})
        backup.append("answers", {"item_id": 2, "choice": "3"})
    name = f"backup/_tables/answers-{backup.process_id}.jsonl"
    hub.repos[REPO]["files"][name] += b'{"item_id": 3, "cho'  # the process died mid-write
    hub.repos[REPO]["files"]["backup/README.md"] = b"not a table"
    # a backup written before the tables had their own folder still restores (first: its process started earlier)
    hub.repos[REPO]["files"]["backup/answers-20250101T000000Z-1-0ld.jsonl"] = b'{"item_id": 0, "choice": "2"}\n'
    with caplog.at_level(logging.WARNING, logger="backend.annotate.backup"):
        records, _ = restore(tmp_path / "fresh", REPO, TOKEN, api=FakeHfApi(hub))
    assert [r["item_id"] for r in records] == [0, 1, 2]
    assert "skipped 1 unreadable line" in caplog.text
    assert read_backup(tmp_path / "fresh") == (records, 1)
    assert not (tmp_path / "fresh" / "README.md").exists()


def test_background_commits_while_threads_append_lose_and_cut_nothing(tmp_path, hub, make_backup):
    backup = make_backup(tmp_path / "disk").start()
    done = threading.Event()
    written = {"ann": 0, "bob": 0}

    def write(annotator):
        while not done.is_set():
            backup.append("answers", {"item_id": written[annotator], "annotator": annotator, "note": "x" * 200})
            written[annotator] += 1

    threads = [threading.Thread(target=write, args=(name,)) for name in written]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and hub.repos[REPO]["commits"] < 3:  # background commits mid-writing
        time.sleep(0.01)
    done.set()
    for thread in threads:
        thread.join()
    assert hub.repos[REPO]["commits"] >= 3
    backup.flush()
    assert hub.torn_uploads == 0
    [lines] = remote_lines(hub).values()
    assert len(lines) == written["ann"] + written["bob"]
    assert [r["item_id"] for r in lines if r["annotator"] == "bob"] == list(range(written["bob"]))


def test_append_waits_for_the_schedulers_lock(tmp_path, make_backup):
    # The scheduler lists files and records their sizes under this lock; an append
    # inside that window could leave the recorded size in the middle of a line.
    backup = make_backup(tmp_path / "disk").start()
    appended = threading.Event()
    with backup._scheduler.lock:
        thread = threading.Thread(target=lambda: (backup.append("answers", {"item_id": 1}), appended.set()))
        thread.start()
        assert not appended.wait(0.2)
        assert not backup.path("answers").exists()
    assert appended.wait(5)
    thread.join()
    assert backup.path("answers").read_text() == '{"item_id": 1}\n'


def test_every_append_moves_the_mtime_forward(tmp_path, make_backup):
    backup = make_backup(tmp_path / "disk").start()
    backup.append("answers", {"item_id": 1})
    path = backup.path("answers")
    future = path.stat().st_mtime_ns + 10**12  # as if the clock had not moved since the last append
    os.utime(path, ns=(future, future))
    backup.append("answers", {"item_id": 2})
    assert path.stat().st_mtime_ns > future
    assert path.stat().st_mtime != future / 1e9  # the scheduler compares float seconds


def test_missing_repo_restores_nothing(tmp_path):
    assert restore(tmp_path / "fresh", "lab/never-backed-up", TOKEN, api=FakeHfApi(FakeHub())) == ([], [])


def test_configuration_errors(tmp_path, make_backup):
    with pytest.raises(BackupError, match=f"{REPO} needs a Hugging Face token.*HF_TOKEN"):
        Backup(tmp_path, REPO, "")
    with pytest.raises(BackupError, match=f"{REPO} needs a Hugging Face token"):
        restore(tmp_path, REPO, None)
    with pytest.raises(BackupError, match="no backup repo"):
        Backup(tmp_path, "", TOKEN)
    class RefusingApi:
        def create_repo(self, **kwargs):
            raise RuntimeError("403 Forbidden")

    refused = Backup(tmp_path / "refused", REPO, TOKEN, api=RefusingApi())
    with pytest.raises(BackupError, match=f"backup repo {REPO} .*write access.*403 Forbidden"):
        refused.start()
    backup = make_backup(tmp_path / "disk")
    with pytest.raises(BackupError, match="start"):
        backup.append("answers", {"item_id": 1})
    backup.start()
    with pytest.raises(BackupError, match="table name"):
        backup.append("../answers", {"item_id": 1})
    with pytest.raises(BackupError, match="'table' key"):
        backup.append("answers", {"table": "x"})
    with pytest.raises(TypeError, match="set"):
        backup.append("answers", {"ids": {1, 2}})
