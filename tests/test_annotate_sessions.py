"""The session contract on a real SQLite store: a session's length is fixed when it starts (its tasks reserved),
"done" comes only after that many answers, a newcomer with no work is told the study is full, one whose tasks
are held by others waits and then goes on, and someone away too long loses their reservation but not their
session's length. Times are passed in (`now`) so the reclaim rule is exercised without sleeping."""
from __future__ import annotations

from backend.annotate import assign, db, report
from tests.support.assign_campaign import make_campaign, truthful


def serve_and_answer(path, who, now, limit=100) -> int:
    """Answer (truthfully) every task the server shows `who` at time `now`; the number answered."""
    done = 0
    while done < limit:
        shown = assign.serve(path, who, now=now)
        if not isinstance(shown, assign.Task):
            return done
        assert assign.submit(path, who, shown.assignment_id, truthful(shown), now=now).recorded
        done += 1
    return done


def test_a_session_is_as_long_as_its_reservation_and_a_newcomer_waits_then_goes_on(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=6, overlap=1, tasks_per_session=4)
    ann, bob, cat = (assign.join(path, campaign_id, name) for name in ("ann", "bob", "cat"))
    first = assign.serve(path, ann, now=0.0)
    assert isinstance(first, assign.Task) and (first.number, first.total) == (1, 4)
    assert db.rows(path, "select count(*) n from assignments where annotator_id = ? and status = 'reserved'",
                   (ann,))[0]["n"] == 3, "the rest of ann's session is kept for her"
    bobs = assign.serve(path, bob, now=1.0)
    assert (bobs.number, bobs.total) == (1, 2), "the two step-3 tasks left: at least half a session"
    waiting = assign.serve(path, cat, now=2.0)
    assert waiting == assign.Ended("wait", 0, None), "every open task is someone's: cat waits, no code"
    assert serve_and_answer(path, ann, now=3.0) == 4
    assert assign.serve(path, ann, now=3.0) == assign.Ended("done", 4, 4)
    assert assign.serve(path, cat, now=4.0).total == 4, "ann's answers opened step 4: cat starts with a full session"
    assert serve_and_answer(path, bob, now=5.0) == 2 and assign.serve(path, bob, now=5.0).state == "done"


def test_a_newcomer_to_a_finished_campaign_is_told_it_is_full_and_is_never_finished(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=1, tasks_per_session=10)
    ann = assign.join(path, campaign_id, "ann")
    assert serve_and_answer(path, ann, now=0.0) == 2  # step 3 of both items: all that was open at her start
    bob = assign.join(path, campaign_id, "bob")
    assert serve_and_answer(path, bob, now=1.0) == 2  # step 4 of both
    late = assign.join(path, campaign_id, "late")
    assert assign.serve(path, late, now=2.0) == assign.Ended("full", 0, None)
    table = {row["annotator"]: row for row in report.status(path, "c1")["annotators"]}
    assert (table["late"]["finished"], table["late"]["session"], table["late"]["answered"]) == (False, None, 0)
    assert table["ann"]["finished"] and table["bob"]["finished"]


def test_someone_away_too_long_loses_their_reserved_tasks_but_keeps_their_sessions_length(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=12, overlap=1, tasks_per_session=4, reclaim_after_s=60)
    ann, bob = (assign.join(path, campaign_id, name) for name in ("ann", "bob"))
    task = assign.serve(path, ann, now=0.0)
    assign.submit(path, ann, task.assignment_id, "2", now=0.0)
    assert assign.serve(path, bob, now=10.0).total == 4  # four step-3 tasks were still free
    assert assign.serve(path, bob, now=100.0).total == 4  # bob is back; ann has been away 100 s: hers go free
    newcomer = assign.join(path, campaign_id, "newcomer")
    assert assign.serve(path, newcomer, now=100.0).total == 4, "ann's three reserved tasks and one more"
    back = assign.serve(path, ann, now=101.0)
    assert isinstance(back, assign.Task) and (back.number, back.total) == (2, 4), "new tasks, her session still 4"
    assert back.item_id not in {row["item_id"] for row in db.rows(path, "select item_id from assignments where "
                                                                  "annotator_id = ?", (newcomer,))}


def test_a_reload_shows_the_same_task_and_a_reserved_task_cannot_be_answered_unseen(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=4, overlap=1, tasks_per_session=3)
    ann = assign.join(path, campaign_id, "ann")
    shown = assign.serve(path, ann, now=0.0)
    assert assign.serve(path, ann, now=1.0) == shown
    unseen = db.rows(path, "select id from assignments where annotator_id = ? and status = 'reserved' limit 1",
                     (ann,))[0]["id"]
    try:
        assign.submit(path, ann, unseen, "2", now=1.0)
        raise AssertionError("a reserved task was answered before it was shown")
    except assign.TaskError as error:
        assert "not on your screen" in str(error)
    assert db.rows(path, "select count(*) n from answers")[0]["n"] == 0


def test_places_count_items_times_overlap_times_steps_over_a_full_sessions_regular_tasks(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=10, n_gold=3, overlap=2, tasks_per_session=8,
                                      gold_rate=0.25)
    room = report.status(path, "c1")["places"]
    assert room == {"answers": 40, "per_session": 6, "places": 7, "answers_left": 40, "places_left": 7}
    ann = assign.join(path, campaign_id, "ann")
    assign.serve(path, ann, now=0.0)  # reserves 6 regular tasks and 2 gold ones
    assert report.status(path, "c1")["places"]["answers_left"] == 34
    text = report.to_markdown(report.status(path, "c1"))
    assert "Prolific places: **7** in all" in text and "**6** still to fill" in text
