"""From answers to an item's fate: the resolution rule per task, the stage it moves to, admin overrides.

Step 3 ("select") is decided in two parts, as BiVLC measured agreement: first
"picked an image" against "none" under the campaign's rule (a strict
majority; "third" calls one more annotator on a tie); then, among those who
picked, the image with most votes. Several images may show the caption
(BiVLC's instructions say so), so a tie between images is not a disagreement:
the image picked first wins. Step 4 ("ambiguity") keeps an item only when the
majority picked the original image for the original caption. The human
baseline questions are measured, not resolved: the item is done when both
have their answers. A validation campaign's question ("validate") is resolved
over its three answers under the same rule: a negative the crowd calls false
of the image is ``done`` (kept by the export), one still true or not fluent,
or one they disagree on, is ``dropped`` with the reason.
"""
from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

from backend.annotate import db
from backend.annotate.agreement import resolve
from backend.annotate.tasks import VALIDATE_OPTIONS

BASELINE = ("i2t", "t2i")
OVERRIDABLE = ("select", "ambiguity", "validate")
VALIDATE_FATE = {"false": ("done", "a valid negative: false of the image"),
                 "true": ("dropped", "not a negative: still true of the image"),
                 "disfluent": ("dropped", "not fluent")}


def decide(task: str, choices: list[str], rule: str, overlap: int) -> dict:
    """The outcome of one item's task from its answers (in the order given): a dict with ``decision`` (None
    when unresolved), ``needs_more``, ``votes`` and ``reason``."""
    if task == "select":
        picked = resolve(["none" if c == "none" else "image" for c in choices], rule, overlap)
        outcome = {"decision": picked.decision, "needs_more": picked.needs_more, "reason": picked.reason,
                   "votes": dict(Counter(choices))}
        if picked.decision == "image":
            slots = [c for c in choices if c != "none"]
            counts = Counter(slots)
            best = max(counts.values())
            outcome["decision"] = next(s for s in slots if counts[s] == best)  # the earliest of the most voted
        return outcome
    result = resolve(choices, rule, overlap)
    return {"decision": result.decision, "needs_more": result.needs_more, "reason": result.reason,
            "votes": dict(result.votes)}


def next_stage(task: str, decision: str | None, item: sqlite3.Row, config: dict) -> tuple[str, str]:
    """(stage, why) after a task is decided."""
    if task == "validate":
        return VALIDATE_FATE.get(decision or "", ("dropped", "annotators disagreed on whether the negative is false"))
    if task == "select":
        if decision is None:
            return "dropped", "annotators disagreed on whether any image shows the caption"
        if decision == "none":
            return "dropped", "no image shows the negative caption"
        if not item["image"]:
            return "done", "no original image: the ambiguity filter could not be applied"
        return "selected", "an image was chosen"
    if decision is None:
        return "dropped", "annotators disagreed on the ambiguity question"
    if decision != "original":
        return "dropped", "ambiguous: the chosen image also fits the original caption"
    return ("unambiguous", "awaits the human baseline") if config["human_baseline"] else ("done", "unambiguous")


def record_outcome(conn: sqlite3.Connection, item_id: int, task: str, config: dict, now: float) -> None:
    """After an answer: once the item has all its answers for `task`, decide and move it on (in the caller's
    transaction, so exactly one submit decides)."""
    item = conn.execute("select * from items where id = ?", (item_id,)).fetchone()
    choices = [row[0] for row in conn.execute("select choice from answers where item_id = ? and stage = ? and "
                                              "source = 'annotator' order by id", (item_id, task))]
    needed = config["overlap"] + item["extra_answers"]
    if len(choices) < needed:
        return
    outcome = db.loads(item["outcome"], {})
    if task in BASELINE:
        other = conn.execute("select count(*) from answers where item_id = ? and stage = ? and source = "
                             "'annotator'", (item_id, BASELINE[task == "i2t"])).fetchone()[0]
        if other >= needed:
            _move(conn, item_id, "done", {**outcome, "stage_reason": "human baseline answered"}, now)
        return
    decided = decide(task, choices, config["resolution"], config["overlap"])
    if decided["needs_more"]:
        conn.execute("update items set extra_answers = extra_answers + 1, updated_at = ? where id = ?", (now, item_id))
        return
    stage, why = next_stage(task, decided["decision"], item, config)
    _move(conn, item_id, stage, {**outcome, task: decided, "stage_reason": why}, now)


def _move(conn: sqlite3.Connection, item_id: int, stage: str, outcome: dict, now: float) -> None:
    conn.execute("update items set stage = ?, outcome = ?, extra_answers = 0, updated_at = ? where id = ?",
                 (stage, json.dumps(outcome), now, item_id))


def valid_decisions(task: str, n_images: int) -> tuple[str, ...]:
    """What an admin may decide for a task: an image number or none (select); a side or both (ambiguity); false,
    true or disfluent (validate)."""
    if task == "validate":
        return VALIDATE_OPTIONS
    if task == "ambiguity":
        return ("original", "negative", "both")
    return (*(str(k + 1) for k in range(n_images)), "none")


def override(store_path: Path | str, item_id: int, task: str, decision: str, actor: str) -> str:
    """An admin decides an item's task by hand (recorded as an answer with source "admin"); returns the
    item's new stage. Raw annotator answers are kept as they were."""
    if task not in OVERRIDABLE:
        raise ValueError(f"only {', '.join(OVERRIDABLE)} can be overridden, not {task!r}")
    now = time.time()
    with db.write(store_path) as conn:
        item = conn.execute("select i.*, c.config from items i join campaigns c on c.id = i.campaign_id "
                            "where i.id = ?", (item_id,)).fetchone()
        if item is None:
            raise ValueError(f"no item {item_id}")
        validating = json.loads(item["config"]).get("kind") == "validate"
        if (task == "validate") != validating:
            raise ValueError(f"item {item_id} belongs to a {'validation' if validating else 'BiVLC'} campaign: "
                             f"{'validate' if validating else 'select or ambiguity'} is its task, not {task!r}")
        n_images = conn.execute("select count(*) from candidates where item_id = ?", (item_id,)).fetchone()[0]
        valid = valid_decisions(task, n_images)
        if decision not in valid:
            raise ValueError(f"{decision!r} is not a {task} decision; one of {', '.join(valid)}")
        chosen = db.loads(item["outcome"], {}).get("select", {}).get("decision")
        if task == "ambiguity" and chosen in (None, "none"):
            raise ValueError(f"item {item_id} has no chosen image yet: decide its select task first")
        answer_id = db.insert(conn, "insert into answers (campaign_id, item_id, stage, choice, source, actor, "
                              "created_at) values (?,?,?,?,'admin',?,?)",
                              (item["campaign_id"], item_id, task, decision, actor, now))
        db.changed(conn, "answers", answer_id)
        config = json.loads(item["config"])
        stage, why = next_stage(task, decision, item, config)
        outcome = {**db.loads(item["outcome"], {}), task: {"decision": decision, "override": actor,
                                                            "reason": f"set by {actor}"}, "stage_reason": why}
        _move(conn, item_id, stage, outcome, now)
        db.changed(conn, "items", item_id)
    return stage
