"""What the tabs share: the settings, one model registry, one embedding cache, the model list, the store."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gradio import processing_utils
from gradio import utils as gradio_utils

from backend import jobs
from backend.core.settings import Settings
from backend.core.store import Store
from backend.models import choices
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.patching.config import exported_models


@dataclass
class AppContext:
    settings: Settings
    registry: ModelRegistry
    cache: EmbeddingCache
    model_choices: list[str]
    default_models: list[str]
    store: Store
    examples: list[list] = field(default_factory=list)  # [image path, caption]

    @property
    def output_dir(self) -> Path:
        """Where downloads (probe CSV/JSON) are written."""
        return self.settings.downloads_dir

    def current_model_choices(self) -> list[tuple[str, str]]:
        """(label, spec) pairs as of now: catalog models labelled with whether they are on disk, and finished
        training runs' checkpoints and exported patched models, which join without restarting the app."""
        labels = {spec: label for label, spec in choices.labelled_choices(self.model_choices, self.settings.models_dir)}
        for label, spec in [*jobs.finished_checkpoints(self.store), *exported_models(self.settings.models_dir)]:
            labels.setdefault(spec, label)
        return [(label, spec) for spec, label in labels.items()]

    def offered_specs(self) -> list[str]:
        """Every spec the model list offers: what anyone may probe without naming a server path."""
        return [spec for _, spec in self.current_model_choices()]


def offer(path: str | Path) -> str:
    """A file for a download output: a copy in Gradio's cache (a folder named by the content's hash), which the
    page fetches. The downloads folder itself is never served (`app.served_folders`): anyone could fetch a
    database backup or a campaign's answers there by guessing its name."""
    return processing_utils.save_file_to_cache(path, cache_dir=gradio_utils.get_upload_folder())
