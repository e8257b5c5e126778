"""A patching sweep's configuration, checked without loading any weights (the `sweep` job kind's config class).

Light on purpose: the command line reads its defaults for ``--help``, and `backend.jobs.submit` validates a launch
with it in the web process; neither should import torch. Two specs that are different architectures are refused
here, from their configs (`architecture_problems`), before a job exists.

The default axes are CLOVe's: SugarCrepe (compositional, y) against ImageNet zero-shot top-1 (object-centric, x).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from backend.jobs.kinds import check_known_keys

DEFAULT_ALPHAS = tuple(round(0.1 * i, 2) for i in range(11))
PATCHED_FOLDER = "patched"  # under the models folder: where `export_patched` writes


@dataclass
class SweepConfig:
    """A patching sweep: two models, the alphas, the compositional (y) and object-centric (x) benchmarks."""

    pretrained: str = ""
    finetuned: str = ""
    alphas: list[float] = field(default_factory=lambda: list(DEFAULT_ALPHAS))
    compositional: str = "sugarcrepe/overall"
    object_centric: str = "imagenet/top1"
    tolerance: float = 0.01
    limit: int | None = None
    device: str = ""
    precision: str = ""
    data_root: str = ""

    @classmethod
    def from_dict(cls, values: dict) -> SweepConfig:
        check_known_keys(cls, values, "sweep config")
        return cls(**values).validate()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(metric.split("/", 1)[0] for metric in (self.compositional, self.object_centric)))

    def validate(self) -> SweepConfig:
        from backend.benchmarks import get_benchmark

        problems = [f"{name} model is required" for name in ("pretrained", "finetuned") if not getattr(self, name)]
        if not self.alphas or any(not 0 <= a <= 1 for a in self.alphas):
            problems.append(f"alphas must be between 0 and 1, got {self.alphas}")
        for metric in (self.compositional, self.object_centric):
            if "/" not in metric:
                problems.append(f"{metric!r} must name a benchmark metric as <benchmark>/<metric>")
                continue
            try:
                get_benchmark(metric.split("/", 1)[0])
            except ValueError as error:
                problems.append(str(error))
        if not 0 <= self.tolerance <= 1:
            problems.append(f"tolerance is a fraction between 0 and 1, got {self.tolerance}")
        if self.pretrained and self.finetuned:
            problems += architecture_problems(self.pretrained, self.finetuned)
        if problems:
            raise ValueError("; ".join(problems))
        self.alphas = sorted({round(float(a), 4) for a in self.alphas})
        return self


SHAPE_FIELDS = {"vision": ("image_size", "layers", "width", "head_width", "mlp_ratio", "patch_size",
                           "timm_model_name"),
                "text": ("context_length", "vocab_size", "width", "heads", "layers", "hf_model_name")}


def architecture_problems(pretrained: str, finetuned: str) -> list[str]:
    """What makes two specs different architectures, read from their configs without loading any weights
    ([] when they match or a config cannot be read without loading: the loaded models are checked again)."""
    from open_clip.model import CLIPTextCfg, CLIPVisionCfg

    declared = [_declared_architecture(spec) for spec in (pretrained, finetuned)]
    configs = [cfg for cfg in declared if cfg is not None]
    if len(configs) < len(declared):
        return []
    try:
        shapes = [{"embed_dim": cfg.get("embed_dim"),
                   **{f"vision_cfg.{k}": getattr(CLIPVisionCfg(**cfg.get("vision_cfg", {})), k)
                      for k in SHAPE_FIELDS["vision"]},
                   **{f"text_cfg.{k}": getattr(CLIPTextCfg(**cfg.get("text_cfg", {})), k)
                      for k in SHAPE_FIELDS["text"]}}
                  for cfg in configs]
    except TypeError:  # a config open_clip's dataclasses do not take: leave it to the load
        return []
    differing = [f"{key} {shapes[0][key]} vs {shapes[1][key]}" for key in shapes[0] if shapes[0][key] != shapes[1][key]]
    if not differing:
        return []
    return [f"pretrained '{pretrained}' and finetuned '{finetuned}' are different architectures, so their weights "
            f"cannot be interpolated: {', '.join(differing)} (pretrained vs finetuned)"]


def _declared_architecture(spec_str: str) -> dict | None:
    """A spec's open_clip ``model_cfg`` read without loading weights, or None when it cannot be known that way (a
    hub repo not on disk, a catalog entry, a config file that cannot be read)."""
    import open_clip

    from backend.models.loading import read_config
    from backend.models.spec import parse_spec

    try:
        spec = parse_spec(spec_str)
        config = read_config(spec)
    except Exception:  # offline hub, unreadable JSON, bad spec: the load itself will say why
        return None
    cfg = config.get("model_cfg") or (open_clip.get_model_config(spec.required("architecture").replace("/", "-"))
                                      if spec.source in ("tag", "file") else None)
    return dict(cfg) if cfg else None


def exported_models(models_dir: Path | str) -> list[tuple[str, str]]:
    """(label, spec) of every exported patched model, for the model lists."""
    folder = Path(models_dir) / PATCHED_FOLDER
    found = []
    for config_path in sorted(folder.glob("*/open_clip_config.json")):
        if not config_path.parent.is_symlink():  # a version folder behind a checkpoint's link (see save_checkpoint)
            continue
        origin = json.loads(config_path.read_text()).get("patched_from", {})
        label = f"{config_path.parent.name} (patched, alpha {origin.get('alpha', '?')})"
        found.append((label, f"local-dir:{config_path.parent}"))
    return found


def model_names(store, models_dir: Path | str) -> dict[str, str]:
    """Spec -> name of every finished training run's checkpoint and exported patched model: how the model lists,
    the leaderboard (the tab, its CSV and chart, ``python -m backend leaderboard``) and the failure browser name
    them; the newest run wins a shared spec, as in the model lists."""
    from backend.jobs.records import finished_checkpoints

    names: dict[str, str] = {}
    for label, spec in [*finished_checkpoints(store), *exported_models(models_dir)]:  # newest run first
        names.setdefault(spec, label)
    return names
