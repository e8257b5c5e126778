"""Prolific: who the participant is (from the study link's URL parameters) and where they go when done.

Prolific opens the study URL with ``PROLIFIC_PID``, ``STUDY_ID`` and
``SESSION_ID`` appended; at the end the participant is sent to
``https://app.prolific.com/submissions/complete?cc=CODE`` with the study's
completion code. Without those parameters (a local session) the annotator
types a name instead.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from backend.core import text

COMPLETION_URL = "https://app.prolific.com/submissions/complete"
STUDY_PATH = "study"  # the study link's route (`ui/study.py`)
# What Prolific replaces in a study URL with the participant's id, the study's and the submission's (the session)
PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_NAME = 64  # what an id may hold


@dataclass(frozen=True)
class Identity:
    external_id: str
    source: str  # "prolific" or "local"
    study_id: str = ""
    session_id: str = ""


def identity_from_params(params: Mapping[str, str] | None) -> Identity | None:
    """The Prolific participant named by the URL parameters, or None when there is none (a local session,
    or an API call, whose `gr.Request` is None). Malformed ids are refused rather than stored."""
    if not params or not params.get("PROLIFIC_PID"):
        return None
    values = {key: str(params.get(key, "")).strip() for key in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    bad = [key for key, value in values.items() if value and not _ID.match(value)]
    if bad:
        raise ValueError(f"malformed Prolific parameter(s) {', '.join(bad)} in the study link")
    return Identity(values["PROLIFIC_PID"], "prolific", values["STUDY_ID"], values["SESSION_ID"])


def local_identity(name: str) -> Identity:
    """A named local annotator; names follow the lab's text rules (`backend.core.text`: NFKC, no control or
    invisible characters), inner spaces collapsed, at most `MAX_NAME` characters."""
    name = " ".join(text.normalise(name).split())
    if not name:
        raise ValueError("type your name (or the id you were given) to start")
    if len(name) > MAX_NAME:
        raise ValueError(f"the name has {len(name):,} characters; at most {MAX_NAME}")
    return Identity(text.clean(name, "the name"), "local")


def completion_url(code: str) -> str:
    """Where Prolific expects the participant to land once every answer is stored."""
    if not code or not _ID.match(code):
        raise ValueError(f"not a Prolific completion code: {code!r}")
    return f"{COMPLETION_URL}?{urlencode({'cc': code})}"


def study_url(app_url: str, campaign: str) -> str:
    """The study link Prolific opens: the campaign's study page with Prolific's placeholders."""
    return f"{app_url.rstrip('/')}/{STUDY_PATH}?campaign={quote(campaign)}&{PLACEHOLDERS}"
