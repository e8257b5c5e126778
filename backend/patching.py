"""Model patching (WiSE-FT / CLOVe): interpolate a pretrained and a finetuned model's weights, sweep alpha.

``w = (1 - a) * w_pretrained + a * w_finetuned`` for every floating-point tensor,
logit_scale and positional embeddings included. The two state dicts must have
identical keys and shapes (anything else is two different models: refused);
non-float tensors are copied from the pretrained model.

A sweep traces the trade-off CLOVe plots: per alpha, a compositional score
(y) against an object-centric one (x). It loads each model once and writes
every alpha's weights into ONE model instance in place (``apply_alpha``), so
eleven alphas cost eleven evaluations, not eleven loads. The recommended
alpha is the one with the best compositional score among those whose
object-centric score stays within ``tolerance`` of the pretrained model's
(alpha = 0): CLOVe's stated aim, "improves compositionality while keeping
ImageNet within 1%".
"""
from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from backend.interpolation import PatchingError, check_compatible, interpolate
from backend.jobs.kinds import check_known_keys
from backend.models import LoadedModel

__all__ = ["PatchingError", "SweepConfig", "apply_alpha", "architecture_problems", "export_patched", "exported_models", "interpolate",
           "patched_model", "recommend", "sweep"]
DEFAULT_ALPHAS = tuple(round(0.1 * i, 2) for i in range(11))
PATCHED_FOLDER = "patched"


def _check_pair(pretrained: LoadedModel, finetuned: LoadedModel) -> None:
    """Refuse two loaded models that cannot be interpolated, naming both and what differs, before any work."""
    if pretrained.activation != finetuned.activation:
        raise PatchingError(f"activations differ ({pretrained.activation} vs {finetuned.activation}): "
                            "one of the two was loaded into the wrong architecture")
    try:
        check_compatible(pretrained.model.state_dict(), finetuned.model.state_dict())
    except PatchingError as error:
        names = " and ".join(f"{role} '{loaded.spec}' ({loaded.architecture.get('architecture', '?')})"
                             for role, loaded in (("pretrained", pretrained), ("finetuned", finetuned)))
        raise PatchingError(f"{names} are different architectures, so their weights cannot be interpolated: "
                            f"{error}") from None


SHAPE_FIELDS = {"vision": ("image_size", "layers", "width", "head_width", "mlp_ratio", "patch_size",
                           "timm_model_name"),
                "text": ("context_length", "vocab_size", "width", "heads", "layers", "hf_model_name")}


def architecture_problems(pretrained: str, finetuned: str) -> list[str]:
    """What makes two specs different architectures, read from their configs without loading any weights
    ([] when they match or a config cannot be read without loading: the loaded models are checked again)."""
    from open_clip.model import CLIPTextCfg, CLIPVisionCfg

    configs = [_declared_architecture(spec) for spec in (pretrained, finetuned)]
    if None in configs:
        return []
    try:
        shapes = [{"embed_dim": cfg.get("embed_dim"),
                   **{f"vision_cfg.{k}": getattr(CLIPVisionCfg(**cfg.get("vision_cfg", {})), k)
                      for k in SHAPE_FIELDS["vision"]},
                   **{f"text_cfg.{k}": getattr(CLIPTextCfg(**cfg.get("text_cfg", {})), k) for k in SHAPE_FIELDS["text"]}}
                  for cfg in configs]
    except TypeError:  # a config open_clip's dataclasses do not take: leave it to the load
        return []
    differing = [f"{key} {shapes[0][key]} vs {shapes[1][key]}" for key in shapes[0] if shapes[0][key] != shapes[1][key]]
    if not differing:
        return []
    return [f"pretrained '{pretrained}' and finetuned '{finetuned}' are different architectures, so their weights "
            f"cannot be interpolated: {', '.join(differing)} (pretrained vs finetuned)"]


def patched_model(pretrained: LoadedModel, finetuned: LoadedModel, alpha: float) -> LoadedModel:
    """A new LoadedModel with interpolated weights; the spec records both sources and alpha."""
    _check_pair(pretrained, finetuned)
    model = copy.deepcopy(pretrained.model)
    model.load_state_dict(interpolate(pretrained.model.state_dict(), finetuned.model.state_dict(), alpha))
    return _relabel(pretrained, finetuned, model, alpha)


def _relabel(pretrained: LoadedModel, finetuned: LoadedModel, model: torch.nn.Module, alpha: float) -> LoadedModel:
    spec = f"patch({pretrained.spec}, {finetuned.spec}, alpha={alpha:g})"
    return LoadedModel(spec, model.eval(), pretrained.preprocess, pretrained.tokenizer, pretrained.activation,
                       pretrained.device, pretrained.precision, architecture=pretrained.architecture)


@torch.no_grad()
def apply_alpha(model: torch.nn.Module, start: dict[str, torch.Tensor], end: dict[str, torch.Tensor],
                alpha: float) -> None:
    """Write ``lerp(start, end, alpha)`` into ``model``'s own tensors in place (no new model, no reload).

    ``start`` and ``end`` are state dicts checked by ``interpolate``'s rules;
    non-float tensors keep the pretrained values.
    """
    if not 0.0 <= alpha <= 1.0:
        raise PatchingError(f"alpha must be in [0, 1], got {alpha}")
    for key, tensor in model.state_dict(keep_vars=True).items():
        if tensor.is_floating_point():
            tensor.data.copy_(torch.lerp(start[key].float(), end[key].float(), alpha).to(tensor.dtype))


def _state_pair(pretrained: LoadedModel, finetuned: LoadedModel) -> tuple[dict, dict]:
    """Both state dicts, copied (the model's own tensors are overwritten per alpha), checked to match."""
    _check_pair(pretrained, finetuned)
    start = {k: v.detach().clone() for k, v in pretrained.model.state_dict().items()}
    end = {k: v.detach().clone() for k, v in finetuned.model.state_dict().items()}
    return start, end


def sweep(pretrained: LoadedModel, finetuned: LoadedModel, alphas: Sequence[float], benchmarks: Sequence[str],
          limit: int | None = None, root: Path | str | None = None, on_alpha=None) -> list[dict]:
    """One row per alpha: the alpha and every metric of ``benchmarks``, all on the pretrained model's instance.

    ``pretrained.model`` is left holding the weights of the last alpha; callers that need it again reload it.
    """
    from backend.benchmarks import evaluate_many

    start, end = _state_pair(pretrained, finetuned)
    rows = []
    for index, alpha in enumerate(alphas):
        apply_alpha(pretrained.model, start, end, alpha)
        row = {"alpha": alpha, **evaluate_many(benchmarks, _relabel(pretrained, finetuned, pretrained.model, alpha),
                                               limit=limit, root=root)}
        rows.append(row)
        if on_alpha:
            on_alpha(index, row)
    return rows


def recommend(rows: Sequence[dict], compositional: str, object_centric: str, tolerance: float = 0.01) -> dict:
    """The alpha with the best compositional score whose object-centric score is within ``tolerance`` (a fraction,
    0.01 = one point) of alpha = 0's, i.e. of the pretrained model; ties go to the smaller alpha."""
    base = min(rows, key=lambda row: row["alpha"])[object_centric]
    eligible = [row for row in rows if row[object_centric] >= base - tolerance]
    best = max(eligible, key=lambda row: (row[compositional], -row["alpha"]))
    return {"alpha": best["alpha"], "compositional": best[compositional], "object_centric": best[object_centric],
            "criterion": f"highest {compositional} among alphas whose {object_centric} is at most "
                         f"{100 * tolerance:g} points below the pretrained model's ({100 * base:.1f})"}


def _declared_architecture(spec_str: str) -> dict | None:
    """A spec's open_clip ``model_cfg`` read without loading weights, or None when it cannot be known that way (a
    hub repo not on disk, a catalog entry, a config file that cannot be read)."""
    import open_clip

    from backend.models import parse_spec, read_config

    try:
        spec = parse_spec(spec_str)
        config = read_config(spec)
    except Exception:  # offline hub, unreadable JSON, bad spec: the load itself will say why
        return None
    cfg = config.get("model_cfg") or (open_clip.get_model_config(spec.architecture.replace("/", "-"))
                                      if spec.source in ("tag", "file") else None)
    return dict(cfg) if cfg else None


@dataclass
class SweepConfig:
    """A patching sweep: two models, the alphas, the compositional (y) and object-centric (x) benchmarks."""

    pretrained: str = ""
    finetuned: str = ""
    alphas: list[float] = field(default_factory=lambda: list(DEFAULT_ALPHAS))
    compositional: str = "toy-sugarcrepe/overall"
    object_centric: str = "toy-zeroshot-shape/top1"
    tolerance: float = 0.01
    limit: int | None = None
    device: str = ""
    precision: str = ""
    data_root: str = ""

    @classmethod
    def from_dict(cls, values: dict) -> "SweepConfig":
        check_known_keys(cls, values, "sweep config")
        return cls(**values).validate()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(metric.split("/", 1)[0] for metric in (self.compositional, self.object_centric)))

    def validate(self) -> "SweepConfig":
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


def run_job(config: SweepConfig, reporter) -> dict:
    """Load both models once, sweep in place, log each alpha's point, recommend an alpha."""
    from backend.models import load_model

    device, precision = config.device or None, config.precision or None
    pretrained = load_model(config.pretrained, device=device, precision=precision)
    finetuned = load_model(config.finetuned, device=device, precision=precision)
    reporter.log(f"sweeping {len(config.alphas)} alphas of {config.pretrained} -> {config.finetuned}")

    def on_alpha(index: int, row: dict) -> None:
        point = {"alpha": row["alpha"], "compositional": row[config.compositional],
                 "object_centric": row[config.object_centric]}
        reporter.metrics(index, point, split="sweep")
        reporter.progress((index + 1) / len(config.alphas),
                          f"alpha {row['alpha']:g}: {config.compositional} {100 * point['compositional']:.1f}, "
                          f"{config.object_centric} {100 * point['object_centric']:.1f}")

    rows = sweep(pretrained, finetuned, config.alphas, config.benchmarks, config.limit,
                 config.data_root or None, on_alpha)
    return {"rows": rows, "compositional": config.compositional, "object_centric": config.object_centric,
            "activation": finetuned.activation,
            "recommended": recommend(rows, config.compositional, config.object_centric, config.tolerance)}


def export_patched(pretrained: str, finetuned: str, alpha: float, name: str, models_dir: Path | str) -> str:
    """Write the patched model as a checkpoint folder (safetensors + config, as training writes them) under
    ``<models_dir>/patched/<name>``; returns its ``local-dir:`` spec, which the model lists offer from then on."""
    from backend.models import load_model
    from backend.paths import check_slug
    from backend.train.checkpoint import save_checkpoint

    target = Path(models_dir) / PATCHED_FOLDER / check_slug(name, "patched model name")
    if target.exists():
        raise ValueError(f"a patched model named {name!r} already exists in {target.parent}; pick another name")
    problems = architecture_problems(pretrained, finetuned)
    if problems:
        raise PatchingError(problems[0])
    start, end = (load_model(spec, device="cpu", precision="fp32") for spec in (pretrained, finetuned))
    _check_pair(start, end)
    start.model.load_state_dict(interpolate(start.model.state_dict(), end.model.state_dict(), alpha))
    save_checkpoint(target, start.model, start.architecture,
                    {"patched_from": {"pretrained": pretrained, "finetuned": finetuned, "alpha": alpha}})
    return f"local-dir:{target}"


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
