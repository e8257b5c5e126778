"""What the web process keeps in memory between requests: loaded models and embeddings, each behind a lock.

Gradio runs handlers on several threads at once (two visitors probing, the Benchmarks tab beside the Probe), so
both containers are shared mutable state. Each takes its lock for every read and write of its map; a model that
is not loaded yet is loaded outside the map's lock, under a lock of its own, so that two requests for the same
model load it once while a request for another model does not wait for it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from backend.models.loading import LoadedModel


class ModelRegistry:
    """Loaded models, bounded LRU by count: several models side by side, but never all of them."""

    def __init__(self, max_models: int = 3, device: str | None = None, precision: str | None = None,
                 allowed_roots: list[Path] | None = None, models_dir: Path | None = None,
                 max_parameters: int | None = None):
        self.max_models = max_models
        self.max_parameters = max_parameters  # per model, counted before it is built (`backend.models.budget`)
        self.device = device
        self.precision = precision
        self.allowed_roots = allowed_roots
        self.models_dir = models_dir  # catalog models' cache; None: the settings' models folder
        self._models: OrderedDict[str, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def settings(self) -> dict:
        """What this registry was made with, to make another like it (in another process: a probe worker's)."""
        return {"max_models": self.max_models, "device": self.device, "precision": self.precision,
                "allowed_roots": self.allowed_roots, "models_dir": self.models_dir,
                "max_parameters": self.max_parameters}

    def get(self, spec: str) -> LoadedModel:
        """The model `spec` names, loaded now unless it is loaded already (`ModelLoadError` if it cannot be)."""
        key = spec.strip()
        found = self._cached(key)
        if found is not None:
            return found
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            found = self._cached(key)  # another request may have loaded it while this one waited
            if found is not None:
                return found
            from backend.models.loading import load_model

            try:
                loaded = load_model(key, self.device, self.precision, self.allowed_roots, self.models_dir,
                                    self.max_parameters)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            with self._lock:
                self._models[key] = loaded
                while len(self._models) > self.max_models:
                    self._models.popitem(last=False)
        return loaded

    def _cached(self, key: str) -> LoadedModel | None:
        with self._lock:
            found = self._models.get(key)
            if found is not None:
                self._models.move_to_end(key)
            return found

    def loaded(self) -> list[str]:
        with self._lock:
            return list(self._models)


class EmbeddingCache:
    """A bounded LRU map from (model identity, content key) to a normalised embedding."""

    def __init__(self, max_items: int = 20_000):
        self.max_items = max_items
        self._items: OrderedDict[tuple, torch.Tensor] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> torch.Tensor | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple, value: torch.Tensor) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
