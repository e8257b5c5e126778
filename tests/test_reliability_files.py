"""Files that a kill can no longer leave half-written: a backup restore, a re-export, and a damaged store.

The kills are real: a child process runs the code and ends with ``os._exit`` in the middle of the write (no
handler, no cleanup: what SIGKILL leaves), then the parent looks at what is on disk and runs what comes next.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from backend.annotate import backup as backup_module
from backend.annotate import campaigns, mirror
from backend.annotate.backup import Backup, restore, tables_dir
from backend.annotate.campaigns import CampaignConfig, ItemSpec
from backend.annotate.export import ExportRow, save_dataset
from backend.core.settings import ROOT, Settings
from backend.core.store import Store, StoreDamaged, check_integrity
from tests.support.appprocess import app_process
from tests.support.fake_hub import TOKEN, FakeHfApi, FakeHub
from tests.support.tiny import solid_image

pytestmark = pytest.mark.system
REPO = "lab/backup"


def killed_midway(script: str) -> subprocess.CompletedProcess:
    """Run `script` in a child Python (the repository on its path); it must end itself with os._exit(9)."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert result.returncode == 9, result.stderr
    return result


def save_hub(hub: FakeHub, path: Path) -> None:
    """The (fake) repo's files as JSON, for a child process to build the same hub from."""
    path.write_text(json.dumps({k: v.decode() for k, v in hub.repos[REPO]["files"].items()}))


def thirty_answers(folder: Path, hub: FakeHub) -> Path:
    """A backup of 30 answers committed to the (fake) repo; returns the local file that holds them."""
    with Backup(folder, REPO, TOKEN, every_minutes=60, api=FakeHfApi(hub)) as backup:
        for k in range(30):
            backup.append("answers", {"item_id": k, "choice": str(k % 4 + 1)})
    return backup.path("answers")


def remote_answers(hub: FakeHub, name: str) -> int:
    return len(hub.repos[REPO]["files"][f"backup/_tables/{name}"].decode().splitlines())


def test_a_restore_killed_mid_copy_never_costs_the_backup_an_answer(tmp_path):
    hub = FakeHub()
    name = thirty_answers(tmp_path / "old-disk", hub).name
    fresh = tmp_path / "new-disk"
    save_hub(hub, tmp_path / "hub.json")
    killed_midway(f"""
        import json, os, shutil
        from pathlib import Path
        from backend.annotate.backup import restore
        from backend.core import files
        from tests.support.fake_hub import TOKEN, FakeHfApi, FakeHub

        hub = FakeHub()
        hub.repos["{REPO}"] = {{"private": True, "commits": 1, "files": {{k: v.encode() for k, v in
                                json.loads(Path("{tmp_path / 'hub.json'}").read_text()).items()}}}}
        def half_then_killed(source, target):
            data = Path(source).read_bytes()
            Path(target).write_bytes(data[: len(data) // 2])
            os._exit(9)
        files.shutil.copyfile = half_then_killed
        restore(Path("{fresh}"), "{REPO}", TOKEN, api=FakeHfApi(hub))
    """)
    assert not (tables_dir(fresh) / name).exists()  # only a temporary name holds the half copy
    records, restored = restore(fresh, REPO, TOKEN, api=FakeHfApi(hub))
    assert len(records) == 30 and tables_dir(fresh) / name in restored
    with Backup(fresh, REPO, TOKEN, every_minutes=60, api=FakeHfApi(hub), restored=restored) as new:
        new.append("answers", {"item_id": 30, "choice": "none"})
    assert remote_answers(hub, name) == 30 and remote_answers(hub, new.path("answers").name) == 1


def test_a_truncated_local_copy_is_copied_again_and_never_uploaded_over_the_good_one(tmp_path):
    """What a restore killed mid-copy left before this fix: the file, cut to half, under its own name."""
    hub = FakeHub()
    original = thirty_answers(tmp_path / "old-disk", hub)
    fresh = tmp_path / "new-disk"
    tables_dir(fresh).mkdir(parents=True)
    (tables_dir(fresh) / original.name).write_text("".join(original.read_text().splitlines(True)[:15]))
    records, restored = restore(fresh, REPO, TOKEN, api=FakeHfApi(hub))
    assert len(records) == 30
    api = FakeHfApi(hub)
    with Backup(fresh, REPO, TOKEN, every_minutes=60, api=api, restored=restored) as new:
        new.append("answers", {"item_id": 30, "choice": "none"})
    assert remote_answers(hub, original.name) == 30  # before: 15, the other 15 lost for good


def rows(count: int, folder: Path) -> list[ExportRow]:
    image = folder / "a.png"
    solid_image((10, 20, 30), size=8).save(image)
    return [ExportRow(image, f"caption {k}", f"negative {k}", image, "swap", "att", k) for k in range(count)]


def test_a_re_export_killed_midway_leaves_the_last_whole_export(tmp_path):
    import datasets

    out = tmp_path / "export" / "dataset"
    save_dataset(rows(250, tmp_path), out)
    killed_midway(f"""
        import os
        from pathlib import Path
        import datasets
        from backend.annotate.export import ExportRow, save_dataset

        write = datasets.Dataset.save_to_disk
        def written_then_killed(self, path, **kwargs):
            write(self, path, **kwargs)
            os._exit(9)
        datasets.Dataset.save_to_disk = written_then_killed
        image = Path("{tmp_path / 'a.png'}")
        save_dataset([ExportRow(image, "c", "n", image, "swap", "att", k) for k in range(100)], Path("{out}"))
    """)
    assert datasets.load_from_disk(str(out)).num_rows == 250  # before: 100 of 250, silently
    save_dataset(rows(100, tmp_path), out)
    assert datasets.load_from_disk(str(out)).num_rows == 100
    assert sorted(path.name for path in out.parent.iterdir() if not path.name.startswith(".")) == ["dataset"]


def checkpoint(path: Path) -> None:
    """Move everything from the write-ahead log into the store's file (what the damage then hits)."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def damage(path: Path) -> None:
    """Overwrite the middle of the store's file (its b-tree pages) with noise."""
    data = bytearray(path.read_bytes())
    data[4096:12288] = os.urandom(8192)
    path.write_bytes(bytes(data))


def campaign_store(settings: Settings) -> None:
    Store(settings.db)
    campaigns.create(settings.db, "study", [ItemSpec("a red circle", "a blue circle")] * 300,
                     CampaignConfig.from_dict({"gold_rate": 0}), "test")
    checkpoint(settings.db)


def test_a_damaged_store_is_refused_at_start_with_what_to_do(tmp_path):
    workspace = tmp_path / "workspace"
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(workspace)})
    campaign_store(settings)
    damage(settings.db)
    with pytest.raises(StoreDamaged, match="is damaged"):
        check_integrity(settings.db)
    with pytest.raises(RuntimeError, match="the server exited with code 1") as failed, \
            app_process(workspace, {}, timeout=120):
        pass
    said = (workspace / "app-output.log").read_text()
    assert f"error: The store {settings.db} is damaged" in said and "Put back a copy" in said, failed.value
    assert "Traceback" not in said
    cli = subprocess.run([sys.executable, "-m", "backend", "jobs", "list"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "COMPLAB_WORKSPACE": str(workspace), "PYTHONPATH": str(ROOT)})
    assert cli.returncode != 0 and "is damaged" in cli.stderr and "Traceback" not in cli.stderr


def test_on_a_space_a_damaged_store_is_moved_aside_and_the_campaigns_restored(tmp_path):
    hub = FakeHub()
    env = {"COMPLAB_WORKSPACE": str(tmp_path), "SPACE_ID": "lab/app", "HF_TOKEN": TOKEN, "COMPLAB_BACKUP_REPO": REPO}
    settings = Settings.load(env=env)
    Store(settings.db)
    running = mirror.start(settings, api=FakeHfApi(hub), every_minutes=0.002)
    try:
        campaigns.create(settings.db, "study", [ItemSpec("a red circle", "a blue circle")] * 300,
                         CampaignConfig.from_dict({"gold_rate": 0}), "test")
        running.flush()
    finally:
        mirror.stop(running)
    checkpoint(settings.db)
    damage(settings.db)
    save_hub(hub, tmp_path / "hub.json")
    started = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import json
        from pathlib import Path
        from app import checked_store
        from backend.annotate import mirror
        from backend.core.settings import Settings
        from tests.support.fake_hub import FakeHfApi, FakeHub

        hub = FakeHub()
        hub.repos["{REPO}"] = {{"private": True, "commits": 1, "files": {{k: v.encode() for k, v in
                                json.loads(Path("{tmp_path / 'hub.json'}").read_text()).items()}}}}
        settings = Settings.load(env={env!r})
        checked_store(settings)  # what the app does first at start, then the backup's restore
        mirror.stop(mirror.start(settings, api=FakeHfApi(hub), every_minutes=0.002))
    """)], cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert started.returncode == 0 and "is damaged" in started.stderr, started.stderr
    aside = [path.name for path in settings.db.parent.iterdir() if ".damaged-" in path.name]
    assert aside and aside[0].startswith("lab.db.damaged-")
    check_integrity(settings.db)
    with sqlite3.connect(settings.db) as conn:
        assert conn.execute("select count(*) from items").fetchone() == (300,)


def test_the_backup_scheduler_is_the_one_that_skips_restored_files():
    assert backup_module._scheduler_class().__name__ == "RestoredAware"
