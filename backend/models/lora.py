"""LoRA on open_clip models through peft: add adapters to the vision and/or text tower, save only the adapter,
load an adapter checkpoint onto its base model, merge it into a plain checkpoint.

Why peft: its LoRA layers cover nn.Linear and nn.MultiheadAttention (open_clip's
attention), its merge is exact arithmetic on the base weights, and it is what the
papers' released adapters and the wider ecosystem use; a hand-written LoRA would
need its own attention patching (FSC-CLIP's `lora_utils` does exactly that).

A LoRA checkpoint is a checkpoint folder (`backend.models.checkpoint`) whose
``open_clip_model.safetensors`` holds the adapter's tensors only and whose
``open_clip_config.json`` carries ``"lora": {"base_model": SPEC, "rank": ..., ...}``.
`load_adapter_checkpoint` loads the base model from that spec, adds the adapter,
loads its tensors and merges them, so the Probe, the benchmarks and a patching
sweep get a plain open_clip model with the base's parameter names (a sweep
interpolates it against its base like any finetune). `export_merged` writes that
merged model as an ordinary checkpoint.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

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


def adapter_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The adapter's tensors only: what a LoRA checkpoint saves."""
    return {name: value for name, value in model.state_dict().items() if "lora_" in name}


def load_adapter(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> None:
    """Load adapter tensors into a model with the same adapters; anything missing or unexpected is refused."""
    expected = set(adapter_state(model))
    missing, unexpected = sorted(expected - set(weights)), sorted(set(weights) - expected)
    if missing or unexpected:
        raise ValueError(f"the adapter does not fit this model: {len(missing)} adapter tensor(s) missing "
                         f"(e.g. {missing[:2]}), {len(unexpected)} unexpected (e.g. {unexpected[:2]})")
    model.load_state_dict(weights, strict=False)


def load_adapter_checkpoint(directory: Path, config: dict, spec: str, device: str | None, precision: str | None,
                            allowed_roots: list[Path] | None, models_dir: Path | None = None,
                            max_parameters: int | None = None):
    """A LoRA checkpoint folder as a LoadedModel: its base loaded from the recorded spec, the adapter merged in."""
    from safetensors.torch import load_file

    from backend.models.checkpoint import WEIGHTS
    from backend.models.loading import load_model
    from backend.models.spec import ModelLoadError

    lora = config[LORA_KEY]
    base = load_model(lora["base_model"], device=device, precision=precision, allowed_roots=allowed_roots,
                      models_dir=models_dir, max_parameters=max_parameters)
    wrapper = add_lora(base.model, lora)
    try:
        load_adapter(base.model, load_file(Path(directory) / WEIGHTS, device=str(next(base.model.parameters()).device)))
    except (OSError, ValueError) as error:  # safetensors' own errors for a damaged file are ValueError-like too
        raise ModelLoadError(f"Could not load the LoRA adapter in {directory}: {error}") from error
    base.model = wrapper.merge_and_unload().eval()
    base.notes.append(f"LoRA rank {lora['rank']} on the {' and '.join(lora['towers'])} tower(s) of "
                      f"{lora['base_model']}, merged into its weights.")
    base.spec = spec
    return base


def export_merged(spec: str, name: str, models_dir: Path | str) -> str:
    """Write a LoRA checkpoint merged into its base as a plain checkpoint under ``<models_dir>/merged/<name>``;
    returns its ``local-dir:`` spec."""
    from backend.core.paths import check_slug
    from backend.models.checkpoint import save_checkpoint
    from backend.models.loading import load_model, read_config
    from backend.models.spec import parse_spec

    target = Path(models_dir) / MERGED_FOLDER / check_slug(name, "merged model name")
    if target.exists():
        raise ValueError(f"a merged model named {name!r} already exists in {target.parent}; pick another name")
    if LORA_KEY not in read_config(parse_spec(spec)):
        raise ValueError(f"{spec} is not a LoRA checkpoint: there is no adapter to merge")
    loaded = load_model(spec, device="cpu", precision="fp32")
    save_checkpoint(target, loaded.model, loaded.architecture, {"merged_from": spec})
    return f"local-dir:{target}"
