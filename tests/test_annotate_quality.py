"""Quality and abuse on a real SQLite store: the minimum time per task (refused, counted, flagged for speed, in the
annotator table), undo of one's own last answer while its slot is open, the cap on tasks one client holds and the
quick reclaim of holds nobody started. Times are passed in (`now`), so nothing sleeps."""
from __future__ import annotations

import pytest

from backend.annotate import assign, db, report, resume
from backend.annotate.prolific import Identity
from backend.annotate.quality import HELD_SESSIONS_PER_CLIENT, SPEED_FLAG_AFTER, UNSTARTED_RECLAIM_S
from backend.annotate.undo import undo_last
from tests.support.assign_campaign import make_campaign, truthful


def held(path, who) -> int:
    return db.rows(path, "select count(*) n from assignments where annotator_id = ? and status in ('reserved', "
                         "'held')", (who,))[0]["n"]


def test_an_answer_faster_than_the_minimum_is_refused_counted_and_flags_the_annotator_for_speed(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=6, overlap=1, tasks_per_session=4, min_seconds_per_task=2)
    bot, person = assign.join(path, campaign_id, "bot"), assign.join(path, campaign_id, "person")
    shown = assign.serve(path, bot, now=100.0)
    refused = assign.submit(path, bot, shown.assignment_id, "2", now=100.4)
    assert not refused.recorded and "You answered in 0.4 s" in refused.message and "at least 2 s" in refused.message
    assert db.rows(path, "select count(*) n from answers")[0]["n"] == 0, "nothing stored"
    again = assign.serve(path, bot, now=100.5)
    assert (again.assignment_id, again.number) == (shown.assignment_id, 1), "the task stays, the counter too"
    for moment in (101.0, 102.0):  # shown again from 100.5, then from each refusal's serve
        assert not assign.submit(path, bot, again.assignment_id, "2", now=moment).recorded
        again = assign.serve(path, bot, now=moment)
    assert assign.submit(path, bot, again.assignment_id, "2", now=104.5).recorded, "2.5 s after it was shown"
    first = assign.serve(path, person, now=200.0)
    assert assign.submit(path, person, first.assignment_id, truthful(first), now=203.0).recorded

    table = {row["annotator"]: row for row in report.status(path, "c1")["annotators"]}
    assert table["bot"]["too_fast"] == SPEED_FLAG_AFTER == 3 and table["bot"]["flags"] == ["speed"]
    assert table["bot"]["flagged"] and not table["person"]["flagged"] and table["person"]["too_fast"] == 0
    assert table["person"]["median_ms"] == 3000
    text = report.to_markdown(report.status(path, "c1"))
    assert "median time per task | too fast | flagged" in text
    assert "| bot | local | 1 | 4 | 3 | 0 | n/a | 2.5 s | 3 | SPEED |" in text


def test_no_minimum_by_default_and_a_bad_minimum_is_refused(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=1)
    who = assign.join(path, campaign_id, "ann")
    shown = assign.serve(path, who, now=0.0)
    assert assign.submit(path, who, shown.assignment_id, "2", now=0.01).recorded
    with pytest.raises(ValueError, match="min_seconds_per_task must be in"):
        make_campaign(tmp_path / "bad", min_seconds_per_task=-1)


def test_undo_takes_back_ones_own_last_answer_while_its_slot_is_open(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=3, overlap=2, tasks_per_session=6)
    ann, bob = assign.join(path, campaign_id, "ann"), assign.join(path, campaign_id, "bob")
    with pytest.raises(assign.TaskError, match="no answer of yours to undo"):
        undo_last(path, ann)
    first = assign.serve(path, ann, now=1.0)
    assign.submit(path, ann, first.assignment_id, "3", now=2.0)  # mis-keyed
    second = assign.serve(path, ann, now=2.0)
    assert second.number == 2
    assert undo_last(path, ann, now=3.0) == first.assignment_id
    back = assign.serve(path, ann, now=3.0)
    assert (back.assignment_id, back.number, back.total) == (first.assignment_id, 1, 3), "the counter goes back"
    assert [row["source"] for row in db.rows(path, "select source from answers")] == ["undone"]
    assert assign.submit(path, ann, first.assignment_id, "2", now=4.0).recorded, "answered again, once"
    assert assign.serve(path, ann, now=4.0).assignment_id == second.assignment_id, "then the task shown next"
    # bob's answer to the same item decides it: ann's answer was used, it can no longer be undone
    bobs = assign.serve(path, bob, now=5.0)
    while bobs.item_id != first.item_id or bobs.task != first.task:
        assign.submit(path, bob, bobs.assignment_id, "2", now=5.0)
        bobs = assign.serve(path, bob, now=5.0)
    assign.submit(path, bob, bobs.assignment_id, "2", now=6.0)
    assert db.rows(path, "select stage from items where id = ?", (first.item_id,))[0]["stage"] == "selected"
    with pytest.raises(assign.TaskError, match="already used to decide its item"):
        undo_last(path, bob)
    decided = report.status(path, "c1")["answers"]
    assert decided["select"] == sum(1 for r in db.rows(path, "select source from answers") if r["source"] ==
                                    "annotator"), "the undone answer counts nowhere"


def test_undo_is_refused_once_the_session_is_complete(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=1, tasks_per_session=2)
    who = assign.join(path, campaign_id, "ann")
    for moment in (1.0, 2.0):
        shown = assign.serve(path, who, now=moment)
        assign.submit(path, who, shown.assignment_id, "none", now=moment)
    assert assign.serve(path, who, now=3.0) == assign.Ended("done", 2, 2)
    with pytest.raises(assign.TaskError, match="session is complete"):
        undo_last(path, who)
    assert assign.serve(path, who, now=4.0) == assign.Ended("done", 2, 2)


def test_one_client_holds_at_most_two_sessions_and_unstarted_holds_come_back_quickly(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=40, overlap=1, tasks_per_session=5)
    hoarder = [resume.enter(path, campaign_id, Identity(f"{k:024x}", "prolific"), client="203.0.113.7").annotator_id
               for k in range(6)]
    shown = [assign.serve(path, who, now=10.0) for who in hoarder]
    assert [isinstance(s, assign.Task) for s in shown] == [True] * HELD_SESSIONS_PER_CLIENT + [False] * 4
    assert shown[-1] == assign.Ended("limit", 0, None)
    assert sum(held(path, who) for who in hoarder) == HELD_SESSIONS_PER_CLIENT * 5
    stored = db.rows(path, "select distinct client from annotators where client is not null")
    assert len(stored) == 1 and "203.0.113" not in stored[0]["client"], "the address is kept hashed only"
    other = resume.enter(path, campaign_id, Identity("f" * 24, "prolific"), client="198.51.100.1").annotator_id
    assert isinstance(assign.serve(path, other, now=11.0), assign.Task), "another client is not held back"
    # the hoarder's pages stay open but nobody answers: their holds come back long before reclaim_after_s
    later = 10.0 + UNSTARTED_RECLAIM_S + 1
    newcomer = resume.enter(path, campaign_id, Identity("e" * 24, "prolific"), client="192.0.2.5").annotator_id
    assign.serve(path, newcomer, now=later)
    assert sum(held(path, who) for who in hoarder) == 0 and held(path, other) == 5, "who answered nothing"


def test_the_command_line_sets_the_minimum_and_status_shows_time_per_task_and_speed_flags(tmp_path, monkeypatch,
                                                                                           capsys):
    from backend.annotate import campaigns
    from backend.cli import main

    monkeypatch.setenv("COMPLAB_WORKSPACE", str(tmp_path / "ws"))
    store = tmp_path / "ws" / "lab.db"
    assert main(["campaign", "create", "timed", "--items", "2", "--min-seconds", "1.5", "--db", str(store)]) == 0
    assert campaigns.get(store, "timed")["config"].min_seconds_per_task == 1.5
    assert main(["campaign", "create", "rushed", "--items", "2", "--min-seconds", "-1", "--db", str(store)]) == 2
    assert "min_seconds_per_task must be in [0, 600], not -1.0" in capsys.readouterr().err
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=1, min_seconds_per_task=5)
    who = assign.join(path, campaign_id, "quick")
    shown = assign.serve(path, who, now=0.0)
    for _ in range(SPEED_FLAG_AFTER):
        assign.submit(path, who, shown.assignment_id, "2", now=0.1)
    assert main(["campaign", "status", "c1", "--db", path]) == 0
    printed = capsys.readouterr().out
    assert "| median time per task | too fast | flagged |" in printed and "| 3 | SPEED |" in printed
