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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from backend.models.choices import PATCHED_FOLDER
from backend.models.loading import LoadedModel
from backend.patching.config import SweepConfig, architecture_problems
from backend.patching.interpolation import PatchingError, check_compatible, interpolate

if TYPE_CHECKING:
    from backend.models.loading import ClipModule


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


def patched_model(pretrained: LoadedModel, finetuned: LoadedModel, alpha: float) -> LoadedModel:
    """A new LoadedModel with interpolated weights; the spec records both sources and alpha."""
    _check_pair(pretrained, finetuned)
    model = copy.deepcopy(pretrained.model)
    model.load_state_dict(interpolate(pretrained.model.state_dict(), finetuned.model.state_dict(), alpha))
    return _relabel(pretrained, finetuned, model, alpha)


def _relabel(pretrained: LoadedModel, finetuned: LoadedModel, model: ClipModule, alpha: float) -> LoadedModel:
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


def run_job(config: SweepConfig, reporter) -> dict:
    """Load both models once, sweep in place, log each alpha's point, recommend an alpha."""
    from backend.models.loading import load_model

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
    from backend.core.paths import check_slug
    from backend.models.checkpoint import save_checkpoint
    from backend.models.loading import load_model

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
