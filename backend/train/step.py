"""One optimisation step and the settings around it: parameter groups, the learning-rate schedule, precision
and loss scaling. The loop (`backend.train.loop`) and bench/train_step.py, which times this step against
open_clip_train's, both call `train_step`, so the bench measures what a run does.
"""
from __future__ import annotations

import contextlib
import math

import torch

from backend.models.loading import pick_precision
from backend.train import data as train_data
from backend.train.config import TrainConfig
from backend.train.objectives import Objective


def parameter_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """No decay on gains, biases, embeddings of ndim < 2 and logit_scale (open_clip's exclusion rule)."""
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        excluded = param.ndim < 2 or "bn" in name or "ln" in name or "bias" in name or "logit_scale" in name
        (no_decay if excluded else decay).append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def cosine_lr(step: int, config: TrainConfig) -> float:
    """Linear warmup to `config.lr`, then cosine decay to zero at `config.steps`."""
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(config.steps - config.warmup_steps, 1)
    return 0.5 * config.lr * (1 + math.cos(math.pi * min(progress, 1.0)))


def training_precision(device: str, requested: str) -> str:
    """"auto" trains in mixed precision on CUDA only (bf16 where native, else fp16); fp32 elsewhere.

    Off CUDA autocast is slow (CPU) or would need a loss scaler nobody tested (MPS).
    """
    if requested != "auto":
        return requested
    return pick_precision(device) if device.startswith("cuda") else "fp32"


def grad_scaler(device: str, precision: str) -> torch.amp.GradScaler | None:
    """fp16 gradients underflow without loss scaling, so fp16 always trains with a scaler (bf16 and fp32 never)."""
    return torch.amp.GradScaler(device.split(":")[0]) if precision == "fp16" else None


def train_step(model, objective: Objective, optimizer: torch.optim.Optimizer, batches: list[train_data.Batch],
               autocast, max_log_scale: float, scaler: torch.amp.GradScaler | None = None,
               clip_norm: float | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """One optimizer step over `batches` (the gradient-accumulation micro-batches); the mean loss and parts.

    Each micro-batch is its own contrastive batch (its in-batch negatives are its
    own rows), unlike open_clip's feature-caching accumulation; with
    grad_accum=1 the two are identical. Under DDP the micro-batches before the
    last skip the gradient all-reduce (``no_sync``): gradients accumulate
    locally and the last backward reduces their sum once. Gradients are
    cleared at the start of the step, as open_clip does, so that
    bench/train_step.py (both trainers in one process) compares like with like:
    clearing them after the update measured 10-15% slower there.
    """
    optimizer.zero_grad(set_to_none=True)
    losses: list[torch.Tensor] = []
    parts_sum: dict[str, torch.Tensor] = {}
    for index, batch in enumerate(batches):
        with _gradient_sync(model, final=index == len(batches) - 1):
            with autocast:
                loss, parts = objective(model, batch)
            scaled = loss / len(batches)
            (scaler.scale(scaled) if scaler is not None else scaled).backward()
        losses.append(loss.detach())
        for name, value in parts.items():
            parts_sum[name] = parts_sum.get(name, 0) + value.detach()
    _optimizer_step(model, optimizer, scaler, clip_norm)
    core = model.module if hasattr(model, "module") else model
    with torch.no_grad():
        core.logit_scale.clamp_(0, max_log_scale)
    return torch.stack(losses).mean(), {name: value / len(batches) for name, value in parts_sum.items()}


def _gradient_sync(model, final: bool):
    """DDP's ``no_sync`` for a micro-batch before the last; nothing to skip otherwise."""
    return model.no_sync() if not final and hasattr(model, "no_sync") else contextlib.nullcontext()


def _optimizer_step(model, optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler | None,
                    clip_norm: float | None) -> None:
    """Unscale (fp16), clip, step: clipping must see the true gradients, not the loss-scaled ones.

    The scaler skips the step when the scaled gradients overflowed and lowers its scale.
    """
    if scaler is not None:
        scaler.unscale_(optimizer)
    if clip_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
