"""Streaming encoders for the evaluator: each distinct image decoded once, in DataLoader workers.

Why not the app's ``Encoder``: a benchmark such as ARO's VG-Relation or
VG-Attribution has 24-29k image crops (SugarCrepe: 7,511 items over about 1,560 COCO
images). Decoding them all first would hold gigabytes; here workers
decode and preprocess one batch ahead of the model while the main process
only keeps embeddings (2 KB per image at 512 dimensions). Texts are encoded
once each, shortest first so that ``encode_text_trimmed`` runs short batches.
On GPU the towers run under the model's autocast (bf16 by default: fp16
rounds scores into ties) and every embedding is normalised and kept in fp32.

Under torchrun each rank encodes every world-th distinct image and text and
the embeddings are gathered, so N GPUs share the work of one evaluation.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from backend.benchmarks.task import ImageSource, image_source_key, load_image
from backend.core import env
from backend.core.errors import last_line
from backend.core.images import ImageFileError
from backend.models.encoder import pixel_embeddings, text_embeddings
from backend.models.loading import LoadedModel
from backend.models.registry import EmbeddingCache

Progress = Callable[[int, int], None]  # (done, total) distinct inputs encoded


class BenchmarkImageError(ValueError):
    """An image of a benchmark could not be read; the message names it."""


class _Images(Dataset):
    def __init__(self, sources: Sequence[ImageSource], preprocess: Callable):
        self.sources, self.preprocess = sources, preprocess

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, index: int) -> torch.Tensor:
        source = self.sources[index]
        try:
            return self.preprocess(load_image(source))
        except ImageFileError as error:
            raise BenchmarkImageError(f"cannot read image {image_source_key(source)}: {error.reason}") from None
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:  # a damaged or huge file
            raise BenchmarkImageError(f"cannot read image {image_source_key(source)}: {error}") from None


def _own_message(error: BenchmarkImageError) -> str:
    """The error's own one-line message: a DataLoader worker's is the last line of the traceback it carries."""
    last = last_line(error, limit=10_000)
    return last.removeprefix(f"{BenchmarkImageError.__module__}.").removeprefix("BenchmarkImageError: ")


def distributed() -> tuple[int, int]:
    """(rank, world size): (0, 1) unless torch.distributed is initialised (torchrun)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def join_torchrun(requested: str | None = None) -> tuple[int, int, str | None]:
    """Under torchrun: join the process group; returns (rank, world size, this rank's device: the one
    `requested`, else its own GPU or the CPU). Outside torchrun: (0, 1, None)."""
    if not env.distributed():
        return 0, 1, None
    device = env.pick_device(requested)
    rank, world = env.join_process_group(device)
    return rank, world, device


def _gather(rows: torch.Tensor, total: int, world: int) -> torch.Tensor:
    """Rank r encoded inputs r, r + world, ...: interleave every rank's rows back into input order."""
    if world == 1:
        return rows
    parts: list = [None] * world
    torch.distributed.all_gather_object(parts, rows)
    dim = max(part.shape[1] for part in parts if part.numel()) if any(p.numel() for p in parts) else 0
    out = torch.empty(total, dim)
    for r, part in enumerate(parts):
        if part.numel():
            out[r::world] = part
    return out


class StreamEncoder:
    """Encodes distinct images and texts for one model; embeddings are cached by key in a bounded LRU.

    ``shard=True`` splits the work over the torchrun ranks: every rank must then
    make the same calls (the evaluate job does; the trainer evaluates on rank 0
    alone and leaves it False).
    """

    def __init__(self, loaded: LoadedModel, cache: EmbeddingCache | None = None, batch_size: int = 256,
                 workers: int = 0, shard: bool = False):
        self.loaded, self.batch_size, self.workers, self.shard = loaded, batch_size, workers, shard
        self.cache = cache if cache is not None else EmbeddingCache(max_items=200_000)
        self._tag = (loaded.spec, loaded.activation, loaded.precision, loaded.device)

    def images(self, sources: Sequence[ImageSource], progress: Progress | None = None) -> torch.Tensor:
        """(len(sources), D) normalised fp32 embeddings, in order."""
        keys = [image_source_key(source) for source in sources]
        return self._encode(keys, list(sources), self._encode_images, progress)

    def texts(self, texts: Sequence[str], progress: Progress | None = None) -> torch.Tensor:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch together
        sorted_texts = [texts[i] for i in order]
        rows = self._encode(sorted_texts, sorted_texts, self._encode_texts, progress)
        out = torch.empty_like(rows)
        out[torch.tensor(order, dtype=torch.long)] = rows
        return out

    def _encode(self, keys: list[str], inputs: list, encode: Callable, progress: Progress | None) -> torch.Tensor:
        """Cached rows as they are; the misses (each key once) split over ranks, encoded, gathered, cached."""
        if not keys:
            return torch.empty(0, 0)
        found: dict[str, torch.Tensor] = {}
        for key in keys:
            if (cached := self.cache.get((*self._tag, key))) is not None:
                found[key] = cached
        first = {key: i for i, key in reversed(list(enumerate(keys)))}
        missing = [first[key] for key in dict.fromkeys(keys) if key not in found]
        rank, world = distributed() if self.shard else (0, 1)
        rows = _gather(encode([inputs[i] for i in missing[rank::world]], progress), len(missing), world)
        for i, row in zip(missing, rows):
            found[keys[i]] = row
            self.cache.put((*self._tag, keys[i]), row)
        return torch.stack([found[key] for key in keys])

    def _encode_images(self, sources: list[ImageSource], progress: Progress | None) -> torch.Tensor:
        if not sources:
            return torch.empty(0, 0)
        workers = self.workers if len(sources) > self.batch_size else 0  # starting workers costs more
        loader = DataLoader(_Images(sources, self.loaded.preprocess), batch_size=self.batch_size,
                            num_workers=workers, pin_memory=self.loaded.device.startswith("cuda"),
                            persistent_workers=False)
        rows, done = [], 0
        try:
            for pixels in loader:
                rows.append(pixel_embeddings(self.loaded, pixels))
                done += len(pixels)
                if progress:
                    progress(done, len(sources))
        except BenchmarkImageError as error:  # from a worker, its message is wrapped in the worker's traceback
            # That traceback holds the loader's iterator in a reference cycle. Dropped here, the iterator is freed
            # now and stops its workers at once; left to the garbage collector, its queues could go first and the
            # shutdown waited out the workers' 5 s join timeout, stalling whichever thread collected it.
            error.__traceback__ = None
            raise BenchmarkImageError(_own_message(error)) from None
        return torch.cat(rows)

    def _encode_texts(self, texts: list[str], progress: Progress | None) -> torch.Tensor:
        if not texts:
            return torch.empty(0, 0)
        rows = []
        for start in range(0, len(texts), self.batch_size):
            rows.append(text_embeddings(self.loaded, texts[start:start + self.batch_size]))
            if progress:
                progress(min(start + self.batch_size, len(texts)), len(texts))
        return torch.cat(rows)
