"""Feeding the training loop: each step's micro-batches from a DataLoader, images decoded in workers.

A step's batch is a pure function of (seed, step) (`backend.train.data.make_batch`),
so the loader is a map-style dataset over step numbers: any worker can build any
step, the loader yields them in order, and a resumed run simply starts the range
at its checkpoint's step. Only banks that decode files use worker processes; the
built-in world's in-memory renders are assembled in the training process.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.train.data import Batch, ImageBank, TrainData, make_batch, training_view


@dataclass
class Step:
    """One optimizer step's micro-batches: what the step loader yields (pinnable by the DataLoader)."""

    step: int
    batches: list[Batch]

    def pin_memory(self) -> Step:
        for batch in self.batches:
            for name, value in vars(batch).items():
                if isinstance(value, torch.Tensor):
                    setattr(batch, name, value.pin_memory())
        return self


class StepBatches(torch.utils.data.Dataset):
    """Item i = the micro-batches of step `steps[i]` for one rank, built by `make_batch` (pure in (seed, step))."""

    def __init__(self, data: TrainData, steps: range, batch_size: int, seed: int, grad_accum: int = 1,
                 rank: int = 0, world_size: int = 1):
        self.data, self.steps, self.batch_size, self.seed = data, steps, batch_size, seed
        self.grad_accum, self.rank, self.world_size = grad_accum, rank, world_size

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index: int) -> Step:
        step = self.steps[index]
        view = training_view(self.data, self.seed, step)
        return Step(step, [make_batch(view, step, self.batch_size, self.seed, self.rank, self.world_size,
                                      micro, self.grad_accum) for micro in range(self.grad_accum)])


class _ImageChunks(torch.utils.data.Dataset):
    """Item i = eval tensors of images [i * size, (i + 1) * size) of a bank."""

    def __init__(self, bank: ImageBank, size: int):
        self.bank, self.size = bank, size

    def __len__(self) -> int:
        return -(-len(self.bank) // self.size)

    def __getitem__(self, index: int) -> torch.Tensor:
        return self.bank.tensors(range(index * self.size, min((index + 1) * self.size, len(self.bank))))


def step_loader(batches: StepBatches, workers: int, pin_memory: bool = False) -> torch.utils.data.DataLoader:
    """The steps' batches in order, decoded by `workers` processes when images are files (in-process otherwise)."""
    return _loader(batches, workers if batches.data.images.decodes else 0, pin_memory)


def stream_loader(steps: torch.utils.data.IterableDataset, workers: int,
                  pin_memory: bool = False) -> torch.utils.data.DataLoader:
    """Streamed steps (`backend.train.shards.ShardSteps`): the loader takes its workers' steps in turn, 0, 1, ...,
    which is step order, since worker w builds the steps s with s mod workers == w."""
    return _loader(steps, workers, pin_memory)


def image_chunks(bank: ImageBank, size: int, workers: int) -> torch.utils.data.DataLoader:
    """A bank's eval tensors in order, `size` images at a time, decoded by `workers` processes when they are files."""
    return _loader(_ImageChunks(bank, size), workers if bank.decodes else 0, pin_memory=False)


def _loader(dataset: torch.utils.data.Dataset, workers: int, pin_memory: bool) -> torch.utils.data.DataLoader:
    """In-order loading, one item per dataset index, that never touches the global RNG.

    Items are whole batches (``batch_size=None``: no collation). The loader's own
    generator keeps it from drawing its worker seed from torch's global RNG,
    whose state a checkpoint saves: a resumed run must not see it shifted.
    """
    return torch.utils.data.DataLoader(dataset, batch_size=None, shuffle=False, num_workers=workers,
                                       persistent_workers=workers > 0, pin_memory=pin_memory,
                                       generator=torch.Generator().manual_seed(0))
