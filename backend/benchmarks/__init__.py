"""Benchmarks: one registry and one streaming evaluator for every benchmark the tool runs.

Each real benchmark is one small module here that registers itself
(``register(Benchmark(name, description, version, build))``, ``build(limit,
root) -> Task``); importing this package registers them all, and the toy
world's ``toy-*`` sets.

Entry points: ``evaluate_many(names, loaded)`` -> flat ``{"<benchmark>/<metric>": value}``
for the trainer and sweeps, ``evaluate_report`` adding model identity and benchmark
versions for the CLI and stored results, ``run_task`` for one prepared task.
"""
from backend.benchmarks.evaluator import (BENCHMARKS, FAMILIES, Benchmark, BenchmarkFamily, EvaluationReport,
                                          TaskResult, available_benchmarks, eval_mode, evaluate, evaluate_many,
                                          evaluate_report, get_benchmark, prepare, register, register_family,
                                          run_task)
from backend.benchmarks.task import ImageFile, Items, Task, grid_task

import importlib as _importlib
import pkgutil as _pkgutil

# Every module of this package is imported, so a benchmark module registers itself by existing.
for _module in _pkgutil.iter_modules(__path__):
    _importlib.import_module(f"{__name__}.{_module.name}")
from backend.benchmarks import toy  # noqa: E402  (re-exported)

__all__ = ["BENCHMARKS", "FAMILIES", "Benchmark", "BenchmarkFamily", "EvaluationReport", "ImageFile", "Items",
           "Task", "TaskResult", "available_benchmarks", "eval_mode", "evaluate", "evaluate_many", "evaluate_report",
           "get_benchmark", "grid_task", "prepare", "register", "register_family", "run_task", "toy"]
