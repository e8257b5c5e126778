"""SIGTERM in the middle of a crowd's work loses no acknowledged answer: the backup is committed before exit.

A Space gets SIGTERM when it restarts, sleeps or is rebuilt, and its disk goes with it; the backup commits every
few minutes (here: every hour, so only the shutdown's commit can save the answers). The campaign is created and
backed up first (as an admin does on the Space); then the real entry point (`app.main`, annotation mode) serves
it in a process of its own with the fake Hub of tests/support/fake_hub.py, saved to a file at each commit so the
test can read what reached the "repo". Four annotators answer until SIGTERM; a fresh disk restored from the repo
holds every answer any of them saw acknowledged.
"""
from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from backend.annotate import db, mirror
from backend.annotate.campaigns import CampaignConfig
from backend.core.store import Store
from tests.support.annotate_fixtures import task_token, toy_campaign
from tests.support.appprocess import CLEARED
from tests.support.appserver import free_port
from tests.support.clients import local_client
from tests.support.crowd_server import ServerProcess
from tests.support.fake_hub import CHILD, TOKEN, FakeHfApi, FakeHub, load, save, space_settings

pytestmark = pytest.mark.system

REPO = "lab/backup"
def work(url: str, name: str, acked: list[int], stop: threading.Event) -> None:
    """An annotator answering until the server goes away; `acked` gets each task whose answer came back."""
    try:
        client = local_client(url, download_files=False)
        shown = client.predict("crowd", name, api_name="/start")
        while not stop.is_set():
            token = task_token(shown)
            shown = client.predict(token, "1", api_name="/answer")
            acked.append(int(token))
            time.sleep(0.05)
    except Exception:  # the server was stopped: what was acknowledged so far is the ledger
        return


def test_sigterm_mid_crowd_commits_every_acknowledged_answer(tmp_path):
    disk = tmp_path / "space-disk"
    settings = space_settings(disk)
    Store(settings.db)
    hub, hub_file = FakeHub(), tmp_path / "hub.json"
    backup = mirror.start(settings, api=FakeHfApi(hub), every_minutes=60)
    try:  # the admin creates the campaign on the Space; it is backed up
        toy_campaign(settings.db, settings.data_dir, "crowd", 30,
                     CampaignConfig.from_dict({"overlap": 2, "gold_rate": 0, "tasks_per_session": 30}))
    finally:
        mirror.stop(backup)
    save(hub, hub_file)

    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k not in CLEARED}, "COMPLAB_WORKSPACE": str(disk),
           "COMPLAB_BACKUP_REPO": REPO, "HF_TOKEN": TOKEN, "GRADIO_SERVER_NAME": "127.0.0.1",
           "GRADIO_SERVER_PORT": str(port), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "TEST_HUB_FILE": str(hub_file)}
    server = ServerProcess([sys.executable, "-c", textwrap.dedent(CHILD)], port, env, tmp_path / "app.log")
    server.start(240)
    acked: list[list[int]] = [[] for _ in range(4)]
    stop = threading.Event()
    threads = [threading.Thread(target=work, args=(server.url, f"ann{k}", acked[k], stop)) for k in range(4)]
    try:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while sum(map(len, acked)) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(map(len, acked)) >= 20, "the crowd got going"
        os.kill(server.pid, signal.SIGTERM)  # mid-load: the annotators are still answering
        # 0: the handler flushed and exited (Python's default for SIGTERM ends the process with -15 at once)
        assert server.process.wait(timeout=60) == 0, (tmp_path / "app.log").read_text()[-2000:]
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        server.kill()
    acknowledged = {token for ledger in acked for token in ledger}

    fresh = space_settings(tmp_path / "new-disk")  # the Space's replacement, on an empty disk
    Store(fresh.db)
    mirror.stop(mirror.start(fresh, api=FakeHfApi(load(hub_file)), every_minutes=60))
    restored = {row["assignment_id"] for row in db.rows(fresh.db, "select assignment_id from answers")}
    assert acknowledged and acknowledged <= restored, sorted(acknowledged - restored)
    committed = {row["assignment_id"] for row in db.rows(settings.db, "select assignment_id from answers")}
    assert restored == committed, "the repo holds exactly what SQLite committed before the exit"
