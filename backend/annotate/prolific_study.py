"""A campaign's Prolific study managed from the lab: create the draft, publish, pause, poll its submissions,
give the tasks of those who left to others, approve or reject in bulk (bonuses: `prolific_bonus`).

Every action takes the acting `Actor` and refuses anyone but an admin; the Campaigns tab's Prolific panel and
`python -m backend campaign prolific` call the same functions. The API token comes from the settings
(``PROLIFIC_TOKEN``) and stays on the server. What Prolific said last is kept in SQLite (migration 9):
``prolific_studies`` (one study per campaign) and ``prolific_submissions`` (each submission as last polled,
when its tasks were released, and the lab's review decision).

Polling (`sync`) is where the session contract meets Prolific: a submission RETURNED, TIMED-OUT or REJECTED gives
its participant's reserved and on-screen tasks back at once instead of after ``reclaim_after_s``, and sets their
stored answers aside (`exclusion.set_aside_withdrawn`: a returned or timed-out participant withdrew, a rejected
one's work was refused, so none of it is counted, and the items it decided go back to others); a study whose
campaign has no place left (`report.places`: every answer given or reserved) is paused, so Prolific sends nobody to
a full study; and a study `sync` paused for that is started again once those who left gave places back (a study an
admin paused stays paused). The app runs `sync` by itself every ``prolific_poll_s``
(`backend.annotate.prolific_poll`).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backend.annotate import campaigns, db, exclusion, prolific, report
from backend.annotate.prolific_api import ProlificClient
from backend.core.auth import Actor, require_admin
from backend.core.settings import Settings

RELEASING = ("RETURNED", "TIMED-OUT", "REJECTED")  # submissions whose tasks go back to others
AWAITING = "AWAITING REVIEW"
SECONDS_PER_TASK = 12  # the default estimated completion time: a full session at this pace, rounded up
TOO_FAST_S = 1.5  # default: a median time per task under this rejects a submission as too quick
MIN_MESSAGE = 100  # Prolific wants a rejection's message at least this long
FULL = "the campaign is full"  # why `sync` paused a study: the one pause `sync` also undoes


@contextmanager
def client(settings: Settings) -> Iterator[ProlificClient]:
    """A client for the configured API with the configured token (a clear error when none is set)."""
    with ProlificClient(settings.prolific_token, settings.prolific_api) as api:
        yield api


def study_row(store_path: Path | str, campaign_id: int, name: str) -> dict[str, Any]:
    found = db.rows(store_path, "select * from prolific_studies where campaign_id = ?", (campaign_id,))
    if not found:
        raise ValueError(f"campaign {name!r} has no Prolific study yet: create its draft first")
    return found[0]


def _set_study(store_path: Path | str, campaign_id: int, **values: Any) -> None:
    with db.write(store_path) as conn:
        assignments = ", ".join(f"{key} = ?" for key in values)
        conn.execute(f"update prolific_studies set {assignments}, updated_at = ? where campaign_id = ?",
                     (*values.values(), time.time(), campaign_id))
        db.changed(conn, "prolific_studies", conn.execute("select id from prolific_studies where campaign_id = ?",
                                                          (campaign_id,)).fetchone()[0])


def study_body(campaign: dict, app_url: str, places: int, reward_cents: int, minutes: int, title: str = "",
               description: str = "") -> dict[str, Any]:
    """The draft study Prolific is asked to create (POST /studies/): the study link with Prolific's
    placeholders, the participant id from the URL, the campaign's completion code (reviewed by hand:
    `review`), the places the campaign can fill."""
    config = campaign["config"]
    return {"name": title or f"Image and caption judgements ({campaign['name']})",
            "internal_name": campaign["name"],
            "description": description or (f"Look at pictures and short captions and say which picture shows a "
                                           f"caption ({config.tasks_per_session} quick questions). Please use a "
                                           "computer with a screen large enough to see four pictures side by side."),
            "external_study_url": prolific.study_url(app_url, campaign["name"]),
            "prolific_id_option": "url_parameters",
            "completion_codes": [{"code": config.completion_code, "code_type": "COMPLETED",
                                  "actions": [{"action": "MANUALLY_REVIEW"}]}],
            "total_available_places": places, "estimated_completion_time": minutes, "reward": reward_cents,
            "device_compatibility": ["desktop"]}


def create_study(actor: Actor, settings: Settings, name: str, app_url: str, reward_cents: int,
                 minutes: int | None = None, places: int | None = None, title: str = "",
                 description: str = "") -> dict[str, Any]:
    """Create the campaign's draft study on Prolific (not published: `publish` does that) and record it."""
    require_admin(actor, "creating a Prolific study")
    campaign = campaigns.get(settings.db, name)
    if db.rows(settings.db, "select 1 from prolific_studies where campaign_id = ?", (campaign["id"],)):
        raise ValueError(f"campaign {name!r} has a Prolific study already (`campaign prolific status {name}`)")
    if not app_url.startswith(("https://", "http://")):
        raise ValueError(f"the app's address must start with https:// (Prolific opens it), not {app_url!r}")
    room = report.places(settings.db, campaign["id"], campaign["config"])
    places = room["places_left"] if places is None else int(places)
    if not 1 <= places <= room["places_left"]:
        raise ValueError(f"places must be 1..{room['places_left']} (what the campaign can still fill), not {places}")
    if int(reward_cents) < 1:
        raise ValueError(f"the reward is in cents (pence) and must be at least 1, not {reward_cents}")
    minutes = minutes or math.ceil(campaign["config"].tasks_per_session * SECONDS_PER_TASK / 60)
    body = study_body(campaign, app_url, places, int(reward_cents), int(minutes), title, description)
    with client(settings) as api:
        study = api.create_study(body)
    now = time.time()
    with db.write(settings.db) as conn:
        row_id = db.insert(conn, "insert into prolific_studies (campaign_id, study_id, status, places, reward_cents, "
                                 "created_by, created_at, updated_at) values (?,?,?,?,?,?,?,?)",
                           (campaign["id"], study["id"], study.get("status", "UNPUBLISHED"), places,
                            int(reward_cents), actor.name, now, now))
        db.changed(conn, "prolific_studies", row_id)
    return {"study_id": study["id"], "status": study.get("status", "UNPUBLISHED"), "places": places,
            "reward_cents": int(reward_cents), "estimated_minutes": int(minutes), "url": body["external_study_url"],
            "completion_code": campaign["config"].completion_code}


def _transition(actor: Actor, settings: Settings, name: str, action: str, why: str, reason: str | None) -> dict:
    require_admin(actor, why)
    campaign = campaigns.get(settings.db, name)
    study = study_row(settings.db, campaign["id"], name)
    with client(settings) as api:
        answer = api.transition_study(study["study_id"], action)
    status = (answer or {}).get("status") or {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE"}[action]
    _set_study(settings.db, campaign["id"], status=status, paused_reason=reason)
    return {"study_id": study["study_id"], "status": status}


def publish(actor: Actor, settings: Settings, name: str) -> dict[str, Any]:
    """Publish the draft (participants can take it), or start a paused study again."""
    study = study_row(settings.db, campaigns.get(settings.db, name)["id"], name)
    action = "START" if study["status"] == "PAUSED" else "PUBLISH"
    return _transition(actor, settings, name, action, "publishing a Prolific study", None)


def pause(actor: Actor, settings: Settings, name: str) -> dict[str, Any]:
    """Pause the study: Prolific sends nobody new; those under way carry on."""
    return _transition(actor, settings, name, "PAUSE", "pausing a Prolific study", "paused by an admin")


def _normal_status(status: str) -> str:
    """Prolific writes "AWAITING REVIEW" in objects and AWAITING_REVIEW in filters: one spelling here."""
    return str(status).upper().replace("_", " ")


def sync(actor: Actor, settings: Settings, name: str, now: float | None = None) -> dict[str, Any]:
    """Poll the study and its submissions, store them, release the tasks of those who left, pause the study
    when the campaign has no place left and start it again when a pause for that no longer holds. Returns what
    changed."""
    require_admin(actor, "polling a Prolific study")
    now = time.time() if now is None else now
    campaign = campaigns.get(settings.db, name)
    study = study_row(settings.db, campaign["id"], name)
    with client(settings) as api:
        status = api.get_study(study["study_id"]).get("status", study["status"])
        submissions = api.list_submissions(study["study_id"])
        released = _store_submissions(settings.db, campaign["id"], submissions, now)
        room = report.places(settings.db, campaign["id"], campaign["config"])
        paused = status == "ACTIVE" and room["places_left"] == 0
        restarted = status == "PAUSED" and study["paused_reason"] == FULL and room["places_left"] > 0
        if paused:
            status = (api.transition_study(study["study_id"], "PAUSE") or {}).get("status", "PAUSED")
        elif restarted:  # those who left gave their places back: Prolific may send others again
            status = (api.transition_study(study["study_id"], "START") or {}).get("status", "ACTIVE")
    _set_study(settings.db, campaign["id"], status=status,
               **({"paused_reason": FULL} if paused else {"paused_reason": None} if restarted else {}))
    return {"study_id": study["study_id"], "status": status, "submissions": len(submissions),
            "by_status": dict(Counter(_normal_status(s.get("status", "")) for s in submissions)),
            "released": released, "places_left": room["places_left"], "paused_because_full": paused,
            "restarted": restarted}


def _store_submissions(store_path: Path | str, campaign_id: int, submissions: list[dict], now: float) -> dict:
    """Upsert what Prolific said; free the tasks of newly returned, timed-out or rejected submissions.
    Returns {participant: tasks released}."""
    released: dict[str, int] = {}
    with db.write(store_path) as conn:
        for sub in submissions:
            conn.execute("insert into prolific_submissions (id, campaign_id, participant_id, status, started_at, "
                         "completed_at, entered_code, synced_at) values (?,?,?,?,?,?,?,?) on conflict (id) do update "
                         "set status = excluded.status, completed_at = excluded.completed_at, "
                         "entered_code = excluded.entered_code, synced_at = excluded.synced_at",
                         (sub["id"], campaign_id, sub.get("participant_id") or sub.get("participant"),
                          _normal_status(sub.get("status", "")), sub.get("started_at"), sub.get("completed_at"),
                          sub.get("study_code") or sub.get("entered_code"), now))
        released = _release_left(conn, campaign_id, now)
        for sub in submissions:
            db.changed(conn, "prolific_submissions", sub["id"])
    return released


def _release_left(conn, campaign_id: int, now: float) -> dict[str, int]:
    """Inside a write: every submission that ended without its work and was not dealt with yet gives its tasks
    back and its answers are set aside. Returns {participant: tasks given back}."""
    released: dict[str, int] = {}
    for row in conn.execute("select s.id, s.participant_id, s.status, a.id as annotator_id from prolific_submissions s "
                            "left join annotators a on a.campaign_id = s.campaign_id and a.external_id = "
                            f"s.participant_id where s.campaign_id = ? and s.status in {RELEASING} "
                            "and s.released_at is null", (campaign_id,)).fetchall():
        why = f"Prolific: {row['status'].lower()}"
        freed = 0 if row["annotator_id"] is None else exclusion.set_aside_withdrawn(conn, row["annotator_id"], why, now)
        released[row["participant_id"]] = freed
        conn.execute("update prolific_submissions set released_at = ? where id = ?", (now, row["id"]))
        db.changed(conn, "prolific_submissions", row["id"])
    return released


def review_plan(store_path: Path | str, name: str, too_fast_s: float = TOO_FAST_S) -> list[dict[str, Any]]:
    """A decision for every submission awaiting review that the lab has not decided: reject when no complete
    session is stored for the participant (the code reached them another way), when their gold accuracy is
    under the campaign's threshold (the annotator table's "gold" flag), or when their median time per task is
    under `too_fast_s` or their answers were refused as too fast (the "speed" flag); approve otherwise. Each
    rejection carries Prolific's category and a message for the person."""
    state = report.status(store_path, name)
    people = {row["annotator"]: row for row in state["annotators"]}
    threshold = state["config"]["gold_threshold"]
    campaign_id = campaigns.get(store_path, name)["id"]
    plan = []
    for sub in db.rows(store_path, "select * from prolific_submissions where campaign_id = ? and status = ? and "
                                   "decision is null order by id", (campaign_id, AWAITING)):
        person = people.get(sub["participant_id"])
        decision = {"submission_id": sub["id"], "participant_id": sub["participant_id"], "action": "APPROVE",
                    "category": "", "reason": "complete session, gold and speed within limits", "message": ""}
        if person is None or person["session"] is None or person["answered"] < person["session"]:
            done = f"{person['answered']} of {person['session']}" if person and person["session"] else "none"
            decision |= {"action": "REJECT", "category": "NO_DATA", "reason": f"no complete session ({done} answers)",
                         "message": ("We have no complete session for your Prolific ID in this study: the completion "
                                     "code is shown only once every task of a session is answered, and we stored "
                                     f"{done} answers for you.")}
        elif "gold" in person["flags"]:
            decision |= {"action": "REJECT", "category": "FAILED_CHECK",
                         "reason": f"gold accuracy {person['gold_accuracy']:.0%} under {threshold:.0%}",
                         "message": (f"Your answers to the check questions, whose right answers are known, were "
                                     f"{person['gold_accuracy']:.0%} correct over {person['gold']} questions; the "
                                     f"study's instructions ask for at least {threshold:.0%}.")}
        elif person["median_ms"] is not None and person["median_ms"] < 1000 * too_fast_s:
            decision |= {"action": "REJECT", "category": "TOO_QUICKLY",
                         "reason": f"median {person['median_ms'] / 1000:.2f} s per task, under {too_fast_s:g} s",
                         "message": (f"You answered in a median of {person['median_ms'] / 1000:.2f} seconds per "
                                     f"task, under the {too_fast_s:g} seconds needed to look at the pictures "
                                     "and read the caption of a task.")}
        elif "speed" in person["flags"]:
            decision |= {"action": "REJECT", "category": "TOO_QUICKLY",
                         "reason": f"{person['too_fast']} answers refused as faster than the campaign's minimum",
                         "message": (f"{person['too_fast']} of your answers came faster than the study's minimum "
                                     "time per task, the time needed to look at the pictures and read the caption; "
                                     "each was refused and counted.")}
        if decision["message"]:
            decision["message"] = _long_enough(decision["message"])
        plan.append(decision)
    return plan


def _long_enough(message: str) -> str:
    """Prolific refuses a rejection message under `MIN_MESSAGE` characters; this one always says what to do."""
    message += " If you think this is a mistake, please message the researcher through Prolific."
    return message if len(message) >= MIN_MESSAGE else message + " Thank you for your time."


def review(actor: Actor, settings: Settings, name: str, apply: bool = False,
           too_fast_s: float = TOO_FAST_S) -> dict[str, Any]:
    """Poll, then approve (in bulk) or reject (each with its category and message) every submission awaiting
    review; with `apply` False only the plan is returned. Rejected submissions' tasks go back to others."""
    require_admin(actor, "reviewing Prolific submissions")
    sync(actor, settings, name)
    plan = review_plan(settings.db, name, too_fast_s)
    if not apply or not plan:
        return {"plan": plan, "applied": False}
    approve = [d["submission_id"] for d in plan if d["action"] == "APPROVE"]
    with client(settings) as api:
        if approve:
            api.bulk_approve(approve)
            _decided(settings.db, [d for d in plan if d["action"] == "APPROVE"], "APPROVED")
        for decision in (d for d in plan if d["action"] == "REJECT"):
            api.transition_submission(decision["submission_id"], "REJECT", decision["message"], decision["category"])
            _decided(settings.db, [decision], "REJECTED")
    campaign_id = campaigns.get(settings.db, name)["id"]
    with db.write(settings.db) as conn:
        released = _release_left(conn, campaign_id, time.time())
    return {"plan": plan, "applied": True, "released": released}


def _decided(store_path: Path | str, decisions: list[dict], status: str) -> None:
    now = time.time()
    with db.write(store_path) as conn:
        for decision in decisions:
            conn.execute("update prolific_submissions set status = ?, decision = ?, reason = ?, decided_at = ? "
                         "where id = ?", (status, decision["action"].lower(), decision["reason"], now,
                                          decision["submission_id"]))
            db.changed(conn, "prolific_submissions", decision["submission_id"])


def status(actor: Actor, settings: Settings, name: str) -> dict[str, Any]:
    """What the lab knows of the campaign's study (no call to Prolific): the study, its submissions by status
    as last polled, the places left, the bonuses by payment state."""
    require_admin(actor, "viewing a Prolific study")
    campaign = campaigns.get(settings.db, name)
    found = db.rows(settings.db, "select * from prolific_studies where campaign_id = ?", (campaign["id"],))
    subs = db.rows(settings.db, "select status, count(*) as n from prolific_submissions where campaign_id = ? "
                                "group by status", (campaign["id"],))
    bonuses = db.rows(settings.db, "select state, count(*) as n from prolific_bonuses where campaign_id = ? "
                                   "group by state", (campaign["id"],))
    return {"campaign": name, "token_set": bool(settings.prolific_token), "study": found[0] if found else None,
            "submissions": {row["status"]: row["n"] for row in subs},
            "places_left": report.places(settings.db, campaign["id"], campaign["config"])["places_left"],
            "bonuses": {row["state"]: row["n"] for row in bonuses}}
