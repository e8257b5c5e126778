"""Assignment on a real SQLite store: exact overlap under concurrency, resume, reclaim, duplicates, gold, stages."""
from __future__ import annotations

import threading
from collections import Counter

import pytest

from backend.annotate import assign, campaigns, db, report, resolution
from tests.support.assign_campaign import make_campaign, truthful


def answer_all(path, annotator, choose, limit=1000):
    done = 0
    while done < limit:
        task = assign.next_task(path, annotator)
        if task is None:
            return done
        assign.submit(path, annotator, task.assignment_id, choose(task))
        done += 1
    return done


def test_items_become_ready_when_all_candidates_exist_and_toy_truth_is_derived(tmp_path):
    path, _ = make_campaign(tmp_path, n_items=2)
    stages = db.rows(path, "select stage, truth from items")
    assert [row["stage"] for row in stages] == ["generated", "generated"]
    assert db.loads(stages[0]["truth"]) == {"select": ["2"], "ambiguity": "original"}
    assert campaigns.image_requests(path, "c1", 4) == []


def test_exact_overlap_under_concurrent_annotators(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=12, overlap=3, tasks_per_session=40, resolution="majority")
    annotators = [assign.join(path, campaign_id, f"worker{k}") for k in range(10)]
    errors = []

    def work(annotator):
        try:
            answer_all(path, annotator, truthful)
        except Exception as error:  # surfaced below: a thread's exception would otherwise vanish
            errors.append(error)
    # An annotator told "no task now" while others still hold the last open slots would come back later:
    # rounds of concurrent work until a round in which nobody got a task (then nothing is left to collect).
    while True:
        before = db.rows(path, "select count(*) n from answers")[0]["n"]
        threads = [threading.Thread(target=work, args=(a,)) for a in annotators]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if db.rows(path, "select count(*) n from answers")[0]["n"] == before:
            break
    assert not errors
    per_item = Counter((row["item_id"], row["stage"]) for row in db.rows(path, "select item_id, stage from answers"))
    assert set(per_item.values()) == {3}, "every item and task got exactly its overlap"
    assert len([key for key in per_item if key[1] == "select"]) == 12
    pairs = db.rows(path, "select item_id, stage, annotator_id, count(*) n from answers group by 1, 2, 3")
    assert max(row["n"] for row in pairs) == 1, "nobody answered the same item and task twice"
    assert {row["stage"] for row in db.rows(path, "select stage from items")} == {"done"}


def test_reload_resumes_the_held_task_and_a_double_submit_records_once(tmp_path):
    path, campaign_id = make_campaign(tmp_path)
    me = assign.join(path, campaign_id, "ann")
    first = assign.next_task(path, me)
    assert assign.next_task(path, me).assignment_id == first.assignment_id  # a reload
    assert assign.submit(path, me, first.assignment_id, "2").recorded
    assert not assign.submit(path, me, first.assignment_id, "3").recorded  # double click / retry
    answers = db.rows(path, "select choice from answers")
    assert [row["choice"] for row in answers] == ["2"]
    assert assign.next_task(path, me).number == 2


def test_an_annotator_cannot_answer_someone_elses_task_or_give_a_bad_answer(tmp_path):
    path, campaign_id = make_campaign(tmp_path)
    alice, mallory = (assign.join(path, campaign_id, name) for name in ("alice", "mallory"))
    task = assign.next_task(path, alice)
    with pytest.raises(assign.TaskError, match="not yours"):
        assign.submit(path, mallory, task.assignment_id, "1")
    with pytest.raises(assign.TaskError, match="not an answer"):
        assign.submit(path, alice, task.assignment_id, "7")
    assert db.rows(path, "select count(*) n from answers")[0]["n"] == 0


def test_abandoned_task_is_reclaimed_and_a_late_answer_is_refused_when_full(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=1, overlap=1, reclaim_after_s=60)
    gone, fresh = (assign.join(path, campaign_id, name) for name in ("gone", "fresh"))
    held = assign.next_task(path, gone, now=1000.0)
    assert assign.next_task(path, fresh, now=1030.0) is None  # still held: no room for a second answer
    taken = assign.next_task(path, fresh, now=1061.0)
    assert taken is not None and taken.item_id == held.item_id
    assign.submit(path, fresh, taken.assignment_id, "2", now=1070.0)
    late = assign.submit(path, gone, held.assignment_id, "2", now=1080.0)
    assert not late.recorded and "someone else" in late.message
    assert db.rows(path, "select count(*) n from answers")[0]["n"] == 1


def test_a_returning_annotator_gets_their_released_task_back_when_still_open(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=2, reclaim_after_s=60)
    me, other = (assign.join(path, campaign_id, name) for name in ("me", "other"))
    held = assign.next_task(path, me, now=0.0)
    assign.next_task(path, other, now=100.0)  # releases mine (away too long); my item still has room
    again = assign.next_task(path, me, now=101.0)
    assert again.assignment_id == held.assignment_id


def test_tie_calls_a_third_annotator_then_majority_moves_the_item_on(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=1, overlap=2, resolution="third")
    a, b, c = (assign.join(path, campaign_id, name) for name in "abc")
    assign.submit(path, a, assign.next_task(path, a).assignment_id, "2")
    assign.submit(path, b, assign.next_task(path, b).assignment_id, "none")
    item = db.rows(path, "select stage, extra_answers from items")[0]
    assert (item["stage"], item["extra_answers"]) == ("generated", 1)
    assign.submit(path, c, assign.next_task(path, c).assignment_id, "2")
    item = db.rows(path, "select stage, outcome from items")[0]
    assert item["stage"] == "selected" and db.loads(item["outcome"])["select"]["decision"] == "2"


def test_ambiguity_step_shows_original_and_chosen_image_and_drops_ambiguous_items(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=2, overlap=1, human_baseline=False)
    me = assign.join(path, campaign_id, "me")
    for _ in range(2):  # fresh eyes: both step-3 tasks before any step 4 of an item already seen
        task = assign.next_task(path, me)
        assert task.task == "select"
        assign.submit(path, me, task.assignment_id, "3")
    other = assign.join(path, campaign_id, "other")
    first = assign.next_task(path, other)
    assert first.task == "ambiguity" and first.text == "A red circle number 0."  # the original caption
    assert sorted(first.images) == ["display/1-2.webp", "originals/0.png"]  # chosen image 3 of item 1
    original_side = "left" if first.images[0].startswith("originals") else "right"
    assign.submit(path, other, first.assignment_id, original_side)
    second = assign.next_task(path, other)
    assign.submit(path, other, second.assignment_id, "both")
    stages = sorted(row["stage"] for row in db.rows(path, "select stage from items"))
    assert stages == ["done", "dropped"]


def test_gold_items_are_served_at_the_rate_and_flag_a_careless_annotator(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=20, n_gold=6, overlap=1, gold_rate=0.25,
                                      tasks_per_session=16, min_gold=2, gold_threshold=0.7)
    careful, careless = (assign.join(path, campaign_id, name) for name in ("careful", "careless"))
    answer_all(path, careful, truthful)
    answer_all(path, careless, lambda task: "none" if task.task == "select" else "both")
    table = {row["annotator"]: row for row in report.status(path, "c1")["annotators"]}
    assert table["careful"]["gold"] == 4 and table["careful"]["gold_accuracy"] == 1.0
    assert table["careless"]["flagged"] and not table["careful"]["flagged"]
    assert table["careful"]["answered"] == 16 and table["careful"]["finished"]
    gold_answers = db.rows(path, "select count(*) n from answers a join items i on i.id = a.item_id where i.gold = 1")
    assert gold_answers[0]["n"] == 8
    status = report.status(path, "c1")
    assert sum(status["stages"].values()) == 20 and status["gold_items"] == 6  # gold is counted apart


def test_admin_override_decides_and_keeps_the_raw_answers(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=1, overlap=1)
    me = assign.join(path, campaign_id, "me")
    assign.submit(path, me, assign.next_task(path, me).assignment_id, "none")
    item_id = db.rows(path, "select id, stage from items")[0]["id"]
    assert db.rows(path, "select stage from items")[0]["stage"] == "dropped"
    assert resolution.override(path, item_id, "select", "2", actor="admin") == "selected"
    sources = [row["source"] for row in db.rows(path, "select source from answers order by id")]
    assert sources == ["annotator", "admin"]
    with pytest.raises(ValueError, match="not a select decision"):
        resolution.override(path, item_id, "select", "9", actor="admin")


def test_human_baseline_asks_separate_i2t_and_t2i_questions_and_measures_accuracy(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=1, overlap=1, human_baseline=True)
    me, other = (assign.join(path, campaign_id, name) for name in ("me", "other"))
    assign.submit(path, me, assign.next_task(path, me).assignment_id, "2")
    assign.submit(path, other, assign.next_task(path, other).assignment_id, truthful(assign.next_task(path, other)))
    assert db.rows(path, "select stage from items")[0]["stage"] == "unambiguous"
    asked = {}
    assert assign.next_task(path, me) is None  # each session was one task long: all that was open when it began
    who = assign.join(path, campaign_id, "newcomer")
    for _ in range(2):
        task = assign.next_task(path, who)
        asked[task.task] = task
        if task.task == "i2t":  # one image, two captions; the right one is the caption of the image shown
            layout = db.loads(db.rows(path, "select layout from assignments where id = ?",
                                      (task.assignment_id,))[0]["layout"])
            assert len(task.images) == 1 and len(task.texts) == 2
            answer = str(layout["texts"].index(layout["image"]) + 1)
        else:  # one caption, two images: answer the wrong side on purpose
            layout = db.loads(db.rows(path, "select layout from assignments where id = ?",
                                      (task.assignment_id,))[0]["layout"])
            assert len(task.images) == 2
            answer = "right" if layout["images"][0] == layout["text"] else "left"
        assign.submit(path, who, task.assignment_id, answer)
    assert set(asked) == {"i2t", "t2i"}
    assert db.rows(path, "select stage from items")[0]["stage"] == "done"
    baseline = report.status(path, "c1")["baseline"]
    assert (baseline["i2t"]["accuracy"], baseline["t2i"]["accuracy"]) == (1.0, 0.0)


def test_step4_cannot_be_overridden_before_an_image_is_chosen(tmp_path):
    path, _ = make_campaign(tmp_path, n_items=1, overlap=1)
    item_id = db.rows(path, "select id from items")[0]["id"]
    with pytest.raises(ValueError, match="no chosen image yet"):
        resolution.override(path, item_id, "ambiguity", "original", actor="admin")
    assert db.rows(path, "select stage from items")[0]["stage"] == "generated"
