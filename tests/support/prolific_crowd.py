"""Prolific participants doing a campaign's work through the real assignment code (join, serve, submit), with
their submissions on the fake Prolific server: what the Prolific tests share."""
from __future__ import annotations

import time
from pathlib import Path

from backend.annotate import assign, db
from tests.support.fake_prolific import FakeProlific


def arrive(fake: FakeProlific, store: Path | str, campaign_id: int, study_id: str, pid: str) -> tuple[int, str]:
    """A participant opens the study on Prolific (a submission) and lands in the campaign: (annotator, submission)."""
    submission_id = fake.add_submission(study_id, pid)
    return assign.join(store, campaign_id, pid, "prolific", study_id, submission_id), submission_id


def work(store: Path | str, annotator_id: int, limit: int | None = None, seconds: float = 3.0,
         wrong_gold: bool = False) -> int:
    """Answer up to `limit` tasks (all of the session when None), `seconds` each (as the server measures);
    gold items are answered rightly, or all wrongly with `wrong_gold`. Returns the answers stored."""
    stored = 0
    while limit is None or stored < limit:
        task = assign.serve(store, annotator_id)
        if not isinstance(task, assign.Task):
            break
        answer = task.options[0]
        item = db.rows(store, "select gold, truth from items where id = ?", (task.item_id,))[0]
        if item["gold"]:  # answered rightly, or wrongly when asked to
            truth = db.loads(item["truth"], {}).get("select", [])
            answer = next(option for option in task.options if (option in truth) != wrong_gold)
        row = db.rows(store, "select assigned_at from assignments where id = ?", (task.assignment_id,))[0]
        stored += assign.submit(store, annotator_id, task.assignment_id, answer,
                                now=row["assigned_at"] + seconds).recorded
    return stored


def finished(store: Path | str, annotator_id: int) -> bool:
    """Whether the session's every answer is stored (the completion code was shown)."""
    ended = assign.serve(store, annotator_id, now=time.time())
    return isinstance(ended, assign.Ended) and ended.state == "done"
