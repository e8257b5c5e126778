"""Who may start a Prolific session: the study link's ids checked before any task is given.

A red-team script started sessions with made-up ``PROLIFIC_PID``s and was given tasks. Two checks, made when a
Prolific participant enters a campaign whose study was created from the app (a ``prolific_studies`` row; a study
made on Prolific's site by hand has nothing to compare with, and is admitted as before):

- **The study**: the link's ``STUDY_ID`` must be the campaign's study, else "this link is not for this study".
- **The submission** (when a ``PROLIFIC_TOKEN`` is set): Prolific passes the submission's id as ``SESSION_ID``;
  ``GET /submissions/{SESSION_ID}/`` must name this study and this participant, and not have ended (returned,
  timed out, rejected). The answer is kept in ``prolific_submissions`` (what `prolific_study.sync` stores too),
  so a participant is asked about once; a reload, a second tab or a later visit costs no call.

When Prolific cannot be asked (no answer, a 5xx, a refused token), the participant is **refused** with a message
that says so and asks them to reload in a minute: admitting unverified people would let a bot in whenever the
API is slow, and a participant already verified is never asked again, so an outage stops only newcomers. The
joins' per-client rate limit (`ui.context.Guards`) bounds how many checks one client can cause.
"""
from __future__ import annotations

import time

from backend.annotate import db
from backend.annotate.prolific import Identity
from backend.annotate.prolific_api import ProlificClient, ProlificError, ProlificRefused
from backend.core.settings import Settings

CHECK_TIMEOUT_S = 5.0  # a participant waits this long at most for Prolific's answer
ENDED = ("RETURNED", "TIMED-OUT", "REJECTED")
NOT_THIS_STUDY = ("This link is not for this study. Open the study again from Prolific, with its whole link; if it "
                  "still does not work, please return your submission and message the researcher.")


class NotVerified(ValueError):
    """A participant who may not start; the message is what they read."""


def admit(settings: Settings, campaign_id: int, identity: Identity) -> None:
    """Raise `NotVerified` unless a Prolific participant's link belongs to the campaign's study and (with a token)
    Prolific knows their submission; local annotators and campaigns without an app-made study pass."""
    if identity.source != "prolific":
        return
    found = db.rows(settings.db, "select study_id from prolific_studies where campaign_id = ?", (campaign_id,))
    if not found:
        return
    study_id = found[0]["study_id"]
    if identity.study_id != study_id:
        raise NotVerified(NOT_THIS_STUDY)
    if not settings.prolific_token:
        return
    known = db.rows(settings.db, "select participant_id, status from prolific_submissions where id = ? and "
                                 "campaign_id = ?", (identity.session_id, campaign_id))
    submission = known[0] if known else _ask(settings, campaign_id, study_id, identity)
    if submission["participant_id"] != identity.external_id:
        raise NotVerified(NOT_THIS_STUDY)
    if submission["status"] in ENDED:
        raise NotVerified(f"Your submission to this study is {submission['status'].lower()} on Prolific, so it "
                          "takes no more answers.")


def _ask(settings: Settings, campaign_id: int, study_id: str, identity: Identity) -> dict:
    """Prolific's word on the link's submission, stored when it is this study's and this participant's."""
    if not identity.session_id:
        raise NotVerified(NOT_THIS_STUDY)
    try:
        with ProlificClient(settings.prolific_token, settings.prolific_api, timeout_s=CHECK_TIMEOUT_S) as api:
            answer = api.get_submission(identity.session_id)
    except ProlificRefused as error:
        if "HTTP 404" in str(error):  # no such submission; a refused token is the lab's problem, said as below
            raise NotVerified(NOT_THIS_STUDY) from None
        raise NotVerified(_unreachable()) from None
    except ProlificError:
        raise NotVerified(_unreachable()) from None
    participant = answer.get("participant") or answer.get("participant_id") or ""
    status = str(answer.get("status", "")).upper().replace("_", " ")
    if answer.get("study_id") != study_id or participant != identity.external_id:
        raise NotVerified(NOT_THIS_STUDY)
    with db.write(settings.db) as conn:
        conn.execute("insert or ignore into prolific_submissions (id, campaign_id, participant_id, status, "
                     "started_at, synced_at) values (?,?,?,?,?,?)",
                     (identity.session_id, campaign_id, participant, status, answer.get("started_at"), time.time()))
        db.changed(conn, "prolific_submissions", identity.session_id)
    return {"participant_id": participant, "status": status}


def _unreachable() -> str:
    return ("We could not check your Prolific submission just now (Prolific did not answer). Please reload this page "
            "in a minute; nothing is lost.")

