"""Training step throughput and memory: our `train_step` vs open_clip_train's `train_one_epoch`, same run, with a
95% interval on the ratio, for plain, LoRA and shard-fed training.

Both sides: ViT-B-32 (`open_clip.create_model`, random init, fp32, train mode) on CPU, the same batches, the same
AdamW (lr 1e-4, betas (0.9, 0.98), eps 1e-6, wd 0.1, no decay on gains/biases/logit_scale), plain CLIP loss,
the logit scale clamped after every step.

  plain   ours: `backend.train.step.train_step` with `Objective(TrainConfig(loss="clip"))`, which tokenizes the
                captions inside the step (part of our step's real cost, kept);
          peer: `open_clip_train.train.train_one_epoch` with `open_clip.ClipLoss()`, fed pre-tokenized texts (its
                dataloader's work, not timed), no scheduler.
  lora    both sides train the same model with the same peft LoRA adapters (rank 4, attn + mlp of both towers,
          `backend.models.lora`): only the adapters are optimised.
  shards  ours is fed by the shard stream (`backend.train.shards.ShardSteps`, in this process: reading the tar,
          decoding, augmenting and assembling each step is timed), the peer by ready tensors as in `plain`.

Timing: both sides live in ONE process (identical init) and alternate round by round (ours/peer, peer/ours,
...), so a shared machine's load drift hits both alike. Each round's ratio is ours/peer samples/s; the reported
ratio is their geometric mean with a 95% t-interval on the mean log-ratio. Rounds continue until that interval's
half-width is below --resolve (default 2.5%: a 5%-wide interval, enough to tell 0.95 from 1.00) or --max-rounds.
Memory: each side of each mode also runs in its own subprocess (one warm-up step, then --steps steps), whose peak
RSS (ru_maxrss) is that side's.

    .venv/bin/python bench/train_step.py [--modes plain lora shards] [--batch 8] [--steps 2] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LR, BETAS, EPS, WD = 1e-4, (0.9, 0.98), 1e-6, 0.1
MODEL = "ViT-B-32"
LORA = {"base_model": MODEL, "rank": 4, "alpha": 4.0, "towers": ["vision", "text"], "targets": ["attn", "mlp"]}
SUBJECTS = ["dog", "cat", "man", "woman", "boat", "car", "horse", "child"]
COLOURS = ["red", "blue", "green", "white", "black", "yellow", "brown", "small"]
PLACES = ["on a sofa", "next to a tree", "in the river", "on the street", "under a table", "in a field"]


def captions(n: int) -> list[str]:
    return [f"a {COLOURS[i % 8]} {SUBJECTS[(i * 3) % 8]} and a {COLOURS[(i + 3) % 8]} "
            f"{SUBJECTS[(i * 5 + 1) % 8]} {PLACES[i % 6]}" for i in range(n)]


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _model(mode: str):
    import open_clip
    import torch

    torch.manual_seed(0)
    model = open_clip.create_model(MODEL, precision="fp32", device="cpu", output_dict=True).train()
    if mode == "lora":
        from backend.models import lora
        lora.add_lora(model, LORA)
    return model


def _shard_folder(rows: int) -> Path:
    """A shard set of `rows` random 256x256 JPEGs with captions, written by `python -m backend shards` in its own
    process (the writer's perturbation engine is no part of a training process's memory)."""
    import numpy as np
    from PIL import Image

    folder = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    generator = np.random.default_rng(0)
    lines = ["image,caption,negatives,positives"]
    for i, text in enumerate(captions(rows)):
        Image.fromarray(generator.integers(0, 255, (256, 256, 3), dtype=np.uint8)).save(folder / f"{i}.jpg")
        lines.append(f'{i}.jpg,{text},"[""{text} at night""]","[""{text}""]"')
    (folder / "train.csv").write_text("\n".join(lines) + "\n")
    subprocess.run([sys.executable, "-m", "backend", "shards", str(folder / "train.csv"), str(folder / "shards"),
                    "--shard-size", str(rows)], cwd=ROOT, check=True, capture_output=True)
    return folder / "shards"


def _our_step(model, batch: int):
    import open_clip
    import torch

    from backend.models.loading import autocast_for
    from backend.train.config import TrainConfig
    from backend.train.objectives import Objective
    from backend.train.step import parameter_groups, train_step

    optimizer = torch.optim.AdamW(parameter_groups(model, WD), lr=LR, betas=BETAS, eps=EPS)
    objective = Objective(TrainConfig(loss="clip"), open_clip.get_tokenizer(MODEL), "cpu")
    autocast, max_log_scale = autocast_for("cpu", "fp32"), math.log(100.0)
    return lambda batches: train_step(model, objective, optimizer, batches, autocast, max_log_scale), optimizer


def build_side(side: str, mode: str, batch: int, n_batches: int, threads: int):
    """One side's `run(n)`, which trains n steps on its next batches."""
    import open_clip
    import torch

    torch.set_num_threads(threads)
    model = _model(mode)
    generator = torch.Generator().manual_seed(1)
    images = [torch.randn(batch, 3, 224, 224, generator=generator) for _ in range(n_batches)]
    texts = [captions(batch * n_batches)[i * batch:(i + 1) * batch] for i in range(n_batches)]
    cursor = [0]
    if side == "ours" and mode == "shards":
        from backend.train.shards import ShardSource, ShardSteps
        from backend.train.transforms import train_transform

        _, _, preprocess = open_clip.create_model_and_transforms(MODEL)
        source = ShardSource(_shard_folder(4 * batch), preprocess, train_transform(model, "open_clip"))
        stream = iter(ShardSteps(source, range(10 ** 9), batch, seed=0))
        step, optimizer = _our_step(model, batch)

        def run(n):
            for _ in range(n):
                step(next(stream).batches)
        return run, [len(g["params"]) for g in optimizer.param_groups]
    if side == "ours":
        from backend.train.data import Batch

        step, optimizer = _our_step(model, batch)
        data = [Batch(images=im, captions=tx, negatives=[""] * batch, positives=list(tx),
                      typed_negatives=[[""] * 4] * batch, typed_valid=torch.zeros(batch, 4, dtype=torch.bool),
                      negatives_valid=torch.zeros(batch, dtype=torch.bool)) for im, tx in zip(images, texts)]

        def run(n):
            for _ in range(n):
                step([data[cursor[0] % n_batches]])
                cursor[0] += 1
        return run, [len(g["params"]) for g in optimizer.param_groups]
    return _peer(model, batch, images, texts, cursor)


def _peer(model, batch: int, images: list, texts: list, cursor: list):
    import open_clip
    import torch
    from open_clip_train.train import train_one_epoch

    # open_clip_train.main's exclusion rule, verbatim (it, too, leaves out parameters that do not train).
    exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or "logit_scale" in n  # noqa: E731
    named = list(model.named_parameters())
    gain_or_bias = [p for n, p in named if exclude(n, p) and p.requires_grad]
    rest = [p for n, p in named if not exclude(n, p) and p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": gain_or_bias, "weight_decay": 0.0}, {"params": rest, "weight_decay": WD}],
                                  lr=LR, betas=BETAS, eps=EPS)
    loss_fn = open_clip.ClipLoss()
    tokenizer = open_clip.get_tokenizer(MODEL)
    data = list(zip(images, [tokenizer(tx) for tx in texts]))  # the peer's dataloader work, not timed
    args = SimpleNamespace(device="cpu", precision="fp32", distill=False, accum_freq=1, skip_scheduler=True,
                           grad_clip_norm=None, horovod=False, rank=0, local_rank=0, world_size=1, batch_size=batch,
                           log_every_n_steps=10 ** 9, wandb=False)

    class Loader(list):
        pass

    class DataInfo:  # open_clip_train.data.DataInfo without a sampler (what train_one_epoch uses)
        def __init__(self, dataloader):
            self.dataloader = dataloader

        def set_epoch(self, epoch):
            pass

    def run(n):  # one "epoch" per call
        loader = Loader(data[(cursor[0] + i) % len(data)] for i in range(n))
        loader.num_batches, loader.num_samples = n, n * batch
        train_one_epoch(model, {"train": DataInfo(loader)}, loss_fn, cursor[0], optimizer, None, None, None, args)
        cursor[0] += n
    return run, [len(gain_or_bias), len(rest)]


def memory_side(side: str, mode: str, batch: int, steps: int, threads: int) -> dict:
    """In a child process: one warm-up step, then `steps` steps; this process's peak RSS is the side's."""
    run, sizes = build_side(side, mode, batch, steps + 1, threads)
    run(1)
    run(steps)
    return {"side": side, "mode": mode, "peak_rss_mib": rss_mib(), "group_sizes": sizes}


def interval(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean of the per-round ratios and its 95% t-interval (on the mean log-ratio)."""
    logs = [math.log(r) for r in ratios]
    mean, n = statistics.fmean(logs), len(logs)
    try:
        from scipy.stats import t
        quantile = float(t.ppf(0.975, n - 1))
    except ImportError:
        quantile = statistics.NormalDist().inv_cdf(0.975)
    half = quantile * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def timing(mode: str, args) -> dict:
    """Both sides in this process, alternating round by round, until the interval is narrow enough."""
    sides = {side: build_side(side, mode, args.batch, 4, args.threads)[0] for side in ("ours", "peer")}
    for run in sides.values():
        run(1)  # warm-up step (allocates AdamW state)
    rates = {"ours": [], "peer": []}
    ratios, started = [], time.monotonic()
    while len(ratios) < args.max_rounds:
        for side in (("ours", "peer") if len(ratios) % 2 == 0 else ("peer", "ours")):
            begin = time.perf_counter()
            sides[side](args.steps)
            rates[side].append(args.steps * args.batch / (time.perf_counter() - begin))
        ratios.append(rates["ours"][-1] / rates["peer"][-1])
        if len(ratios) >= args.min_rounds:
            ratio, low, high = interval(ratios)
            if max(high / ratio, ratio / low) - 1 <= args.resolve or time.monotonic() - started > 60 * args.max_minutes:
                break
    ratio, low, high = interval(ratios)
    return {"rounds": len(ratios), "ratio": ratio, "low": low, "high": high, "ours": statistics.median(rates["ours"]),
            "peer": statistics.median(rates["peer"]), "seconds": time.monotonic() - started}


def child(side: str, mode: str, args) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    cmd = [sys.executable, __file__, "--side", side, "--modes", mode, "--batch", str(args.batch), "--steps",
           str(args.steps), "--threads", str(args.threads)]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{side} {mode} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="+", choices=["plain", "lora", "shards"], default=["plain", "lora", "shards"])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2, help="timed steps per side per round")
    parser.add_argument("--min-rounds", type=int, default=12)
    parser.add_argument("--max-rounds", type=int, default=200)
    parser.add_argument("--max-minutes", type=float, default=20, help="per mode")
    parser.add_argument("--resolve", type=float, default=0.025, help="stop at this relative interval half-width")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--side", choices=["ours", "peer"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(memory_side(args.side, args.modes[0], args.batch, args.steps, args.threads)))
        return
    import torch

    torch.set_num_threads(args.threads)
    print(f"{MODEL} fp32 CPU, plain CLIP loss, batch {args.batch}, {args.threads} threads, {args.steps} step(s) per "
          f"side per round, sides alternating in one process; 95% t-interval on the geometric-mean ratio")
    # Every memory child first: a child's ru_maxrss starts from this process's RSS at the fork (Linux keeps the
    # high-water mark across exec), and the timing below holds two models and their optimizer state.
    memories = {mode: {side: child(side, mode, args) for side in ("ours", "peer")} for mode in args.modes}
    for mode in args.modes:
        memory = memories[mode]
        if memory["ours"]["group_sizes"] != memory["peer"]["group_sizes"]:
            sys.exit(f"{mode}: param groups differ: {memory['ours']['group_sizes']} vs {memory['peer']['group_sizes']}")
        result = timing(mode, args)
        rss = memory["ours"]["peak_rss_mib"] / memory["peer"]["peak_rss_mib"]
        print(f"{mode}: ours/peer samples/s {result['ratio']:.3f} [95% {result['low']:.3f}, {result['high']:.3f}] "
              f"over {result['rounds']} rounds ({result['seconds']:.0f} s; medians ours {result['ours']:.2f}, peer "
              f"{result['peer']:.2f} samples/s) -> {'PASS' if result['low'] >= 0.95 else 'not shown >= 0.95'}; "
              f"peak RSS ours/peer {rss:.3f} ({memory['ours']['peak_rss_mib']:.0f} / "
              f"{memory['peer']['peak_rss_mib']:.0f} MiB) -> {'PASS' if rss <= 1.05 else 'FAIL'}", flush=True)
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
