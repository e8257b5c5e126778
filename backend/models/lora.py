"""LoRA on open_clip models through peft: add adapters to the vision and/or text tower, save only the adapter,
load an adapter checkpoint onto its base model, merge it into a plain checkpoint.

Why peft: its LoRA layers cover nn.Linear and nn.MultiheadAttention (open_clip's
attention), its merge is exact arithmetic on the base weights, and it is what the
papers' released adapters and the wider ecosystem use; a hand-written LoRA would
need its own attention patching (FSC-CLIP's `lora_utils` does exactly that).

A LoRA checkpoint is a checkpoint folder (`backend.models.checkpoint`) whose
``open_clip_model.safetensors`` holds the adapter's tensors only and whose
``open_clip_config.json`` carries ``"lora": {"base_model": SPEC, "rank": ..., ...}``.
`backend.models.loading` loads the base model from that spec, adds the adapter,
loads its tensors and merges them, so the Probe, the benchmarks and a patching
sweep get a plain open_clip model with the base's parameter names (a sweep
interpolates it against its base like any finetune); its `export_merged` writes
that merged model as an ordinary checkpoint. (Loading an adapter means loading its
base: that recursion lives in `loading`, which imports this module, not the reverse.)
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from backend.models.checkpoint import adapter_state

LORA_KEY = "lora"
MERGED_FOLDER = "merged"  # under the models folder: where `export_merged` writes
ADAPTER_NAME = "default"
# open_clip's transformer blocks: `visual.transformer.resblocks.N` (vision) and `transformer.resblocks.N` (text)
TOWERS = {"vision": r"visual\.transformer", "text": r"transformer"}
TARGETS = {"attn": r"attn", "mlp": r"mlp\.c_fc|mlp\.c_proj"}


def target_pattern(towers: Sequence[str], targets: Sequence[str]) -> str:
    """The peft ``target_modules`` regex (matched against whole module names) for the chosen towers and layers."""
    return (rf"^({'|'.join(TOWERS[t] for t in towers)})\.resblocks\.\d+\."
            rf"({'|'.join(TARGETS[t] for t in targets)})$")


def record(base_model: str, rank: int, alpha: float, towers: Sequence[str], targets: Sequence[str]) -> dict:
    """What a LoRA checkpoint's config stores: enough to rebuild the adapter on its base model."""
    return {"base_model": base_model, "rank": int(rank), "alpha": float(alpha or rank), "towers": list(towers),
            "targets": list(targets)}


def add_lora(model: torch.nn.Module, lora: dict):
    """Add LoRA adapters to `model` in place (only the adapters train from now on); returns peft's LoraModel,
    whose `merge_and_unload()` folds them back into the base weights."""
    import peft

    config = peft.LoraConfig(r=lora["rank"], lora_alpha=lora["alpha"], lora_dropout=0.0,
                             target_modules=target_pattern(lora["towers"], lora["targets"]))
    wrapper = peft.LoraModel(model, config, ADAPTER_NAME)
    if not adapter_state(model):
        raise ValueError(f"LoRA found no {'/'.join(lora['targets'])} layer in the {'/'.join(lora['towers'])} "
                         "tower(s) of this model (open_clip transformer towers have attn, mlp.c_fc, mlp.c_proj)")
    return wrapper
