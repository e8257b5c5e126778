"""Where the web app's probes run: in a worker process of their own (`InWorker`, the app's default), or in the web
process itself (`InProcess`: tests that build the app in their own process, and a ZeroGPU Space).

In a worker (`backend.core.worker.Worker`: niced, one torch thread, replaced when it dies), a probe's perturbation
engine and model leave the interpreter that answers the crowd (docs/RELIABILITY.md, "Anonymous load and the
crowd"); the worker keeps its own model registry and embedding cache, made with the web process's registry's
settings, so models load once per worker. The image crosses as its file's path (a 20 MB upload is read there,
not pickled across), the result as a pickled `ProbeResult`. Writing a probe's variants is bounded there
(`backend.core.limits.PROBE_TEXTS_LIMIT_S`): a rule stuck on a caption costs one probe a message, not the worker
and every probe after it.

On a ZeroGPU Space the probe stays in the web process: `spaces.GPU` functions run in GPU workers that `spaces`
forks from the process that declared them at launch, so only that process may call them. The model's work leaves
the web process there anyway (into `spaces`' own worker); the perturbation engine does not, and the probes' line
and the per-visitor limit are what bound it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from backend.core.limits import PROBE_TEXTS_LIMIT_S
from backend.core.worker import Worker
from backend.models.registry import EmbeddingCache, ModelRegistry
from backend.probe import ProbeResult, run_probe

Progress = Callable[[float, str], None]


class InProcess:
    """Probes in this process, with its own registry and cache."""

    def __init__(self, registry: ModelRegistry, cache: EmbeddingCache):
        self.registry, self.cache = registry, cache

    def run(self, image: Any, caption: str, model_specs: Sequence[str], progress: Progress | None = None,
            **options: Any) -> ProbeResult:
        """`backend.probe.run_probe` with this process's models (`options`: its keyword arguments)."""
        return run_probe(image, caption, model_specs, self.registry, self.cache, progress=progress, **options)

    def loaded(self) -> list[str]:
        """The models loaded now."""
        return self.registry.loaded()

    def warm_up(self) -> None:
        """Load what the first probe needs (the perturbation engine with its data, the model code)."""
        warm_up()


class InWorker:
    """Probes in a worker process whose registry is made like `registry` (which itself stays empty)."""

    def __init__(self, registry: ModelRegistry, worker: Worker | None = None):
        self.registry_settings = registry.settings()
        self.worker = worker or Worker("probes")

    def run(self, image: Any, caption: str, model_specs: Sequence[str], progress: Progress | None = None,
            **options: Any) -> ProbeResult:
        """As `InProcess.run`, in the worker; `backend.core.worker.WorkerStopped` if the worker died meanwhile."""
        return self.worker.call(_probe, self.registry_settings, image, caption, list(model_specs), options,
                                progress=progress)

    def loaded(self) -> list[str]:
        return self.worker.call(_loaded, self.registry_settings)

    def warm_up(self) -> None:
        self.worker.call(warm_up)


def warm_up() -> None:
    """Import what the first probe needs: the perturbation engine with its data, and the model code."""
    from backend import perturb
    from backend.models import encoder  # noqa: F401  (torch and open_clip)

    perturb.warm_up()


# In a worker process: one registry and cache per registry settings (one, for one app).
_resident: dict[str, tuple[ModelRegistry, EmbeddingCache]] = {}


def _models(settings: dict) -> tuple[ModelRegistry, EmbeddingCache]:
    key = repr(sorted(settings.items()))
    if key not in _resident:
        _resident[key] = ModelRegistry(**settings), EmbeddingCache()
    return _resident[key]


def _probe(settings: dict, image: Any, caption: str, model_specs: list[str], options: dict,
           progress: Progress | None = None) -> ProbeResult:
    registry, cache = _models(settings)
    return run_probe(image, caption, model_specs, registry, cache, progress=progress,
                     texts_limit_s=PROBE_TEXTS_LIMIT_S, **options)


def _loaded(settings: dict) -> list[str]:
    return _models(settings)[0].loaded()
