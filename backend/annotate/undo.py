"""Undo of an annotator's own last answer, while its slot is still open.

A mis-keyed answer (a 1 for a 2) could not be taken back. Now the annotator may withdraw their last answer as
long as nothing was decided with it: the item still awaits the same task and no resolution touched the item since
(neither a decision, which moves it on, nor a tie that called one more annotator). The session must still be
under way: once its last answer is stored the completion code is shown, and a code once shown is never taken
back.

The withdrawn answer is kept, marked ``source = 'undone'`` and detached from its task (so the same task can be
answered again), out of resolution and every count; the answers CSV still lists it. The task comes back on
screen, and the task that was shown next goes back to the session's reserved tasks. Everything is read and
written in one ``BEGIN IMMEDIATE`` transaction (`db.write`), so an undo and another annotator's deciding answer
cannot interleave.
"""
from __future__ import annotations

import time
from pathlib import Path

from backend.annotate import db
from backend.annotate.assign import DONE, TASK_OF_STAGE
from backend.annotate.tasks import TaskError


def undo_last(store_path: Path | str, annotator_id: int, now: float | None = None) -> int:
    """Withdraw this annotator's last answer; returns the task's assignment id (on screen again). `TaskError`
    says why not: nothing to undo, the session is complete, or the answer was already used."""
    now = time.time() if now is None else now
    with db.write(store_path) as conn:
        annotator = conn.execute("select * from annotators where id = ?", (annotator_id,)).fetchone()
        if annotator is None:
            raise TaskError("unknown annotator; start again from the study link")
        last = conn.execute("select a.id, a.assignment_id, a.item_id, a.stage from answers a where "
                            "a.annotator_id = ? and a.source = 'annotator' order by a.id desc limit 1",
                            (annotator_id,)).fetchone()
        if last is None:
            raise TaskError("there is no answer of yours to undo")
        answered = conn.execute(f"select count(*) from assignments where annotator_id = ? and status in {DONE}",
                                (annotator_id,)).fetchone()[0]
        if annotator["quota"] is not None and answered >= annotator["quota"]:
            raise TaskError("your session is complete: its answers can no longer be changed")
        item = conn.execute("select stage, gold, extra_answers from items where id = ?", (last["item_id"],)).fetchone()
        # A tie calls one more annotator (extra_answers); until that answer decides again, every answer the item
        # has was counted in the tie.
        used = not item["gold"] and (last["stage"] not in TASK_OF_STAGE.get(item["stage"], ()) or
                                     item["extra_answers"] > 0)
        if used:
            raise TaskError("your last answer was already used to decide its item: it can no longer be undone")
        shown = conn.execute("select id from assignments where annotator_id = ? and status = 'held'",
                             (annotator_id,)).fetchone()
        if shown is not None:  # the task shown after the answer waits in the session's reserved tasks again
            conn.execute("update assignments set status = 'reserved', assigned_at = null where id = ?", (shown[0],))
            db.changed(conn, "assignments", shown[0])
        conn.execute("update answers set source = 'undone', assignment_id = null where id = ?", (last["id"],))
        conn.execute("update assignments set status = 'held', assigned_at = ?, answered_at = null where id = ?",
                     (now, last["assignment_id"]))
        conn.execute("update annotators set last_seen = ? where id = ?", (now, annotator_id))
        for table, row_id in (("answers", last["id"]), ("assignments", last["assignment_id"])):
            db.changed(conn, table, row_id)
    return last["assignment_id"]
