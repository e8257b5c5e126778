"""Start the real Gradio app on 127.0.0.1 for tests (gradio_client and browser)."""
from __future__ import annotations

import socket
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from app import build_annotate_app, build_app, launch_options, task_image_route
from backend.core.settings import Settings
from backend.core.store import Store
from backend.models.registry import EmbeddingCache, ModelRegistry
from ui.context import AppContext


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(demo, **options) -> str:
    """Serve `demo` on a free port of 127.0.0.1 in this process's threads; returns its address.

    Gradio's `launch` returns once the server answered its startup request, then fetches the whole page with a
    3 s timeout and, if that is slower (a loaded machine: other test workers, jobs, browsers), raises "localhost
    is not accessible" although the server is up. A test's server is local by construction: that check is off.

    A test that plays a Space (``SYSTEM=spaces``) would also start Gradio's Spaces hot-reloader, which walks
    every object of the test process (torch's included) and makes `demo.close()` wait seconds for that walk:
    source reloading is not under test, so the server starts without it.
    """
    port = free_port()
    with mock.patch("gradio.http_server.get_space", return_value=None):
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    _frontend=False, **options)
    return f"http://127.0.0.1:{port}/"


def workspace_settings(workspace: Path, db_path: Path | None = None, extra_roots=(), **env: str) -> Settings:
    """Settings for a workspace of the test's own; `env` adds COMPLAB_* variables (admin credentials, ...)."""
    values = {"COMPLAB_WORKSPACE": str(workspace), "COMPLAB_DB": str(db_path or workspace / "lab.db"),
              "COMPLAB_DOWNLOADS_DIR": str(workspace), "COMPLAB_RUNS_DIR": str(workspace / "runs"),
              "COMPLAB_ALLOWED_ROOTS": ":".join(str(root) for root in extra_roots), **env}
    return Settings.load(env=values)


@contextmanager
def running_app(model_dir: Path, choices: list[str], output_dir: Path, examples=None, db_path: Path | None = None,
                **env: str):
    """The app over a workspace at `output_dir` (its store at `db_path`, default `output_dir/lab.db`).

    Local models may come from `model_dir`; `env` sets further settings, e.g.
    ``COMPLAB_ADMIN_USER="admin", COMPLAB_ADMIN_PASSWORD="pw"`` for the password policy.
    """
    settings = workspace_settings(output_dir, db_path, extra_roots=[model_dir], **env)
    registry = ModelRegistry(device="cpu", allowed_roots=list(settings.allowed_roots))
    ctx = AppContext(settings=settings, registry=registry, cache=EmbeddingCache(), model_choices=choices,
                     default_models=choices[:1], store=Store(settings.db), examples=examples or [])
    demo = build_app(ctx).queue()
    try:
        yield launch(demo, allowed_paths=[str(output_dir)], max_file_size=launch_options(ctx)["max_file_size"],
                     app_kwargs={"middleware": [task_image_route(ctx)]})
    finally:
        demo.close()


def bare_context(settings: Settings) -> AppContext:
    """An app's context over `settings` with no model offered."""
    return AppContext(settings=settings, registry=ModelRegistry(device="cpu"), cache=EmbeddingCache(),
                      model_choices=[], default_models=[], store=Store(settings.db), examples=[])


def built_apps(settings: Settings):
    """The annotation app and the whole app, built as `app.py` builds them, not launched."""
    ctx = bare_context(settings)
    return build_annotate_app(ctx), build_app(ctx)


@contextmanager
def annotate_app(settings: Settings, **options):
    """The annotation flow alone (`python app.py --mode annotate`) over `settings`; `options` adds launch options."""
    ctx = bare_context(settings)
    demo = build_annotate_app(ctx).queue()
    try:
        yield launch(demo, **{"app_kwargs": {"middleware": [task_image_route(ctx)]}, **options})
    finally:
        demo.close()


@contextmanager
def annotate_server(settings):
    """`python app.py --mode annotate` on a free port: the annotation app with the launch options it gets
    there (the keyboard script in the page's head, the theme, the folders files may come from)."""
    ctx = bare_context(settings)
    demo = build_annotate_app(ctx).queue(default_concurrency_limit=2)
    port = free_port()
    demo.launch(**launch_options(ctx) | {"server_name": "127.0.0.1", "server_port": port, "quiet": True,
                                         "prevent_thread_lock": True})
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
