"""Model patching (WiSE-FT / CLOVe): interpolate a pretrained and a finetuned model's weights.

``w = (1 - a) * w_pretrained + a * w_finetuned`` for every floating-point tensor,
logit_scale and positional embeddings included. The two state dicts must have
identical keys and shapes (anything else is two different models: refused);
non-float tensors are copied from the pretrained model. A sweep evaluates each
alpha on a compositional and an object-centric benchmark to trace the trade-off.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence

import torch

from backend.models import LoadedModel


class PatchingError(ValueError):
    """The two models cannot be interpolated; the message says why."""


def interpolate(pretrained: dict[str, torch.Tensor], finetuned: dict[str, torch.Tensor],
                alpha: float) -> dict[str, torch.Tensor]:
    if not 0.0 <= alpha <= 1.0:
        raise PatchingError(f"alpha must be in [0, 1], got {alpha}")
    if pretrained.keys() != finetuned.keys():
        missing = sorted(pretrained.keys() ^ finetuned.keys())[:5]
        raise PatchingError(f"the models have different parameters (e.g. {', '.join(missing)})")
    mismatched = [k for k in pretrained if pretrained[k].shape != finetuned[k].shape]
    if mismatched:
        raise PatchingError(f"shapes differ for {', '.join(mismatched[:5])}")
    return {key: torch.lerp(value.float(), finetuned[key].float(), alpha).to(value.dtype)
            if value.is_floating_point() else value.clone()
            for key, value in pretrained.items()}


def patched_model(pretrained: LoadedModel, finetuned: LoadedModel, alpha: float) -> LoadedModel:
    """A new LoadedModel with interpolated weights; the spec records both sources and alpha."""
    if pretrained.activation != finetuned.activation:
        raise PatchingError(f"activations differ ({pretrained.activation} vs {finetuned.activation}): "
                            "one of the two was loaded into the wrong architecture")
    model = copy.deepcopy(pretrained.model)
    model.load_state_dict(interpolate(pretrained.model.state_dict(), finetuned.model.state_dict(), alpha))
    spec = f"patch({pretrained.spec}, {finetuned.spec}, alpha={alpha:g})"
    return LoadedModel(spec, model.eval(), pretrained.preprocess, pretrained.tokenizer, pretrained.activation,
                       pretrained.device, pretrained.precision, architecture=pretrained.architecture)


def sweep(pretrained: LoadedModel, finetuned: LoadedModel, alphas: Sequence[float],
          benchmarks: Sequence[str]) -> list[dict]:
    """One row per alpha: the alpha and every metric of `benchmarks`."""
    from backend.benchmarks import evaluate_many

    return [{"alpha": alpha, **evaluate_many(benchmarks, patched_model(pretrained, finetuned, alpha))}
            for alpha in alphas]
