"""Compositionality Lab: the composition root. Builds the Blocks app from `ui/` and launches it."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import gradio as gr

from backend import catalog, jobs
from backend.encoder import EmbeddingCache
from backend.models import ModelRegistry
from backend.store import Store
from ui import probe, train
from ui.context import AppContext

ROOT = Path(__file__).resolve().parent
WORKSPACE = Path(os.environ.get("COMPLAB_WORKSPACE", ROOT / "workspace"))



def default_context() -> AppContext:
    """Wire the shared backend objects; local model paths are confined to the workspace and models/."""
    from backend.toyworld.gallery import example_gallery

    store = Store(os.environ.get("COMPLAB_DB", WORKSPACE / "lab.db"))
    jobs.reconcile(store)  # runs whose process died while the app was down are settled now
    return AppContext(registry=ModelRegistry(max_models=3, allowed_roots=[WORKSPACE, ROOT / "models"]),
                      cache=EmbeddingCache(), model_choices=catalog.model_choices(),
                      default_models=catalog.default_models(), examples=example_gallery(WORKSPACE / "examples"),
                      output_dir=WORKSPACE / "downloads", store=store, runs_dir=WORKSPACE / "runs")


def build_app(ctx: AppContext) -> gr.Blocks:
    with gr.Blocks(title="Compositionality Lab") as demo:
        gr.Markdown("# Compositionality Lab\nProbe CLIP-like models with caption perturbations: "
                    "which hard negatives does a model wrongly prefer, which meaning-preserving "
                    "rewrites does it wrongly reject?")
        with gr.Tab("Probe"):
            probe.build(ctx)
        if ctx.store is not None:
            with gr.Tab("Train"):
                train.build(ctx)
    return demo


def main() -> None:
    from backend.perturb import warm_up
    threading.Thread(target=warm_up, daemon=True).start()  # spaCy + WordNet load while the page opens
    ctx = default_context()
    build_app(ctx).queue(default_concurrency_limit=2).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        theme=gr.themes.Soft(), allowed_paths=[str(ctx.output_dir), str(WORKSPACE / "examples")])


if __name__ == "__main__":
    main()
