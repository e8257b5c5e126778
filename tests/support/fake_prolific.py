"""A fake Prolific API on 127.0.0.1: the calls `backend.annotate.prolific_api` makes, with the shapes of
docs.prolific.com's API reference, a token check, state (studies, submissions, bulk bonuses) and faults.

A real HTTP server (http.server in a thread), so the client's httpx code, its timeouts and its error paths run
for real. What tests read: `requests` (every call as received), `payments` (how many times each participant
was paid a bonus: "paid exactly once" is `payments[pid] == 1`), `studies`, `submissions`. What they arrange:
`add_submission` (a participant opens the study), `finish` (they submit with a code), `fail` (the next
matching call fails: "500" before doing anything, "500-after" or "drop" after doing it: a 5xx, or the
connection closed without an answer: a lost response).
"""
from __future__ import annotations

import json
import re
import secrets
import socket
import threading
from collections import Counter
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/api/v1"
REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER")
STUDY_MOVES = {"PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"), "PAUSE": ({"ACTIVE"}, "PAUSED"),
               "START": ({"PAUSED"}, "ACTIVE"), "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW")}
PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")


class Refusal(Exception):
    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def _new_id() -> str:
    return secrets.token_hex(12)  # Prolific's ids are 24 hex digits


class FakeProlific:
    """Start with `with FakeProlific() as fake:`; `fake.url` is the API base to give the client."""

    def __init__(self, token: str = "fake-token", page_size: int = 20):
        self.token, self.page_size = token, page_size
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}
        self.bulk: dict[str, dict] = {}
        self.payments: Counter[str] = Counter()  # participant -> bonus payments made to them
        self.requests: list[tuple[str, str, Any]] = []
        self._faults: list[tuple[str, re.Pattern, str]] = []
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_port}{PREFIX}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeProlific:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # What a test arranges
    def fail(self, method: str, path_pattern: str, kind: str) -> None:
        """The next `method` call whose path (after /api/v1) matches `path_pattern` fails as `kind`."""
        assert kind in ("500", "500-after", "drop")
        self._faults.append((method, re.compile(path_pattern), kind))

    def add_submission(self, study_id: str, participant_id: str, status: str = "ACTIVE") -> str:
        """A participant opened the study (Prolific makes a submission; its id is the SESSION_ID)."""
        with self.lock:
            submission_id = _new_id()
            self.submissions[submission_id] = {"id": submission_id, "study_id": study_id,
                                               "participant": participant_id, "status": status,
                                               "started_at": "2026-01-01T10:00:00Z", "completed_at": None,
                                               "entered_code": None, "bonus_payments": []}
            return submission_id

    def set_status(self, submission_id: str, status: str, code: str | None = None) -> None:
        """The participant returned, timed out or finished (AWAITING REVIEW, with the code they entered)."""
        with self.lock:
            self.submissions[submission_id].update(status=status, entered_code=code)

    def calls(self, method: str, pattern: str) -> list[Any]:
        """The bodies of the calls received that match (faulty ones included)."""
        return [body for m, path, body in self.requests if m == method and re.fullmatch(pattern, path)]

    # The API
    def _route(self, method: str, path: str, query: str, body: Any) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if method == "POST" and parts == ["studies"]:
            return 201, self._create_study(body)
        if parts[0] == "studies" and len(parts) >= 2 and parts[1] in self.studies:
            study = self.studies[parts[1]]
            if method == "GET" and len(parts) == 2:
                return 200, study
            if method == "POST" and parts[2:] == ["transition"]:
                return 200, self._move_study(study, body.get("action"))
            if method == "GET" and parts[2:] == ["submissions"]:
                return 200, self._page(study["id"], query)
        if parts[:1] == ["submissions"]:
            return self._submissions(method, parts[1:], body)
        if method == "POST" and parts[0] == "bulk-bonus-payments" and parts[2:] == ["pay"] and parts[1] in self.bulk:
            return 202, self._pay(self.bulk[parts[1]])
        raise Refusal(404, f"no such resource: {method} {path}")

    def _create_study(self, body: dict) -> dict:
        missing = [key for key in ("name", "description", "external_study_url", "prolific_id_option",
                                   "completion_codes", "total_available_places", "estimated_completion_time",
                                   "reward") if body.get(key) in (None, "", [])]
        if missing:
            raise Refusal(400, f"missing fields {missing}")
        url = body["external_study_url"]
        if body["prolific_id_option"] == "url_parameters" and not all(p in url for p in PLACEHOLDERS):
            raise Refusal(400, "external_study_url lacks the URL parameters' placeholders")
        for key in ("total_available_places", "estimated_completion_time", "reward"):
            if not isinstance(body[key], int) or body[key] < 1:
                raise Refusal(400, f"{key} must be a positive whole number")
        codes = body["completion_codes"]
        if not all(isinstance(c, dict) and c.get("code") and c.get("code_type") for c in codes):
            raise Refusal(400, "each completion code needs code and code_type")
        study = {**body, "id": _new_id(), "status": "UNPUBLISHED"}
        self.studies[study["id"]] = study
        return study

    @staticmethod
    def _move_study(study: dict, action: str | None) -> dict:
        if action not in STUDY_MOVES or study["status"] not in STUDY_MOVES[action][0]:
            raise Refusal(400, f"cannot {action} a study that is {study['status']}")
        study["status"] = STUDY_MOVES[action][1]
        return study

    def _page(self, study_id: str, query: str) -> dict:
        found = [s for s in self.submissions.values() if s["study_id"] == study_id]
        page = int(dict(p.split("=") for p in query.split("&") if "=" in p).get("page", 1))
        shown = found[(page - 1) * self.page_size: page * self.page_size]
        results = [{"id": s["id"], "participant_id": s["participant"], "status": s["status"],
                    "started_at": s["started_at"], "completed_at": s["completed_at"], "study_code": s["entered_code"]}
                   for s in shown]
        following = {"href": f"{self.url}/studies/{study_id}/submissions/?page={page + 1}"} \
            if page * self.page_size < len(found) else {"href": None}
        return {"results": results, "_links": {"next": following}, "meta": {"count": len(found)}}

    def _submissions(self, method: str, parts: list[str], body: Any) -> tuple[int, Any]:
        if method == "POST" and parts == ["bulk-approve"]:
            ids = body.get("submission_ids") or []
            if not ids or any(i not in self.submissions for i in ids):
                raise Refusal(400, "unknown submission ids")
            for submission_id in ids:
                self._review(self.submissions[submission_id], {"action": "APPROVE"})
            return 200, "The request to bulk approve has been made successfully."
        if method == "POST" and parts == ["bonus-payments"]:
            return 201, self._set_up(body)
        if parts and parts[0] in self.submissions:
            submission = self.submissions[parts[0]]
            if method == "GET" and len(parts) == 1:
                return 200, submission
            if method == "POST" and parts[1:] == ["transition"]:
                return 200, self._review(submission, body)
        raise Refusal(404, "no such submission")

    @staticmethod
    def _review(submission: dict, body: dict) -> dict:
        action = body.get("action")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(action or "")
        if target is None:
            raise Refusal(400, f"unknown action {action!r}")
        if action == "REJECT" and (len(body.get("message") or "") < 100 or
                                   body.get("rejection_category") not in REJECTION_CATEGORIES):
            raise Refusal(400, "a rejection needs a message of at least 100 characters and a rejection_category")
        if submission["status"] == target:
            return submission  # idempotent, as documented
        if submission["status"] != "AWAITING REVIEW":
            raise Refusal(400, f"cannot {action} a submission that is {submission['status']}")
        submission["status"] = target
        return submission

    def _set_up(self, body: dict) -> dict:
        study_id = body.get("study_id")
        if study_id not in self.studies:
            raise Refusal(400, "unknown study")
        lines = []
        for line in str(body.get("csv_bonuses") or "").strip().splitlines():
            participant, _, amount = line.partition(",")
            taken_part = any(s["participant"] == participant and s["study_id"] == study_id
                             for s in self.submissions.values())
            if not taken_part or Decimal(amount or "0") <= 0:
                raise Refusal(400, f"invalid bonus line {line!r}")
            lines.append((participant, int(Decimal(amount) * 100)))
        if not lines:
            raise Refusal(400, "csv_bonuses is empty")
        bulk_id = _new_id()
        total = sum(cents for _, cents in lines) / 100
        self.bulk[bulk_id] = {"id": bulk_id, "study": study_id, "lines": lines, "paid": 0}
        return {"id": bulk_id, "study": study_id, "amount": total, "fees": 0.0, "total_amount": total, "vat": 0.0}

    def _pay(self, bulk: dict) -> str:
        """Not idempotent, like Prolific's: every call pays every line again."""
        bulk["paid"] += 1
        for participant, cents in bulk["lines"]:
            self.payments[participant] += 1
            for submission in self.submissions.values():
                if submission["participant"] == participant and submission["study_id"] == bulk["study"]:
                    submission["bonus_payments"].append(cents)
                    break
        return f"Bulk bonus payment with ID {bulk['id']} is being processed asynchronously."

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def _serve(self, method: str) -> None:
                raw_path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null") if length else None
                path = raw_path.removeprefix(PREFIX)
                with fake.lock:
                    fake.requests.append((method, path, body))
                    fault = next((f for f in fake._faults if f[0] == method and f[1].fullmatch(path)), None)
                    if fault:
                        fake._faults.remove(fault)
                    if fault and fault[2] == "500":
                        return self._answer(500, {"error": "injected failure"})
                    if self.headers.get("Authorization") != f"Token {fake.token}":
                        return self._answer(401, {"error": "Invalid token."})
                    try:
                        status, answer = fake._route(method, path, query, body or {})
                    except Refusal as refusal:
                        status, answer = refusal.status, {"error": refusal.detail}
                if fault and fault[2] == "drop":  # done, but the answer is lost
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return None
                self._answer(500 if fault else status, answer)

            def _answer(self, status: int, answer: Any) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        return Handler


def prolific_env(fake: FakeProlific) -> dict[str, str]:
    """The settings (as environment variables) that point the lab at `fake` with its token."""
    return {"PROLIFIC_TOKEN": fake.token, "COMPLAB_PROLIFIC_API": fake.url}
