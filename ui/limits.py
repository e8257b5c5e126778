"""A cap on the size of request bodies, refused before Gradio reads them.

Gradio reads a request's JSON body whole before it looks at it: a 200 MB post
to the queue took 11 s and 1.2 GB of server memory, then joined the queue as
an event. Every form of this app sends a few kilobytes (files go through the
upload route first, which `max_file_size` caps), so anything above
`MAX_BODY_BYTES` is refused with HTTP 413 and a message, before it is read.
The fields' own limits (a caption's 1,000 characters, 64 for a name, ...) say
more precisely what was too long.
"""
from __future__ import annotations

import json

MAX_BODY_BYTES = 1024 * 1024
UPLOAD_SUFFIX = "/upload"  # Gradio's file uploads: capped by `max_file_size` instead


def too_large(limit: int) -> str:
    return (f"Request too large: this app takes at most {limit:,} bytes per request (files go through the "
            "upload, which has its own limit).")


class BodyLimit:
    """ASGI middleware: requests whose body (declared or as sent) exceeds `max_bytes` get a 413."""

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD") or \
                scope["path"].rstrip("/").endswith(UPLOAD_SUFFIX):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _refuse(send, too_large(self.max_bytes))
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
                await _refuse(send, too_large(self.max_bytes))
                return
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _replay(messages: list[dict], then=None):
    """A `receive` that gives back what the middleware already read, then defers to the real one."""
    async def receive():
        if messages:
            return messages.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive


async def _refuse(send, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
