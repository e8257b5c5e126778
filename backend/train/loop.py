"""The training loop, nanoGPT-style: one readable function from config to checkpoints.

AdamW without weight decay on gains, biases and logit_scale (open_clip's rule),
cosine schedule with linear warmup, gradient accumulation, optional gradient
checkpointing, bf16 autocast on GPU, logit scale clamped after every step,
periodic evaluation streamed to the store, best/last checkpoints, and an exact
resume: data is a pure function of (seed, step) and the optimizer, schedule
position and RNG state are saved, so on CPU a resumed run ends with the same
weights as an uninterrupted one.

Under ``torchrun`` each rank trains on its shard of the global batch; features
are gathered before the loss (``backend.train.objectives``); rank 0 evaluates,
logs and saves.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.distributed as dist

from backend.models import LoadedModel, autocast_for, load_model, pick_device, pick_precision
from backend.store import Store
from backend.train import data as train_data
from backend.train.checkpoint import load_trainer_state, load_weights, save_checkpoint
from backend.train.config import TrainConfig
from backend.train.objectives import Objective

LOG_EVERY = 10


@dataclass
class Run:
    """Where a run reports: its directory, and optionally a job in the store."""

    config: TrainConfig
    store: Store | None = None
    job_id: int | None = None
    rank: int = 0

    def log(self, step: int, values: dict[str, float], split: str) -> None:
        if self.rank != 0:
            return
        with (self.config.run_dir / "metrics.jsonl").open("a") as handle:
            handle.write(json.dumps({"step": step, "split": split, **values}) + "\n")
        if self.store is not None and self.job_id is not None:
            self.store.log_metrics(self.job_id, step, values, split)

    def progress(self, fraction: float) -> None:
        if self.rank == 0 and self.store is not None and self.job_id is not None:
            self.store.update_job(self.job_id, progress=round(fraction, 4), run_dir=str(self.config.run_dir))


def build_model(config: TrainConfig, device: str) -> LoadedModel:
    """The starting model: a registry spec, or the built-in world's model freshly initialised."""
    if config.base_model != "toyworld:random":
        return load_model(config.base_model, device=device, precision="fp32")
    from backend.toyworld.model import IMAGE_MEAN, IMAGE_STD, MODEL_NAME, create_toy_model, model_config

    model, preprocess, tokenizer = create_toy_model(config.seed)
    architecture = {"model_cfg": model_config(), "architecture": MODEL_NAME, "tokenizer": MODEL_NAME,
                    "activation": "gelu", "preprocess_cfg": {"mean": list(IMAGE_MEAN), "std": list(IMAGE_STD)}}
    return LoadedModel("toyworld:random", model.to(device), preprocess, tokenizer, "gelu", device, "fp32",
                       architecture=architecture)


def parameter_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """No decay on gains, biases, embeddings of ndim < 2 and logit_scale (open_clip's exclusion rule)."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        excluded = param.ndim < 2 or "bn" in name or "ln" in name or "bias" in name or "logit_scale" in name
        (no_decay if excluded else decay).append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def cosine_lr(step: int, config: TrainConfig) -> float:
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(config.steps - config.warmup_steps, 1)
    return 0.5 * config.lr * (1 + math.cos(math.pi * min(progress, 1.0)))


def load_data(config: TrainConfig, loaded: LoadedModel) -> train_data.TrainData:
    if config.data == "manifest":
        data = train_data.manifest_data(config.manifest, loaded.preprocess, config.families, config.seed)
    else:
        data = train_data.toyworld_data(config.data, config.dataset_size, config.seed, loaded.preprocess,
                                        config.families, mean_std=_exact_normalisation(loaded))
    if config.hard_negative_images:
        data.neighbours = train_data.nearest_neighbours(_image_embeddings(loaded, data.images), k=3)
    return data


def _exact_normalisation(loaded: LoadedModel) -> tuple | None:
    """(mean, std) when rendered toy images need only normalising (the model's input is 64x64)."""
    cfg = loaded.architecture.get("preprocess_cfg", {})
    size = loaded.architecture.get("model_cfg", {}).get("vision_cfg", {}).get("image_size")
    if size == train_data.TOY_RESOLUTION and "mean" in cfg and "std" in cfg:
        return cfg["mean"], cfg["std"]
    return None


@torch.inference_mode()
def _image_embeddings(loaded: LoadedModel, images: train_data.ImageBank, chunk: int = 256) -> torch.Tensor:
    """The STARTING model's image embeddings (NegCLIP computes neighbours once, before training)."""
    loaded.model.eval()
    rows = [loaded.model.encode_image(images.tensors(range(i, min(i + chunk, len(images)))).to(loaded.device))
            for i in range(0, len(images), chunk)]
    loaded.model.train()
    return torch.nn.functional.normalize(torch.cat(rows).float(), dim=-1).cpu()


def _distributed() -> tuple[int, int]:
    if "RANK" not in os.environ:
        return 0, 1
    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size()


def evaluate(config: TrainConfig, loaded: LoadedModel) -> dict[str, float]:
    from backend.benchmarks import evaluate_many
    return evaluate_many(config.eval_benchmarks, loaded) if config.eval_benchmarks else {}


def train_step(model, objective: Objective, optimizer: torch.optim.Optimizer, batches: list[train_data.Batch],
               autocast, max_log_scale: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """One optimizer step over `batches` (the gradient-accumulation micro-batches).

    Each micro-batch is its own contrastive batch (its in-batch negatives are its
    own rows), unlike open_clip's feature-caching accumulation; with
    grad_accum=1 the two are identical.
    """
    for batch in batches:
        with autocast:
            loss, parts = objective(model, batch)
        (loss / len(batches)).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    core = model.module if hasattr(model, "module") else model
    with torch.no_grad():
        core.logit_scale.clamp_(0, max_log_scale)
    return loss, parts


def train(config: TrainConfig, store: Store | None = None, job_id: int | None = None,
          stop_after: int | None = None, on_step: Callable[[int], None] | None = None) -> dict:
    """Train to `config.steps` (resuming from the last checkpoint if there is one); return the result.

    `stop_after` ends the run early after that many total steps without a final
    evaluation, as a crash or cancel would (tests use it to check exact resume).
    """
    rank, world_size = _distributed()
    device = pick_device(None if not torch.cuda.is_available() else f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}")
    precision = pick_precision(device, None if config.precision == "auto" else config.precision)
    torch.manual_seed(config.seed)
    run = Run(config, store, job_id, rank)
    config.run_dir.mkdir(parents=True, exist_ok=True)
    (config.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=2))

    loaded = build_model(config, device)
    model = loaded.model.train()
    if config.grad_checkpointing:
        model.set_grad_checkpointing(True)
    data = load_data(config, loaded)
    if data.skipped and rank == 0:
        print(f"skipped rows: {dict(data.skipped)}", flush=True)
    optimizer = torch.optim.AdamW(parameter_groups(model, config.weight_decay), lr=config.lr,
                                  betas=tuple(config.betas), eps=config.eps)
    objective = Objective(config, loaded.tokenizer, device, rank, world_size)
    start, best_score = _resume(config, model, optimizer, objective)
    trained = torch.nn.parallel.DistributedDataParallel(model) if world_size > 1 else model
    autocast = autocast_for(device, precision)
    max_log_scale = math.log(config.max_logit_scale)
    end = min(config.steps, stop_after) if stop_after else config.steps

    for step in range(start, end):
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(step, config)
        started = time.perf_counter()
        batches = [train_data.make_batch(data, step, config.batch_size, config.seed, rank, world_size,
                                         micro, config.grad_accum) for micro in range(config.grad_accum)]
        loss, parts = train_step(trained, objective, optimizer, batches, autocast, max_log_scale)
        if on_step:
            on_step(step)
        if step % LOG_EVERY == 0 or step == end - 1:
            values = {"loss": loss.item(), **{k: float(v.detach()) for k, v in parts.items()},
                      "lr": optimizer.param_groups[0]["lr"], "logit_scale": model.logit_scale.exp().item(),
                      "seconds_per_step": time.perf_counter() - started}
            run.log(step + 1, values, "train")
            run.progress((step + 1) / config.steps)
        if (step + 1) % config.eval_every == 0 or step + 1 == config.steps:
            best_score = _evaluate_and_save(config, run, loaded, model, optimizer, objective, step + 1,
                                            best_score)
    if world_size > 1:
        dist.barrier()  # rank 0 has written the checkpoints every rank's result points to
    if end < config.steps:
        return {"stopped_at": end}
    result = _result(config, data)
    if rank == 0 and store is not None and job_id is not None:
        store.update_job(job_id, result=result, progress=1.0)
    return result


def _evaluate_and_save(config, run, loaded, model, optimizer, objective, step, best_score):
    if run.rank != 0:
        return best_score
    metrics = evaluate(config, loaded)
    model.train()
    if metrics:
        run.log(step, metrics, "eval")
    extra = {"trained_from": config.base_model, "step": step, "train_config": config.to_dict(),
             "eval": metrics}
    state = {"optimizer": optimizer.state_dict(), "step": step, "torch_rng": torch.get_rng_state(),
             "best_score": best_score, "thresholds": objective.thresholds.value.cpu()}
    checkpoints = config.run_dir / "checkpoints"
    save_checkpoint(checkpoints / "last", model, loaded.architecture, extra, state)
    score = metrics.get(config_select_metric(config))
    if score is None or best_score is None or score > best_score:  # no selection metric: best = last
        save_checkpoint(checkpoints / "best", model, loaded.architecture, extra)
        best_score = score
    return best_score


def config_select_metric(config: TrainConfig) -> str:
    """Model selection as in the papers (by validation): the first benchmark's overall score."""
    return f"{config.eval_benchmarks[0]}/overall" if config.eval_benchmarks else ""


def _resume(config: TrainConfig, model, optimizer, objective: Objective) -> tuple[int, float | None]:
    """Restore weights, optimizer, RNG and CE-CLIP's lagged thresholds from the last checkpoint, if any."""
    last = config.run_dir / "checkpoints" / "last"
    state = load_trainer_state(last) if last.is_dir() else None
    if state is None:
        return 0, None
    load_weights(last, model)
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    objective.thresholds.value = state["thresholds"]
    return int(state["step"]), state.get("best_score")


def _result(config: TrainConfig, data) -> dict:
    checkpoints = config.run_dir / "checkpoints"
    last_config = json.loads((checkpoints / "last" / "open_clip_config.json").read_text())
    return {"best": str(checkpoints / "best"), "last": str(checkpoints / "last"),
            "final_metrics": last_config.get("eval", {}), "skipped_rows": dict(data.skipped)}
