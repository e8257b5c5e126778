"""Benchmarks: one registry and one fast evaluator for every benchmark the tool runs.

Importing this package registers the toy world's benchmarks (``toy-*``);
loaders for real benchmarks register themselves the same way
(``register(Benchmark(...))`` with a ``build(limit) -> Task``).

Entry points: ``evaluate_many(names, loaded)`` -> flat ``{"<benchmark>/<metric>": value}``
for the trainer, ``evaluate_report`` adding model identity and benchmark versions
for the CLI and stored results, ``evaluate(name, encoder)`` for one benchmark.
"""
from backend.benchmarks.evaluator import (BENCHMARKS, Benchmark, EvaluationReport, Task, eval_mode, evaluate,
                                          evaluate_many, evaluate_report, get_benchmark, grid_task, prepare,
                                          register)
from backend.benchmarks import toy  # noqa: F401  (registers the toy-* benchmarks)

__all__ = ["BENCHMARKS", "Benchmark", "EvaluationReport", "Task", "eval_mode", "evaluate", "evaluate_many",
           "evaluate_report", "get_benchmark", "grid_task", "prepare", "register", "toy"]
