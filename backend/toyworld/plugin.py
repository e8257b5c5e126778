"""The built-in world as a plug-in: everything it adds to the lab, registered through `backend.plugins`.

Nothing here is imported by generic code except through those hooks, and registering imports nothing heavy:
every hook names a function as ``"module:attribute"``, loaded when it is used.
"""
from __future__ import annotations

from backend.core.settings import SHIPPED_MODELS
from backend.toyworld import recipes

SHIPPED_MODEL = SHIPPED_MODELS / "toyclip-v1"  # `toyworld pretrain --install` writes here
PRESET_SUMMARY = ("the built-in world's renderer: exact and deliberately flawed scenes of toy captions, each "
                  "image's truth known from the oracle; offline, no GPU")


def register(hooks) -> None:
    """Add the world's model, tokenizer, data, recipes, benchmarks, renderer, campaign items, examples and
    commands."""
    from backend.generate.presets import Preset  # a dataclass: no torch, no diffusers
    from backend.toyworld.candidates import RESOLUTION  # numpy and PIL only

    hooks.add_model("toyworld", SHIPPED_MODEL, "the built-in world's tiny CLIP (228k parameters), offline")
    hooks.add_model_builder("toyworld:random", "backend.toyworld.training:fresh_model")
    hooks.add_tokenizer("toyclip-v1", "backend.toyworld.tokenizer:ToyTokenizer")
    hooks.add_data_source("toyworld-finetune", "backend.toyworld.training:finetune_data",
                          "the world's dense captions with ground-truth negatives, positives and negative images")
    hooks.add_data_source("toyworld-pretrain", "backend.toyworld.training:pretrain_data",
                          "sparse captioned scenes (what the shipped model was pretrained on)")
    for name, values in recipes.FINETUNES.items():
        hooks.add_recipe(f"built-in world: {name}", {**recipes.FINETUNE_BASE, **values})
    hooks.add_benchmarks("backend.toyworld.tasks")
    # Pretraining-style retrieval is the world's object-centric axis (what finetuning may cost); its zero-shot shape
    # classification is 100% at every alpha, so it cannot show a trade-off.
    hooks.add_sweep_axes("toy-sugarcrepe/overall", "toy-pretrain-retrieval/t2i_R@1")
    renderer = Preset(name="toyworld", model_id="toyworld-renderer", unet_id=None, steps=None, guidance=None,
                      images_per_caption=4, prompt_suffix="", width=RESOLUTION,
                      height=RESOLUTION, output_size=RESOLUTION,
                      licence="MIT (this project's renderer)", licence_url="", generator="toyworld",
                      summary=PRESET_SUMMARY)
    hooks.add_generator("toyworld", draw="backend.toyworld.candidates:draw_slot",
                        regenerate="backend.toyworld.candidates:regenerate", presets=(renderer,))
    hooks.add_campaign_source("toyworld", "built-in world", "backend.toyworld.campaign:toy_items",
                              generator="toyworld")
    hooks.set_gold_items("backend.toyworld.campaign:gold_items", generator="toyworld")
    hooks.add_examples("backend.toyworld.gallery:example_gallery")
    hooks.add_command("backend.toyworld.cli:add_parsers")
