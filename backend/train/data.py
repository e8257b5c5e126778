"""Finetuning data: images, captions, hard negatives, hard positives, negative images.

Two kinds of source, one shape (`TrainData`):
  - a CSV/JSONL manifest (image path, caption, optional precomputed negatives, positives
    and a negative image); missing negatives/positives come from the perturbation
    engine, cached per caption;
  - a plug-in's generated data (`backend.plugins`, ``add_data_source``: the built-in
    world's ground-truth negatives, positives and rendered negative images).
Every batch is a pure function of (seed, step): the epoch's permutation and each
item's sampled negative/positive come from a generator seeded by (seed, epoch), as in
NegCLIP (one negative sampled per epoch), and each training image's augmentation
crop from a generator seeded by (seed, step, index) (`backend.train.transforms`).
A resumed run therefore sees exactly the batches an uninterrupted run would,
without saving any data-loader state.
"""
from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from backend.core.images import MISSING_FILE, image_problems, open_image
from backend.core.limits import MAX_CAPTION_CHARS, caption_problem
from backend.core.tabular import Record, read_records
from backend.train.config import MANIFEST_COLUMNS
from backend.train.losses import CE_CLIP_TYPES
from backend.train.transforms import TrainTransform, crop_rng


class ImageBank:
    """Images as model-ready tensors.

    Rendered arrays stay uint8 in memory (a 50k-image pretraining set is 600 MB,
    not 2.4 GB of floats) and are normalised per batch with the model's mean/std,
    which at the model's own resolution is exactly what its preprocess does.
    Paths are opened and preprocessed per batch (in DataLoader workers, see
    `backend.train.loader`).

    `tensors` always applies the EVAL preprocess (evaluation, neighbour mining);
    `at_step(seed, step)` gives the view a training batch reads, whose images go
    through the training `augment` transform with crops drawn per (seed, step, index).
    """

    def __init__(self, preprocess: Callable, arrays: np.ndarray | None = None, paths: Sequence[str | bytes] = (),
                 mean_std: tuple[Sequence[float], Sequence[float]] | None = None,
                 augment: TrainTransform | None = None, ids: Sequence[int] = ()):
        self.preprocess = preprocess
        self.paths = list(paths)  # files, or their bytes (read from a shard)
        self.ids = list(ids)  # each image's row in the whole data set (a shard's batch holds a few rows of it)
        self.arrays = torch.from_numpy(arrays).permute(0, 3, 1, 2).contiguous() if arrays is not None else None
        self.mean_std: tuple[torch.Tensor, torch.Tensor] | None = None  # (1, 3, 1, 1) each, for rendered arrays
        if mean_std:
            mean, std = mean_std
            self.mean_std = torch.tensor(mean).view(1, 3, 1, 1), torch.tensor(std).view(1, 3, 1, 1)
        self.augment = augment
        self.crop_seed: tuple[int, int] | None = None  # (seed, step) of a training view

    def __len__(self) -> int:
        return len(self.arrays) if self.arrays is not None else len(self.paths)

    @property
    def decodes(self) -> bool:
        """Whether reading an image means decoding a file (worth a DataLoader worker)."""
        return self.arrays is None

    def at_step(self, seed: int, step: int) -> ImageBank:
        """The view training reads at `step`: augmented images (this bank itself when there is no augmentation)."""
        if self.augment is None:
            return self
        view = copy.copy(self)
        view.crop_seed = (seed, step)
        return view

    def tensors(self, indices: Sequence[int]) -> torch.Tensor:
        if self.crop_seed is not None:
            assert self.augment is not None  # `at_step` sets a crop seed only on a bank that augments
            seed, step = self.crop_seed
            rows = self.ids or range(len(self))
            return torch.stack([self.augment(self._raw(i), crop_rng(seed, step, rows[i])) for i in indices])
        if self.arrays is None:
            return torch.stack([self.preprocess(_open_rgb(self.paths[i])) for i in indices])
        pixels = self.arrays[torch.as_tensor(list(indices), dtype=torch.long)]
        if self.mean_std is not None:
            mean, std = self.mean_std
            return (pixels.float() / 255 - mean) / std
        return torch.stack([self.preprocess(Image.fromarray(p.permute(1, 2, 0).numpy())) for p in pixels])

    def _raw(self, index: int) -> Image.Image | torch.Tensor:
        """One image before any transform: a decoded RGB file, or a uint8 CHW render."""
        return _open_rgb(self.paths[index]) if self.arrays is None else self.arrays[index]


def _open_rgb(path: str | bytes) -> Image.Image:
    return open_image(path)  # closes the file (a long run opens millions); a damaged one is named


@dataclass
class TrainData:
    images: ImageBank
    captions: list[str]
    negatives: list[list[str]]  # candidates per item; one is sampled per epoch
    positives: list[list[str]] = field(default_factory=list)
    # negatives built FROM each positive, so "unusual wording" never signals "true"
    positive_negatives: list[dict[str, list[str]]] = field(default_factory=list)
    typed_negatives: list[dict[str, list[str]]] = field(default_factory=list)  # CE-CLIP types
    negative_images: ImageBank | None = None  # row i shows negative_image_captions[i], not captions[i]
    negative_image_captions: list[str] = field(default_factory=list)
    neighbours: torch.Tensor | None = None  # (N, K) nearest images for NegCLIP hard-negative images
    skipped: Counter = field(default_factory=Counter)
    # CounterCurate's grouping: rows that must share a batch (a pair and its counterfactual pairs), all one size
    groups: list[list[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.captions)


@dataclass
class Batch:
    """One (micro-)batch. A caption may lack a hard negative: its text is "" and its mask entry False,
    and the losses leave it out (it is never encoded), rather than training against the empty string."""

    images: torch.Tensor
    captions: list[str]
    negatives: list[str]  # (B,) texts, "" where invalid
    positives: list[str]
    typed_negatives: list[list[str]]  # (B, 4) texts, "" where invalid
    typed_valid: torch.Tensor  # (B, 4) bool
    negatives_valid: torch.Tensor  # (B,) bool
    neighbour_images: torch.Tensor | None = None
    neighbour_captions: list[str] = field(default_factory=list)
    neighbour_negatives: list[str] = field(default_factory=list)  # (B,) texts, "" where invalid
    neighbour_negatives_valid: torch.Tensor | None = None  # (B,) bool, with neighbour_images
    negative_images: torch.Tensor | None = None
    negative_image_captions: list[str] = field(default_factory=list)


def _present(texts: list) -> torch.Tensor:
    """Bool mask of the non-empty texts (a list, or a list of rows): "" is the missing-negative marker."""
    return torch.tensor([[bool(t) for t in row] if isinstance(row, list) else bool(row) for row in texts],
                        dtype=torch.bool)


def _epoch_generator(seed: int, epoch: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + epoch)


def _pick(options: Sequence[str], draw: float, fallback: str) -> str:
    return options[int(draw * len(options))] if options else fallback


def make_batch(data: TrainData, step: int, batch_size: int, seed: int, rank: int = 0, world_size: int = 1,
               micro: int = 0, grad_accum: int = 1) -> Batch:
    """The (micro-)batch this rank trains on at `step`; deterministic in (seed, step)."""
    global_batch = batch_size * world_size * grad_accum
    per_epoch = max(len(data) // global_batch, 1)
    epoch, position = divmod(step, per_epoch)
    generator = _epoch_generator(seed, epoch)
    order = _grouped_order(data, generator, batch_size) if data.groups else torch.randperm(len(data),
                                                                                         generator=generator)
    draws = torch.rand(len(data), 4, generator=generator)
    start = position * global_batch + (micro * world_size + rank) * batch_size
    indices = [int(i) for i in order[start:start + batch_size]]
    if len(indices) < batch_size:  # dataset smaller than a global batch: wrap around
        indices += [int(order[i % len(order)]) for i in range(batch_size - len(indices))]
    return _assemble(data, indices, draws)


def _grouped_order(data: TrainData, generator: torch.Generator, batch_size: int) -> torch.Tensor:
    """The epoch's rows, whole groups at a time in a random group order: every (micro-)batch holds whole groups
    (CounterCurate's grouping sampler), since a batch is a whole number of groups."""
    size = len(data.groups[0])
    if batch_size % size:
        raise ValueError(f"batch_size {batch_size} is not a multiple of the manifest's group size {size}: a "
                         "group (a pair and its counterfactuals) must fit whole in every batch")
    return torch.tensor([row for g in torch.randperm(len(data.groups), generator=generator).tolist()
                         for row in data.groups[g]])


def manifest_groups(rows: list[dict]) -> list[list[int]]:
    """Row indices by the manifest's `group` column (in first-seen order); [] without one. Groups must be the
    same size, so that batches of whole groups are all the same size."""
    if not any(str(row.get("group") or "").strip() for row in rows):
        return []
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        key = str(row.get("group") or "").strip()
        if not key:
            raise ValueError(f"row {index + 1} of the manifest has no group while others do: give every row one")
        groups.setdefault(key, []).append(index)
    sizes = sorted({len(members) for members in groups.values()})
    if len(sizes) > 1:
        raise ValueError(f"the manifest's groups have different sizes ({', '.join(map(str, sizes))} rows): "
                         "CounterCurate's grouping needs every group the same size")
    return list(groups.values())


def _assemble(data: TrainData, indices: list[int], draws: torch.Tensor) -> Batch:
    captions = [data.captions[i] for i in indices]
    positives = [_pick(data.positives[i], float(draws[i, 1]), data.captions[i]) if data.positives else data.captions[i]
                 for i in indices]
    negatives = []
    for i, positive in zip(indices, positives):
        from_positive = data.positive_negatives[i].get(positive, []) if data.positive_negatives else []
        pool = from_positive if from_positive and draws[i, 2] < 0.5 else data.negatives[i]
        negatives.append(_pick(pool, float(draws[i, 0]), ""))
    typed = [[_pick(data.typed_negatives[i].get(t, []), float(draws[i, 3]), "") if data.typed_negatives else ""
              for t in CE_CLIP_TYPES] for i in indices]
    batch = Batch(images=data.images.tensors(indices), captions=captions, negatives=negatives,
                  positives=positives, typed_negatives=typed, typed_valid=_present(typed),
                  negatives_valid=_present(negatives))
    if data.neighbours is not None:
        nn = [int(data.neighbours[i, int(draws[i, 3] * data.neighbours.shape[1])]) for i in indices]
        batch.neighbour_images = data.images.tensors(nn)
        batch.neighbour_captions = [data.captions[j] for j in nn]
        batch.neighbour_negatives = [_pick(data.negatives[j], float(draws[j, 0]), "") for j in nn]
        batch.neighbour_negatives_valid = _present(batch.neighbour_negatives)
    if data.negative_images is not None:
        batch.negative_images = data.negative_images.tensors(indices)
        batch.negative_image_captions = [data.negative_image_captions[i] for i in indices]
    return batch


def read_manifest(path: str | Path) -> tuple[list[dict], Counter]:
    """Rows of a CSV, TSV, JSONL or JSON manifest, and how many rows were skipped for what.

    A file that cannot be read as records (not UTF-8, cut short, ragged, without an image or caption column)
    is refused with its file and line (`backend.core.tabular`). A row that cannot be trained on is skipped and
    counted: an empty or over-long caption (the perturbation engine takes at most MAX_CAPTION_CHARS), a missing
    or unusable image or negative image (every image is decoded once here, so a truncated file is found now,
    not in a DataLoader worker hours into the run), negatives/positives that are not a list of usable texts.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"Manifest {path} does not exist.")
    rows: list[dict] = []
    skipped: Counter[str] = Counter()
    for record in read_records(path, "Manifest", MANIFEST_COLUMNS):
        row, reason = _manifest_row(record, path.parent)
        if reason:
            skipped[reason] += 1
        else:
            rows.append(row)
    problems = image_problems(p for row in rows for p in (row["image"], row.get("negative_image")) if p)
    usable = []
    for row in rows:
        reason = _image_skip(row, problems)
        if reason:
            skipped[reason] += 1
        else:
            usable.append(row)
    if not usable:
        raise ValueError(f"Manifest {path} has no usable rows ({dict(skipped) or 'it is empty'}).")
    return usable, skipped


def _manifest_row(record: Record, folder: Path) -> tuple[dict, str | None]:
    """The row with its paths resolved and texts checked, or the reason it is skipped."""
    try:
        caption = record.text("caption").strip()
        image, negative = record.text("image").strip(), record.text("negative_image").strip()
        for field in ("negatives", "positives"):
            if any(caption_problem(text) for text in _text_list(record.values.get(field))):
                return {}, f"a {field[:-1]} over {MAX_CAPTION_CHARS:,} characters"
    except ValueError:  # a field of the wrong type, or negatives/positives that are not a JSON list
        return {}, "malformed negatives, positives or paths"
    if caption_problem(caption):
        return {}, "empty caption" if not caption else f"caption over {MAX_CAPTION_CHARS:,} characters"
    if not image:
        return {}, "missing image"
    row = {**record.values, "image": str((folder / image).resolve()), "caption": caption}
    if negative:
        row["negative_image"] = str((folder / negative).resolve())
    return row, None


def _image_skip(row: dict, problems: dict[str, str]) -> str | None:
    """Why a row's image or negative image cannot be used ("missing image", "unreadable negative image"), or None."""
    for key, which in (("image", "image"), ("negative_image", "negative image")):
        reason = problems.get(row.get(key) or "")
        if reason:
            return f"{'missing' if reason == MISSING_FILE else 'unreadable'} {which}"
    return None


def _text_list(value) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str) and value.strip():
        if not value.strip().startswith("["):
            return [value.strip()]
        parsed = json.loads(value)
        if not isinstance(parsed, list):
            raise ValueError(f"expected a JSON list of texts, got {value[:40]!r}")
        return [str(v) for v in parsed if str(v).strip()]
    return []


def row_texts(rows: list[dict], families: Sequence[str], seed: int) -> list[dict]:
    """Each row's hard negatives, hard positives, CE-CLIP typed negatives and the negatives of each positive: the
    row's own where it has them, else the perturbation engine's (cached per caption). The manifest loader and the
    shard writer (`backend.train.shard_writer`) share this, so both train on the same texts."""
    from backend.perturb import perturb

    cache: dict[str, list] = {}

    def variants(text: str) -> list:
        if text not in cache:
            cache[text] = perturb(text, families=list(dict.fromkeys([*families, "hard_positive", "ce_clip"])),
                                  seed=seed)
        return cache[text]

    texts: list[dict] = []
    for row in rows:
        generated = variants(row["caption"])
        positives = _text_list(row.get("positives")) or [v.text for v in generated if v.kind == "positive"]
        texts.append({
            "negatives": _text_list(row.get("negatives")) or
            [v.text for v in generated if v.kind == "negative" and v.family in families] or
            [v.text for v in generated if v.kind == "negative"],
            "positives": positives,
            "typed": {t: [v.text for v in generated if v.family == "ce_clip" and v.subtype == t]
                      for t in CE_CLIP_TYPES},
            "positive_negatives": {p: [v.text for v in variants(p) if v.kind == "negative" and v.family in families]
                                   for p in positives}})
    return texts


def manifest_data(path: str | Path, preprocess: Callable, families: Sequence[str], seed: int,
                  augment: TrainTransform | None = None) -> TrainData:
    """A manifest, with negatives/positives from the perturbation engine where the row has none.

    `augment` is the training transform (None: training reads the eval preprocess).
    """
    rows, skipped = read_manifest(path)
    texts = row_texts(rows, families, seed)
    negative_paths = [row["negative_image"] for row in rows if row.get("negative_image")]
    has_negative_images = len(negative_paths) == len(rows)
    return TrainData(
        images=ImageBank(preprocess, paths=[row["image"] for row in rows], augment=augment),
        captions=[row["caption"] for row in rows], negatives=[t["negatives"] for t in texts],
        positives=[t["positives"] for t in texts], positive_negatives=[t["positive_negatives"] for t in texts],
        typed_negatives=[t["typed"] for t in texts],
        negative_images=ImageBank(preprocess, paths=[str(Path(path).parent / p) for p in negative_paths],
                                  augment=augment)
        if has_negative_images else None,
        negative_image_captions=[str(row.get("negative_caption") or "") for row in rows] if has_negative_images else [],
        skipped=skipped, groups=manifest_groups(rows))


# Similarity rows computed at once when mining neighbours: 2**26 floats = 256 MiB, whatever N is
# (COCO's full N x N matrix would be 118k^2 floats = 56 GB).
NEIGHBOUR_BLOCK = 2 ** 26


@torch.inference_mode()
def nearest_neighbours(embeddings: torch.Tensor, k: int = 3, chunk: int | None = None) -> torch.Tensor:
    """Each image's k most similar OTHER images (NegCLIP's hard-negative images), as an (N, k) index tensor.

    Rows are scored `chunk` at a time against all N embeddings and only their
    top k kept, so memory is chunk x N, never N x N; by default the chunk is as
    many rows as fit NEIGHBOUR_BLOCK.
    """
    count = len(embeddings)
    k = min(k, count - 1)
    chunk = chunk or max(1, NEIGHBOUR_BLOCK // max(count, 1))
    parts = []
    for start in range(0, count, chunk):
        similarity = embeddings[start:start + chunk] @ embeddings.T
        rows = torch.arange(len(similarity))
        similarity[rows, rows + start] = -float("inf")  # never one's own neighbour
        parts.append(similarity.topk(k, dim=1).indices)
    return torch.cat(parts)


def training_view(data: TrainData, seed: int, step: int) -> TrainData:
    """`data` as the batch of `step` reads it: image banks through the training transform (crops per step)."""
    negative_images = data.negative_images.at_step(seed, step) if data.negative_images is not None else None
    return dataclasses.replace(data, images=data.images.at_step(seed, step), negative_images=negative_images)
