"""Benchmark registry and the fast evaluator shared by every benchmark.

Why one evaluator: the trainer evaluates periodically while weights change,
the CLI and the app evaluate several models side by side, and every
benchmark (toy now, ARO / SugarCrepe / BiVLC / Winoground loaders later)
reduces to the same work: encode a set of unique images and unique texts,
take their cosine-similarity matrix, and apply the benchmark's rule from
``backend.metrics``. So a benchmark only says *what* to encode and *how* to
read the matrix (a ``Task``); encoding, batching, caching and the train/eval
mode dance live here once.

Metric keys are flat, ``<benchmark>/<metric>``, values are fractions in
[0, 1]. Cosine similarity is used for every rule: the logit scale is a
positive constant per model, so it never changes a comparison.
"""
from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np
import torch
from PIL import Image
from torch import Tensor

from backend.encoder import EmbeddingCache, Encoder
from backend.models import LoadedModel

MetricFn = Callable[[Tensor], dict[str, float]]


@dataclass(frozen=True)
class Task:
    """What one benchmark (at one item limit) needs scored.

    ``metrics`` receives the (len(images), len(texts)) cosine matrix and
    returns metric name -> value, without the benchmark prefix.
    """

    images: list[Image.Image]
    texts: list[str]
    metrics: MetricFn


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark: ``build(limit)`` returns its ``Task``.

    ``limit`` caps the items per type/subset (or the gallery size), so tests
    and quick looks can use a prefix of the pinned items; None means all.
    ``version`` identifies the item set, so results on different item sets
    are never compared.
    """

    name: str
    description: str
    version: str
    build: Callable[[int | None], Task]


BENCHMARKS: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark to ``BENCHMARKS``; a second one under the same name is a bug."""
    if benchmark.name in BENCHMARKS:
        raise ValueError(f"benchmark {benchmark.name!r} is already registered")
    BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark, or a ValueError that lists the valid names."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; valid names: {', '.join(sorted(BENCHMARKS))}") from None


@functools.lru_cache(maxsize=None)
def prepare(name: str, limit: int | None = None) -> Task:
    """The benchmark's Task, built once per process (items are pinned, only weights change)."""
    return get_benchmark(name).build(limit)


def grid_task(images: Sequence[Sequence[np.ndarray]], texts: Sequence[Sequence[str]],
              metrics: Callable[[Tensor], dict[str, float]]) -> Task:
    """A Task for benchmarks whose items each pair I images with K texts.

    Item n has images ``images[n]`` (I of them, uint8 HxWx3) and candidate
    texts ``texts[n]`` (K of them). ``metrics`` receives scores of shape
    (N, K, I): ``s[n, k, i]`` = similarity of text k and image i of item n
    (the layout of ``metrics.group_scores``). Texts are deduplicated so each
    is encoded once; images are kept per item (the encoder's content cache
    deduplicates identical pixels anyway).
    """
    text_ids: dict[str, int] = {}
    text_index = torch.tensor([[text_ids.setdefault(t, len(text_ids)) for t in row] for row in texts])
    flat_images = [Image.fromarray(image) for row in images for image in row]
    n_items, n_images = len(images), len(images[0]) if images else 0
    image_index = torch.arange(n_items * n_images).reshape(n_items, 1, n_images)

    def read(sim: Tensor) -> dict[str, float]:
        return metrics(sim[image_index, text_index[:, :, None]])

    return Task(flat_images, list(text_ids), read)


@contextlib.contextmanager
def eval_mode(model: torch.nn.Module) -> Iterator[None]:
    """Evaluate in eval mode (dropout off), then restore every module's own flag.

    The trainer calls the evaluator mid-training; restoring per module (not
    one ``model.train(was)``) also keeps deliberately frozen submodules frozen.
    """
    flags = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for module, training in flags:
            module.training = training


def evaluate(name: str, encoder: Encoder, limit: int | None = None) -> dict[str, float]:
    """Metrics of one benchmark, keys prefixed ``<name>/``."""
    task = prepare(name, limit)
    with eval_mode(encoder.loaded.model):
        image_emb = encoder.encode_images(task.images)
        text_emb = encoder.encode_texts(task.texts)
    values = task.metrics(image_emb @ text_emb.T)
    return {f"{name}/{key}": float(value) for key, value in values.items()}


def evaluate_many(names: Sequence[str], loaded: LoadedModel, limit: int | None = None,
                  batch_size: int = 256) -> dict[str, float]:
    """Metrics of several benchmarks for one model, as one flat dict.

    A fresh cache per call: weights change between the trainer's calls, so
    embeddings from an earlier call would be stale. Within a call the cache
    is shared, so a text used by several benchmarks is encoded once.
    """
    for name in names:
        get_benchmark(name)  # fail on a bad name before encoding anything
    encoder = Encoder(loaded, EmbeddingCache(max_items=10**7), batch_size=batch_size)
    results: dict[str, float] = {}
    for name in names:
        results.update(evaluate(name, encoder, limit))
    return results


@dataclass
class EvaluationReport:
    """Metrics with what makes them comparable: model identity and benchmark versions."""

    identity: dict[str, str]
    metrics: dict[str, float]
    benchmark_versions: dict[str, str]
    seconds: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {**self.identity, "metrics": self.metrics, "benchmark_versions": self.benchmark_versions,
                "seconds": self.seconds, "notes": self.notes}


def evaluate_report(names: Sequence[str], loaded: LoadedModel, limit: int | None = None) -> EvaluationReport:
    """``evaluate_many`` plus the model's identity and each benchmark's version, for storing and printing."""
    start = time.perf_counter()
    metrics = evaluate_many(names, loaded, limit)
    versions = {name: get_benchmark(name).version for name in names}
    return EvaluationReport(loaded.identity, metrics, versions, time.perf_counter() - start, list(loaded.notes))
