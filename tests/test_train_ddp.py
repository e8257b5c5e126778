"""`torchrun` with 2 CPU processes (gloo) trains exactly like 1 process on the concatenated batch.

Each micro-batch of 4 = 2 ranks x 2; two micro-batches per step (grad_accum=2).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from backend.train.config import TrainConfig
from backend.train.loop import train

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
COMMON = {"base_model": "toyworld:random", "data": "toyworld-finetune", "loss": "negclip", "steps": 2,
          "dataset_size": 32, "eval_every": 2, "eval_benchmarks": [], "warmup_steps": 1, "lr": 1e-3, "grad_accum": 2}


def _weights(run_dir: Path) -> dict:
    return load_file(run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")


def _losses(run_dir: Path) -> list[float]:
    rows = map(json.loads, (run_dir / "metrics.jsonl").read_text().splitlines())
    return [row["loss"] for row in rows if row["split"] == "train"]


def test_two_ranks_match_one_rank_on_the_global_batch(tmp_path, monkeypatch):
    """With accumulation, so both DDP paths run: the first micro-batch's backward skips the all-reduce
    (no_sync), the last one's reduces the accumulated sum, which must equal the single process's gradient.
    Both runs on the CPU, on a GPU machine too (where training would otherwise pick the GPU and bf16)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    single = TrainConfig.from_dict({**COMMON, "batch_size": 4, "name": "single", "output_dir": str(tmp_path)})
    train(single)
    overrides = [f"{k}={v}" for k, v in {**COMMON, "batch_size": 2, "name": "ddp",
                                         "output_dir": str(tmp_path)}.items()]
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "-m", "backend", "train", "--set", *overrides]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode == 0, result.stderr[-2000:]
    # the same global loss at every step: each rank trained its shard, features were gathered
    single_losses, ddp_losses = _losses(tmp_path / "single"), _losses(tmp_path / "ddp")
    assert len(single_losses) == len(ddp_losses) == 2
    assert all(abs(a - b) < 1e-5 for a, b in zip(single_losses, ddp_losses))
    one, two = _weights(tmp_path / "single"), _weights(tmp_path / "ddp")
    assert one.keys() == two.keys()
    # Adam divides by the gradient's running RMS, so float-order noise in near-zero
    # gradients shows up as ~1e-5 in the weights after two steps; a wrong gather does not stay this close
    changed = [k for k in one if not torch.allclose(one[k], two[k], atol=5e-5, rtol=1e-4)]
    assert changed == []
