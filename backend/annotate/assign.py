"""Server-side assignment: who answers what, exactly N times per item and task, even under concurrency.

A task given to an annotator is a row in ``assignments``: reserved, held
(on screen), then answered; or released when its holder was away longer than
the campaign's ``reclaim_after_s``. Reserved, held and answered rows all count
towards an item's overlap, so concurrent submits can neither over- nor
under-collect: every read-decide-write runs inside ``BEGIN IMMEDIATE``
(`db.write`). The unique key (item, task, annotator) means nobody gets the same
item and task twice, and a repeated submit of an answered task (a double click,
a network retry) records nothing. A reload asks for the next task and gets the
held one back.

The session contract (a paid participant must never be told "done" for work
that was not there): a session's length (``annotators.quota``) is fixed when it
starts, from the open tasks reserved for it there and then (at most
``tasks_per_session``), and the session is over only once that many answers
are stored. A newcomer with nothing to reserve is told the study is full (no
code) when nobody else holds a task, else to wait (`Ended`): others' answers
open the next step's tasks and an absent holder's tasks come back. While others
still hold tasks, a newcomer starts only with at least half a session's tasks
(`MIN_SESSION_SHARE`; half of what the campaign could still give them, when
that is less), so a step opening item by item does not hand out one-task
sessions. Someone away longer than ``reclaim_after_s`` loses what they
had reserved to others; back, they get it again where it is still open, or new
tasks, keeping their session's length.

Tasks, in BiVLC's words: ``select`` (step 3: which of the images shows the
negative caption, or none), ``ambiguity`` (step 4: the original caption with
the original and chosen images, left/right in random order), and the optional
human baseline ``i2t`` and ``t2i``; a validation campaign's one task, ``validate`` (is the generated negative
false of the image?).
"""
from __future__ import annotations

import json
import math
import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from backend.annotate import db, gold, quality
from backend.annotate.resolution import record_outcome
from backend.annotate.tasks import Task, TaskError, choice_of, correct, layout_of, view

TASK_OF_STAGE = {"generated": ("select",), "selected": ("ambiguity",), "unambiguous": ("t2i", "i2t"),
                 "ready": ("validate",)}  # ready: a validation campaign's item (`backend.annotate.validation`)
PRIORITY = ("t2i", "i2t", "ambiguity", "select", "validate")  # later steps first, so items finish
TAKEN = "('reserved', 'held', 'answered')"  # the statuses that count towards an item's overlap
DONE = "('answered', 'excluded')"  # the statuses that count towards a session (excluded: `annotate.exclusion`)
MIN_SESSION_SHARE = 0.5  # while others hold tasks, a session starts only with this share of tasks_per_session


@dataclass(frozen=True)
class Ended:
    """No task to show: ``done`` (every answer of the session stored: the completion code may be shown),
    ``wait`` (tasks exist but others hold them: ask again soon), ``full`` (no work for this person) or
    ``limit`` (this person's client holds as many tasks as one client may, `backend.annotate.quality`)."""

    state: str
    answered: int
    quota: int | None  # the session's length; None: it never started


@dataclass(frozen=True)
class Submitted:
    recorded: bool
    message: str = ""


def join(store_path: Path | str, campaign_id: int, external_id: str, source: str = "local",
         study_id: str = "", session_id: str = "") -> int:
    """The annotator's id in this campaign, created on first visit (a Prolific PID or a local name). Trusts its
    caller; whether a visitor may continue someone's session is `backend.annotate.resume.enter`'s question."""
    with db.write(store_path) as conn:
        return joined(conn, campaign_id, external_id, source, study_id, session_id)


def joined(conn: sqlite3.Connection, campaign_id: int, external_id: str, source: str = "local",
           study_id: str = "", session_id: str = "", resume_hash: str | None = None) -> int:
    """`join` inside the caller's write transaction; a new annotator gets `resume_hash`."""
    external_id = external_id.strip()
    if not external_id:
        raise TaskError("a name (or a Prolific ID) is needed to start")
    conn.execute("insert or ignore into annotators (campaign_id, external_id, source, study_id, session_id, "
                 "started_at, resume_hash) values (?,?,?,?,?,?,?)",
                 (campaign_id, external_id, source, study_id, session_id, time.time(), resume_hash))
    annotator_id = conn.execute("select id from annotators where campaign_id = ? and external_id = ?",
                                (campaign_id, external_id)).fetchone()[0]
    db.changed(conn, "annotators", annotator_id)
    return annotator_id


def next_task(store_path: Path | str, annotator_id: int, now: float | None = None) -> Task | None:
    """The annotator's current task (see `serve`); None when there is none to show now."""
    shown = serve(store_path, annotator_id, now)
    return shown if isinstance(shown, Task) else None


def serve(store_path: Path | str, annotator_id: int, now: float | None = None) -> Task | Ended:
    """The annotator's current task: the one on screen, else the next one reserved for their session (a new
    session reserves its tasks first); or why there is none (`Ended`)."""
    now = time.time() if now is None else now
    with db.write(store_path) as conn:
        annotator, config = _annotator(conn, annotator_id)
        _release_idle(conn, annotator["campaign_id"], config, now)
        conn.execute("update annotators set last_seen = ? where id = ?", (now, annotator_id))
        answered = _answered(conn, annotator_id)
        quota = annotator["quota"]
        if quota is not None and answered >= quota:
            conn.execute("update annotators set finished_at = coalesce(finished_at, ?) where id = ?",
                         (now, annotator_id))
            db.changed(conn, "annotators", annotator_id)
            return Ended("done", answered, quota)
        row = _held(conn, annotator_id, now) or _take_reserved(conn, annotator_id, now)
        if row is None:
            busy = _others_hold(conn, annotator)
            wanted = min((quota if quota is not None else config["tasks_per_session"]) - answered,
                         quality.client_room(conn, annotator, config))
            if wanted <= 0:
                return Ended("limit", answered, quota)
            least = math.ceil(MIN_SESSION_SHARE * min(wanted, _still_to_come(conn, annotator, config))) \
                if quota is None and busy else 1
            reserved = _reserve(conn, annotator, config, answered, wanted, least)
            if reserved and quota is None:  # a new session: a gold task in its first quarter
                gold.place_early(conn, annotator, config)
                quota = answered + reserved
                conn.execute("update annotators set quota = ? where id = ?", (quota, annotator_id))
                db.changed(conn, "annotators", annotator_id)
            row = _take_reserved(conn, annotator_id, now)
        if row is None:
            return Ended("wait" if busy else "full", answered, quota)
        return view(conn, row, config, _answered(conn, row["annotator_id"]) + 1, quota)


def submit(store_path: Path | str, annotator_id: int, assignment_id: int, answer: str,
           now: float | None = None) -> Submitted:
    """Record an answer once. The time taken is measured on the server, from when the task was shown."""
    now = time.time() if now is None else now
    with db.write(store_path) as conn:
        row = conn.execute("select * from assignments where id = ?", (assignment_id,)).fetchone()
        if row is None or row["annotator_id"] != annotator_id:
            raise TaskError("this task is not yours")  # never says whose it is
        if row["status"] == "answered":
            return Submitted(False, "already recorded")
        if row["status"] == "reserved":
            raise TaskError("this task is not on your screen yet")
        layout = json.loads(row["layout"])
        n_images = conn.execute("select count(*) from candidates where item_id = ?", (row["item_id"],)).fetchone()[0]
        choice = choice_of(row["stage"], layout, answer, n_images)
        item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
        annotator, config = _annotator(conn, annotator_id)
        aside = annotator["excluded"] is not None  # an excluded annotator's answers are set aside as they come
        too_fast = quality.pace_refusal(conn, annotator_id, row["assigned_at"], config, now)
        if too_fast:
            db.changed(conn, "annotators", annotator_id)
            return Submitted(False, too_fast)
        if row["status"] == "released" and not _has_room(conn, item, row["stage"], config):
            return Submitted(False, f"this task went to someone else after {config['reclaim_after_s'] / 60:g} "
                                    "minutes away; your answer was not needed")
        conn.execute("update assignments set status = ?, answered_at = ? where id = ?",
                     ("excluded" if aside else "answered", now, assignment_id))
        answer_id = db.insert(
            conn, "insert into answers (assignment_id, campaign_id, item_id, stage, annotator_id, choice, correct, "
            "time_ms, source, created_at) values (?,?,?,?,?,?,?,?,?,?)",
            (assignment_id, row["campaign_id"], row["item_id"], row["stage"], annotator_id, choice,
             correct(item, row["stage"], layout, choice), int(1000 * (now - row["assigned_at"])),
             "excluded" if aside else "annotator", now))
        if not item["gold"] and not aside:
            record_outcome(conn, item["id"], row["stage"], config, now)
        for table, row_id in (("assignments", assignment_id), ("answers", answer_id), ("items", item["id"])):
            db.changed(conn, table, row_id)
    return Submitted(True)


def _annotator(conn: sqlite3.Connection, annotator_id: int) -> tuple[sqlite3.Row, dict]:
    row = conn.execute("select a.*, c.config from annotators a join campaigns c on c.id = a.campaign_id "
                       "where a.id = ?", (annotator_id,)).fetchone()
    if row is None:
        raise TaskError("unknown annotator; start again from the study link")
    return row, json.loads(row["config"])


def _answered(conn: sqlite3.Connection, annotator_id: int) -> int:
    return conn.execute(f"select count(*) from assignments where annotator_id = ? and status in {DONE}",
                        (annotator_id,)).fetchone()[0]


def _release_idle(conn: sqlite3.Connection, campaign_id: int, config: dict, now: float) -> None:
    """Give back what annotators away longer than ``reclaim_after_s`` reserved or held (a returned or timed-out
    submission, a closed tab): others may take it now. Every request runs it, so it goes through the idle
    annotators' rows (index on annotator and status), never the campaign's whole assignment table."""
    conn.execute("update assignments set status = 'released' where annotator_id in (select id from annotators "
                 "where campaign_id = ? and coalesce(last_seen, started_at) < ?) and status in ('reserved', 'held')",
                 (campaign_id, now - config["reclaim_after_s"]))
    quality.release_unstarted(conn, campaign_id, now)


def _held(conn: sqlite3.Connection, annotator_id: int, now: float) -> sqlite3.Row | None:
    """The task this annotator holds (a reload resumes it); it counts as shown again from now."""
    row = conn.execute("select * from assignments where annotator_id = ? and status = 'held'",
                       (annotator_id,)).fetchone()
    if row is not None:
        conn.execute("update assignments set assigned_at = ? where id = ?", (now, row["id"]))
    return row


def _take_reserved(conn: sqlite3.Connection, annotator_id: int, now: float) -> sqlite3.Row | None:
    """The next task reserved for this annotator's session, now on screen (held)."""
    row = conn.execute("select id from assignments where annotator_id = ? and status = 'reserved' order by id "
                       "limit 1", (annotator_id,)).fetchone()
    if row is None:
        return None
    conn.execute("update assignments set status = 'held', assigned_at = ? where id = ?", (now, row["id"]))
    return conn.execute("select * from assignments where id = ?", (row["id"],)).fetchone()


def _others_hold(conn: sqlite3.Connection, annotator: sqlite3.Row) -> bool:
    """Whether someone else holds or reserved a task of this campaign (so more may open, or come back)."""
    return conn.execute("select 1 from assignments where campaign_id = ? and annotator_id != ? and status in "
                        "('reserved', 'held') limit 1", (annotator["campaign_id"], annotator["id"])).fetchone() \
        is not None


def _still_to_come(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> int:
    """The most tasks the campaign could still give one person: its items with images that are not finished,
    times the steps each has left (a person answers each item's step once)."""
    steps = {"generated": 2, "selected": 1, "unambiguous": 0, "ready": 1}
    baseline = 2 if config["human_baseline"] else 0
    return sum((steps[row["stage"]] + baseline * (row["stage"] != "ready")) * row["n"] for row in conn.execute(
        "select stage, count(*) n from items where campaign_id = ? and gold = 0 and stage in ('generated', "
        "'selected', 'unambiguous', 'ready') group by stage", (annotator["campaign_id"],)))


def _has_room(conn: sqlite3.Connection, item: sqlite3.Row, task: str, config: dict) -> bool:
    if item["gold"]:
        return True
    if task not in TASK_OF_STAGE.get(item["stage"], ()):
        return False
    taken = conn.execute(f"select count(*) from assignments where item_id = ? and stage = ? and status in {TAKEN}",
                         (item["id"], task)).fetchone()[0]
    return taken < config["overlap"] + item["extra_answers"]


def _reserve(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict, answered: int, wanted: int,
             least: int) -> int:
    """Reserve up to `wanted` tasks for the annotator's session (their own released tasks first, gold at the
    campaign's rate: `backend.annotate.gold`), or none at all when fewer than `least` regular tasks are open;
    returns how many. Reservation stops at the first regular task that is missing, so no session is made of gold
    items only."""
    chosen: list[tuple[int, str, int | None, bool]] = []  # (item, task, reused assignment, gold)
    regular = _regular_tasks(conn, annotator, config, wanted)
    offset = gold.phase(quality.campaign_secret(conn, annotator["campaign_id"]), annotator["id"])
    for position in range(answered, answered + wanted):
        choice = _released_again(conn, annotator, config)
        if choice is None and gold.turn(position, config["gold_rate"], offset):
            choice = gold.pick(conn, annotator)
        choice = choice or next(regular, None)
        if choice is None:
            break
        _reserve_one(conn, annotator, *choice)
        chosen.append((*choice, bool(conn.execute("select gold from items where id = ?", (choice[0],)).fetchone()[0])))
    if sum(not gold for *_, gold in chosen) < least:
        for choice in reversed(chosen):
            _unreserve(conn, annotator, choice)
        return 0
    return len(chosen)


def _reserve_one(conn: sqlite3.Connection, annotator: sqlite3.Row, item_id: int, task: str, reuse: int | None) -> None:
    if reuse:
        conn.execute("update assignments set status = 'reserved', assigned_at = null where id = ?", (reuse,))
        return
    secret = quality.campaign_secret(conn, annotator["campaign_id"])  # left/right: not from the public code
    layout = json.dumps(layout_of(task, random.Random(quality.keyed(secret, "layout", item_id, task, annotator["id"]))))
    conn.execute("insert into assignments (campaign_id, item_id, stage, annotator_id, status, layout) "
                 "values (?,?,?,?,'reserved',?)", (annotator["campaign_id"], item_id, task, annotator["id"], layout))


def _unreserve(conn: sqlite3.Connection, annotator: sqlite3.Row, choice: tuple) -> None:
    item_id, task, reuse, _ = choice
    if reuse:
        conn.execute("update assignments set status = 'released' where id = ?", (reuse,))
    else:
        conn.execute("delete from assignments where item_id = ? and stage = ? and annotator_id = ?",
                     (item_id, task, annotator["id"]))


def _released_again(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> tuple | None:
    """A task taken back from this annotator while away, if still unclaimed: they resume where they were."""
    for row in conn.execute("select id, item_id, stage from assignments where annotator_id = ? and status = "
                            "'released' order by id", (annotator["id"],)).fetchall():
        item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
        if _has_room(conn, item, row["stage"], config):
            return row["item_id"], row["stage"], row["id"]
    return None


def _regular_tasks(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict, limit: int) -> Iterator[tuple]:
    """The open (item, task)s nearest completion, best first, for one session's reservation: later steps first,
    then items with most answers. Fresh eyes first: an item this annotator saw in another task (step 3, then its
    step 4) only when nothing else is open, so small crowds still finish. One query per task and pass (not one
    per task reserved: a session's reservation held the write lock 0.27 s on 2,000 items); each runs once the
    previous one's tasks are reserved, so it sees them as seen."""
    for fresh in (True, False):
        for task in PRIORITY:
            stage = next(s for s, tasks in TASK_OF_STAGE.items() if task in tasks)
            seen = "a.annotator_id = :me" if fresh else "a.annotator_id = :me and a.stage = :task"
            rows = conn.execute(
                "select i.id, (select count(*) from assignments a where a.item_id = i.id and a.stage = :task "
                f"and a.status in {TAKEN}) as taken from items i "
                "where i.campaign_id = :campaign and i.gold = 0 and i.stage = :stage and not exists "
                f"(select 1 from assignments a where a.item_id = i.id and {seen}) "
                "and taken < :overlap + i.extra_answers order by taken desc, i.position limit :limit",
                {"task": task, "campaign": annotator["campaign_id"], "stage": stage, "me": annotator["id"],
                 "overlap": config["overlap"], "limit": limit}).fetchall()
            for row in rows:
                yield row[0], task, None


# Prolific (issue 22, item 3: backend.annotate.prolific_study): a submission that ended without its work.
def release_session(conn: sqlite3.Connection, annotator_id: int) -> int:
    """Give back, inside the caller's write transaction, every task the annotator has reserved or on screen:
    their Prolific submission was returned, timed out or rejected, so others may take those tasks now (as
    `_release_idle` does after ``reclaim_after_s``, but at once). Answers stay. Returns how many were freed."""
    return conn.execute("update assignments set status = 'released' where annotator_id = ? and status in "
                        "('reserved', 'held')", (annotator_id,)).rowcount
