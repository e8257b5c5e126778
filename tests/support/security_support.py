"""Helpers for the security tests: call any event handler the way the browser does, and snapshot what an
attempt could have changed.

`gradio_client` refuses handlers marked ``api_visibility="private"``, but the
server runs them for anyone who posts their ``fn_index`` to the queue (the
page itself does so for every click, change and timer tick). An attacker is
not bound by the client library, so the tests are not either: `Visitor` posts
to ``/gradio_api/queue/join`` (or ``/run/predict`` for handlers outside the
queue) and reads the event stream, with a session hash of its own or one a
`gradio_client.Client` already holds (an annotator who started a session).
"""
from __future__ import annotations

import json
import secrets
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from gradio_client import handle_file

from tests.support.clients import TIMEOUT
from tests.support.public_support import public_app


@dataclass(frozen=True)
class Outcome:
    """What one handler call returned: its outputs, or the message of the error it raised."""

    data: list | None
    error: str | None

    @property
    def text(self) -> str:
        return self.error if self.error is not None else json.dumps(self.data)


class Visitor:
    """One browser session (a session hash) calling handlers by their index, private ones included."""

    def __init__(self, url: str, session_hash: str | None = None, headers: dict | None = None):
        self.url = url
        self.session_hash = session_hash or secrets.token_hex(6)
        self.http = httpx.Client(base_url=url, timeout=TIMEOUT, headers=headers or {})

    def call(self, dependency: dict, data: list, params: dict | None = None) -> Outcome:
        """Run the handler of `dependency` (an entry of the app's config) with `data`, as its trigger would;
        `params` are the page address's query parameters (a study link's)."""
        body = {"data": data, "fn_index": dependency["id"], "session_hash": self.session_hash,
                "event_data": None, "trigger_id": None}
        if not dependency.get("queue", True):
            response = self.http.post("gradio_api/run/predict", json=body, params=params)
            payload = response.json()
            return Outcome(payload.get("data"), None) if response.status_code == 200 else \
                Outcome(None, str(payload.get("error")))
        joined = self.http.post("gradio_api/queue/join", json=body, params=params)
        if joined.status_code != 200:
            return Outcome(None, f"HTTP {joined.status_code}: {joined.text}")
        event_id = joined.json()["event_id"]
        with self.http.stream("GET", "gradio_api/queue/data", params={"session_hash": self.session_hash}) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                    output = message.get("output") or {}
                    if message.get("success"):
                        return Outcome(output.get("data"), None)
                    return Outcome(None, str(output.get("error")))
        raise AssertionError(f"the event stream ended before event {event_id} completed")

    def close(self) -> None:
        self.http.close()


class Page:
    """The running app's config: its handlers (private ones too, with the `api_name` Gradio generated for them)
    and the values an untouched page would send them."""

    def __init__(self, url: str):
        config = httpx.get(url + "config", timeout=TIMEOUT).json()
        self.dependencies = [d for d in config["dependencies"] if d.get("backend_fn")]
        self.components = {c["id"]: c for c in config["components"]}

    def handler(self, api_name: str) -> dict:
        return next(d for d in self.dependencies if d["api_name"] == api_name)

    def names(self) -> set[str]:
        """The handlers' names, but for the failure steps `ui.refusals.keep_shown` adds (`failure_steps`)."""
        return {d["api_name"] for d in self.dependencies if not d.get("trigger_only_on_failure")}

    def failure_steps(self) -> list[dict]:
        """The steps that leave an event's outputs as they were when it fails (one per event with outputs)."""
        return [d for d in self.dependencies if d.get("trigger_only_on_failure")]

    def arguments(self, dependency: dict, by_label: dict | None = None) -> list:
        """The page's current values for the handler's inputs, with the ones whose label is in `by_label` replaced."""
        values = []
        for component_id in dependency["inputs"]:
            props = self.components[component_id].get("props", {})
            values.append((by_label or {}).get(props.get("label"), props.get("value")))
        return values


def carries_nothing(value) -> bool:
    """Whether a handler's outputs hold no data: only empty updates (`gr.skip()`) and blanks."""
    if isinstance(value, list):
        return all(carries_nothing(item) for item in value)
    if isinstance(value, dict):
        return set(value) <= {"__type__", "props"} and carries_nothing(value.get("props") or [])
    return value in (None, "", [])


@contextmanager
def served_app(workspace: Path, model_choices: list[str], extra_roots=(), **env: str):
    """The full app over `workspace`, launched with the app's own `launch_options` (the folders it serves and
    refuses, the cap on request bodies: the production ones, not the test helper's). Yields (url, settings)."""
    with public_app(workspace, choices=model_choices, extra_roots=extra_roots, **env) as (url, ctx):
        yield url, ctx.settings


def database_rows(db_path: Path) -> dict[str, list[tuple]]:
    """Every row of every table of the store: compared before and after an attempt that must change nothing."""
    with sqlite3.connect(db_path) as conn:
        tables = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
        return {table: conn.execute(f"select * from {table}").fetchall() for table in tables}


def files_under(*folders: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under `folders` (the store's own files left out: SQLite's WAL moves)."""
    found = {}
    for folder in folders:
        for path in Path(folder).rglob("*"):
            if path.is_file() and ".db" not in path.name:
                stat = path.stat()
                found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


HUGE, LARGE = "a" * 10_000_000, "a" * 500_000  # over the request cap; under it but over every field's limit


def oversized_calls(image: Path, token: str) -> list[tuple[str, tuple, str, str]]:
    """(what, arguments, endpoint, what the refusal says) for oversized fields, through `gradio_client`:
    a field over the request cap (`ui.limits`) gets HTTP 413, one under it the field's own limit."""
    picture = handle_file(str(image))
    return [
        ("10 MB probe caption", (picture, HUGE, ["toyworld"], ["replace"], 0, ""), "/probe", "413"),
        ("500 kB probe caption", (picture, LARGE, ["toyworld"], ["replace"], 0, ""), "/probe", "the limit is 1,000"),
        ("5,000 extra captions", (picture, "a red square", ["toyworld"], [], 0, "\n".join(["- a cat"] * 5000)),
         "/probe", "5000 extra captions; at most 50"),
        ("500 kB extra caption", (picture, "a red square", ["toyworld"], [], 0, LARGE), "/probe",
         "the limit is 1,000"),
        ("10 MB /answer value", (token, HUGE), "/answer", "413"),
        ("10 MB /start name", ("study", HUGE), "/start", "413"),
        ("500 kB /start name", ("study", LARGE), "/start", "the name has 500,000 characters; at most 64"),
    ]


def oversized_bodies(answer_index: int) -> list[tuple[str, object, tuple[int, ...]]]:
    """(what, body, the statuses that refuse it) posted straight to the queue's join route."""
    return [
        ("15 MB JSON list to /queue/join", json.dumps({"data": ["x"] * 3_000_000, "fn_index": answer_index,
                                                       "session_hash": "big"}), (413,)),
        ("200 kB of nested brackets", '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}", (400, 422)),
        ("100 MB chunked, no length", (b"x" * 65536 for _ in range(1600)), (413,)),
    ]
