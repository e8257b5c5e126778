"""Prolific polled by the server itself: `prolific_study.sync` for every running study, every ``prolific_poll_s``.

Why: `sync` is what gives a returned or timed-out participant's tasks to others at once, pauses a study whose
campaign is full and starts it again once places come back. Run only by hand (or from cron), a returner's tasks
stayed held until ``reclaim_after_s`` and a full study kept sending people to be told "this study is full"
between two runs. With a Prolific token set, the app (both modes: the annotation-only server is what study
links point to) polls each campaign whose study is published (``ACTIVE``) or that `sync` paused because it was
full, every ``prolific_poll_s`` seconds (60 by default; 0: never). A failed round (Prolific down, a token
revoked) is logged and tried again at the next; it never stops the server. Studies an admin paused, drafts and
finished studies are left alone.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from backend.annotate import db, prolific_study
from backend.core.auth import ADMIN, Actor
from backend.core.errors import first_line
from backend.core.settings import Settings

log = logging.getLogger(__name__)
SERVER = Actor("the server's Prolific poller", ADMIN, "server")
POLLED = ("select c.name from prolific_studies s join campaigns c on c.id = s.campaign_id where s.status = 'ACTIVE' "
          "or (s.status = 'PAUSED' and s.paused_reason = ?) order by c.id")


def poll_once(settings: Settings) -> dict[str, Any]:
    """One round: `sync` for every running study; {campaign: what sync returned, or the first line of its error}."""
    results: dict[str, Any] = {}
    for row in db.rows(settings.db, POLLED, (prolific_study.FULL,)):
        try:
            results[row["name"]] = prolific_study.sync(SERVER, settings, row["name"])
        except (ValueError, OSError) as error:  # ProlificError is a ValueError; a full disk an OSError
            results[row["name"]] = first_line(error)
            log.warning("polling the Prolific study of campaign %r failed: %s", row["name"], results[row["name"]])
    return results


def start(settings: Settings, stop: threading.Event | None = None) -> threading.Thread | None:
    """Poll every ``settings.prolific_poll_s`` seconds in a daemon thread until `stop` is set; None (nothing
    started) without a token or with polling off."""
    if not settings.prolific_token or settings.prolific_poll_s <= 0:
        return None
    thread = threading.Thread(target=_rounds, args=(settings, stop or threading.Event()), daemon=True,
                              name="prolific-poll")
    thread.start()
    return thread


def _rounds(settings: Settings, stop: threading.Event) -> None:
    while not stop.wait(settings.prolific_poll_s):
        poll_once(settings)
