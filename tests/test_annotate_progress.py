"""The answers a campaign still needs (`progress.remaining`), on a real SQLite store, against counts worked out by
hand: items x overlap per step, minus what is stored; what is reserved or held counted apart; a tie asks for one
more; a dropped item asks for nothing more; gold items are left out."""
from __future__ import annotations

from backend.annotate import assign, campaigns, progress, queries, report
from tests.support.assign_campaign import make_campaign, truthful


def left(path: str) -> dict:
    campaign = campaigns.get(path, "c1")
    return progress.remaining(path, campaign["id"], campaign["config"])


def answer(path: str, who: int, n: int, choose=truthful, now: float = 100.0) -> None:
    for _ in range(n):
        task = assign.next_task(path, who, now=now)
        assert task is not None
        assert assign.submit(path, who, task.assignment_id, choose(task), now=now + 5).recorded


def test_a_new_campaign_needs_items_times_overlap_at_every_step_and_gold_counts_for_nothing(tmp_path):
    path, _ = make_campaign(tmp_path, n_items=4, n_gold=2, overlap=2)
    state = left(path)
    assert state["select"] == {"target": 8, "answered": 0, "needed": 8, "in_progress": 0, "unclaimed": 8}
    assert state["ambiguity"]["needed"] == 8 and "t2i" not in state
    assert state["total"] == {"target": 16, "answered": 0, "needed": 16, "in_progress": 0, "unclaimed": 16}
    assert progress.to_markdown(state).startswith("**16 answers still needed** (0 of them reserved or held")


def test_reserved_tasks_are_on_their_way_and_stored_answers_are_no_longer_needed(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=4, overlap=2, tasks_per_session=3)
    ann = assign.join(path, campaign_id, "ann")
    answer(path, ann, 1)  # the session reserved 3 select tasks; one of them is answered
    state = left(path)["select"]
    assert state == {"target": 8, "answered": 1, "needed": 7, "in_progress": 2, "unclaimed": 5}
    text = report.to_markdown(report.status(path, "c1"))
    assert "**15 answers still needed** (2 of them reserved or held by participants now): select 7 of 8 (2 " \
           "reserved or held now), ambiguity 8 of 8." in text
    assert report.status(path, "c1")["places"]["answers_left"] == left(path)["total"]["unclaimed"] == 13


def test_a_finished_item_needs_nothing_a_tie_one_more_and_a_dropped_item_no_next_step(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=1, overlap=2, resolution="third", human_baseline=True)
    first, second = (assign.join(path, campaign_id, who) for who in ("a", "b"))
    answer(path, first, 1)  # image 2
    answer(path, second, 1, choose=lambda task: "none")  # a tie: a third annotator is called
    state = left(path)
    assert state["select"]["needed"] == 1 and state["ambiguity"]["needed"] == 2 and state["i2t"]["needed"] == 2
    assert state["total"]["needed"] == 1 + 2 + 2 + 2
    third = assign.join(path, campaign_id, "c")
    answer(path, third, 1, choose=lambda task: "none")  # "none" wins: the item is dropped at step 3
    assert queries.items(path, campaign_id)[0]["stage"] == "dropped" and left(path)["total"]["needed"] == 0
    assert left(path)["select"]["answered"] == 3
    assert progress.to_markdown(left(path)).startswith("**0 answers still needed**")
