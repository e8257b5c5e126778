"""Numbered schema migrations: a store written by the last release before migrations opens, upgrades and keeps
its jobs and metrics."""
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backend.cli import main
from backend.core import migrations
from backend.core.store import Store

FIXTURE = Path(__file__).parent / "data" / "lab-release-ac2e601.db"


@pytest.fixture
def old_db(tmp_path):
    path = tmp_path / "lab.db"
    shutil.copy(FIXTURE, path)
    return path


def test_a_release_ac2e601_store_upgrades_and_keeps_its_jobs_and_metrics(old_db, capsys):
    before = sqlite3.connect(old_db)
    assert before.execute("pragma user_version").fetchone()[0] == 0
    jobs_before = before.execute("select id, name, status, args, result from jobs order by id").fetchall()
    metrics_before = before.execute("select * from metrics order by rowid").fetchall()
    before.close()

    store = Store(old_db)
    assert store.applied_migrations == list(range(1, migrations.LATEST + 1))
    assert store.schema_version == migrations.LATEST
    after = store.db.conn
    assert after.execute("select id, name, status, args, result from jobs order by id").fetchall() == jobs_before
    assert after.execute("select * from metrics order by rowid").fetchall() == metrics_before
    assert len(metrics_before) == 52
    done = store.get_job(1)
    assert done["status"] == "done" and done["result"]["final_metrics"]["toy-sugarcrepe/overall"] > 0
    assert done["target"] == "local" and done["target_options"] == {} and done["actor"] == "unknown (before accounts)"
    assert store.latest_metrics(1, "eval")["toy-sugarcrepe/overall"] == done["result"]["final_metrics"][
        "toy-sugarcrepe/overall"]
    assert Store(old_db).applied_migrations == []  # opening again changes nothing
    assert main(["jobs", "list", "--db", str(old_db)]) == 0
    assert "fixture-negclip" in capsys.readouterr().out


def test_old_target_strings_become_a_name_and_options(tmp_path):
    path = tmp_path / "lab.db"
    connection = sqlite3.connect(path)
    for statement in migrations.MIGRATIONS[0][1]:
        connection.execute(statement)
    connection.executemany("insert into jobs (kind, target, status, created_at) values ('train', ?, 'done', 0)",
                           [("local",), ("torchrun:4",), ("hf:l4x1",)])
    connection.execute("pragma user_version = 1")
    connection.commit()
    connection.close()
    store = Store(path)
    assert [(job["target"], job["target_options"]) for job in reversed(store.list_jobs())] == [
        ("local", {}), ("torchrun", {"nproc": 4}), ("hf", {"flavor": "l4x1"})]


def test_a_store_from_a_newer_release_is_refused_untouched(tmp_path):
    path = tmp_path / "lab.db"
    connection = sqlite3.connect(path)
    connection.execute(f"pragma user_version = {migrations.LATEST + 1}")
    connection.close()
    with pytest.raises(migrations.SchemaError, match="newer than this code knows"):
        Store(path)
    assert sqlite3.connect(path).execute("pragma user_version").fetchone()[0] == migrations.LATEST + 1


@pytest.mark.system
def test_processes_opening_a_fresh_store_together_migrate_it_once(tmp_path):
    path = tmp_path / "lab.db"
    code = f"from backend.core.store import Store; print(Store({str(path)!r}).applied_migrations)"
    root = Path(__file__).resolve().parents[1]
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
            for _ in range(4)]
    outputs = [run.communicate(timeout=60)[0].strip() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert sorted(outputs) == [str(list(range(1, migrations.LATEST + 1))), "[]", "[]", "[]"]
    assert Store(path).schema_version == migrations.LATEST


def test_a_version_4_store_gains_the_resume_link_and_keeps_its_jobs(tmp_path):
    path = tmp_path / "lab.db"
    connection = sqlite3.connect(path)
    for _, statements in migrations.MIGRATIONS[:4]:
        for statement in statements:
            connection.execute(statement)
    connection.execute("insert into jobs (kind, name, args, target, target_options, status, created_at, error) "
                       "values ('train', 'crashed', '{\"steps\": 6}', 'local', '{}', 'failed', 0, 'killed by SIGKILL')")
    connection.execute("pragma user_version = 4")
    connection.commit()
    connection.close()
    store = Store(path)
    assert store.applied_migrations == list(range(5, migrations.LATEST + 1))
    assert store.schema_version == migrations.LATEST
    crashed = store.get_job(1)
    assert (crashed["name"], crashed["args"], crashed["status"], crashed["resumed_from"]) == \
        ("crashed", {"steps": 6}, "failed", None)
    assert store.resumed_by(1) is None
    again = store.create_job("train", crashed["args"], name="crashed", resumed_from=1)
    assert store.resumed_by(1)["id"] == again and store.get_job(again)["resumed_from"] == 1
