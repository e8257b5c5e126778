"""Server-side assignment: who answers what, exactly N times per item and task, even under concurrency.

A task given to an annotator is a row in ``assignments`` (held, then
answered, or released when its holder was away longer than the campaign's
``reclaim_after_s``). Held and answered rows both count towards an item's
overlap, so concurrent submits can neither over- nor under-collect: every
read-decide-write runs inside ``BEGIN IMMEDIATE`` (`db.write`). The unique key
(item, task, annotator) means nobody gets the same item and task twice, and a
repeated submit of an answered task (a double click, a network retry) records
nothing. A reload asks for the next task and gets the held one back.

Tasks, in BiVLC's words: ``select`` (step 3: which of the images shows the
negative caption, or none), ``ambiguity`` (step 4: the original caption with
the original and chosen images, left/right in random order), and the optional
human baseline ``i2t`` and ``t2i``.
"""
from __future__ import annotations

import json
import math
import random
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from backend.annotate import db
from backend.annotate.resolution import record_outcome

TASK_OF_STAGE = {"generated": ("select",), "selected": ("ambiguity",), "unambiguous": ("t2i", "i2t")}
PRIORITY = ("t2i", "i2t", "ambiguity", "select")  # later steps first, so items finish
SIDE_OPTIONS = {"ambiguity": ("left", "right", "both"), "t2i": ("left", "right"), "i2t": ("1", "2")}
KEY_ALIASES = {"l": "left", "r": "right", "b": "both", "n": "none"}  # keys the annotation page sends besides the words


class TaskError(ValueError):
    """An answer that cannot be taken (not this annotator's task, not a valid choice); the message says why."""


@dataclass(frozen=True)
class Task:
    """What one annotator sees for one question. Image paths are relative to the campaign folder."""

    assignment_id: int
    item_id: int
    task: str
    text: str
    texts: tuple[str, ...]  # the two captions of an i2t question
    images: tuple[str, ...]
    options: tuple[str, ...]
    instructions: str
    number: int  # 1-based position in the session
    total: int


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
    """The annotator's current task: the one they hold, else a new one; None when their session is over."""
    now = time.time() if now is None else now
    with db.write(store_path) as conn:
        annotator, config = _annotator(conn, annotator_id)
        row = _held(conn, annotator_id, now) or _allocate(conn, annotator, config, now)
        if row is None:
            conn.execute("update annotators set finished_at = coalesce(finished_at, ?) where id = ?",
                         (now, annotator_id))
            return None
        return _task(conn, row, config)


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
        layout = json.loads(row["layout"])
        n_images = conn.execute("select count(*) from candidates where item_id = ?", (row["item_id"],)).fetchone()[0]
        choice = _choice(row["stage"], layout, answer, n_images)
        item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
        _, config = _annotator(conn, annotator_id)
        if row["status"] == "released" and not _has_room(conn, item, row["stage"], config):
            return Submitted(False, f"this task went to someone else after {config['reclaim_after_s'] / 60:g} "
                                    "minutes away; your answer was not needed")
        conn.execute("update assignments set status = 'answered', answered_at = ? where id = ?", (now, assignment_id))
        answer_id = db.insert(
            conn, "insert into answers (assignment_id, campaign_id, item_id, stage, annotator_id, choice, correct, "
            "time_ms, source, created_at) values (?,?,?,?,?,?,?,?,'annotator',?)",
            (assignment_id, row["campaign_id"], row["item_id"], row["stage"], annotator_id, choice,
             _correct(item, row["stage"], layout, choice), int(1000 * (now - row["assigned_at"])), now))
        if not item["gold"]:
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


def _held(conn: sqlite3.Connection, annotator_id: int, now: float) -> sqlite3.Row | None:
    """The task this annotator holds (a reload resumes it); it counts as shown again from now."""
    row = conn.execute("select * from assignments where annotator_id = ? and status = 'held'",
                       (annotator_id,)).fetchone()
    if row is not None:
        conn.execute("update assignments set assigned_at = ? where id = ?", (now, row["id"]))
    return row


def _has_room(conn: sqlite3.Connection, item: sqlite3.Row, task: str, config: dict) -> bool:
    if item["gold"]:
        return True
    if task not in TASK_OF_STAGE.get(item["stage"], ()):
        return False
    taken = conn.execute("select count(*) from assignments where item_id = ? and stage = ? and status in "
                         "('held', 'answered')", (item["id"], task)).fetchone()[0]
    return taken < config["overlap"] + item["extra_answers"]


def _allocate(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict, now: float) -> sqlite3.Row | None:
    campaign_id = annotator["campaign_id"]
    conn.execute("update assignments set status = 'released' where campaign_id = ? and status = 'held' "
                 "and assigned_at < ?", (campaign_id, now - config["reclaim_after_s"]))
    served = conn.execute("select count(*) from assignments where annotator_id = ? and status = 'answered'",
                          (annotator["id"],)).fetchone()[0]
    if served >= config["tasks_per_session"]:
        return None
    choice = _released_again(conn, annotator, config)
    if choice is None and _gold_turn(served, config["gold_rate"], annotator["id"]):
        choice = _gold(conn, annotator)
    choice = choice or _regular(conn, annotator, config)
    if choice is None:
        return None
    item_id, task, reuse = choice
    layout = json.dumps(_layout(task, random.Random(f"{item_id}:{task}:{annotator['id']}")))
    if reuse:
        conn.execute("update assignments set status = 'held', assigned_at = ? where id = ?", (now, reuse))
        return conn.execute("select * from assignments where id = ?", (reuse,)).fetchone()
    cursor = conn.execute("insert into assignments (campaign_id, item_id, stage, annotator_id, status, layout, "
                          "assigned_at) values (?,?,?,?,'held',?,?)",
                          (campaign_id, item_id, task, annotator["id"], layout, now))
    return conn.execute("select * from assignments where id = ?", (cursor.lastrowid,)).fetchone()


def _released_again(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> tuple | None:
    """A task taken back from this annotator while away, if still unclaimed: they resume where they were."""
    for row in conn.execute("select id, item_id, stage from assignments where annotator_id = ? and status = "
                            "'released' order by id desc", (annotator["id"],)).fetchall():
        item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
        if _has_room(conn, item, row["stage"], config):
            return row["item_id"], row["stage"], row["id"]
    return None


def _gold_turn(served: int, rate: float, annotator_id: int) -> bool:
    """Whether the next task is a gold one: every 1/rate tasks, at a phase that differs per annotator so
    nobody can learn where the checks fall."""
    if rate <= 0:
        return False
    phase = (annotator_id * 0.6180339887) % 1.0
    return math.floor((served + 1) * rate + phase) > math.floor(served * rate + phase)


def _gold(conn: sqlite3.Connection, annotator: sqlite3.Row) -> tuple | None:
    row = conn.execute(
        "select i.id from items i where i.campaign_id = ? and i.gold = 1 and i.stage != 'pending' and not exists "
        "(select 1 from assignments a where a.item_id = i.id and a.annotator_id = ?) order by random() limit 1",
        (annotator["campaign_id"], annotator["id"])).fetchone()
    return (row[0], "select", None) if row else None


def _regular(conn: sqlite3.Connection, annotator: sqlite3.Row, config: dict) -> tuple | None:
    """The open (item, task) nearest completion: later steps first, then items with most answers. Fresh eyes
    first: an item this annotator saw in another task (step 3, then its step 4) only when nothing else is
    open, so small crowds still finish."""
    for fresh in (True, False):
        for task in PRIORITY:
            stage = next(s for s, tasks in TASK_OF_STAGE.items() if task in tasks)
            seen = "a.annotator_id = :me" if fresh else "a.annotator_id = :me and a.stage = :task"
            row = conn.execute(
                "select i.id, (select count(*) from assignments a where a.item_id = i.id and a.stage = :task "
                "and a.status in ('held', 'answered')) as taken from items i "
                "where i.campaign_id = :campaign and i.gold = 0 and i.stage = :stage and not exists "
                f"(select 1 from assignments a where a.item_id = i.id and {seen}) "
                "and taken < :overlap + i.extra_answers order by taken desc, i.position limit 1",
                {"task": task, "campaign": annotator["campaign_id"], "stage": stage, "me": annotator["id"],
                 "overlap": config["overlap"]}).fetchone()
            if row:
                return row[0], task, None
    return None


def _layout(task: str, rng: random.Random) -> dict:
    """What goes where on screen: BiVLC randomises left/right so position gives nothing away."""
    pair = ["original", "negative"]
    rng.shuffle(pair)
    if task == "i2t":
        return {"image": rng.choice(["original", "negative"]), "texts": pair}
    if task == "t2i":
        return {"text": rng.choice(["original", "negative"]), "images": pair}
    return {"images": pair} if task == "ambiguity" else {}


def _choice(task: str, layout: dict, answer: str, n_images: int) -> str:
    """The answer as stored: a slot ("1".."4") or "none" for select; for the others, which side was meant:
    "original", "negative" (or "both")."""
    answer = KEY_ALIASES.get(str(answer).strip().lower(), str(answer).strip().lower())
    if task == "select":
        if answer == "none" or (answer.isdigit() and 1 <= int(answer) <= n_images):
            return answer
    else:
        if task != "i2t":
            answer = {"1": "left", "2": "right"}.get(answer, answer)
        if answer in SIDE_OPTIONS[task]:
            if answer == "both":
                return "both"
            return (layout["texts"] if task == "i2t" else layout["images"])[{"left": 0, "1": 0}.get(answer, 1)]
    shown = f"{answer[:40]!r}" + ("…" if len(answer) > 40 else "")  # the page shows it: never echo a huge value
    raise TaskError(f"{shown} is not an answer to this {task} task")


def _correct(item: sqlite3.Row, task: str, layout: dict, choice: str) -> int | None:
    """Whether an answer matches the known truth (gold and toy items, and always the baseline questions)."""
    if task == "i2t":
        return int(choice == layout["image"])
    if task == "t2i":
        return int(choice == layout["text"])
    truth = db.loads(item["truth"], {})
    if task not in truth:
        return None
    return int(choice in truth[task]) if task == "select" else int(choice == truth[task])


def _task(conn: sqlite3.Connection, row: sqlite3.Row, config: dict) -> Task:
    item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
    layout = json.loads(row["layout"])
    answered = conn.execute("select count(*) from assignments where annotator_id = ? and status = 'answered'",
                            (row["annotator_id"],)).fetchone()[0]
    images = {"original": item["image"], "negative": _chosen_image(conn, item)}
    texts = {"original": item["caption"], "negative": item["negative_caption"]}
    task = row["stage"]
    if task == "select":
        shown = [c["display_path"] or c["path"] for c in
                 conn.execute("select display_path, path from candidates where item_id = ? order by slot",
                              (item["id"],))]
        text, pair, options = item["negative_caption"], (), (*(str(k + 1) for k in range(len(shown))), "none")
    elif task == "i2t":
        shown, text, pair, options = [images[layout["image"]]], "", tuple(texts[t] for t in layout["texts"]), ("1", "2")
    else:
        shown = [images[side] for side in layout["images"]]
        text = item["caption"] if task == "ambiguity" else texts[layout["text"]]
        pair, options = (), SIDE_OPTIONS[task]
    return Task(row["id"], item["id"], task, text, pair, tuple(shown), tuple(options), config["instructions"][task],
                answered + 1, config["tasks_per_session"])


def _chosen_image(conn: sqlite3.Connection, item: sqlite3.Row) -> str | None:
    """The negative image of an item: the one step 3 chose (a gold item's: its known right one)."""
    outcome, truth = db.loads(item["outcome"], {}), db.loads(item["truth"], {})
    slot = outcome.get("select", {}).get("decision")
    if slot in (None, "none"):
        slot = next((s for s in truth.get("select", []) if s != "none"), None)
    if slot is None:
        return None
    row = conn.execute("select display_path, path from candidates where item_id = ? and slot = ?",
                       (item["id"], int(slot) - 1)).fetchone()
    return (row["display_path"] or row["path"]) if row else None
