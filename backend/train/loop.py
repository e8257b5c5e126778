"""The training loop, nanoGPT-style: one readable function from config to checkpoints.

AdamW without weight decay on gains, biases and logit_scale (open_clip's rule),
cosine schedule with linear warmup, gradient accumulation, optional gradient
checkpointing and gradient clipping, bf16 autocast on GPUs that run it natively
(else fp16 with a loss scaler), logit scale clamped after every step, periodic
evaluation, best/last checkpoints, a stop with a message when the loss goes
non-finite (`backend.train.divergence`), and an exact resume: data
(augmentation crops included) is a pure function of (seed, step) and the
optimizer, scaler, schedule position and RNG state are saved, so on CPU a
resumed run ends with the same weights as an uninterrupted one.

Everything the run tells the world goes through one `backend.jobs.reporter.Reporter`
(log lines, progress with ETA, metrics, result), as every job kind does; the run
folder keeps its own ``metrics.jsonl``. Before the first step the base model is
evaluated on the run's benchmarks (split ``baseline``, step 0), so a run's numbers
always sit beside its starting point (a finetune can regress: `backend.train.history`).
A resumed run reports the history its checkpoint covers again (`backend.train.history`),
so its curves (and the baseline) start at step 0, not at the resume step.

Under ``torchrun`` each rank trains on its shard of the global batch; features
are gathered before the loss (``backend.train.objectives``); rank 0 evaluates,
reports and saves.
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist

from backend import plugins
from backend.core import env
from backend.jobs.reporter import Reporter
from backend.models import lora
from backend.models.checkpoint import CheckpointError, adapter_state, load_for_resume, save_checkpoint
from backend.models.loading import LoadedModel, autocast_for, load_model
from backend.train import data as train_data
from backend.train import history, shards
from backend.train.config import SHARDS, TrainConfig
from backend.train.divergence import FiniteWatch
from backend.train.loader import StepBatches, image_chunks, step_loader, stream_loader
from backend.train.objectives import Objective, check_data
from backend.train.step import cosine_lr, grad_scaler, parameter_groups, train_step, training_precision
from backend.train.transforms import train_transform

LOG_EVERY = 10


def build_model(config: TrainConfig, device: str) -> LoadedModel:
    """The starting model: a spec the model registry loads, or a plug-in's model freshly initialised from the
    run's seed (`backend.plugins`, ``add_model_builder``: the built-in world's ``<name>:random``)."""
    builder = plugins.hooks().model_builders.get(config.base_model)
    if builder is None:
        loaded = load_model(config.base_model, device=device, precision="fp32")
        if config.lora_rank:
            lora.add_lora(loaded.model, lora_record(config))
        return loaded
    model, preprocess, tokenizer, architecture = plugins.resolve(builder)(config.seed)
    return LoadedModel(config.base_model, model.to(device), preprocess, tokenizer, architecture["activation"],
                       device, "fp32", architecture=architecture)


def lora_record(config: TrainConfig) -> dict:
    """What the run's LoRA checkpoints record about their adapter and base model."""
    return lora.record(config.base_model, config.lora_rank, config.lora_alpha, config.lora_towers,
                       config.lora_targets)


def load_data(config: TrainConfig, loaded: LoadedModel) -> train_data.TrainData | shards.ShardSource:
    """The run's data, training images through `config.augment`, plus NegCLIP's neighbours when asked for."""
    augment = train_transform(loaded.model, config.augment)
    if config.data == SHARDS:
        return shards.ShardSource(config.shards, loaded.preprocess, augment, config.families)
    if config.data == "manifest":
        data = train_data.manifest_data(config.manifest, loaded.preprocess, config.families, config.seed,
                                        augment=augment)
    else:  # a plug-in's data source (TrainConfig.validate checked that one is registered under this name)
        data = plugins.resolve(plugins.hooks().data_sources[config.data].build)(config, loaded, augment)
    check_data(config.loss, data)
    if config.hard_negative_images:
        embeddings = _image_embeddings(loaded, data.images, config.workers)
        data.neighbours = train_data.nearest_neighbours(embeddings, k=3)
    return data


@torch.inference_mode()
def _image_embeddings(loaded: LoadedModel, images: train_data.ImageBank, workers: int,
                      chunk: int = 256) -> torch.Tensor:
    """The STARTING model's image embeddings (NegCLIP computes neighbours once, before training)."""
    loaded.model.eval()
    rows = [loaded.model.encode_image(pixels.to(loaded.device)) for pixels in image_chunks(images, chunk, workers)]
    loaded.model.train()
    return torch.nn.functional.normalize(torch.cat(rows).float(), dim=-1).cpu()


def evaluate(config: TrainConfig, loaded: LoadedModel) -> dict[str, float]:
    from backend.benchmarks import evaluate_many
    return evaluate_many(config.eval_benchmarks, loaded) if config.eval_benchmarks else {}


class _Throughput:
    """Samples per second since the last report (evaluations excluded: `restart` after them)."""

    def __init__(self, samples_per_step: int, step: int):
        self.samples_per_step = samples_per_step
        self.restart(step)

    def restart(self, step: int) -> None:
        self.since, self.step = time.perf_counter(), step

    def rate(self, step: int) -> float:
        now = time.perf_counter()
        rate = (step - self.step) * self.samples_per_step / max(now - self.since, 1e-9)
        self.since, self.step = now, step
        return rate


@dataclass
class Session:
    """One run in progress: what its steps, reports, evaluations and checkpoints share."""

    config: TrainConfig
    reporter: Reporter
    loaded: LoadedModel
    data: train_data.TrainData | shards.ShardSource
    optimizer: torch.optim.Optimizer
    objective: Objective
    scaler: torch.amp.GradScaler | None
    rank: int = 0
    best_score: float | None = None
    saved_step: int | None = None  # the step `last` holds (None: nothing saved yet)
    baseline: dict[str, float] = field(default_factory=dict)  # the base model's numbers on the eval benchmarks

    @property
    def checkpoints(self) -> Path:
        return self.config.run_dir / "checkpoints"

    def record(self, step: int, values: dict[str, float], split: str) -> None:
        """Metrics to the run folder's metrics.jsonl and to the reporter (rank 0 only)."""
        if self.rank != 0 or not values:
            return
        with (self.config.run_dir / history.METRICS_FILE).open("a") as handle:
            handle.write(json.dumps({"step": step, "split": split, **values}) + "\n")
        self.reporter.metrics(step, values, split)

    def report_step(self, step: int, loss: torch.Tensor, parts: dict[str, torch.Tensor],
                    samples_per_second: float) -> None:
        """The train curve point and progress line after `step` steps."""
        values = {"loss": loss.item(), **{k: float(v) for k, v in parts.items()},
                  "lr": self.optimizer.param_groups[0]["lr"], "logit_scale": self.loaded.model.logit_scale.exp().item(),
                  "samples_per_second": samples_per_second}
        self.record(step, values, "train")
        self.reporter.progress(step / self.config.steps,
                               f"step {step}/{self.config.steps} loss {values['loss']:.4f} lr {values['lr']:.2e} "
                               f"{samples_per_second:.0f} samples/s")

    def begin(self) -> None:
        """Rank 0, before step 0: a fresh metrics file (an attempt stopped before its first checkpoint left lines
        that would repeat), then the base model's numbers on the eval benchmarks (split ``baseline``)."""
        if self.rank != 0:
            return
        (self.config.run_dir / history.METRICS_FILE).unlink(missing_ok=True)
        if not self.config.eval_benchmarks:
            return
        self.baseline = evaluate(self.config, self.loaded)
        self.loaded.model.train()
        self.record(0, self.baseline, "baseline")
        self.reporter.log("base model: " + ", ".join(f"{k} {v:.4g}" for k, v in _headline(self.baseline)))

    def evaluate_and_save(self, step: int) -> None:
        """Rank 0: evaluate, save `last` (with the trainer state) and `best` when the selection metric improved."""
        if self.rank != 0:
            return
        metrics = evaluate(self.config, self.loaded)
        self.loaded.model.train()
        if metrics:
            self.record(step, metrics, "eval")
            self.reporter.log(f"eval at step {step}: " + ", ".join(f"{k} {v:.4g}" for k, v in _headline(metrics)))
        extra = {"trained_from": self.config.base_model, "step": step, "train_config": self.config.to_dict(),
                 "eval": metrics, "baseline_eval": self.baseline}
        weights: torch.nn.Module | dict[str, torch.Tensor] = self.loaded.model
        if self.config.lora_rank:  # the adapter and its base model's spec, not a copy of the base
            weights, extra[lora.LORA_KEY] = adapter_state(self.loaded.model), lora_record(self.config)
        architecture = self.loaded.architecture
        save_checkpoint(self.checkpoints / "last", weights, architecture, extra, self.trainer_state(step))
        self.saved_step = step
        score = metrics.get(config_select_metric(self.config))
        if score is None or self.best_score is None or score > self.best_score:  # no selection metric: best = last
            save_checkpoint(self.checkpoints / "best", weights, architecture, extra)
            self.best_score = score
        self.reporter.log(f"saved checkpoint at step {step} in {self.checkpoints}")

    def trainer_state(self, step: int) -> dict:
        """What an exact resume needs besides the weights (plain tensors and numbers: loads with weights_only)."""
        state = {"optimizer": self.optimizer.state_dict(), "step": step, "torch_rng": torch.get_rng_state(),
                 "best_score": self.best_score, "thresholds": self.objective.thresholds.value.cpu(),
                 "scaler": self.scaler.state_dict() if self.scaler is not None else {}}
        if isinstance(self.data, shards.ShardSource):  # the step's position in the shard stream
            state["stream"] = self.stream_positions(step)
        return state

    def stream_positions(self, step: int) -> dict:
        config = self.config
        assert isinstance(self.data, shards.ShardSource)  # called only for a shard-fed run
        return shards.stream_positions(self.data, config.seed, step, config.batch_size, config.grad_accum,
                                       self.objective.world_size, config.workers)

    def resume(self) -> int:
        """Restore weights, optimizer, scaler, RNG and CE-CLIP's lagged thresholds from `last`; the step to start at.

        A damaged checkpoint raises `CheckpointError` (see `backend.models.checkpoint`).
        """
        state = load_for_resume(self.checkpoints / "last", self.loaded.model)
        if state is None:
            self.reporter.log(f"no checkpoint in {self.checkpoints}: starting at step 0")
            return 0
        missing = sorted({"optimizer", "step", "torch_rng", "thresholds"} - set(state))
        if missing:
            raise CheckpointError(self.checkpoints / "last", f"its trainer state lacks {', '.join(missing)}")
        if isinstance(self.data, shards.ShardSource):
            shards.check_resume(state.get("stream"), self.stream_positions(int(state["step"])))
        self.optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        self.objective.thresholds.value = state["thresholds"]
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        self.best_score = state.get("best_score")
        self.saved_step = int(state["step"])
        self.reporter.log(f"resuming from step {state['step']} ({self.checkpoints / 'last'})")
        if self.rank == 0:
            self.baseline = history.carry_over(self.config.run_dir, self.saved_step, self.reporter)
        return self.saved_step

    def result(self) -> dict:
        last_config = json.loads((self.checkpoints / "last" / "open_clip_config.json").read_text())
        return {"best": str(self.checkpoints / "best"), "last": str(self.checkpoints / "last"),
                "final_metrics": last_config.get("eval", {}), "baseline_metrics": self.baseline,
                "skipped_rows": dict(self.data.skipped)}


def _headline(metrics: dict[str, float]) -> list[tuple[str, float]]:
    """The numbers an evaluation log line shows: each benchmark's overall score (all metrics if none is)."""
    overall = [(k, v) for k, v in metrics.items() if k.endswith("/overall")]
    return overall or list(metrics.items())


def config_select_metric(config: TrainConfig) -> str:
    """Model selection (the papers pick by validation): the first eval benchmark's headline metric (the one
    its leaderboard shows first), else its ``overall``; "" without eval benchmarks, and then `best` is `last`."""
    if not config.eval_benchmarks:
        return ""
    from backend.benchmarks import get_benchmark

    first = config.eval_benchmarks[0]
    headline = get_benchmark(first).headline
    return f"{first}/{headline[0] if headline else 'overall'}"


def _rank_reporter(reporter: Reporter | None, rank: int) -> Reporter:
    """The reporter this process speaks through: only rank 0 reports, whatever the caller passed."""
    if reporter is None or (rank != 0 and reporter.active):
        return Reporter(rank=rank)
    return reporter


def _open_session(config: TrainConfig, reporter: Reporter, device: str, precision: str, rank: int,
                  world_size: int) -> Session:
    """Model, data, optimizer, objective and scaler, with the run folder created and announced.

    The base model loads first: a spec that cannot load leaves no run folder behind."""
    reporter.log(f"training {config.loss} from {config.base_model} on {config.data}: {config.steps} steps, "
                 f"{world_size} x {config.batch_size} x {config.grad_accum} per step, {precision} on {device}")
    loaded = build_model(config, device)
    config.run_dir.mkdir(parents=True, exist_ok=True)
    if rank == 0:
        (config.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=2))
    reporter.update(run_dir=str(config.run_dir))
    if config.grad_checkpointing:
        loaded.model.set_grad_checkpointing(True)
    loaded.model.train()
    data = load_data(config, loaded)
    if data.skipped:
        reporter.log(f"skipped rows: {dict(data.skipped)}")
    optimizer = torch.optim.AdamW(parameter_groups(loaded.model, config.weight_decay), lr=config.lr,
                                  betas=tuple(config.betas), eps=config.eps)
    objective = Objective(config, loaded.tokenizer, device, rank, world_size)
    return Session(config, reporter, loaded, data, optimizer, objective, grad_scaler(device, precision), rank)


def train(config: TrainConfig, reporter: Reporter | None = None, stop_after: int | None = None,
          on_step: Callable[[int], None] | None = None) -> dict:
    """Train to `config.steps` (resuming from the last checkpoint if there is one); return the result.

    `reporter` receives log lines, progress, metrics and the result (None: a
    `Reporter()` that only prints). `stop_after` ends the run early after that
    many total steps without a final evaluation, as a crash or cancel would
    (tests use it to check exact resume). `on_step(step)` runs after every step.
    """
    device = env.pick_device()
    rank, world_size = env.join_process_group(device)
    reporter = _rank_reporter(reporter, rank)
    precision = training_precision(device, config.precision)
    torch.manual_seed(config.seed)
    session = _open_session(config, reporter, device, precision, rank, world_size)
    start = session.resume()
    if start == 0:
        session.begin()
    end = min(config.steps, stop_after) if stop_after else config.steps
    model = session.loaded.model
    trained = torch.nn.parallel.DistributedDataParallel(model) if world_size > 1 else model
    autocast = autocast_for(device, precision)
    max_log_scale = math.log(config.max_logit_scale)
    throughput = _Throughput(config.batch_size * world_size * config.grad_accum, start)
    watch = FiniteWatch(device, config.steps, config.lr, session.checkpoints)
    for item in _steps(session, range(start, end), rank, world_size, pin_memory=device.startswith("cuda")):
        step = item.step
        for group in session.optimizer.param_groups:
            group["lr"] = cosine_lr(step, config)
        loss, parts = train_step(trained, session.objective, session.optimizer, item.batches, autocast,
                                 max_log_scale, session.scaler, config.grad_clip_norm)
        watch.see(step + 1, loss, parts)
        if on_step:
            on_step(step)
        if step % LOG_EVERY == 0 or step in (start, end - 1):  # a resumed run's curve goes on at once
            watch.check(session.saved_step)
            session.report_step(step + 1, loss, parts, throughput.rate(step + 1))
        if (step + 1) % config.eval_every == 0 or step + 1 == config.steps:
            watch.check(session.saved_step, model, step + 1)  # never save over `last` what a NaN touched
            session.evaluate_and_save(step + 1)
            throughput.restart(step + 1)
    if world_size > 1:
        dist.barrier()  # rank 0 has written the checkpoints every rank's result points to
    if end < config.steps:
        return {"stopped_at": end}
    result = session.result()
    if rank == 0:
        reporter.result(result)
    return result


def _steps(session: Session, steps: range, rank: int, world_size: int, pin_memory: bool):
    """Each step's micro-batches in order: streamed from shards, or built from the data set by step number."""
    config = session.config
    if isinstance(session.data, shards.ShardSource):
        dataset = shards.ShardSteps(session.data, steps, config.batch_size, config.seed, config.grad_accum, rank,
                                    world_size, config.workers)
        return stream_loader(dataset, config.workers, pin_memory)
    return step_loader(StepBatches(session.data, steps, config.batch_size, config.seed, config.grad_accum, rank,
                                   world_size), config.workers, pin_memory)


def run_job(config: TrainConfig, reporter: Reporter) -> dict:
    """The `train` job kind's entry point for the job runner (``python -m backend jobs run ID``)."""
    return train(config, reporter)
