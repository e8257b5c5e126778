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


from backend.interpolation import PatchingError, interpolate
from backend.models import LoadedModel

__all__ = ["PatchingError", "interpolate", "patched_model", "sweep"]


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
