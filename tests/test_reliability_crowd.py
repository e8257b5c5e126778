"""A crowd of annotators loses nothing: the load and crash runs of bench/annotate_load.py with a small crowd.

The real annotation app (``python app.py --mode annotate``) runs in a process
of its own; 8 gradio_client annotators do 6 tasks each with short think times,
then fresh annotators finish the campaign. Once calmly, once with the server
killed with SIGKILL mid-load and started again on the same store and port.
The assertions read the SQLite file: latency is the bench's business.
"""
from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from bench.annotate_load import CONFIG, Crash, in_flight, load_run, prepare
from tests.support.appserver import free_port
from tests.support.crowd import uniform_think
from tests.support.crowd_audit import audit
from tests.support.crowd_server import annotate_server

pytestmark = pytest.mark.system

ANNOTATORS, TASKS = 8, 6
THINK = uniform_think(0.02, 0.15)


@pytest.fixture(scope="module")
def crowd_server(tmp_path_factory):
    """One server over a workspace with two campaigns, "calm" and "crash" (the crash test kills it)."""
    workspace = tmp_path_factory.mktemp("crowd")
    db_path = prepare(workspace, "calm", ANNOTATORS, TASKS)
    prepare(workspace, "crash", ANNOTATORS, TASKS, seed=1)
    with annotate_server(workspace, free_port()) as server:
        yield server, db_path


def stored(db_path, campaign: str) -> dict:
    """What SQLite holds for `campaign`: answers per annotator, per (item, task) of regular items, item stages."""
    with closing(sqlite3.connect(db_path)) as conn:
        per_annotator = dict(conn.execute(
            "select n.external_id, count(*) from answers a join annotators n on n.id = a.annotator_id "
            "join campaigns c on c.id = a.campaign_id where c.name = ? group by n.id", (campaign,)))
        per_task = conn.execute(
            "select a.item_id, a.stage, count(*) from answers a join items i on i.id = a.item_id join campaigns c "
            "on c.id = i.campaign_id where c.name = ? and i.gold = 0 group by a.item_id, a.stage",
            (campaign,)).fetchall()
        stages = {row[0] for row in conn.execute(
            "select i.stage from items i join campaigns c on c.id = i.campaign_id where c.name = ? and i.gold = 0",
            (campaign,))}
    return {"per_annotator": per_annotator, "per_task": per_task, "stages": stages}


def assert_nothing_lost(run, db_path, campaign: str) -> None:
    """Every answer a client saw acknowledged (or was shown stored) is a row, and no other; each of the crowd's
    sessions has exactly its tasks; every (item, task) has exactly the overlap; the campaign is finished."""
    everyone = run.result["annotators"] + run.closers
    acknowledged = sum(sent.acked or sent.fate == "stored" for a in everyone for sent in a.sent)
    rows = stored(db_path, campaign)
    assert sum(rows["per_annotator"].values()) == acknowledged == run.audit.rows
    assert {a.name: rows["per_annotator"][a.name] for a in run.result["annotators"]} == \
        {a.name: TASKS for a in run.result["annotators"]}
    assert all(a.finished for a in run.result["annotators"])
    assert rows["per_task"] and {count for _, _, count in rows["per_task"]} == {CONFIG["overlap"]}
    assert rows["stages"] <= {"done", "dropped"}
    assert run.audit.ok, [text for text, ok in run.audit.checks if not ok]
    assert run.audit.lost == run.audit.phantom == run.audit.twice == run.audit.off_overlap == []


def test_a_crowd_at_work_gets_every_answer_stored_once_and_every_item_its_overlap(crowd_server, tmp_path):
    server, db_path = crowd_server
    run = load_run(server, db_path, "calm", ANNOTATORS, TASKS, THINK)
    assert run.failures == {}
    assert run.audit.stored_unacknowledged == 0 and run.audit.resumes == 0
    assert_nothing_lost(run, db_path, "calm")
    # The audit sees a lost answer: the same store with one acknowledged answer deleted.
    tampered = tmp_path / "tampered.db"
    with closing(sqlite3.connect(db_path)) as source, closing(sqlite3.connect(tampered)) as copy:
        source.backup(copy)
        token = copy.execute("select max(assignment_id) from answers a join campaigns c on c.id = a.campaign_id "
                             "where c.name = 'calm' and a.source = 'annotator'").fetchone()[0]
        copy.execute("delete from answers where assignment_id = ?", (token,))
        copy.commit()
    damaged = audit(tampered, "calm", run.result["annotators"] + run.closers, finished=True)
    assert damaged.lost == [token] and not damaged.ok


def test_a_kill_9_mid_load_loses_nothing_and_everyone_resumes_at_their_next_task(crowd_server):
    server, db_path = crowd_server
    first_pid = server.pid
    run = load_run(server, db_path, "crash", ANNOTATORS, TASKS, THINK, crash=Crash(after_answers=15))
    assert server.pid != first_pid and run.crash.killed_at  # it was killed and restarted, mid-load:
    assert 15 <= run.crash.acknowledged_at_kill < ANNOTATORS * TASKS
    assert "unexpected" not in run.failures
    resumed = [resume for a in run.result["annotators"] for resume in a.resumes]
    at_work = [a for a in run.result["annotators"] if any(s.started >= run.crash.killed_at for s in a.sent)]
    assert at_work and all(a.resumes for a in at_work)  # everyone still at work came back after the restart
    assert all(resume.at_next_task for resume in resumed)
    assert {sent.fate for _, sent in in_flight(run.result["annotators"], run.crash)} <= {"stored", "re-asked"}
    assert_nothing_lost(run, db_path, "crash")
