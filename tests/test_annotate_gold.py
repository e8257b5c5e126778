"""Gold tasks in every session on a real SQLite store: at least one in the first quarter of each session of four
tasks or more (a bot that answers a few tasks and leaves still meets a check), at positions nobody can compute
from the public code, and the gold rate kept."""
from __future__ import annotations

from collections import Counter

from backend.annotate import assign, db, gold
from tests.support.assign_campaign import make_campaign, truthful


def walk(path, annotator) -> list[bool]:
    """Answer a whole session as a careful person; whether each task shown, in order, was a gold one."""
    shown = []
    while isinstance(task := assign.serve(path, annotator), assign.Task):
        shown.append(bool(db.rows(path, "select gold from items where id = ?", (task.item_id,))[0]["gold"]))
        assert assign.submit(path, annotator, task.assignment_id, truthful(task)).recorded
    return shown


def test_every_session_has_a_gold_task_in_its_first_quarter(tmp_path):
    early_at: Counter[int] = Counter()
    sessions = 0
    for length in (4, 5, 7, 8, 12, 20, 50):
        folder = tmp_path / f"s{length}"
        folder.mkdir()
        path, campaign_id = make_campaign(folder, n_items=150, n_gold=12, overlap=3, gold_rate=0.1,
                                          tasks_per_session=length)
        for k in range(6):  # 42 sessions: each walk answers every task through SQLite
            shown = walk(path, assign.join(path, campaign_id, f"p{k}"))
            assert len(shown) == length, "a full session (the campaign has room)"
            first = shown.index(True)
            assert first < length // 4, f"session of {length}: first gold task at {first}, {shown}"
            early_at[first] += 1
            sessions += 1
            if length >= 10:  # the rate is kept (about 1 in 10), not replaced by the early one
                assert sum(shown) in (length // 10, length // 10 + 1), shown
    assert sessions == 42
    assert len(early_at) >= 3, f"the early gold task is not always at the same place: {early_at}"


def test_a_short_session_gets_gold_even_where_the_rate_gives_it_none(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=60, n_gold=5, overlap=2, gold_rate=0.05,
                                      tasks_per_session=4)
    for k in range(10):
        shown = walk(path, assign.join(path, campaign_id, f"p{k}"))
        assert len(shown) == 4 and shown[0] and sum(shown) == 1, shown  # first quarter of 4 tasks: the first


def test_no_gold_without_gold_items_or_below_four_tasks(tmp_path):
    path, campaign_id = make_campaign(tmp_path, n_items=20, n_gold=0, overlap=1, gold_rate=0.1, tasks_per_session=8)
    assert walk(path, assign.join(path, campaign_id, "p")) == [False] * 8
    short, short_id = make_campaign(tmp_path / "short", n_items=20, n_gold=4, overlap=1, gold_rate=0.01,
                                    tasks_per_session=3)
    who = assign.join(short, short_id, "p")
    shown = walk(short, who)
    secret = bytes.fromhex(db.rows(short, "select secret from campaigns")[0]["secret"])
    assert shown == [gold.turn(k, 0.01, gold.phase(secret, who)) for k in range(3)], "the rate alone"
    rateless, rateless_id = make_campaign(tmp_path / "rateless", n_items=20, n_gold=4, overlap=1, gold_rate=0.0,
                                          tasks_per_session=8)
    assert walk(rateless, assign.join(rateless, rateless_id, "p")) == [False] * 8, "gold_rate 0: no gold at all"


def test_where_the_checks_fall_depends_on_the_campaigns_secret():
    one, other = b"1" * 32, b"2" * 32
    phases = [gold.phase(one, k) for k in range(200)]
    assert phases != [gold.phase(other, k) for k in range(200)]
    assert phases == [gold.phase(one, k) for k in range(200)], "stable for the same secret"
    assert all(0 <= p < 1 for p in phases)
    assert {gold.early_position(40, one, k) for k in range(200)} == set(range(10))


def layouts(path) -> dict:
    return {(row["item_id"], row["stage"], row["annotator_id"]): row["layout"]
            for row in db.rows(path, "select item_id, stage, annotator_id, layout from assignments "
                                     "where stage != 'select'")}


def test_left_and_right_come_from_the_campaigns_secret_not_the_public_code(tmp_path):
    """Two campaigns made with the same public parameters place the images of a pair differently; within one
    campaign the placement is fixed when the task is reserved (kept in its row, so a restart changes nothing)."""
    found = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        path, campaign_id = make_campaign(tmp_path / name, n_items=30, overlap=1, tasks_per_session=60)
        walk(path, assign.join(path, campaign_id, "p"))  # step 3 for all, then step 4 for those selected
        walk(path, assign.join(path, campaign_id, "q"))
        found.append(layouts(path))
    assert found[0].keys() == found[1].keys() and len(found[0]) >= 20
    assert found[0] != found[1], "the same items, annotators and public code: other left/right placements"
