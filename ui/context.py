"""What the tabs share: one model registry, one embedding cache, the model list, examples, the store."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from backend import jobs
from backend.encoder import EmbeddingCache
from backend.models import ModelRegistry
from backend.store import Store


@dataclass
class AppContext:
    registry: ModelRegistry
    cache: EmbeddingCache
    model_choices: list[str]
    default_models: list[str]
    examples: list[list] = field(default_factory=list)  # [image path, caption]
    output_dir: Path = Path("workspace/downloads")
    store: Store | None = None  # jobs and metrics; the Train tab needs it
    runs_dir: Path = Path("workspace/runs")  # where the Train tab puts runs (inside the registry's allowed roots)

    def current_model_choices(self) -> list[str]:
        """The model list as of now: finished training runs' checkpoints appear without restarting the app."""
        finished = jobs.finished_checkpoints(self.store) if self.store is not None else []
        return list(dict.fromkeys([*self.model_choices, *finished]))
