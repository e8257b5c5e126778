"""Compositionality Lab: the composition root. Builds the Blocks app from `ui/` and launches it."""
from __future__ import annotations

import os
from pathlib import Path

import gradio as gr

from backend.encoder import EmbeddingCache
from backend.models import ModelRegistry
from ui import probe
from ui.context import AppContext

ROOT = Path(__file__).resolve().parent
WORKSPACE = Path(os.environ.get("COMPLAB_WORKSPACE", ROOT / "workspace"))

# Well-known models a researcher reaches for; they load wherever the hub is reachable.
PRETRAINED_CHOICES = [
    "ViT-B-32-quickgelu:openai",
    "ViT-B-32:laion2b_s34b_b79k",
    "ViT-L-14-quickgelu:openai",
]


def default_context(model_choices: list[str] | None = None, default_models: list[str] | None = None,
                    examples: list[list] | None = None) -> AppContext:
    """Wire the shared backend objects; local model paths are confined to the workspace."""
    choices = model_choices if model_choices is not None else PRETRAINED_CHOICES
    registry = ModelRegistry(max_models=3, allowed_roots=[WORKSPACE, ROOT / "models"])
    return AppContext(registry=registry, cache=EmbeddingCache(), model_choices=choices,
                      default_models=default_models if default_models is not None else choices[:1],
                      examples=examples or [], output_dir=WORKSPACE / "downloads")


def build_app(ctx: AppContext) -> gr.Blocks:
    with gr.Blocks(title="Compositionality Lab") as demo:
        gr.Markdown("# Compositionality Lab\nProbe CLIP-like models with caption perturbations: "
                    "which hard negatives does a model wrongly prefer, which meaning-preserving "
                    "rewrites does it wrongly reject?")
        with gr.Tab("Probe"):
            probe.build(ctx)
    return demo


def main() -> None:
    ctx = default_context()
    build_app(ctx).queue(default_concurrency_limit=2).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        theme=gr.themes.Soft(), allowed_paths=[str(ctx.output_dir)])


if __name__ == "__main__":
    main()
