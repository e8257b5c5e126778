"""The built-in world's training recipes: the runs measured in docs/TOYWORLD.md.

`PRETRAIN` reproduces the shipped model (``python -m backend toyworld pretrain --install``); `FINETUNES` are the
finetunes of the shipped model on the world's dense captions (the acceptance runs of the finetuning work).
Plain dicts of `backend.train.config.TrainConfig` fields: registering them as the Train tab's recipes
(`backend.toyworld.plugin`) imports nothing.
"""
from __future__ import annotations

from typing import Any

# The recipe that produces the shipped built-in model (docs/TOYWORLD.md has its numbers).
# augment "none": those numbers were measured without augmentation (before it existed), and the
# recipe must reproduce them.
PRETRAIN: dict[str, Any] = {
    "base_model": "toyworld:random", "data": "toyworld-pretrain", "loss": "clip", "steps": 1500,
    "batch_size": 256, "lr": 2e-3, "warmup_steps": 100, "weight_decay": 0.1,
    "dataset_size": 40000, "eval_every": 500, "augment": "none",
    "eval_benchmarks": ["toy-sugarcrepe", "toy-retrieval", "toy-pretrain-retrieval"]}


# Finetunes of the shipped model on the world's dense captions (the acceptance runs of
# the finetuning issue); "control" is plain CLIP on the same data, "hn_only" is
# Kamath et al.'s hard-negative-only ablation (w_hp = 0). augment "none": docs/TOYWORLD.md's numbers
# for these runs were measured without augmentation.
FINETUNE_BASE: dict[str, Any] = {
    "base_model": "toyworld", "data": "toyworld-finetune", "steps": 600, "batch_size": 128,
    "lr": 2e-3, "warmup_steps": 50, "dataset_size": 4000, "eval_every": 200, "augment": "none",
    "families": ["negclip_swap"],
    "eval_benchmarks": ["toy-sugarcrepe", "toy-hard-positives", "toy-retrieval"]}
FINETUNES: dict[str, dict[str, Any]] = {
    "control": {"loss": "clip"},
    "negclip": {"loss": "negclip"},
    "ce_clip": {"loss": "ce_clip"},
    "hp_hn": {"loss": "hp_hn"},
    "hn_only": {"loss": "hp_hn", "loss_weights": {"w_hp": 0.0}},
}


def finetune_config(recipe: str, seed: int = 0, output_dir: str = "", **overrides):
    """The validated `TrainConfig` of a named finetune, its run named ``toyworld-<recipe>-seed<seed>``."""
    from backend.train.config import TrainConfig

    if recipe not in FINETUNES:
        raise ValueError(f"Unknown recipe {recipe!r}; one of {', '.join(FINETUNES)}")
    return TrainConfig.from_dict({**FINETUNE_BASE, **FINETUNES[recipe], "seed": seed,
                                  "name": f"toyworld-{recipe}-seed{seed}", "output_dir": output_dir, **overrides})
