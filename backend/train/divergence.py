"""Stop a run whose loss goes non-finite before anything from it is saved.

A NaN or infinite loss means the weights it updates are lost (Adam turns a NaN
gradient into NaN weights): training on wastes the machine, and the next save
would overwrite the last good checkpoint with those weights. So the run stops
with a message saying at which step, which loss parts were not finite, and
what to try, and `last` keeps the last good step.

Checking ``loss.item()`` every step would make the CPU wait for the GPU every
step, so `FiniteWatch.see` keeps the first bad step and its loss parts on the
device (a few tiny kernels per step), and `FiniteWatch.check` reads them only
where the loop reads the loss anyway (log steps) and before every save. Before
a save the weights are checked too: a finite loss can still come with an
update that overflowed. fp16 runs get no exception: their loss scaler skips
steps whose *gradients* overflowed, while a non-finite *loss* there means
broken weights as well.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch


class TrainingDiverged(ValueError):
    """The loss or the weights became non-finite; the message says where and what to try."""


class FiniteWatch:
    """Remembers, on the device, the first step whose loss or a loss part was not finite."""

    def __init__(self, device: str, total: int, lr: float, checkpoints: Path):
        self.total, self.lr, self.checkpoints = total, lr, checkpoints  # for the message
        self.first = torch.full((), -1, dtype=torch.long, device=device)
        self.values: torch.Tensor | None = None  # loss and parts at that step (at the latest step while all finite)
        self.names: list[str] = []

    def see(self, step: int, loss: torch.Tensor, parts: dict[str, torch.Tensor]) -> None:
        """Note step `step`'s loss and parts without waiting for them."""
        values = torch.stack([loss.detach().float(), *(value.detach().float() for value in parts.values())])
        fresh = (self.first < 0) & ~torch.isfinite(values).all()
        self.first = self.first.masked_fill(fresh, step)
        self.values = values if self.values is None else torch.where(fresh, values, self.values)
        self.names = ["loss", *parts]

    def check(self, saved_step: int | None, model: torch.nn.Module | None = None, step: int = 0) -> None:
        """Raise `TrainingDiverged` if a loss seen so far was not finite, or (given `model`, before saving
        step `step`) a weight is not. `saved_step` is the step of the last checkpoint (None: none yet)."""
        first = int(self.first)
        if first >= 0:
            assert self.values is not None  # `see` sets the values whenever it sets `first`
            bad = ", ".join(f"{name} {value}" for name, value in zip(self.names, self.values.tolist())
                            if not math.isfinite(value))
            raise TrainingDiverged(f"Training stopped at step {first} of {self.total}: the loss became non-finite "
                                   f"({bad}). {self.advice(saved_step)}")
        if model is None:
            return
        params = dict(model.named_parameters())
        finite = torch.stack([torch.isfinite(param).all() for param in params.values()]).tolist()
        broken = [name for name, ok in zip(params, finite) if not ok]
        if broken:
            raise TrainingDiverged(f"Training stopped at step {step} of {self.total}, before saving: "
                                   f"{len(broken)} weight tensor(s) became non-finite ({', '.join(broken[:3])}"
                                   f"{', ...' if len(broken) > 3 else ''}) while the loss was finite. "
                                   f"{self.advice(saved_step)}")

    def advice(self, saved_step: int | None) -> str:
        """What the user keeps and what to try, for the end of the message."""
        kept = (f"The last good checkpoint (step {saved_step}) is kept in {self.checkpoints / 'last'}."
                if saved_step else "No checkpoint had been saved yet.")
        return (f"{kept} Lower the learning rate (lr is {self.lr:g}; try 10x lower, or clip gradients with "
                "grad_clip_norm) or check the data (empty or broken captions and images), then launch the run "
                "again under a new name: resuming would replay the same steps.")
