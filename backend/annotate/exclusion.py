"""Flagged annotators' answers set aside from resolution, their items reopened for others; reversible, audited.

When: an admin asks (`campaign exclude NAME --apply`, the Campaigns tab's Quality view), or Prolific says the
participant withdrew (a RETURNED or TIMED-OUT submission: returning is how a participant withdraws, and is not paid)
or the lab rejected the submission (`set_aside_withdrawn`, called by `prolific_study`'s polling), never on a flag
alone. A flag is evidence, not a verdict: a gold check can go wrong early in a session, a threshold can be set too
high, and answers that move under the crowd's feet while a study runs are hard to reason about. The plan (who, why,
how many answers, which items reopen) is shown first; applying it writes one `exclusions` row per annotator (who did
it, when, the flags, every answer set aside, each touched item's outcome before), and a restore reverses it,
recording who restored and when. Nothing is deleted.

What an exclusion does, in one `BEGIN IMMEDIATE` transaction:

- the annotator's answers get ``source = 'excluded'`` and their assignments ``status = 'excluded'``: out of
  resolution, agreement and the room counts (`assign.TAKEN`), still part of their session (`assign.DONE`: the
  session contract holds, so a participant is never told "done" twice or refused the code for an admin's
  decision) and of the answers CSV, where the source column says "excluded";
- their reserved and on-screen tasks go back to others; answers they give later are set aside as they arrive;
- each task their answers helped decide is decided again from the answers that remain: a decision an admin made
  stands; a decision the remaining answers still reach stands; otherwise the item goes back to that step
  (``stage`` generated or selected; a validation item: ready), so others answer it again, and the answers of
  its later steps, given on a decision that no longer stands, are set aside with the exclusion (restored with it).

A restore brings the answers back and lets each item still waiting for that step decide with them; a decision
reached since with others' answers stands (the restored answers then only add to the record), and a later step's
answers come back only if the earlier decision they were given on is the same again.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, competence, db
from backend.annotate.assign import TASK_OF_STAGE, release_session
from backend.annotate.campaigns import CampaignConfig
from backend.annotate.resolution import decide, record_outcome
from backend.core.auth import Actor, require_admin

STEPS = ("select", "ambiguity", "i2t", "t2i", "validate")  # in the order an item passes them (validate: alone)
STAGE_OF_STEP = {"select": "generated", "ambiguity": "selected", "i2t": "unambiguous", "t2i": "unambiguous",
                 "validate": "ready"}
DECIDED_STEPS = ("select", "ambiguity", "validate")  # the steps resolved from answers (the baseline is measured)


def plan(actor: Actor, store_path: Path | str, name: str, annotators: list[str] | None = None) -> list[dict]:
    """Who would be excluded and why: the flagged annotators not excluded yet (or those named, flagged or not),
    with how many answers each would set aside."""
    require_admin(actor, "planning exclusions")
    campaign_id = campaigns.get(store_path, name)["id"]
    flagged = competence.flagged(store_path, name)
    chosen = {who: flagged.get(who, ["admin"]) for who in annotators} if annotators else flagged
    rows = {row["external_id"]: row for row in db.rows(
        store_path, "select n.id, n.external_id, n.excluded, (select count(*) from answers a where a.annotator_id = "
                    "n.id and a.source = 'annotator') as answers from annotators n where n.campaign_id = ?",
        (campaign_id,))}
    unknown = [who for who in chosen if who not in rows]
    if unknown:
        raise ValueError(f"no annotator {', '.join(map(repr, unknown))} in campaign {name!r}")
    return [{"annotator": who, "reasons": reasons, "answers": rows[who]["answers"],
             "already_excluded": rows[who]["excluded"] is not None} for who, reasons in chosen.items()]


def exclude(actor: Actor, store_path: Path | str, name: str, annotators: list[str] | None = None) -> list[dict]:
    """Apply `plan`: set aside each planned annotator's answers and reopen what they decided. Returns one record
    per exclusion made (annotator, exclusion id, answers set aside, items reopened)."""
    require_admin(actor, "excluding annotators")
    config = campaigns.get(store_path, name)["config"].to_dict()
    done = []
    for entry in plan(actor, store_path, name, annotators):
        if entry["already_excluded"]:
            continue
        with db.write(store_path) as conn:
            done.append(_exclude_one(conn, name, entry, config, actor.name, time.time()))
    return done


def _exclude_one(conn: Any, name: str, entry: dict, config: dict, actor: str, now: float) -> dict:
    person = conn.execute("select n.* from annotators n join campaigns c on c.id = n.campaign_id where c.name = ? "
                          "and n.external_id = ?", (name, entry["annotator"])).fetchone()
    answers = conn.execute("select id, assignment_id, item_id, stage from answers where annotator_id = ? and "
                           "source = 'annotator'", (person["id"],)).fetchall()
    set_aside = [row["id"] for row in answers]
    _set_aside(conn, set_aside)
    released = release_session(conn, person["id"])
    touched = sorted({(row["item_id"], row["stage"]) for row in answers}, key=lambda t: (t[0], STEPS.index(t[1])))
    outcomes: dict[str, dict] = {}
    reopened: list[int] = []
    for item_id, task in touched:
        item = conn.execute("select * from items where id = ?", (item_id,)).fetchone()
        outcomes.setdefault(str(item_id), db.loads(item["outcome"], {}))
        later = _reopen(conn, item, task, config, now)
        if later is not None:
            reopened.append(item_id)
            _set_aside(conn, later)
            set_aside += later
    exclusion_id = db.insert(conn, "insert into exclusions (campaign_id, annotator_id, reasons, answer_ids, "
                             "outcomes, actor, created_at) values (?,?,?,?,?,?,?)",
                             (person["campaign_id"], person["id"], json.dumps(entry["reasons"]),
                              json.dumps(set_aside), json.dumps(outcomes), actor, now))
    conn.execute("update annotators set excluded = ? where id = ?", (exclusion_id, person["id"]))
    _mirror(conn, set_aside, sorted({item for item, _ in touched}), person["id"], exclusion_id)
    return {"annotator": entry["annotator"], "exclusion": exclusion_id, "answers": len(set_aside),
            "reopened": sorted(set(reopened)), "released": released}


def set_aside_withdrawn(conn: Any, annotator_id: int, why: str, now: float) -> int:
    """Inside a write: the participant's submission ended without their work counting (`why`: returned, timed
    out, rejected), so none of their answers count: an exclusion like an admin's (reversible with `restore`,
    audited with `why` as its reason and "Prolific" as its actor). Returns how many of their tasks went back."""
    person = conn.execute("select n.external_id, n.excluded, c.name, c.config from annotators n join campaigns c "
                          "on c.id = n.campaign_id where n.id = ?", (annotator_id,)).fetchone()
    if person["excluded"] is not None:
        return release_session(conn, annotator_id)
    config = CampaignConfig.from_dict(json.loads(person["config"])).to_dict()
    entry = {"annotator": person["external_id"], "reasons": [why]}
    return _exclude_one(conn, person["name"], entry, config, "Prolific", now)["released"]


def _set_aside(conn: Any, answer_ids: list[int]) -> None:
    for answer_id in answer_ids:
        conn.execute("update answers set source = 'excluded' where id = ?", (answer_id,))
        conn.execute("update assignments set status = 'excluded' where id = (select assignment_id from answers "
                     "where id = ?)", (answer_id,))


def _reopen(conn: Any, item: Any, task: str, config: dict, now: float) -> list[int] | None:
    """Decide `task` again without the answers set aside. None when the item's fate stands (gold, still waiting
    for this step, decided by an admin, or the same decision); else the item is back at the step and the ids of
    its later steps' answers (to set aside) are returned."""
    outcome = db.loads(item["outcome"], {})
    if item["gold"] or task in TASK_OF_STAGE.get(item["stage"], ()) or outcome.get(task, {}).get("override"):
        return None
    choices = [row[0] for row in conn.execute("select choice from answers where item_id = ? and stage = ? and "
                                              "source = 'annotator' order by id", (item["id"], task))]
    if task in DECIDED_STEPS and len(choices) >= config["overlap"]:
        again = decide(task, choices, config["resolution"], config["overlap"])
        if not again["needs_more"] and again["decision"] == outcome.get(task, {}).get("decision"):
            return None
    later = STEPS[STEPS.index(task) + 1:] if task in ("select", "ambiguity") else ()
    kept = {key: value for key, value in outcome.items() if key not in (task, *later, "stage_reason")}
    kept["stage_reason"] = "reopened: an annotator's answers were excluded"
    conn.execute("update items set stage = ?, outcome = ?, extra_answers = 0, updated_at = ? where id = ?",
                 (STAGE_OF_STEP[task], json.dumps(kept), now, item["id"]))
    if not later:
        return []
    marks = ",".join("?" * len(later))
    return [row[0] for row in conn.execute(f"select id from answers where item_id = ? and stage in ({marks}) and "
                                           "source = 'annotator'", (item["id"], *later))]


def restore(actor: Actor, store_path: Path | str, name: str, annotator: str) -> dict:
    """Undo the annotator's open exclusion: their answers (and the later-step answers set aside with them, where
    the decision they were given on holds again) return to resolution; items waiting for those steps decide."""
    require_admin(actor, "restoring an annotator's answers")
    config = campaigns.get(store_path, name)["config"].to_dict()
    now = time.time()
    with db.write(store_path) as conn:
        row = conn.execute("select e.*, n.id as person from exclusions e join annotators n on n.excluded = e.id "
                           "join campaigns c on c.id = n.campaign_id where c.name = ? and n.external_id = ?",
                           (name, annotator)).fetchone()
        if row is None:
            raise ValueError(f"{annotator!r} is not excluded in campaign {name!r}")
        before = json.loads(row["outcomes"])
        ids = set(json.loads(row["answer_ids"])) | {r[0] for r in conn.execute(
            "select id from answers where annotator_id = ? and source = 'excluded'", (row["person"],))}
        back = [answer for answer in sorted(ids) if _may_return(conn, answer, row["person"], before)]
        for answer_id in back:
            conn.execute("update answers set source = 'annotator' where id = ?", (answer_id,))
            conn.execute("update assignments set status = 'answered' where id = (select assignment_id from answers "
                         "where id = ?)", (answer_id,))
        conn.execute("update annotators set excluded = null where id = ?", (row["person"],))
        conn.execute("update exclusions set restored_by = ?, restored_at = ? where id = ?",
                     (actor.name, now, row["id"]))
        tasks = sorted({(r["item_id"], r["stage"]) for r in conn.execute(
            f"select item_id, stage from answers where id in ({','.join('?' * len(back))})", back)} if back else (),
            key=lambda t: (t[0], STEPS.index(t[1])))
        for item_id, task in tasks:
            stage = conn.execute("select stage from items where id = ?", (item_id,)).fetchone()[0]
            if task in TASK_OF_STAGE.get(stage, ()):
                record_outcome(conn, item_id, task, config, now)
        _mirror(conn, back, sorted({item for item, _ in tasks}), row["person"], row["id"])
    return {"annotator": annotator, "exclusion": row["id"], "answers": len(back), "kept_aside": len(ids) - len(back)}


def _may_return(conn: Any, answer_id: int, person: int, before: dict) -> bool:
    """An answer of the restored annotator returns; another's (a later step set aside with the exclusion) only
    when its author is not excluded and the item's earlier decision is the one it was given on."""
    answer = conn.execute("select a.annotator_id, a.item_id, a.stage, n.excluded from answers a left join "
                          "annotators n on n.id = a.annotator_id where a.id = ?", (answer_id,)).fetchone()
    if answer["annotator_id"] == person:
        return True
    if answer["excluded"] is not None:
        return False
    item = conn.execute("select stage, outcome from items where id = ?", (answer["item_id"],)).fetchone()
    earlier = STEPS[:STEPS.index(answer["stage"])]
    now, then = db.loads(item["outcome"], {}), before.get(str(answer["item_id"]), {})
    return answer["stage"] in TASK_OF_STAGE.get(item["stage"], ()) and all(
        now.get(step, {}).get("decision") == then.get(step, {}).get("decision") for step in earlier if step in then)


def _mirror(conn: Any, answer_ids: list[int], item_ids: list[int], person: int, exclusion_id: int) -> None:
    for answer_id in answer_ids:
        db.changed(conn, "answers", answer_id)
        assignment = conn.execute("select assignment_id from answers where id = ?", (answer_id,)).fetchone()[0]
        if assignment is not None:
            db.changed(conn, "assignments", assignment)
    for item_id in item_ids:
        db.changed(conn, "items", item_id)
    db.changed(conn, "annotators", person)
    db.changed(conn, "exclusions", exclusion_id)


def history(store_path: Path | str, name: str) -> list[dict]:
    """Every exclusion of the campaign, restored or not: the audit trail."""
    campaign_id = campaigns.get(store_path, name)["id"]
    return [{**row, "reasons": json.loads(row["reasons"]), "answers": len(json.loads(row["answer_ids"]))}
            for row in db.rows(store_path, "select e.id, n.external_id as annotator, e.reasons, e.answer_ids, "
                                           "e.actor, e.created_at, e.restored_by, e.restored_at from exclusions e "
                                           "join annotators n on n.id = e.annotator_id where e.campaign_id = ? "
                                           "order by e.id", (campaign_id,))]
