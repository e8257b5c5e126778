"""Zero-shot bootstrap intervals: resampling each image's true-class rank against resampling the score matrix.

The same draws and the same numbers (tests/test_benchmarks_zeroshot_suite.py checks the intervals are
identical); the peer is the matrix bootstrap every gallery task had before `zeroshot.RankMetric`, which copies
the (images x classes) matrix once per resample. Also prints the intervals' time against the point estimate's,
the part of an evaluation they add to (encoding the images, which dominates, comes on top).

Run: ``.venv/bin/python bench/zeroshot_intervals.py --images 10000 --classes 100 --peer-resamples 100``
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.benchmarks.stats import bootstrap_intervals
from backend.benchmarks.task import LabelledMetric, Task
from backend.benchmarks.zeroshot import RankMetric, zero_shot_metrics


def seconds(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--peer-resamples", type=int, default=100, help="the matrix bootstrap is slow: fewer draws")
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    sim = torch.randn(args.images, args.classes, generator=generator)
    labels = torch.randint(0, args.classes, (args.images,), generator=generator)
    ranks = Task([], [], RankMetric(labels, args.classes))
    matrix = Task([], [], LabelledMetric(zero_shot_metrics, labels))
    ours = seconds(lambda: bootstrap_intervals(ranks, sim, resamples=args.resamples)) / args.resamples
    peer = seconds(lambda: bootstrap_intervals(matrix, sim, resamples=args.peer_resamples)) / args.peer_resamples
    point = seconds(lambda: ranks.metrics(sim))
    print(f"{args.images} images x {args.classes} classes, torch threads {torch.get_num_threads()}")
    print(f"per resample: ranks {1000 * ours:.2f} ms, matrix rows (peer) {1000 * peer:.2f} ms: {peer / ours:.1f}x")
    print(f"{args.resamples} resamples: {ours * args.resamples:.2f} s, {ours * args.resamples / point:.1f}x the "
          f"point estimate ({point:.3f} s)")


if __name__ == "__main__":
    main()
