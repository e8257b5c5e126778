"""Which models the app offers, and which it picks by default.

The default is the first well-known pretrained model whose weights are already
in the local Hugging Face cache (no download at start-up), else the built-in
world's model, which ships in the repo, so an offline machine opens with a
working Probe tab.
"""
from __future__ import annotations

from pathlib import Path

import open_clip
from huggingface_hub import try_to_load_from_cache

from backend.models import BUILTIN_MODELS, parse_spec

PRETRAINED_CHOICES = [
    "ViT-B-32-quickgelu:openai",
    "ViT-B-32:laion2b_s34b_b79k",
    "ViT-L-14-quickgelu:openai",
]
_WEIGHT_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


def is_cached(spec: str) -> bool:
    """True when a pretrained tag's weights are already on disk (checked without any network call)."""
    parsed = parse_spec(spec)
    if parsed.source != "tag":
        return False
    cfg = open_clip.get_pretrained_cfg(parsed.architecture.replace("-quickgelu", ""), parsed.pretrained) or {}
    repo = (cfg.get("hf_hub") or "").strip("/")
    return bool(repo) and any(isinstance(try_to_load_from_cache(repo, name), str) for name in _WEIGHT_FILES)


def builtin_choices() -> list[str]:
    return [name for name, directory in BUILTIN_MODELS.items() if (Path(directory) / "open_clip_config.json").is_file()]


def model_choices() -> list[str]:
    return [*builtin_choices(), *PRETRAINED_CHOICES]


def default_models() -> list[str]:
    cached = [spec for spec in PRETRAINED_CHOICES if is_cached(spec)]
    return cached[:1] or builtin_choices()[:1]
