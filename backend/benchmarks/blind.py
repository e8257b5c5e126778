"""The text-only ("blind") baseline as a leaderboard row: SugarCrepe's check that a benchmark needs the image.

Hsieh et al. (SugarCrepe, 2023) showed that a model reading only the captions picks the true one of earlier
benchmarks far above chance. Here the blind model is a text scorer (``backend.perturb.blind``: the shipped
trigram model offline, or a Hugging Face language model) standing in for the image-text similarity: item n's
score for text k is the text's likelihood, the same for every image. The benchmark's own rule then reads these
scores, tie rule included (SugarCrepe: a tie is wrong; ARO-Order: a tie goes to the original), so the blind
row is computed exactly as a model's row, with the same intervals.

It applies where a benchmark asks to choose a text for one image (``I == 1``, ``K >= 2``: SugarCrepe, ARO,
VALSE, hard positives, ARO-Order). Where an item has several images (BiVLC, Winoground, MMVP) a text-only
score cannot choose between them, so the benchmark is skipped with a note.

A blind model is named ``blind:<scorer>`` (``blind:ngram``, ``blind:gpt2``) wherever a model spec goes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

    from backend.benchmarks.evaluator import TaskResult
    from backend.benchmarks.stream import Progress
    from backend.benchmarks.task import Task
    from backend.perturb.blind import TextScorer

PREFIX = "blind:"
ACTIVATION = "text only"


def is_blind(spec: str) -> bool:
    return str(spec).startswith(PREFIX)


def scorer_name(spec: str) -> str:
    return str(spec)[len(PREFIX):] or "ngram"


def identity(spec: str) -> dict:
    """What a result of the blind model is stored under (its row in the leaderboard)."""
    return {"model": f"{PREFIX}{scorer_name(spec)}", "activation": ACTIVATION, "precision": "fp32",
            "architecture": "text scorer", "device": "cpu"}


def not_applicable(task: Task) -> str | None:
    """Why a text-only scorer cannot take this benchmark, or None when it can."""
    if task.text_only:
        return "it compares texts with texts (no image to stand in for)"
    if task.image_index is None or task.text_index is None:
        return "a gallery task (retrieval, zero-shot) ranks images against texts"
    if task.image_index.shape[1] != 1 or task.text_index.shape[1] < 2:
        return "its items choose between images, and a text-only score is the same for every image"
    return None


def blind_scores(task: Task, scorer: TextScorer) -> Tensor:
    """Scores (N, K, 1): s[n, k, 0] = the scorer's number for item n's text k (each distinct text scored once)."""
    import torch

    per_text = torch.tensor(scorer.score(task.texts), dtype=torch.float64)  # float64: no rounding into ties
    _, text_index = task.item_indices()
    return per_text[text_index][:, :, None]


def run_blind(task: Task, scorer: TextScorer, progress: Progress | None = None,
              intervals: bool = False) -> TaskResult:
    """The blind model's result on a text-choice task: metrics, per-item scores and flags, intervals (as
    ``evaluator.run_task`` gives for a model)."""
    from backend.benchmarks.evaluator import TaskResult
    from backend.benchmarks.stats import bootstrap_intervals

    reason = not_applicable(task)
    if reason:
        raise ValueError(f"a text-only scorer cannot take this benchmark: {reason}")
    scores = blind_scores(task, scorer)
    if progress:
        progress(len(task.texts), len(task.texts))
    correct = task.items.correct(scores) if task.items is not None else None
    return TaskResult({k: float(v) for k, v in task.metrics(scores).items()}, scores, correct,
                      bootstrap_intervals(task, scores) if intervals else {})
