"""A Prolific participant on the study link (`/study`), driven over HTTP exactly as the page drives the server.

The study page's handlers are private (`gradio_client` refuses them), so a participant is a
`tests.support.security_support.Visitor`: one browser session (a session hash) posting each handler's index to
Gradio's queue with the page address's query parameters, as the page does on load (the link's
``campaign``/``PROLIFIC_PID``/``STUDY_ID``/``SESSION_ID``), on "I agree", on an answer button and on the waiting
page's timer. What comes back is read by the components' ``elem_id``s in the app's config, so the reading does not
depend on the order of `ui.study.StudyPage.study_outputs`.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from backend.annotate import db
from tests.support.clients import TIMEOUT
from tests.support.security_support import Visitor

FIELDS = {"token": "annotate-token", "counter": "annotate-counter", "done": "annotate-done",
          "message": "annotate-message", "notice": "study-notice", "intro": "study-intro-text"}


@dataclass(frozen=True)
class Shown:
    """What one handler's answer puts on the page: a task (its token and number of total), or a text instead."""

    token: str = ""
    number: int = 0
    total: int = 0
    message: str = ""  # the line under the task (a refusal)
    done: str = ""  # the end-of-session text (a code, "please wait", "this study is full", "too many")
    notice: str = ""  # the study page's notice (a link that is not valid, a refused start)
    intro: str = ""  # the campaign's intro, before "I agree"
    error: str = ""  # the handler raised (Gradio's error toast)

    @property
    def waiting(self) -> bool:
        return "Please wait a moment" in self.done


def _text(value: Any) -> str | None:
    """A Markdown or Textbox output as the browser gets it: a value, an update dict, or None (no change)."""
    if isinstance(value, dict):
        return str(value["value"]) if "value" in value and value["value"] is not None else None
    return None if value is None else str(value)


class StudyApp:
    """The /study page's handlers in a running app: where their outputs are, by elem_id."""

    def __init__(self, url: str):
        self.url = url
        config = httpx.get(url + "config", timeout=TIMEOUT).json()
        components = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
        handlers = [d for d in config["dependencies"] if d.get("backend_fn")]
        self.open_link = next(d for d in handlers if d["api_name"] == "open_link")
        self.consent = next(d for d in handlers if d["api_name"] == "consent")
        study_token = next(i for i in self.open_link["outputs"] if components[i] == FIELDS["token"])
        # the study page's own answer and waiting timer: the handlers reading its token / filling its outputs
        self.answer = next(d for d in handlers if d["api_name"].startswith("answer") and study_token in d["inputs"]
                           and len(d["inputs"]) == 3)
        self.poll = next(d for d in handlers if d["api_name"].startswith("poll") and study_token in d["outputs"])
        self.where = {id(d): {name: d["outputs"].index(i) for i in d["outputs"] for name, elem in FIELDS.items()
                              if components[i] == elem}
                      for d in (self.open_link, self.consent, self.answer, self.poll)}

    def read(self, dependency: dict, outcome) -> Shown:
        if outcome.error is not None:
            return Shown(error=outcome.error)
        data, at = outcome.data, self.where[id(dependency)]
        values = {name: _text(data[index]) for name, index in at.items()}
        counter = re.search(r"(\d+) / (\d+)", values.get("counter") or "")
        done = data[at["done"]]
        done_visible = isinstance(done, dict) and done.get("visible") is True
        token = values.get("token") or ""
        return Shown(token=token if not done_visible else "", number=int(counter[1]) if counter else 0,
                     total=int(counter[2]) if counter else 0, message=values.get("message") or "",
                     done=(values.get("done") or "") if done_visible else "", notice=values.get("notice") or "",
                     intro=values.get("intro") or "")


@dataclass
class Participant:
    """One person on the study link: who they are, from which address, and what they were shown and stored."""

    name: str
    behaviour: str
    pid: str
    study_id: str
    submission_id: str = ""  # "" : no submission on Prolific (a made-up PID)
    address: str = ""  # X-Forwarded-For, as the Space's proxy sets it
    acked: list[int] = field(default_factory=list)  # answers whose next page came back
    refused: list[str] = field(default_factory=list)  # refusal lines shown
    endings: list[str] = field(default_factory=list)  # end-of-session texts shown
    resumed_at: list[tuple[int, int]] = field(default_factory=list)  # (number shown on return, answers stored)
    visitor: Visitor | None = None
    shown: Shown = field(default_factory=Shown)

    @property
    def params(self) -> dict[str, str]:
        return {"campaign": "study", "PROLIFIC_PID": self.pid, "STUDY_ID": self.study_id,
                "SESSION_ID": self.submission_id or f"made-up-{self.pid[:6]}"}

    def open(self, app: StudyApp) -> Shown:
        """Open the study link in a fresh page (a first visit, a reload, a page after a restart), and agree to
        the intro when it is shown."""
        if self.visitor is not None:
            self.visitor.close()
        self.visitor = Visitor(app.url, headers={"X-Forwarded-For": self.address} if self.address else None)
        self.shown = app.read(app.open_link, self.visitor.call(app.open_link, [], params=self.params))
        if self.shown.intro and not self.shown.token:
            self.shown = app.read(app.consent, self.visitor.call(app.consent, [None], params=self.params))
        self._note()
        return self.shown

    def answer(self, app: StudyApp, value: str, think_s: float = 0.0) -> Shown:
        """Press an answer button `think_s` after the task appeared."""
        assert self.visitor is not None and self.shown.token
        time.sleep(think_s)
        token = self.shown.token
        shown = app.read(app.answer, self.visitor.call(app.answer, [None, token, value], params=self.params))
        if shown.error:
            raise ConnectionError(shown.error)
        if not shown.message and (shown.token != token or shown.done):
            self.acked.append(int(token))
        self.shown = shown
        self._note()
        return shown

    def wait(self, app: StudyApp, timeout: float = 60.0) -> Shown:
        """While the page says "please wait": its timer's calls until a task (or another ending) comes."""
        assert self.visitor is not None
        deadline = time.monotonic() + timeout
        while self.shown.waiting and time.monotonic() < deadline:
            time.sleep(0.3)
            polled = self.visitor.call(app.poll, [None], params=self.params)
            if polled.data and any(v not in (None, {"__type__": "update"}) for v in polled.data):
                self.shown = app.read(app.poll, polled)
        self._note()
        return self.shown

    def _note(self) -> None:
        if self.shown.message:
            self.refused.append(self.shown.message)
        if self.shown.done and (not self.endings or self.endings[-1] != self.shown.done):
            self.endings.append(self.shown.done)


def right_answer(store: Path | str, token: str) -> str:
    """The answer button that is right for the task `token` names (the toy world knows every truth): what an
    attentive participant presses."""
    row = db.rows(store, "select a.stage, a.layout, i.truth from assignments a join items i on i.id = a.item_id "
                         "where a.id = ?", (int(token),))[0]
    truth, layout = db.loads(row["truth"], {}), db.loads(row["layout"], {})
    wanted = truth.get(row["stage"])
    if row["stage"] == "select":
        return next((slot for slot in wanted or [] if slot != "none"), "none") if wanted else "1"
    if row["stage"] == "ambiguity" and wanted in layout.get("images", []):
        return ("left", "right")[layout["images"].index(wanted)]
    return "both" if wanted == "both" else "left"
