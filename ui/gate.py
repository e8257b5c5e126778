"""Who may reach the app, and which files anyone may fetch (Starlette middleware, before Gradio sees a request).

`HostCheck`, in the open-local policy (no credentials, loopback only, so everyone
who reaches the app is admin): a web page the researcher visits can point its own
domain at 127.0.0.1 (DNS rebinding) and then call this app as a page of its own
origin, admin actions included: a request with ``Host: evil.example:<port>``
downloaded the whole store. Browsers always send the name they connected to, so a
request is served only when its Host is a loopback name with this app's port. Not
Starlette's ``TrustedHostMiddleware``: it ignores the port and answers a bare
"Invalid host header". Under the other policies admin rights need a signed-in
credential that a rebinding page does not have (docs/SECURITY.md says how to add a
Host check in front of them anyway).

`PublicFiles`: Gradio's file route serves any file inside its allowed folders
(and fetches any public URL on the visitor's behalf). The app's allowed folders
hold more than annotators need (job logs, manifests, a campaign's files), so this
route is narrowed to what is public: files in Gradio's cache (uploads, and every
file a handler returned: Gradio copies each into it) and the examples folder.
Everything else is 403, whatever its folder: campaign images too (their names
are content hashes that the public code can rebuild).

`TaskImageRoute`: the images of the task on an annotator's screen, under the
opaque names of `backend.annotate.images`, served only while that task is held.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.responses import FileResponse

from backend.annotate.images import NAME_CHARS, TaskImages
from ui.limits import refuse

FILE_ROUTE = "/gradio_api/file="
TASK_IMAGE_ROUTE = "/task-image/"  # + a name of `backend.annotate.images`
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # as a browser writes them in a Host header


class HostCheck:
    """ASGI middleware: requests whose Host header is not one of `names` with the port the server listens on
    (``127.0.0.1:7860``) get a 403."""

    def __init__(self, app, names: Iterable[str] = LOOPBACK_NAMES):
        self.app = app
        self.names = tuple(name.lower() for name in names)

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            port = (scope.get("server") or ("", 0))[1]
            allowed = [f"{name}:{port}" for name in self.names]
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            if host not in allowed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await refuse(send, 403, f"This app answers only to {', '.join(allowed)}, not to "
                                        f"{host or 'a request without a Host'}: open it at one of those addresses "
                                        "(a page of another site pointing its own name here is refused).")
                return
        await self.app(scope, receive, send)


class PublicFiles:
    """ASGI middleware narrowing Gradio's file route to `is_public` files; anything else gets a 403."""

    def __init__(self, app, cache: Path, public_images: Iterable[Path], private: Iterable[Path] = ()):
        self.app = app
        self.cache = Path(cache).resolve()
        self.public_images = [Path(folder).resolve() for folder in public_images]
        self.private = [Path(folder).resolve() for folder in private]

    def is_public(self, path: str) -> bool:
        """Whether anyone may fetch `path` (as Gradio reads it: relative to the working folder, links followed)."""
        if "://" in path or "\x00" in path:
            return False
        try:
            resolved = Path(path).resolve()
        except (OSError, ValueError):
            return False
        if resolved.is_relative_to(self.cache):
            return True
        return (resolved.suffix.lower() in IMAGE_SUFFIXES
                and any(resolved.is_relative_to(folder) for folder in self.public_images)
                and not any(resolved.is_relative_to(folder) for folder in self.private))

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith(FILE_ROUTE) and \
                not self.is_public(scope["path"][len(FILE_ROUTE):]):
            await refuse(send, 403, "File not allowed: only examples and files this app handed out are served.")
            return
        await self.app(scope, receive, send)


def task_image_url(name: str) -> str:
    """Where the page fetches the task image called `name`."""
    return f"{TASK_IMAGE_ROUTE}{name}"


class TaskImageRoute:
    """ASGI middleware answering ``GET /task-image/<name>``: the file `images` opens for that name (its task held
    by the annotator it was shown to), never cached by the browser; else 404, the same for every refusal."""

    def __init__(self, app, images: TaskImages):
        self.app = app
        self.images = images

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith(TASK_IMAGE_ROUTE):
            await self.app(scope, receive, send)
            return
        name = scope["path"][len(TASK_IMAGE_ROUTE):]
        path = await run_in_threadpool(self.images.open, name) if len(name) == NAME_CHARS and name.isalnum() else None
        if path is None:
            await refuse(send, 404, "No such image on your screen: reload the page to see your current task.")
            return
        await FileResponse(path, headers={"cache-control": "private, no-store"})(scope, receive, send)
