"""Start the real Gradio app on 127.0.0.1 for tests (gradio_client and browser)."""
from __future__ import annotations

import socket
from contextlib import contextmanager
from pathlib import Path

from app import build_app
from backend.encoder import EmbeddingCache
from backend.models import ModelRegistry
from backend.store import Store
from ui.context import AppContext


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_app(model_dir: Path, choices: list[str], output_dir: Path, examples=None, db_path: Path | None = None):
    """`db_path` (default: a lab.db in `output_dir`) is the store behind the Train tab."""
    ctx = AppContext(registry=ModelRegistry(device="cpu", allowed_roots=[model_dir]),
                     cache=EmbeddingCache(), model_choices=choices, default_models=choices[:1],
                     examples=examples or [], output_dir=output_dir,
                     store=Store(db_path or output_dir / "lab.db"), runs_dir=output_dir / "runs")
    demo = build_app(ctx).queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                allowed_paths=[str(output_dir)])
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
