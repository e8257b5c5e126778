"""Caps on what one request, and one client, may send: refused before Gradio reads it (Starlette middleware).

`BodyLimit`: Gradio reads a request's JSON body whole before it looks at it: a
200 MB post to the queue took 11 s and 1.2 GB of server memory, then joined the
queue as an event. Every form of this app sends a few kilobytes (files go through
the upload route first), so anything above `MAX_BODY_BYTES` is refused with HTTP
413 and a message, before it is read, on every route but exactly Gradio's upload
route (a looser rule, any path ending in ``/upload``, let a 300 MB JSON body
through to ``/gradio_api/call/upload``). The fields' own limits (a caption's 1,000
characters, 64 for a name, ...) say more precisely what was too long.

`UploadQuota`: Gradio's upload route caps each file (`max_file_size`) but not
their number (a thousand per request), and nothing deleted them: one client
stored 257 MB in 12 s. Here a request may carry one file's worth, each client
`UPLOAD_BYTES_PER_CLIENT` and everyone together `UPLOAD_BYTES_TOTAL` over
`UPLOAD_WINDOW_S`, the longest an upload lives in Gradio's cache (`delete_cache`,
set on the Blocks in ``app.py``), so uploads never hold more than that on disk. The
annotation-only app has no upload route at all: no participant uploads anything.

`ProbeGate`: a visitor who had spent their probes of the minute (`GUEST_PROBES_PER_MINUTE`), or whose probe found
the probes' line full, was refused by the probe's handler, after Gradio had stored their upload, queued the call
and started the handler: about 9 such calls a second from four scripted guests, each a full request cycle of the
web process. They are refused here instead, with the handler's sentence, for ~2 ms of the web process's time.
"""
from __future__ import annotations

import asyncio
import json
import math

from backend.core import limits
from backend.core.ratelimit import RateLimit, Slots, client_key

MAX_BODY_BYTES = 1024 * 1024
UPLOAD_PATH = "/gradio_api/upload"  # Gradio's file uploads: `UploadQuota` caps them instead
MULTIPART_ALLOWANCE = 64 * 1024  # the form's boundaries and headers around one file


def too_large(limit: int) -> str:
    return (f"Request too large: this app takes at most {limit:,} bytes per request (files go through the "
            "upload, which has its own limit).")


class BodyLimit:
    """ASGI middleware: requests whose body (declared or as sent) exceeds `max_bytes` get a 413."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD") or is_upload(scope):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await refuse(send, 413, too_large(self.max_bytes))
            return
        body, more = b"", True
        while more:  # a body without (or with a false) length is read up to the limit, no further
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await refuse(send, 413, too_large(self.max_bytes))
                return
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def is_upload(scope: dict) -> bool:
    """Whether a request is a post to Gradio's upload route: exactly that path, nothing that merely ends alike."""
    return scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == UPLOAD_PATH


class UploadQuota:
    """ASGI middleware for Gradio's upload route: off entirely (`enabled` False), or one file's worth per request
    and a byte budget per client and for everyone (`behind_proxy`: who the client is, see
    `backend.core.ratelimit.client_key`)."""

    def __init__(self, app, enabled: bool = True, behind_proxy: bool = False,
                 per_client: RateLimit | None = None, everyone: RateLimit | None = None):
        self.app, self.enabled, self.behind_proxy = app, enabled, behind_proxy
        self.per_request = limits.MAX_UPLOAD_BYTES + MULTIPART_ALLOWANCE
        self.per_client = per_client or RateLimit(limits.UPLOAD_BYTES_PER_CLIENT, limits.UPLOAD_WINDOW_S)
        self.everyone = everyone or RateLimit(limits.UPLOAD_BYTES_TOTAL, limits.UPLOAD_WINDOW_S)

    async def __call__(self, scope, receive, send):
        if not is_upload(scope):
            await self.app(scope, receive, send)
            return
        if not self.enabled:
            await refuse(send, 404, "This server takes no uploads.")
            return
        headers = _headers(scope)
        declared = headers.get("content-length", "")
        if not declared.isdigit():
            await refuse(send, 411, "An upload must say its size (Content-Length).")
            return
        size = int(declared)
        if size > self.per_request:
            await refuse(send, 413, f"One upload at a time, of at most {limits.MAX_UPLOAD_BYTES:,} bytes; this "
                                    f"request has {size:,}.")
            return
        client = _client(scope, headers, self.behind_proxy)
        wait = self.per_client.retry_after(client, size) or self.everyone.retry_after("everyone", size)
        if wait:
            await refuse(send, 429, f"Too many uploads for now: wait {_minutes(wait)} before uploading again "
                                    "(uploads are kept an hour, and their room is shared).")
            return
        self.per_client.spend(client, size)
        self.everyone.spend("everyone", size)
        await self.app(scope, receive, send)


PROBE_ROUTES = frozenset(f"/gradio_api/{route}/probe{slash}" for route in ("call", "call/v2", "run", "api")
                         for slash in ("", "/"))
QUEUE_JOIN_PATH = "/gradio_api/queue/join"
REFUSAL_PAUSE_S = 1.0  # `ProbeGate` answers a refusal after this long


class ProbeGate:
    """ASGI middleware that refuses a probe at the door (HTTP 429, the handler's sentence), before Gradio stores
    its upload, queues it and starts a handler for it: a client over the visitors' allowance (`allowance`, the
    handler's own count, which this only reads) for an upload, a queue join of one of `probe_events` (the Probe's
    event ids) and the probe's named routes; anyone's probe while the probes' `line` is full (not their upload,
    which may be for a later probe). The handler still counts and decides (`ui.tabs.probe.admit`, the line): a
    request by another route still reaches it, and a place may free up meanwhile.

    A refusal is answered after `pause_s` (or the wait, if shorter), a pause that holds no thread: a script that
    retries at once then asks about once a second instead of forty times (four guests sent 2,180 refused uploads
    in 50 s without it), which spared its ~2 ms each but not the requests' own cost on both sides.

    The Probe's image is the only upload this app takes. A request does not say who is signed in, so an admin
    whose address (a NAT shared with a visitor over the allowance) has none left waits the same minute to upload
    an image; their probes themselves are never counted."""

    def __init__(self, app, allowance: RateLimit, line: Slots, probe_events: set[int], behind_proxy: bool = False,
                 pause_s: float = REFUSAL_PAUSE_S):
        self.app, self.allowance, self.line, self.probe_events = app, allowance, line, probe_events
        self.behind_proxy, self.pause_s = behind_proxy, pause_s

    async def __call__(self, scope, receive, send):
        probe_call = scope["type"] == "http" and scope["method"] == "POST" and (
            scope["path"] == QUEUE_JOIN_PATH or scope["path"] in PROBE_ROUTES)
        if not (probe_call or is_upload(scope)):
            await self.app(scope, receive, send)
            return
        wait = self.allowance.retry_after(_client(scope, _headers(scope), self.behind_proxy))
        refusal = limits.guest_probes_spent(wait) if wait else None
        if probe_call and refusal is None and self.line.full:
            refusal, wait = self.line.busy_message, self.line.retry_after_s
        if refusal is not None and scope["path"] == QUEUE_JOIN_PATH:  # only a probe's join: read the body to know
            body = await _body(receive)
            receive = _replay([{"type": "http.request", "body": body, "more_body": False}], receive)
            if _fn_index(body) not in self.probe_events:
                refusal = None
        if refusal is not None:
            await asyncio.sleep(min(self.pause_s, wait))
            await refuse(send, 429, refusal, retry_after=wait)
            return
        await self.app(scope, receive, send)


async def _body(receive) -> bytes:
    """The whole body (`BodyLimit`, outside this middleware, has capped it)."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message["type"] == "http.request" and message.get("more_body", False)
    return body


def _fn_index(body: bytes) -> int | None:
    try:
        index = json.loads(body).get("fn_index")
    except (ValueError, AttributeError):
        return None
    return index if isinstance(index, int) else None


def _headers(scope: dict) -> dict[str, str]:
    return {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers") or []}


def _client(scope: dict, headers: dict[str, str], behind_proxy: bool) -> str:
    """Who sent the request, keyed as the handlers key it (`ui.context.AppContext.client`)."""
    return client_key((scope.get("client") or ("unknown",))[0], headers, behind_proxy)


def _minutes(seconds: float) -> str:
    return f"{math.ceil(seconds / 60)} minute(s)" if seconds > 90 else f"{math.ceil(seconds)} s"


def _replay(messages: list[dict], then=None):
    """A `receive` that gives back what the middleware already read, then defers to the real one."""
    async def receive():
        if messages:
            return messages.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive


async def refuse(send, status: int, detail: str, retry_after: float = 0.0) -> None:
    """Answer with `status` and {"detail": ...} (where Gradio's page shows the sentence), without the app;
    `retry_after` (seconds) also as the Retry-After header."""
    payload = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retry_after:
        headers.append((b"retry-after", str(math.ceil(retry_after)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
