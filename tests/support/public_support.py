"""The app as a public deployment runs it, for the tests of what an anonymous visitor can and cannot do.

`public_app` builds the full app (or the annotation-only one) with the app's own
launch options (`app.launch_options`: the request guards, the served and blocked
folders) and yields its context too, so a test can hold the probes' line or read
the registry. `hub_repo` lays out a Hugging Face repo in the test session's
offline hub cache, as `hf_hub_download` leaves one.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from app import build_annotate_app, build_app, launch_options
from backend.core.store import Store
from backend.models.registry import EmbeddingCache, ModelRegistry
from tests.support.appserver import launch, workspace_settings
from ui.context import AppContext, Guards

SPACE = {"SPACE_ID": "lab/public", "COMPLAB_BACKUP_REPO": "off"}  # behind the Space's proxy: X-Forwarded-For


@contextmanager
def public_app(workspace: Path, choices=("toyworld",), annotate_only: bool = False, guards: Guards | None = None,
               extra_roots=(), **env: str):
    """The app over `workspace` on 127.0.0.1; yields (url, its AppContext)."""
    settings = workspace_settings(workspace, extra_roots=extra_roots, **env)
    registry = ModelRegistry(device="cpu", allowed_roots=list(settings.allowed_roots), models_dir=settings.models_dir,
                             max_parameters=settings.max_model_parameters)
    ctx = AppContext(settings=settings, registry=registry, cache=EmbeddingCache(), model_choices=list(choices),
                     default_models=list(choices)[:1], store=Store(settings.db), guards=guards or Guards())
    demo = (build_annotate_app if annotate_only else build_app)(ctx).queue()
    options = {key: value for key, value in launch_options(ctx, uploads=not annotate_only).items()
               if key not in ("server_name", "server_port")}
    url = launch(demo, **options)  # without Gradio's own reachability check, which times out under load
    try:
        yield url, ctx
    finally:
        demo.close()


def hub_repo(hub_cache: Path, repo_id: str, files: dict[str, bytes]) -> str:
    """A model repo in the offline hub cache holding `files`; returns its spec (``hf-hub:owner/name``)."""
    commit = "1" * 40
    repo = hub_cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for name, data in files.items():
        (snapshot / name).write_bytes(data)
    return f"hf-hub:{repo_id}"


def config_only(model_cfg: dict) -> dict[str, bytes]:
    """The files of a repo (or folder) that declares a model and holds no weights: one small JSON file."""
    return {"open_clip_config.json": json.dumps({"model_cfg": model_cfg}).encode()}
