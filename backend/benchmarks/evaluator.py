"""Benchmark registry and the evaluator shared by every benchmark.

Why one evaluator: the trainer evaluates periodically while weights change,
the CLI, the evaluate job and the sweep job evaluate models side by side, and
every benchmark (toy, SugarCrepe, ARO, BiVLC, Winoground, ...) reduces to the
same work: encode distinct images and texts (``stream.StreamEncoder``: images
decoded in DataLoader workers, each once), score the items (``task.item_scores``),
and apply the benchmark's rule from ``backend.metrics``. So a benchmark only
says *what* to encode and *how* to read the scores (a ``task.Task``).

Metric keys are flat, ``<benchmark>/<metric>``, values are fractions in
[0, 1]. Cosine similarity is used for every rule: the logit scale is a
positive constant per model, so it never changes a comparison.

Adding a benchmark is one small module in this package that calls
``register(Benchmark(name, description, version, build))`` where
``build(limit, root)`` returns a ``Task``; ``root`` is the ``benchmarks_dir``
setting (see ``backend.benchmarks.data`` for fetching and missing data).
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backend.benchmarks import load_all
from backend.benchmarks.task import EmptyTextError, Task, item_scores, pool_texts

if TYPE_CHECKING:  # the encoder and the models import torch: only a run needs them, registering must not
    import torch
    from torch import Tensor

    from backend.benchmarks.stream import Progress, StreamEncoder
    from backend.models.loading import LoadedModel


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark: ``build(limit, root)`` returns its ``Task``.

    ``limit`` caps the items per type/subset (or the gallery size), so tests
    and quick looks can use a prefix of the items; None means all. ``root`` is
    the folder holding every benchmark's data (toy benchmarks ignore it).
    ``version`` identifies the item set, so results on different item sets
    are never compared. ``chance`` maps metric names to their chance level
    (for the leaderboard's chance row). ``headline`` lists the metrics a
    leaderboard shows first, the paper's main metric first (the chart's bar
    and the leaderboard's default column). ``text_roles`` says what each text
    of an item is, ``"true"``, ``"negative"`` or ``"positive"`` (a hard
    positive, true of the image too); empty means text k is image k's true
    caption and the rest are negatives (the failure browser and "Send to
    Probe" read it).
    """

    name: str
    description: str
    version: str
    build: Callable[[int | None, Path], Task]
    chance: dict[str, float] = field(default_factory=dict)
    headline: tuple[str, ...] = ()  # the metrics a leaderboard shows first (the paper's main metric first)
    object_centric: bool = False  # recognition (zero-shot classification, retrieval): a sweep's x axis
    text_roles: tuple[str, ...] = ()


BENCHMARKS: dict[str, Benchmark] = {}


@dataclass(frozen=True)
class BenchmarkFamily:
    """Benchmarks named ``<prefix>:<name>`` that exist only on disk (e.g. every exported annotation campaign).

    ``make(name)`` builds the Benchmark for one member; ``available(root)``
    lists the members found under the data root (for pickers and listings).
    """

    prefix: str
    description: str
    make: Callable[[str], Benchmark]
    available: Callable[[Path], list[str]]


FAMILIES: dict[str, BenchmarkFamily] = {}


def register_family(family: BenchmarkFamily) -> BenchmarkFamily:
    if family.prefix in FAMILIES:
        raise ValueError(f"benchmark family {family.prefix!r} is already registered")
    FAMILIES[family.prefix] = family
    return family


def available_benchmarks(root: Path | str | None = None) -> list[str]:
    """Every registered benchmark name, then every family member found under the data root."""
    load_all()
    root = _root(root)
    return [*BENCHMARKS, *(f"{prefix}:{name}" for prefix, family in FAMILIES.items()
                           for name in family.available(root))]


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark to ``BENCHMARKS``; a second one under the same name is a bug."""
    if benchmark.name in BENCHMARKS:
        raise ValueError(f"benchmark {benchmark.name!r} is already registered")
    BENCHMARKS[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark (or family member ``prefix:name``), or a ValueError that lists the valid names."""
    load_all()
    prefix, colon, member = name.partition(":")
    if colon and prefix in FAMILIES:
        return FAMILIES[prefix].make(member)
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; valid names: {', '.join(sorted(BENCHMARKS))}"
                         + "".join(f", {prefix}:NAME ({f.description})" for prefix, f in FAMILIES.items())) from None


def _root(root: Path | str | None) -> Path:
    from backend.benchmarks.data import default_root

    return Path(root) if root is not None else default_root()


@functools.lru_cache(maxsize=32)
def _prepare(name: str, limit: int | None, root: Path) -> Task:
    try:
        return get_benchmark(name).build(limit, root)
    except EmptyTextError as error:
        raise ValueError(f"{name}: {error}") from None


def prepare(name: str, limit: int | None = None, root: Path | str | None = None) -> Task:
    """The benchmark's Task, built once per process and data folder (items are fixed, only weights change)."""
    return _prepare(name, limit, _root(root))


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


@dataclass
class TaskResult:
    """One benchmark's metrics for one model, and (item tasks) every item's scores and correctness."""

    metrics: dict[str, float]
    scores: Tensor | None = None
    correct: Tensor | None = None
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)  # metric -> 95% bootstrap (low, high)


def run_task(task: Task, encoder: StreamEncoder, progress: Progress | None = None,
             intervals: bool = False) -> TaskResult:
    """Encode the task's distinct images then texts, score, apply its rule. ``progress`` sees images and texts.

    ``intervals`` adds every metric's 95% bootstrap interval (``stats.bootstrap_intervals``); the trainer's
    periodic evaluations leave it off.
    """
    from backend.benchmarks.stats import bootstrap_intervals

    total = len(task.images) + len(task.texts)
    image_progress = (lambda done, _: progress(done, total)) if progress else None
    text_progress = (lambda done, _: progress(len(task.images) + done, total)) if progress else None
    with eval_mode(encoder.loaded.model):
        image_emb = encoder.images(task.images, image_progress)
        text_emb = encoder.texts(task.texts, text_progress)
    if task.text_pool is not None:
        text_emb = pool_texts(text_emb, task.text_pool)
    if task.image_index is None:
        matrix = image_emb @ text_emb.T
        return TaskResult({k: float(v) for k, v in task.metrics(matrix).items()},
                          intervals=bootstrap_intervals(task, matrix) if intervals else {})
    scores = item_scores(image_emb, text_emb, task)
    correct = task.items.correct(scores) if task.items is not None else None
    return TaskResult({k: float(v) for k, v in task.metrics(scores).items()}, scores, correct,
                      bootstrap_intervals(task, scores) if intervals else {})


def evaluate(name: str, encoder: StreamEncoder, limit: int | None = None, root: Path | str | None = None,
             progress: Progress | None = None) -> TaskResult:
    """One benchmark's result, metric keys without the benchmark prefix."""
    return run_task(prepare(name, limit, root), encoder, progress)


def evaluate_many(names: Sequence[str], loaded: LoadedModel, limit: int | None = None, batch_size: int = 256,
                  root: Path | str | None = None, workers: int = 0) -> dict[str, float]:
    """Metrics of several benchmarks for one model, as one flat ``<benchmark>/<metric>`` dict.

    A fresh cache per call: weights change between the trainer's calls, so
    embeddings from an earlier call would be stale. Within a call the cache
    is shared, so an image or text used by several benchmarks is encoded once.
    """
    from backend.benchmarks.stream import StreamEncoder
    from backend.models.registry import EmbeddingCache

    for name in names:
        get_benchmark(name)  # fail on a bad name before encoding anything
    encoder = StreamEncoder(loaded, EmbeddingCache(max_items=200_000), batch_size=batch_size, workers=workers)
    results: dict[str, float] = {}
    for name in names:
        metrics = evaluate(name, encoder, limit, root).metrics
        results.update({f"{name}/{key}": value for key, value in metrics.items()})
    return results
