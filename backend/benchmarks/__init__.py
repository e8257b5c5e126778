"""Benchmarks: one registry and one streaming evaluator for every benchmark the tool runs.

Each real benchmark is one small module here that registers itself
(``register(Benchmark(name, description, version, build))``, ``build(limit,
root) -> Task``); plug-ins add theirs the same way (`backend.plugins`: the built-in
world's ``toy-*`` sets). Modules are imported on first use of the registry
(`load_all`), not when this package is imported: a config class such as
`backend.benchmarks.job.EvaluateConfig` can be read without torch.

Entry points: ``evaluate_many(names, loaded)`` -> flat ``{"<benchmark>/<metric>": value}``
for the trainer and sweeps, ``run_task`` for one prepared task; the CLI, the Benchmarks
tab and the `evaluate` job store results with the model's identity and each benchmark's
version through `backend.benchmarks.job.evaluate_models`.
"""
from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import Any

_EXPORTS = {
    **dict.fromkeys(("BENCHMARKS", "FAMILIES", "Benchmark", "BenchmarkFamily", "TaskResult",
                     "available_benchmarks", "eval_mode", "evaluate", "evaluate_many",
                     "get_benchmark", "prepare", "register", "register_family", "run_task"), "evaluator"),
    **dict.fromkeys(("ImageFile", "Items", "Task", "grid_task"), "task"),
}
# The evaluator's machinery, not benchmarks: torch and the model code load only when something is evaluated.
MACHINERY = ("stream", "job")
_LOCK = threading.RLock()
_loaded = False


def load_all() -> None:
    """Import every benchmark module of this package and of the plug-ins, so that each registers itself."""
    global _loaded
    with _LOCK:
        if _loaded:
            return
        _loaded = True  # first: the modules import this package while it loads them
        from backend import plugins

        for module in pkgutil.iter_modules(__path__):
            if module.name not in MACHINERY:
                importlib.import_module(f"{__name__}.{module.name}")
        for name in plugins.hooks().benchmark_modules:
            importlib.import_module(name)


def __getattr__(name: str) -> Any:
    """The registry's names (PEP 562), with every benchmark registered first."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    load_all()
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


__all__ = [*_EXPORTS, "load_all"]
