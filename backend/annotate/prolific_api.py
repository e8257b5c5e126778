"""A client for Prolific's REST API: the calls a campaign's study needs, with the request shapes of
docs.prolific.com's API reference (docs/PROLIFIC.md lists each with its page).

Built on httpx (already installed with Gradio, pinned in requirements.txt): timeouts on every call, a
transport tests can replace, and one error type per outcome that matters for money: `ProlificRefused` (Prolific
answered with a 4xx: it did nothing) and `ProlificUnsure` (no answer, a dropped connection, a 5xx: it may have
acted). The token goes only into the ``Authorization: Token <token>`` header; no message here ever holds it.
"""
from __future__ import annotations

from typing import Any

import httpx

DEFAULT_TIMEOUT_S = 30.0
MAX_PAGES = 1000  # a study's submissions are paged; this bounds a server that keeps sending "next"


class ProlificError(ValueError):
    """A Prolific call that did not succeed; the message says which call and why (never the token)."""


class ProlificRefused(ProlificError):
    """Prolific answered and refused (4xx): nothing was done."""


class ProlificUnsure(ProlificError):
    """No usable answer (connection lost, timeout, 5xx): Prolific may or may not have done it."""


class ProlificClient:
    """One token against one API base (``https://api.prolific.com/api/v1`` or a fake server's)."""

    def __init__(self, token: str, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 transport: httpx.BaseTransport | None = None):
        if not token:
            raise ProlificError("no Prolific API token: set PROLIFIC_TOKEN (on a Space: a secret) and restart")
        self._http = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout_s, transport=transport,
                                  headers={"Authorization": f"Token {token}", "Accept": "application/json"})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ProlificClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: dict | None = None, params: dict | None = None) -> Any:
        what = f"{method} {path}"
        try:
            response = self._http.request(method, path.lstrip("/"), json=body, params=params)
        except httpx.TimeoutException:
            raise ProlificUnsure(f"Prolific did not answer {what} in time; it may have done it") from None
        except httpx.TransportError as error:
            raise ProlificUnsure(f"the connection to Prolific failed during {what} ({type(error).__name__}); "
                                 "it may have done it") from None
        if response.status_code >= 500:
            raise ProlificUnsure(f"Prolific failed on {what} (HTTP {response.status_code}); it may have done it")
        if response.status_code >= 400:
            detail = response.text[:300].replace("\n", " ")
            hint = " (check PROLIFIC_TOKEN)" if response.status_code in (401, 403) else ""
            raise ProlificRefused(f"Prolific refused {what}: HTTP {response.status_code}{hint}: {detail}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    # Studies
    def create_study(self, body: dict) -> dict:
        """POST /studies/: a draft study (UNPUBLISHED); returns it with its ``id``."""
        return self._call("POST", "studies/", body)

    def get_study(self, study_id: str) -> dict:
        return self._call("GET", f"studies/{study_id}/")

    def transition_study(self, study_id: str, action: str) -> dict:
        """POST /studies/{id}/transition/ with ``{"action": "PUBLISH" | "PAUSE" | "START" | "STOP"}``."""
        return self._call("POST", f"studies/{study_id}/transition/", {"action": action})

    # Submissions
    def list_submissions(self, study_id: str) -> list[dict]:
        """GET /studies/{id}/submissions/, every page (``results``, then ``_links.next.href`` while there is one)."""
        found: list[dict] = []
        path, params = f"studies/{study_id}/submissions/", None
        for _ in range(MAX_PAGES):
            page = self._call("GET", path, params=params)
            found += page.get("results", [])
            following = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not following:
                return found
            path = str(following).removeprefix(str(self._http.base_url))
        raise ProlificError(f"Prolific sent more than {MAX_PAGES} pages of submissions")

    def get_submission(self, submission_id: str) -> dict:
        """GET /submissions/{id}/: its status, participant and ``bonus_payments`` (cents already paid)."""
        return self._call("GET", f"submissions/{submission_id}/")

    def transition_submission(self, submission_id: str, action: str, message: str = "",
                              rejection_category: str = "") -> dict:
        """POST /submissions/{id}/transition/: APPROVE, or REJECT with a message (>= 100 characters) and a
        category. Prolific documents it as idempotent."""
        body: dict[str, str] = {"action": action}
        if action == "REJECT":
            body |= {"message": message, "rejection_category": rejection_category}
        return self._call("POST", f"submissions/{submission_id}/transition/", body)

    def bulk_approve(self, submission_ids: list[str]) -> Any:
        """POST /submissions/bulk-approve/ with ``submission_ids`` (Prolific's recommended variant)."""
        return self._call("POST", "submissions/bulk-approve/", {"submission_ids": submission_ids})

    # Bonuses: set up (free, returns the bulk id), then pay (NOT idempotent: each call pays again)
    def set_up_bonuses(self, study_id: str, csv_bonuses: str) -> dict:
        """POST /submissions/bonus-payments/ with ``csv_bonuses`` lines ``<participant_id>,<amount>``."""
        return self._call("POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv_bonuses})

    def pay_bonuses(self, bulk_id: str) -> Any:
        """POST /bulk-bonus-payments/{id}/pay/. Call once per bulk id: Prolific pays again on every call."""
        return self._call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", {})
