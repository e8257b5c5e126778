"""Training run configuration: one dataclass, loadable from YAML or flags, saved with every run.

Defaults follow the five papers' shared conventions (docs/REFERENCE.md, "Optimiser": AdamW,
betas (0.9, 0.98), eps 1e-6, wd 0.1, cosine schedule with 50 warmup steps) except the
learning rate, whose paper value (1e-6..5e-6) is for ViT-B-32 on COCO; a recipe sets its
own. Nothing is assumed about the data or the model: a run names its base model and its
data (a manifest, or a data source a plug-in registered), and is evaluated on the
benchmarks its config names (none by default: `best` is then the last checkpoint).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from backend.core.paths import PathError, check_slug
from backend.core.tabular import RecordFileError, read_records
from backend.jobs.kinds import check_known_keys

LOSSES = ("clip", "negclip", "ce_clip", "hp_hn", "trohn_img", "tripletclip", "fsc_clip", "countercurate", "eqsim")
# The losses that train on negative images (a manifest's negative_image and negative_caption columns)
NEGATIVE_IMAGE_LOSSES = ("trohn_img", "tripletclip", "eqsim")
MANIFEST = "manifest"
SHARDS = "shards"  # WebDataset shards written by `python -m backend shards` (backend.train.shard_writer)
# required; negatives, positives, negative_image, negative_caption, group optional
MANIFEST_COLUMNS = ("image", "caption")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
# LoRA's choices, as backend.models.lora names them (literal here: reading a config imports no torch)
LORA_TOWERS = ("vision", "text")
LORA_TARGETS = ("attn", "mlp")
# Training-image augmentation (backend.train.transforms): open_clip's default training transform
# (RandomResizedCrop, scale 0.9-1.0, bicubic), or none (training sees the eval preprocess).
AUGMENTATIONS = ("open_clip", "none")
# The papers' weights: CE-CLIP's optimum alpha=0.2, beta=0.4 (its authors' script used 0.3/0.2),
# IMC variant and threshold cap u; Kamath et al.'s hard-negative / hard-positive weights.
PAPER_DEFAULT_WEIGHTS: dict[str, dict[str, Any]] = {
    "ce_clip": {"alpha": 0.2, "beta": 0.4, "imc": "contrastive", "u": 10.0,
                # the types IMC and CMR act on (ITC keeps all): backend.train.losses.CE_CLIP_TYPES, kept
                # literal here so that reading a config does not import torch
                "aux_types": ["relation", "attribute", "action", "object"]},
    "hp_hn": {"w_hn": 1.0, "w_hp": 1.0},
    # FSC-CLIP's COCO run (its README): focal gamma 2, label smoothing 0.02 on hard negatives, weight 0.5
    "fsc_clip": {"weight": 0.5, "gamma": 2.0, "smoothing": 0.02},
    # EqSim's FIBER run (its README): pair-loss weight 0.5, margin 0.1, scores softmaxed first
    "eqsim": {"weight": 0.5, "margin": 0.1, "pre_softmax": True},
}


def data_sources() -> tuple[str, ...]:
    """What `TrainConfig.data` may be: a manifest, shards, or a data source a plug-in registered."""
    from backend import plugins

    return (MANIFEST, SHARDS, *plugins.hooks().data_sources)


def model_builders() -> tuple[str, ...]:
    """Base models a plug-in builds from scratch (for pretraining), besides any spec the registry loads."""
    from backend import plugins

    return tuple(plugins.hooks().model_builders)


@dataclass
class TrainConfig:
    base_model: str = ""  # a model spec, or a plug-in's model built from scratch (data_sources(), model builders)
    data: str = MANIFEST  # "manifest", or a data source a plug-in registered (data_sources())
    manifest: str = ""  # CSV/JSONL path when data == "manifest"
    shards: str = ""  # shard folder when data == "shards"
    loss: str = "clip"  # one of LOSSES
    loss_weights: dict[str, Any] = field(default_factory=dict)  # e.g. {"alpha": 0.2, "beta": 0.4} for ce_clip
    families: list = field(default_factory=lambda: ["negclip_swap"])  # perturbation families for negatives
    hard_negative_images: bool = False  # NegCLIP's K=3 nearest-neighbour images
    steps: int = 600
    batch_size: int = 256
    grad_accum: int = 1
    lr: float = 1e-4
    weight_decay: float = 0.1
    betas: tuple = (0.9, 0.98)
    eps: float = 1e-6
    warmup_steps: int = 50
    max_logit_scale: float = 100.0
    grad_checkpointing: bool = False
    # LoRA (peft): 0 trains every weight; a rank trains only adapters on `lora_targets` of the `lora_towers`
    lora_rank: int = 0
    lora_alpha: float = 0.0  # the adapter's scale is alpha / rank; 0 means alpha = rank
    lora_towers: list = field(default_factory=lambda: list(LORA_TOWERS))
    lora_targets: list = field(default_factory=lambda: list(LORA_TARGETS))
    grad_clip_norm: float | None = None  # clip the global gradient norm to this (open_clip's default: no clipping)
    # auto: bf16 where the GPU runs it natively, else fp16 with a loss scaler; fp32 off CUDA
    precision: str = "auto"  # one of PRECISIONS
    augment: str = "open_clip"  # one of AUGMENTATIONS; evaluation always uses the eval preprocess
    workers: int = 2  # DataLoader processes decoding manifest images (0: decode in the training process)
    seed: int = 0
    dataset_size: int = 4000  # items a plug-in's data source generates (a manifest has its own length)
    eval_every: int = 100
    # evaluated every eval_every steps; the first one's headline metric picks `best` (none: best = last)
    eval_benchmarks: list = field(default_factory=list)
    name: str = ""  # the run's folder name: a slug (backend.core.paths.check_slug)
    output_dir: str = ""  # blank: the settings' runs_dir

    @property
    def weights(self) -> dict[str, Any]:
        """The paper defaults for the chosen loss, overridden by `loss_weights`."""
        return {**PAPER_DEFAULT_WEIGHTS.get(self.loss, {}), **self.loss_weights}

    @property
    def run_dir(self) -> Path:
        if self.output_dir:
            return Path(self.output_dir) / (self.name or f"{self.loss}-seed{self.seed}")
        from backend.core.settings import get_settings
        return get_settings().runs_dir / (self.name or f"{self.loss}-seed{self.seed}")

    def validate(self) -> TrainConfig:
        problems = []
        if self.name:
            try:
                check_slug(self.name, "run name")
            except PathError as error:
                problems.append(str(error))
        if self.loss not in LOSSES:
            problems.append(f"loss must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if not str(self.base_model).strip():
            problems.append("base_model is required: a model spec (e.g. ViT-B-32-quickgelu:openai) or one a "
                            f"plug-in builds ({', '.join(model_builders()) or 'none installed'})")
        if self.data not in data_sources():
            problems.append(f"data must be one of {', '.join(data_sources())}, not {self.data!r}")
        if self.data == "manifest" and not self.manifest:
            problems.append("data 'manifest' needs a manifest path")
        elif self.data == "manifest" and Path(self.manifest).is_file():  # a remote job's may exist only there
            problems += self._manifest_problems()
        if self.data == SHARDS and not self.shards:
            problems.append("data 'shards' needs a shard folder (written by `python -m backend shards`)")
        if self.data == SHARDS and self.hard_negative_images:
            problems.append("hard_negative_images mines neighbours over the whole data set, which a stream of "
                            "shards never holds at once: train on the manifest for NegCLIP's image negatives")
        for name in ("steps", "batch_size", "grad_accum", "eval_every", "dataset_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                problems.append(f"{name} must be a whole number of at least 1, not {getattr(self, name)!r}")
        if self.warmup_steps < 0:
            problems.append(f"warmup_steps must be 0 or more, not {self.warmup_steps!r}")
        if not self.max_logit_scale > 0:
            problems.append(f"max_logit_scale must be positive (the cap on exp(logit_scale); CLIP's is 100), "
                            f"not {self.max_logit_scale!r}")
        if self.lr <= 0:
            problems.append("lr must be positive")
        if self.grad_clip_norm is not None and not self.grad_clip_norm > 0:
            problems.append("grad_clip_norm must be positive (or null for no clipping)")
        if self.workers < 0:
            problems.append("workers must be 0 or more")
        problems += self._lora_problems()
        for name, allowed_values in (("precision", PRECISIONS), ("augment", AUGMENTATIONS)):
            if getattr(self, name) not in allowed_values:
                problems.append(f"{name} must be one of {', '.join(allowed_values)}, not {getattr(self, name)!r}")
        allowed = PAPER_DEFAULT_WEIGHTS.get(self.loss, {})
        unknown = sorted(set(self.loss_weights) - set(allowed))
        if unknown:
            problems.append(f"loss {self.loss!r} takes weights {sorted(allowed) or 'none'}, not {unknown}")
        if "aux_types" in allowed and "aux_types" in self.loss_weights:
            chosen = self.loss_weights["aux_types"]
            if not isinstance(chosen, list) or not set(chosen) <= set(allowed["aux_types"]):
                problems.append(f"aux_types must be a list drawn from {allowed['aux_types']}, not {chosen!r}")
        if problems:
            raise ValueError("Invalid training config: " + "; ".join(problems))
        return self

    def _lora_problems(self) -> list[str]:
        if not isinstance(self.lora_rank, int) or self.lora_rank < 0:
            return [f"lora_rank must be 0 (full finetuning) or a positive whole number, not {self.lora_rank!r}"]
        problems = [f"{name} must be a non-empty list drawn from {', '.join(allowed)}, not {value!r}"
                    for name, value, allowed in (("lora_towers", self.lora_towers, LORA_TOWERS),
                                                 ("lora_targets", self.lora_targets, LORA_TARGETS))
                    if not isinstance(value, list) or not value or not set(value) <= set(allowed)]
        if self.lora_alpha < 0:
            problems.append("lora_alpha must be 0 (= the rank) or positive")
        if self.lora_rank and self.base_model in model_builders():
            problems.append(f"LoRA adapts a saved model, and {self.base_model!r} is built from scratch: train it "
                            "fully first, or give a saved model as base_model")
        return problems

    def _manifest_problems(self) -> list[str]:
        """A manifest that cannot be read as records is refused at launch, before a job exists (its rows and images
        are checked by the job, `backend.train.data.read_manifest`)."""
        try:
            read_records(Path(self.manifest), "Manifest", MANIFEST_COLUMNS)
        except RecordFileError as error:
            return [str(error)]
        return []

    def to_dict(self) -> dict:
        values = dataclasses.asdict(self)
        values["betas"] = list(self.betas)
        return values

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        check_known_keys(cls, values, "training config")
        values = dict(values)
        if "betas" in values:
            values["betas"] = tuple(values["betas"])
        return cls(**values).validate()

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        return cls.from_dict(yaml.safe_load(Path(path).read_text()) or {})


def parse_overrides(pairs: list[str]) -> dict:
    """`key=value` pairs, values read as YAML (numbers, lists, booleans)."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set takes key=value, got {pair!r}")
        values[key.strip()] = yaml.safe_load(value)
    return values


def load_config(path: str | None, overrides: list[str]) -> TrainConfig:
    """A YAML config file (or none) with `key=value` overrides on top."""
    values = (yaml.safe_load(Path(path).read_text()) or {}) if path else {}
    return TrainConfig.from_dict({**values, **parse_overrides(overrides)})
