"""What the 95% bootstrap intervals add to an evaluation's time, as a percentage, measured inside the same run.

Each task is evaluated the way the Benchmarks tab and ``benchmarks evaluate`` do it (``evaluator.run_task`` with
``intervals=True``, a fresh embedding cache, so every image and text is encoded), while the time spent in
``stats.bootstrap_intervals`` (1,000 resamples) is clocked apart: overhead = intervals / (run - intervals). The
issue's bound is 10%. Tasks: a SugarCrepe-style item benchmark (toy-sugarcrepe), a 2x2 one (toy-bivlc), a
zero-shot grid (toy-zeroshot-shape) and a zero-shot gallery shaped like the suite's Caltech-101 (clip_benchmark's
102 class names x its templates, pooled per class, `zeroshot.ensemble_task`; the images are toy renders, so the
accuracy means nothing, the work is the real one). Models: the toy CLIP (the cheapest encoder there is: the
worst case for the percentage) and a random-init ViT-B-32 (what the papers evaluate).

Run: ``.venv/bin/python bench/interval_overhead.py --models toy --limit 100 --repeats 3`` and
``... --models vit-b-32 --limit 20 --repeats 1 --tasks toy-sugarcrepe toy-bivlc toy-zeroshot-shape``
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.benchmarks import stats
from backend.benchmarks.evaluator import prepare, run_task
from backend.benchmarks.stream import StreamEncoder
from backend.benchmarks.task import Task
from backend.benchmarks.zeroshot import ensemble_task
from backend.models.loading import LoadedModel
from backend.models.registry import EmbeddingCache

TOY_TASKS = ("toy-sugarcrepe", "toy-bivlc", "toy-zeroshot-shape")
GALLERY = "caltech101-gallery"


def caltech101_shaped_gallery(limit: int) -> Task:
    """The suite's Caltech-101 task: clip_benchmark's 102 class names and its templates, ``limit`` toy images a
    class (random labels)."""
    import clip_benchmark.datasets as cb

    from backend.toyworld.tasks import zero_shot_items

    folder = Path(cb.__file__).parent
    classes = json.loads((folder / "en_classnames.json").read_text())["caltech101"]
    templates = json.loads((folder / "en_zeroshot_classification_templates.json").read_text())["caltech101"]
    images = zero_shot_items("shape", max(1, limit * len(classes) // 4)).images[:limit * len(classes)]
    labels = np.random.default_rng(0).integers(0, len(classes), size=len(images))
    return ensemble_task(list(images), labels.tolist(), classes, [t.replace("{c}", "{}") for t in templates])


def load(name: str) -> LoadedModel:
    import open_clip

    from backend import toyworld as tw

    torch.manual_seed(0)
    if name == "toy":
        model, preprocess, tokenizer = tw.create_toy_model(0)
    else:
        model, _, preprocess = open_clip.create_model_and_transforms("ViT-B-32")
        tokenizer = open_clip.get_tokenizer("ViT-B-32")
    return LoadedModel(name, model.eval(), preprocess, tokenizer, "gelu", "cpu", "fp32")


def timed_run(task: Task, loaded: LoadedModel, batch_size: int) -> tuple[float, float]:
    """(whole run, of which bootstrap intervals) seconds for one evaluation with intervals, nothing cached."""
    spent: list[float] = []
    original = stats.bootstrap_intervals

    def clocked(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    stats.bootstrap_intervals = clocked  # run_task imports it from the module at each call
    try:
        encoder = StreamEncoder(loaded, EmbeddingCache(max_items=200_000), batch_size=batch_size)
        start = time.perf_counter()
        result = run_task(task, encoder, intervals=True)
        total = time.perf_counter() - start
    finally:
        stats.bootstrap_intervals = original
    assert result.intervals, "no interval was computed"
    return total, sum(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=("toy", "vit-b-32"), default=["toy", "vit-b-32"])
    parser.add_argument("--limit", type=int, default=100, help="items per type (toy sets), images per class / 4 "
                                                               "(the Caltech-101-shaped gallery)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per task (median reported)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--tasks", nargs="+", choices=(*TOY_TASKS, GALLERY), default=[*TOY_TASKS, GALLERY])
    args = parser.parse_args()
    tasks = {name: prepare(name, args.limit) for name in TOY_TASKS if name in args.tasks}
    if GALLERY in args.tasks:
        tasks[GALLERY] = caltech101_shaped_gallery(max(1, args.limit // 25))
    print(f"torch threads {torch.get_num_threads()}, {stats.RESAMPLES} resamples, median of {args.repeats} runs")
    worst = 0.0
    for model_name in args.models:
        loaded = load(model_name)
        for task_name, task in tasks.items():
            runs = [timed_run(task, loaded, args.batch_size) for _ in range(args.repeats)]
            total = statistics.median(run[0] for run in runs)
            intervals = statistics.median(run[1] for run in runs)
            share = intervals / (total - intervals)
            worst = max(worst, share)
            print(f"{model_name:9s} {task_name:24s} {len(task.images):5d} images {len(task.texts):5d} texts: "
                  f"evaluation {total - intervals:7.2f} s, intervals {intervals:6.3f} s = {100 * share:5.1f}% "
                  f"of the evaluation")
    print(f"largest overhead {100 * worst:.1f}% (bound: 10%): {'PASS' if worst <= 0.10 else 'FAIL'}")


if __name__ == "__main__":
    main()
