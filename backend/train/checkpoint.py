"""Checkpoints the model registry loads with no guessing, plus what a resume needs.

A checkpoint is a directory: ``open_clip_config.json`` (architecture, activation,
tokenizer, preprocessing, training config) + ``open_clip_model.safetensors``,
i.e. exactly what ``local-dir:`` loads. The ``last`` checkpoint also holds
``trainer_state.pt`` (optimizer, step, RNG), read back with ``weights_only=True``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

WEIGHTS = "open_clip_model.safetensors"
CONFIG = "open_clip_config.json"
STATE = "trainer_state.pt"


def save_checkpoint(directory: Path, model: torch.nn.Module, model_config: dict, extra: dict,
                    trainer_state: dict | None = None) -> Path:
    """Write to a temporary sibling, then swap it in: a crash never leaves half a checkpoint."""
    directory = Path(directory)
    staging = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, staging / WEIGHTS)
    (staging / CONFIG).write_text(json.dumps({**model_config, **extra}, indent=2))
    if trainer_state is not None:
        torch.save(trainer_state, staging / STATE)
    shutil.rmtree(directory, ignore_errors=True)
    staging.rename(directory)
    return directory


def load_weights(directory: Path, model: torch.nn.Module) -> None:
    model.load_state_dict(load_file(Path(directory) / WEIGHTS))


def load_trainer_state(directory: Path) -> dict | None:
    path = Path(directory) / STATE
    return torch.load(path, weights_only=True) if path.is_file() else None
