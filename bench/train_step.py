"""Training step throughput: our `train_step` vs open_clip_train's `train_one_epoch`, same run.

Plain CLIP loss, ViT-B-32 (`open_clip.create_model`, random init, fp32, train
mode) on CPU, same batch, same AdamW (lr 1e-4, betas (0.9, 0.98), eps 1e-6,
wd 0.1, no decay on gains/biases/logit_scale), same number of timed steps after
one warm-up step (which also allocates the AdamW state). Both sides clamp the
logit scale after every step.

  ours: `backend.train.loop.train_step` with `Objective(TrainConfig(loss="clip"))`.
        It tokenizes the captions INSIDE the step (Objective calls the
        tokenizer); that is part of our step's real cost and is kept.
  peer: `open_clip_train.train.train_one_epoch` with `open_clip.ClipLoss()`,
        fed pre-tokenized texts (it tokenizes in its dataloader, which we do
        not time), no scheduler, logging only on its first and last step.

Timing: both sides live in ONE process (identical init, identical data) and
are interleaved round by round, the order alternating (ours/peer, peer/ours,
...), so the load drift of a shared machine hits both alike; the ratio is the
median of the per-round ratios. Memory: each side also runs in its own
subprocess (`--side ours|peer`: one warm-up step and `--steps` steps), whose
ru_maxrss is that side's peak RSS.

    .venv/bin/python bench/train_step.py [--batch 8] [--steps 1] [--repeats 5] [--threads 2]
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
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
LR, BETAS, EPS, WD = 1e-4, (0.9, 0.98), 1e-6, 0.1
SUBJECTS = ["dog", "cat", "man", "woman", "boat", "car", "horse", "child"]
COLOURS = ["red", "blue", "green", "white", "black", "yellow", "brown", "small"]
PLACES = ["on a sofa", "next to a tree", "in the river", "on the street", "under a table", "in a field"]


def captions(n: int) -> list[str]:
    return [f"a {COLOURS[i % 8]} {SUBJECTS[(i * 3) % 8]} and a {COLOURS[(i + 3) % 8]} "
            f"{SUBJECTS[(i * 5 + 1) % 8]} {PLACES[i % 6]}" for i in range(n)]


class _DataInfo:
    """open_clip_train.data.DataInfo without a sampler or shared epoch (what train_one_epoch uses)."""

    def __init__(self, dataloader):
        self.dataloader = dataloader

    def set_epoch(self, epoch: int) -> None:
        pass


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def build_side(side: str, batch: int, n_batches: int, threads: int):
    """One side's model, optimizer and step function; `run(batches)` trains one step per batch."""
    import open_clip
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = open_clip.create_model("ViT-B-32", precision="fp32", device="cpu", output_dict=True).train()
    generator = torch.Generator().manual_seed(1)
    images = [torch.randn(batch, 3, 224, 224, generator=generator) for _ in range(n_batches)]
    texts = [captions(batch * n_batches)[i * batch:(i + 1) * batch] for i in range(n_batches)]
    tokenizer = open_clip.get_tokenizer("ViT-B-32")
    tokenize_seconds = [0.0]

    if side == "ours":
        sys.path.insert(0, str(ROOT))
        from backend.models.loading import autocast_for
        from backend.train.config import TrainConfig
        from backend.train.data import Batch
        from backend.train.loop import parameter_groups, train_step
        from backend.train.objectives import Objective

        groups = parameter_groups(model, WD)
        optimizer = torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)

        def timed_tokenizer(batch_texts):  # the same tokenizer, clocked where Objective calls it
            started = time.perf_counter()
            out = tokenizer(batch_texts)
            tokenize_seconds[0] += time.perf_counter() - started
            return out

        objective = Objective(TrainConfig(loss="clip"), timed_tokenizer, "cpu")
        autocast = autocast_for("cpu", "fp32")
        max_log_scale = math.log(100.0)
        # plain CLIP reads only images and captions: every hard negative is marked missing
        data = [Batch(images=im, captions=tx, negatives=[""] * batch, positives=list(tx),
                      typed_negatives=[[""] * 4] * batch, typed_valid=torch.zeros(batch, 4, dtype=torch.bool),
                      negatives_valid=torch.zeros(batch, dtype=torch.bool))
                for im, tx in zip(images, texts)]

        def run(batches):
            for b in batches:
                train_step(model, objective, optimizer, [b], autocast, max_log_scale)
    else:
        from open_clip_train.train import train_one_epoch
        try:
            from open_clip_train.data import DataInfo
        except ImportError:  # its module needs webdataset/braceexpand (training extras) only to import
            DataInfo = _DataInfo

        # open_clip_train.main's exclusion rule, verbatim.
        exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or "logit_scale" in n  # noqa: E731
        named = list(model.named_parameters())
        gain_or_bias = [p for n, p in named if exclude(n, p) and p.requires_grad]
        rest = [p for n, p in named if not exclude(n, p) and p.requires_grad]
        groups = [{"params": gain_or_bias, "weight_decay": 0.0}, {"params": rest, "weight_decay": WD}]
        optimizer = torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)
        loss_fn = open_clip.ClipLoss()
        tokens = [tokenizer(tx) for tx in texts]  # the peer's dataloader work, not timed
        args = SimpleNamespace(device="cpu", precision="fp32", distill=False, accum_freq=1, skip_scheduler=True,
                               grad_clip_norm=None, horovod=False, rank=0, local_rank=0, world_size=1,
                               batch_size=batch, log_every_n_steps=10**9, wandb=False)

        class Loader(list):
            pass

        epoch = [0]

        def run(batches):  # one "epoch" per call; it logs (to a disabled logger) on its first and last step
            loader = Loader(batches)
            loader.num_batches, loader.num_samples = len(batches), len(batches) * batch
            train_one_epoch(model, {"train": DataInfo(loader)}, loss_fn, epoch[0], optimizer, None, None, None, args)
            epoch[0] += 1

        data = list(zip(images, tokens))
    return run, data, [len(g["params"]) for g in groups], tokenize_seconds


def memory_side(side: str, batch: int, steps: int, threads: int) -> dict:
    """In a child process: one warm-up step, then `steps` steps; this process's peak RSS is the side's."""
    run, data, sizes, _ = build_side(side, batch, steps + 1, threads)
    run(data[:1])
    after_warmup = rss_mib()
    run(data[1:])
    return {"side": side, "rss_after_warmup_mib": after_warmup, "peak_rss_mib": rss_mib(), "group_sizes": sizes}


def timing(batch: int, steps: int, rounds: int, threads: int) -> dict:
    """Both sides in this process, interleaved round by round (order alternating), so load drift hits both."""
    n = 1 + steps * rounds
    sides = {side: build_side(side, batch, n, threads) for side in ("ours", "peer")}
    for run, data, _, _ in sides.values():
        run(data[:1])  # warm-up step (allocates AdamW state)
    sides["ours"][3][0] = 0.0
    per_round = {"ours": [], "peer": []}
    for r in range(rounds):
        for side in (("ours", "peer") if r % 2 == 0 else ("peer", "ours")):
            run, data, _, _ = sides[side]
            start = time.perf_counter()
            run(data[1 + r * steps:1 + (r + 1) * steps])
            per_round[side].append(steps * batch / (time.perf_counter() - start))
        print(f"  round {r + 1}: ours {per_round['ours'][-1]:.3f} samples/s, peer {per_round['peer'][-1]:.3f} "
              f"samples/s, ratio {per_round['ours'][-1] / per_round['peer'][-1]:.3f}", flush=True)
    return {"per_round": per_round, "tokenize_ms_per_step": 1000 * sides["ours"][3][0] / (steps * rounds),
            "group_sizes": {side: value[2] for side, value in sides.items()}}


def child(side: str, args) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    cmd = [sys.executable, __file__, "--side", side, "--batch", str(args.batch), "--steps", str(args.steps),
           "--threads", str(args.threads)]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{side} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=1, help="timed steps per side per round (after 1 warm-up)")
    parser.add_argument("--repeats", type=int, default=5, help="timing rounds (each side once per round)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--side", choices=["ours", "peer"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(memory_side(args.side, args.batch, args.steps, args.threads)))
        return

    memory = {side: child(side, args) for side in ("ours", "peer")}
    if memory["ours"]["group_sizes"] != memory["peer"]["group_sizes"]:
        sys.exit(f"param groups differ: {memory['ours']['group_sizes']} vs {memory['peer']['group_sizes']}")
    import torch

    torch.set_num_threads(args.threads)
    result = timing(args.batch, args.steps, args.repeats, args.threads)
    rounds = result["per_round"]
    ours, peer = statistics.median(rounds["ours"]), statistics.median(rounds["peer"])
    ratio = statistics.median(o / p for o, p in zip(rounds["ours"], rounds["peer"]))
    print(f"ViT-B-32 fp32 CPU, plain CLIP loss, batch {args.batch}, {args.threads} threads, AdamW groups "
          f"{memory['ours']['group_sizes']}; {args.repeats} rounds x {args.steps} step(s) per side after 1 warm-up, "
          f"interleaved in one process, order alternating")
    print("  ours = backend.train.loop.train_step (tokenizes captions inside the step, as in real training)")
    print("  peer = open_clip_train.train.train_one_epoch (pre-tokenized texts; its dataloader work not timed)")
    for side, sps in (("ours", ours), ("peer", peer)):
        m = memory[side]
        print(f"{side}: {sps:.3f} samples/s median ({args.batch / sps:.2f} s/step; rounds "
              f"{min(rounds[side]):.3f}..{max(rounds[side]):.3f}), peak RSS {m['peak_rss_mib']:.0f} MiB "
              f"(after warm-up {m['rss_after_warmup_mib']:.0f} MiB; own subprocess)")
    tok = result["tokenize_ms_per_step"]
    print(f"ours: tokenization inside the step: {tok:.1f} ms/step ({tok / 10 / (args.batch / ours):.2f}% of our step)")
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"ratio ours/peer samples/s (median of per-round ratios): {ratio:.3f} "
          f"(target >= 0.95: {'PASS' if ratio >= 0.95 else 'FAIL'}); ratio of medians {ours / peer:.3f}")
    print(f"peak RSS ours/peer: {memory['ours']['peak_rss_mib'] / memory['peer']['peak_rss_mib']:.3f}")


if __name__ == "__main__":
    main()
