"""What the tabs share: one model registry, one embedding cache, the model list, examples."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from backend.encoder import EmbeddingCache
from backend.models import ModelRegistry


@dataclass
class AppContext:
    registry: ModelRegistry
    cache: EmbeddingCache
    model_choices: list[str]
    default_models: list[str]
    examples: list[list] = field(default_factory=list)  # [image path, caption]
    output_dir: Path = Path("workspace/downloads")
