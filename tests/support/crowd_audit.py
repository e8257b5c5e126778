"""What a simulated crowd did, checked against the SQLite store itself (not against anything the app reports).

Every acknowledged answer (the client got the next task back) and every
unacknowledged one the server showed it had stored (its annotator resumed at
the next task) must be in ``answers`` exactly once, by its assignment (the
task token), its annotator, and the choice the value sent means for that
assignment's layout. No row may exist that no client sent. Nobody answers an
(item, task) twice. Every crowd member's session ended after exactly its
quota. Every decided (item, task) has exactly the answers its decision counted:
``overlap`` under the campaign rule "majority", ``overlap`` to ``overlap + 2``
under "third" (a tie calls one more annotator); an undecided one at most
``overlap`` plus its extra answers. For a finished campaign, every item is done
or dropped, every task on its way decided, and no task still held.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from backend.annotate.tasks import choice_of as stored_choice
from tests.support.crowd import Annotator

TERMINAL = ("done", "dropped")


@dataclass
class Audit:
    """The numbers the checks are made of, so a test can assert on them (lists hold the offending rows)."""

    campaign: str
    overlap: int
    rule: str
    rows: int = 0  # annotator answers in SQLite
    acknowledged: int = 0  # answers whose response came back
    stored_unacknowledged: int = 0  # answers whose response was lost, shown stored on resume
    lost: list = field(default_factory=list)  # tokens acknowledged (or shown stored) but not in SQLite
    wrong: list = field(default_factory=list)  # (token, annotator, stored choice, expected)
    phantom: list = field(default_factory=list)  # rows no client sent or was told were stored
    acked_twice: list = field(default_factory=list)  # tokens acknowledged twice (a resume went back)
    twice: list = field(default_factory=list)  # (item, task, annotator) answered more than once
    per_annotator: dict = field(default_factory=dict)  # name -> rows
    crowd: int = 0  # annotators with a quota (the crowd; not those who finish a campaign)
    short: dict = field(default_factory=dict)  # crowd members whose session did not end after their quota
    gold: int = 0
    items: int = 0
    stages: dict = field(default_factory=dict)  # stage -> items
    answered_tasks: int = 0  # (item, task)s with answers
    off_overlap: list = field(default_factory=list)  # (item, task, answers, allowed)
    unfinished: list = field(default_factory=list)  # (item, stage, tasks answered, tasks decided)
    held: int = 0
    resumes: int = 0
    bad_resumes: list = field(default_factory=list)
    checks: list = field(default_factory=list)  # (text, ok)

    @property
    def ok(self) -> bool:
        return all(ok for _, ok in self.checks)

    def print(self) -> None:
        print(f"  AUDIT ({self.campaign}: overlap {self.overlap}, rule {self.rule}; {self.rows} answers in SQLite, "
              f"{self.gold} on gold items; items by stage {self.stages}):")
        for text, ok in self.checks:
            print(f"    {'PASS' if ok else 'FAIL'}: {text}")
        for name in ("lost", "wrong", "phantom", "acked_twice", "twice", "short", "off_overlap", "unfinished",
                     "bad_resumes"):
            if getattr(self, name):
                print(f"    {name}: {getattr(self, name)!r:.2000}")


def audit(db_path: Path | str, campaign: str, annotators: list[Annotator], finished: bool) -> Audit:
    """Check the crowd's ledgers and the campaign's rows; `finished`: the campaign must also be complete."""
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        campaign_row = conn.execute("select id, config from campaigns where name = ?", (campaign,)).fetchone()
        config = json.loads(campaign_row["config"])
        result = Audit(campaign, config["overlap"], config["resolution"])
        _answers(conn, campaign_row["id"], annotators, result)
        _overlap(conn, campaign_row["id"], result, finished)
    finally:
        conn.close()
    _sessions(annotators, result)
    _checks(result, finished)
    return result


def _answers(conn: sqlite3.Connection, campaign_id: int, annotators: list[Annotator], result: Audit) -> None:
    """Match the rows to what the clients sent, by assignment, annotator and value."""
    rows = {row["assignment_id"]: row for row in conn.execute(
        "select a.assignment_id, n.external_id, a.choice, s.stage, s.layout, i.gold, "
        "(select count(*) from candidates c where c.item_id = a.item_id) as images from answers a "
        "join annotators n on n.id = a.annotator_id join assignments s on s.id = a.assignment_id "
        "join items i on i.id = a.item_id where a.campaign_id = ? and a.source = 'annotator'", (campaign_id,))}
    expected = {}
    for annotator in annotators:
        for sent in annotator.sent:
            if sent.acked or sent.fate == "stored":
                if int(sent.token) in expected:
                    result.acked_twice.append(sent.token)
                expected[int(sent.token)] = (annotator.name, sent.value)
            result.acknowledged += sent.acked
            result.stored_unacknowledged += sent.fate == "stored"
    for token, (name, value) in expected.items():
        row = rows.get(token)
        if row is None:
            result.lost.append(token)
            continue
        choice = stored_choice(row["stage"], json.loads(row["layout"]), value, row["images"])
        if row["external_id"] != name or row["choice"] != choice:
            result.wrong.append((token, row["external_id"], row["choice"], (name, choice)))
    result.phantom = sorted(set(rows) - set(expected))
    result.rows, result.gold = len(rows), sum(row["gold"] for row in rows.values())
    result.twice = [tuple(row) for row in conn.execute(
        "select item_id, stage, annotator_id from answers where campaign_id = ? and source = 'annotator' "
        "group by item_id, stage, annotator_id having count(*) > 1", (campaign_id,))]
    result.per_annotator = dict(conn.execute(
        "select n.external_id, count(a.id) from annotators n left join answers a on a.annotator_id = n.id "
        "where n.campaign_id = ? group by n.id", (campaign_id,)).fetchall())


def _overlap(conn: sqlite3.Connection, campaign_id: int, result: Audit, finished: bool) -> None:
    """Every (item, task): as many answers as its decision counted (or, undecided, no more than allowed)."""
    items = {row["id"]: row for row in conn.execute(
        "select id, stage, extra_answers, outcome from items where campaign_id = ? and gold = 0", (campaign_id,))}
    result.items = len(items)
    for item in items.values():
        result.stages[item["stage"]] = result.stages.get(item["stage"], 0) + 1
    answered = {}
    for item_id, task, count in conn.execute(
            "select item_id, stage, count(*) from answers where campaign_id = ? and source = 'annotator' "
            "group by item_id, stage", (campaign_id,)):
        if item_id in items:
            answered.setdefault(item_id, {})[task] = count
    result.answered_tasks = sum(len(tasks) for tasks in answered.values())
    high = result.overlap + (2 if result.rule == "third" else 0)  # the "third" rule asks for at most overlap + 2
    for item_id, item in items.items():
        outcome, tasks = json.loads(item["outcome"] or "{}"), answered.get(item_id, {})
        for task, count in tasks.items():
            if task in outcome:
                allowed = sum(outcome[task]["votes"].values())
                ok = count == allowed and result.overlap <= count <= high
            else:
                allowed = result.overlap + item["extra_answers"]
                ok = count <= allowed
            if not ok:
                result.off_overlap.append((item_id, task, count, allowed))
        decided = sorted(task for task in tasks if task in outcome)
        if finished and (item["stage"] not in TERMINAL or decided != sorted(tasks)):
            result.unfinished.append((item_id, item["stage"], sorted(tasks), decided))
    result.held = conn.execute("select count(*) from assignments where campaign_id = ? and status = 'held'",
                               (campaign_id,)).fetchone()[0]


def _sessions(annotators: list[Annotator], result: Audit) -> None:
    for annotator in annotators:
        stored = result.per_annotator.get(annotator.name, 0)
        result.crowd += annotator.quota is not None
        if annotator.quota is not None and (stored != annotator.quota or not annotator.finished):
            result.short[annotator.name] = (stored, annotator.finished, annotator.error)
        result.resumes += len(annotator.resumes)
        result.bad_resumes += [(annotator.name, r.failed.token, r.failed.number, r.view.token, r.view.number)
                               for r in annotator.resumes if not r.at_next_task]


def _checks(result: Audit, finished: bool) -> None:
    result.checks = [
        (f"every acknowledged answer is in SQLite exactly once, with its annotator and value ({result.acknowledged} "
         f"acknowledged + {result.stored_unacknowledged} shown stored on resume; {len(result.lost)} lost, "
         f"{len(result.wrong)} wrong)", not result.lost and not result.wrong),
        (f"no answer in SQLite that no client sent ({len(result.phantom)} of {result.rows} rows)",
         not result.phantom),
        (f"no task acknowledged twice ({len(result.acked_twice)})", not result.acked_twice),
        (f"nobody answered an (item, task) twice ({len(result.twice)} duplicates)", not result.twice),
        (f"every crowd session ended after exactly its quota ({result.crowd} sessions, {len(result.short)} did "
         "not)", not result.short),
        (f"overlap exact: every decided (item, task) has the answers its decision counted, none over "
         f"({result.answered_tasks} item-tasks answered, {len(result.off_overlap)} off)", not result.off_overlap),
    ]
    if finished:
        result.checks.append((f"campaign finished: every item done or dropped, every task on its way decided, "
                              f"none held ({len(result.unfinished)} unfinished, {result.held} held)",
                              not result.unfinished and not result.held))
    if result.resumes:
        result.checks.append((f"every annotator resumed at their next task after a failure ({result.resumes} "
                              f"resumes, {len(result.bad_resumes)} elsewhere)", not result.bad_resumes))
