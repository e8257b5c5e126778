"""Weight interpolation on state dicts (WiSE-FT / CLOVe), free of model loading.

``w = (1 - a) * w_pretrained + a * w_finetuned`` for every floating-point tensor,
logit_scale and positional embeddings included; the two state dicts must have
identical keys and shapes (anything else is two different models: refused);
non-float tensors are copied from the pretrained one. Kept apart from
`backend.patching` (which needs the model registry) so that the registry's own
checkpoint conversion (CLoVe's released weights are meant to be mixed into their
base at 0.6) can use the same definition without an import cycle.
"""
from __future__ import annotations

import torch


class PatchingError(ValueError):
    """The two models cannot be interpolated; the message says why."""


def check_compatible(pretrained: dict[str, torch.Tensor], finetuned: dict[str, torch.Tensor]) -> None:
    """Refuse two state dicts that are not the same architecture (different keys or shapes)."""
    if pretrained.keys() != finetuned.keys():
        missing = sorted(pretrained.keys() ^ finetuned.keys())[:5]
        raise PatchingError(f"the models have different parameters (e.g. {', '.join(missing)})")
    mismatched = [k for k in pretrained if pretrained[k].shape != finetuned[k].shape]
    if mismatched:
        raise PatchingError(f"shapes differ for {', '.join(mismatched[:5])}")


def interpolate(pretrained: dict[str, torch.Tensor], finetuned: dict[str, torch.Tensor],
                alpha: float) -> dict[str, torch.Tensor]:
    if not 0.0 <= alpha <= 1.0:
        raise PatchingError(f"alpha must be in [0, 1], got {alpha}")
    check_compatible(pretrained, finetuned)
    return {key: torch.lerp(value.float(), finetuned[key].float(), alpha).to(value.dtype)
            if value.is_floating_point() else value.clone()
            for key, value in pretrained.items()}
