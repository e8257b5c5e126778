"""Streaming training batches from WebDataset shards (`backend.train.shard_writer`), split per rank and per
DataLoader worker, resumable at any step.

The stream. Each epoch deals the shards out in an order drawn from (seed, epoch): rank r
of R takes every R-th, and its worker w of W every W-th of those, so no two readers
open the same shard; a reader reads its shards one at a time, whole and in sequence
(the point of shards on a shared file system), and visits each one's rows in an order
drawn from (seed, epoch, shard). Step s of a rank comes from its worker ``s mod W``,
as that worker's batch ``s // W``; an epoch's last incomplete batch is dropped, as
`backend.train.data.make_batch` drops it.

Exact resume. Where batch b of a reader lies (epoch, position in the epoch) follows
from the shards' sizes in ``index.json`` alone, so a resumed reader skips straight to
it without reading what came before. The checkpoint stores every reader's position
at its step (`stream_positions`); a resume recomputes them for its own layout and
refuses a different one (other ranks, workers or batch size would read other rows).

Same data as the manifest. A row's hard negative and positive are drawn as in
`make_batch` (per epoch, from the shard's draws), its crops from (seed, step, its row
in the manifest). With one shard, one rank and one worker, the stream's order is
`make_batch`'s, draw for draw, so training from shards ends with the same weights as
training from the manifest (tests/test_train_shards.py).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from backend.train.data import Batch, ImageBank, TrainData, _assemble, training_view
from backend.train.loader import Step
from backend.train.shard_writer import FORMAT, SHARD_INDEX
from backend.train.transforms import TrainTransform

SHARD_STRIDE = 7_919  # between the generators of one epoch's shards (shard 0's is the manifest's epoch generator)
ORDER_OFFSET = 104_729  # the epoch's shard-order generator, apart from every shard's


@dataclass(frozen=True)
class Layout:
    """Who reads: rank of ranks, worker of workers, and how many rows one step takes."""

    rank: int
    ranks: int
    worker: int
    workers: int
    rows_per_step: int


class ShardSource:
    """A shard folder: its index, and its shards read whole on demand."""

    def __init__(self, folder: Path | str, preprocess: Callable, augment: TrainTransform | None = None,
                 families: list[str] | None = None):
        self.folder = Path(folder)
        path = self.folder / SHARD_INDEX
        if not path.is_file():
            raise ValueError(f"{self.folder} has no {SHARD_INDEX}: not a shard folder, or its writing was "
                             "interrupted (`python -m backend shards` writes it last)")
        self.index = json.loads(path.read_text())
        if self.index.get("format") != FORMAT:
            raise ValueError(f"{path} is shard format {self.index.get('format')}, this lab reads {FORMAT}")
        if families is not None and list(families) != self.index["families"]:
            raise ValueError(f"the shards in {self.folder} hold negatives of families {self.index['families']}, "
                             f"the run asks for {list(families)}: write shards with --families, or train with theirs")
        self.sizes = [shard["rows"] for shard in self.index["shards"]]
        self.preprocess, self.augment = preprocess, augment
        self.skipped = Counter(self.index.get("skipped") or {})
        self.negative_images = bool(self.index["negative_images"])

    def __len__(self) -> int:
        return int(self.index["rows"])

    def read(self, number: int) -> list[dict]:
        """Shard `number`'s rows in manifest order, each with its image's bytes (and its negative image's)."""
        import webdataset as wds

        path = self.folder / self.index["shards"][number]["name"]
        blobs, rows = {}, []
        for sample in wds.WebDataset(str(path), shardshuffle=False, nodesplitter=None, workersplitter=None,
                                     empty_check=False):
            key = sample["__key__"]
            blobs[key] = next(value for name, value in sample.items() if name not in ("__key__", "__url__", "json")
                              and isinstance(value, bytes))
            rows += [{**row, "key": key} for row in json.loads(sample["json"])["rows"]]
        for row in rows:
            row["image"] = blobs[row.pop("key")]
            row["negative_image"] = blobs[row["negative_key"]] if row.get("negative_key") else None
        return sorted(rows, key=lambda row: row["row"])


def _shard_generator(seed: int, epoch: int, number: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + epoch + number * SHARD_STRIDE)


def epoch_shards(source: ShardSource, seed: int, epoch: int, layout: Layout) -> list[int]:
    """The shards one reader reads in `epoch`, in order."""
    readers = layout.ranks * layout.workers
    if len(source.sizes) < readers:
        raise ValueError(f"{len(source.sizes)} shard(s) cannot feed {layout.ranks} rank(s) x {layout.workers} "
                         f"worker(s): write at least {readers} shards (a smaller --shard-size)")
    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch + ORDER_OFFSET)
    order = torch.randperm(len(source.sizes), generator=generator).tolist()
    return order[layout.rank::layout.ranks][layout.worker::layout.workers]


def _epoch_steps(source: ShardSource, seed: int, epoch: int, layout: Layout) -> int:
    steps = sum(source.sizes[n] for n in epoch_shards(source, seed, epoch, layout)) // layout.rows_per_step
    if steps < 1:
        raise ValueError(f"a reader's shards hold fewer rows than one step takes ({layout.rows_per_step}): fewer "
                         "ranks or workers, a smaller batch, or larger shards")
    return steps


def position(source: ShardSource, seed: int, layout: Layout, batch: int) -> tuple[int, int]:
    """(epoch, step within the epoch) of a reader's batch number `batch`, from the shard sizes alone."""
    epoch = 0
    while batch >= (steps := _epoch_steps(source, seed, epoch, layout)):
        batch -= steps
        epoch += 1
    return epoch, batch


def reader_rows(source: ShardSource, seed: int, layout: Layout, first_batch: int) -> Iterator[list[dict]]:
    """A reader's batches of rows from its batch `first_batch` on, each row with its four draws."""
    epoch, skip = position(source, seed, layout, first_batch)
    while True:
        steps, skip_rows, pending = _epoch_steps(source, seed, epoch, layout), skip * layout.rows_per_step, []
        remaining = steps - skip
        for number in epoch_shards(source, seed, epoch, layout):
            size = source.sizes[number]
            if skip_rows >= size:  # wholly before the resume point: never read
                skip_rows -= size
                continue
            generator = _shard_generator(seed, epoch, number)
            order, draws = torch.randperm(size, generator=generator), torch.rand(size, 4, generator=generator)
            rows = source.read(number)
            for place in order[skip_rows:].tolist():
                pending.append({**rows[place], "draws": draws[place]})
                if len(pending) == layout.rows_per_step:
                    yield pending
                    pending, remaining = [], remaining - 1
                    if remaining == 0:
                        break
            skip_rows = 0
            if remaining == 0:
                break
        epoch, skip = epoch + 1, 0


def _micro_batch(source: ShardSource, rows: list[dict], seed: int, step: int) -> Batch:
    """The batch of these rows, assembled exactly as `make_batch` assembles the same rows of the manifest."""
    def bank(images):
        return ImageBank(source.preprocess, paths=images, augment=source.augment, ids=[r["row"] for r in rows])

    data = TrainData(images=bank([r["image"] for r in rows]), captions=[r["caption"] for r in rows],
                     negatives=[r["negatives"] for r in rows], positives=[r["positives"] for r in rows],
                     positive_negatives=[r["positive_negatives"] for r in rows],
                     typed_negatives=[r["typed"] for r in rows],
                     negative_images=bank([r["negative_image"] for r in rows]) if source.negative_images else None,
                     negative_image_captions=[r["negative_caption"] for r in rows] if source.negative_images else [])
    return _assemble(training_view(data, seed, step), list(range(len(rows))), torch.stack([r["draws"] for r in rows]))


class ShardSteps(torch.utils.data.IterableDataset):
    """One rank's steps in `steps`, each worker building the steps ``s mod workers == its id`` from its shards."""

    def __init__(self, source: ShardSource, steps: range, batch_size: int, seed: int, grad_accum: int = 1,
                 rank: int = 0, ranks: int = 1, workers: int = 0):
        if steps.step != 1:
            raise ValueError(f"ShardSteps runs consecutive steps, not {steps}")
        self.source, self.steps, self.batch_size, self.seed = source, steps, batch_size, seed
        self.grad_accum, self.rank, self.ranks, self.workers = grad_accum, rank, ranks, max(workers, 1)

    def layout(self, worker: int) -> Layout:
        return Layout(self.rank, self.ranks, worker, self.workers, self.batch_size * self.grad_accum)

    def __iter__(self) -> Iterator[Step]:
        info = torch.utils.data.get_worker_info()
        worker = info.id if info is not None else 0
        # the steps s with s mod workers == worker, as a range (a stream without end must not be listed)
        mine = self.steps[(worker - self.steps.start) % self.workers::self.workers]
        if not mine:
            return
        batches = reader_rows(self.source, self.seed, self.layout(worker), mine[0] // self.workers)
        for step, rows in zip(mine, batches):
            size = self.batch_size
            yield Step(step, [_micro_batch(self.source, rows[m * size:(m + 1) * size], self.seed, step)
                              for m in range(self.grad_accum)])


def stream_positions(source: ShardSource, seed: int, step: int, batch_size: int, grad_accum: int, ranks: int,
                     workers: int) -> dict:
    """Where every reader of every rank stands at `step` (what the checkpoint keeps): plain ints."""
    workers = max(workers, 1)
    readers = []
    for rank in range(ranks):
        for worker in range(workers):
            layout = Layout(rank, ranks, worker, workers, batch_size * grad_accum)
            next_step = step + (worker - step) % workers
            readers.append([rank, worker, *position(source, seed, layout, next_step // workers)])
    return {"ranks": ranks, "workers": workers, "rows_per_step": batch_size * grad_accum, "readers": readers}


def check_resume(saved: dict | None, current: dict) -> None:
    """Refuse to resume a shard stream with another layout than the one that wrote the checkpoint."""
    if saved is not None and saved != current:
        raise ValueError(f"this run streamed its shards as {saved['ranks']} rank(s) x {saved['workers']} worker(s) "
                         f"of {saved['rows_per_step']} rows a step; resume it the same way (now {current['ranks']} "
                         f"x {current['workers']} of {current['rows_per_step']}), or start a new run")
