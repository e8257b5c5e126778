"""Weight interpolation on state dicts (WiSE-FT / CLOVe), free of model loading.

``w = (1 - a) * w_pretrained + a * w_finetuned`` for every floating-point tensor,
logit_scale and positional embeddings included; the two state dicts must have
identical keys and shapes (anything else is two different models: refused);
non-float tensors are copied from the pretrained one. Kept apart from
`backend.patching.sweep` (which needs the model registry) so that the registry's own
checkpoint conversion (CLoVe's released weights are meant to be mixed into their
base at 0.6) can use the same definition without an import cycle.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class PatchingError(ValueError):
    """The two models cannot be interpolated; the message says why."""


def check_compatible(pretrained: dict[str, torch.Tensor], finetuned: dict[str, torch.Tensor]) -> None:
    """Refuse two state dicts that are not the same architecture (different keys or shapes), naming the tensors."""
    if pretrained.keys() != finetuned.keys():
        only = [f"{key} (only in the {side})" for side, keys in (("pretrained", pretrained.keys() - finetuned.keys()),
                                                                ("finetuned", finetuned.keys() - pretrained.keys()))
                for key in sorted(keys)]
        raise PatchingError(f"the models have different parameters: {len(only)} tensor(s) are in one only, e.g. "
                            f"{', '.join(only[:4])}")
    mismatched = [f"{key} {list(pretrained[key].shape)} vs {list(finetuned[key].shape)}"
                  for key in pretrained if pretrained[key].shape != finetuned[key].shape]
    if mismatched:
        raise PatchingError(f"{len(mismatched)} tensor(s) differ in shape (pretrained vs finetuned), e.g. "
                            f"{', '.join(mismatched[:4])}")


def interpolate(pretrained: dict[str, torch.Tensor], finetuned: dict[str, torch.Tensor],
                alpha: float) -> dict[str, torch.Tensor]:
    import torch

    if not 0.0 <= alpha <= 1.0:
        raise PatchingError(f"alpha must be in [0, 1], got {alpha}")
    check_compatible(pretrained, finetuned)
    return {key: torch.lerp(value.float(), finetuned[key].float(), alpha).to(value.dtype)
            if value.is_floating_point() else value.clone()
            for key, value in pretrained.items()}
