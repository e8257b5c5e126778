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
from backend.core import store as store_module
from backend.core.store import Store, StoreBusy, StoreDamaged, check_integrity

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


class _LockedTwice:
    """A connection whose first two statements meet another process's lock, as a new store's switch to WAL can
    (SQLite's busy timeout does not cover it: the test above failed once in a whole `make test`)."""

    def __init__(self, connection: sqlite3.Connection):
        self.connection, self.refused = connection, 0

    def execute(self, statement: str):
        if self.refused < 2:
            self.refused += 1
            raise sqlite3.OperationalError("database is locked")
        return self.connection.execute(statement)


def test_the_switch_to_wal_waits_for_a_lock_sqlite_does_not_wait_for(tmp_path):
    connection = _LockedTwice(sqlite3.connect(tmp_path / "lab.db"))
    store_module._use_wal(connection)
    assert connection.refused == 2
    assert connection.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_new_store_held_by_another_process_is_busy_not_damaged_and_is_left_where_it_is(tmp_path, monkeypatch):
    """Before its switch to WAL a store's readers wait for a writer (in WAL they never do)."""
    path = tmp_path / "lab.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE notes (text)")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO notes VALUES ('kept')")
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.2)
    for opening in (check_integrity, Store):
        with pytest.raises(StoreBusy, match="held by another process for over 0.2 s") as refused:
            opening(path)
        assert not isinstance(refused.value, StoreDamaged)  # app.py moves a damaged store aside on a Space
    holder.execute("COMMIT")
    assert Store(path).db.execute("SELECT text FROM notes").fetchall() == [("kept",)]


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
