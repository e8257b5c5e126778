"""LoRA factors saved beside the plain weights (Microsoft's ``loralib``, as the DAC and TSVLC checkpoints hold
them), merged into those weights on load so the result is an ordinary open_clip state dict.

The authors' open_clip fork (github.com/SivanDoveh/DAC and SivanDoveh/TSVLC, ``src/open_clip/model.py`` and
``src/open_clip/loralib/layers.py``) builds, with ``--lora R``, every transformer block of both towers with
``loralib.MultiheadAttention`` (``attn.in_proj_weight_lora_A`` of shape (R, E) and ``..._lora_B`` (3E, R); its
``out_proj`` a ``loralib.Linear``), ``mlp.c_fc`` and ``mlp.c_proj`` as ``loralib.Linear`` (``lora_A`` (R, in),
``lora_B`` (out, R)), and the vision patch embedding ``visual.conv1`` as ``loralib.Conv2d`` (``lora_A``
(R*k, in*k), ``lora_B`` (out*k, R*k)); with ``--kqv_lora`` only the attention layers. None of these layers is
given a ``lora_alpha``, so loralib's default of 1 holds and the scaling is ``1 / R``. The forward passes add
``x @ A.T @ B.T * scaling`` (linear, attention projections) or convolve with ``W + (B @ A).view(W.shape) *
scaling``: so the merged weight is ``W + (B @ A).view(W.shape) / R`` for every layer, which is what loralib's
own ``eval()`` merge writes. The training checkpoints keep the factors unmerged (``model.eval()`` never calls a
layer's ``eval()``), under ``state_dict`` with DDP's ``module.`` prefix (stripped before this runs).

Peft's adapter keys (``lora_A.default.weight``, `backend.models.lora`) are a different layout and are not
touched here.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# "<module>.lora_A" (Linear, Conv2d) -> "<module>.weight"; "<module>.<name>_lora_A" (attention) -> "<module>.<name>"
_FACTOR = re.compile(r"^(?P<module>.+)\.(?:(?P<param>[A-Za-z_]+)_)?lora_A$")
LORA_ALPHA = 1.0  # loralib's default, which the DAC/TSVLC layers keep


def has_factors(state: dict[str, torch.Tensor]) -> bool:
    """Whether the state dict holds loralib ``lora_A``/``lora_B`` factors."""
    return any(key.endswith(("lora_A", "lora_B")) for key in state)


def _target(key: str) -> str | None:
    match = _FACTOR.match(key)
    if match is None:
        return None
    return f"{match['module']}.{match['param'] or 'weight'}"


def _delta(weight: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor | None:
    """``(B @ A).view(W.shape) / rank`` (rank: A's rows, over the kernel size for a convolution); None when the
    factors do not fit the weight."""
    kernel = weight.shape[-1] if weight.dim() == 4 else 1
    if a.dim() != 2 or b.dim() != 2 or b.shape[1] != a.shape[0] or a.shape[0] % kernel:
        return None
    product = b.float() @ a.float()
    if (weight.dim() == 2 and product.shape != weight.shape) or product.numel() != weight.numel():
        return None
    rank = a.shape[0] // kernel
    return product.view(weight.shape) * (LORA_ALPHA / rank)


def merge_factors(state: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], str]:
    """The state dict with every ``lora_A``/``lora_B`` pair folded into its layer's weight, and a note saying
    what was merged; ``ValueError`` naming the layers whose factors are unpaired or do not fit."""
    merged = {key: value for key, value in state.items() if not key.endswith(("lora_A", "lora_B"))}
    problems, ranks, layers = [], set(), 0
    for key in sorted(k for k in state if k.endswith("lora_A")):
        target, partner = _target(key), key[:-1] + "B"
        if target is None or target not in state:
            problems.append(f"{key} (no weight {target} to merge into)")
            continue
        if partner not in state:
            problems.append(f"{key} (no {partner})")
            continue
        weight = state[target]
        delta = _delta(weight, state[key], state[partner])
        if delta is None:
            problems.append(f"{target} (weight {tuple(weight.shape)}, lora_A {tuple(state[key].shape)}, "
                            f"lora_B {tuple(state[partner].shape)})")
            continue
        merged[target] = (weight.float() + delta).to(weight.dtype)
        ranks.add(state[key].shape[0] // (weight.shape[-1] if weight.dim() == 4 else 1))
        layers += 1
    orphans = sorted(k for k in state if k.endswith("lora_B") and k[:-1] + "A" not in state)
    problems += [f"{key} (no {key[:-1]}A)" for key in orphans]
    if problems:
        raise ValueError(f"its loralib LoRA factors do not fit their layers: {'; '.join(problems[:4])}"
                         + (f" and {len(problems) - 4} more" if len(problems) > 4 else ""))
    note = (f"merged loralib LoRA factors (rank {'/'.join(map(str, sorted(ranks)))}, alpha {LORA_ALPHA:g}, "
            f"scaling alpha/rank) into {layers} layers")
    return merged, note
