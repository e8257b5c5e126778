"""What a benchmark asks the evaluator to score: distinct images, distinct texts, items, and a metric rule.

A benchmark is a set of items; item n pairs I images with K texts and is read
from its scores ``s[n, k, i]`` = cosine(text k, image i) (the layout of
``metrics.group_scores``). SugarCrepe is K=2, I=1; BiVLC and Winoground K=2,
I=2; ARO-Order K=5, I=1. Images and texts are listed once each (the items
index into them), so an image shared by 20 items (COCO's are) is decoded and
encoded once, and so is a caption. Images on disk stay on disk until a
DataLoader worker decodes them (``ImageFile``); a loader with another lazy
source (a row of a ``datasets.Dataset``) gives any object with ``key`` and
``load()``.

Retrieval and zero-shot gallery tasks read the full (images x texts) matrix
instead: they leave ``image_index`` None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from PIL import Image

from backend.core.images import open_image, rgb

MetricFn = Callable[["Tensor"], dict[str, float]]


class LabelledMetric:
    """A metric rule with per-item labels that follow a resample: ``rule(scores, *labels)``.

    Benchmarks read their scores with labels per item (subset, type, owner
    image, seed). A bootstrap draw reorders the items, so the labels must be
    reordered with them: ``take(rows)`` is the same rule over the items at
    ``rows`` (``backend.benchmarks.stats``). Labels are lists, numpy arrays or
    tensors whose first axis is the item.
    """

    def __init__(self, rule: Callable[..., dict[str, float]], *labels) -> None:
        self.rule = rule
        self.labels = labels

    def __call__(self, scores: Tensor) -> dict[str, float]:
        return self.rule(scores, *self.labels)

    def take(self, rows: np.ndarray) -> LabelledMetric:
        return LabelledMetric(self.rule, *(_take(label, rows) for label in self.labels))


class QueryMetric:
    """A gallery metric that is a mean of per-query hits (retrieval's recall@K): ``hits(scores)`` gives, per
    metric, each query's hit and the unit that owns the query (an image, with its captions as text queries).

    Its bootstrap redraws units and keeps the gallery whole (``stats.query_intervals``): redrawing the
    gallery itself would put copies of an image beside it, which tie with it and move every rank.
    """

    def __init__(self, rule: Callable[[Tensor], dict[str, float]],
                 hits: Callable[[Tensor], dict[str, tuple[Tensor, Tensor]]]) -> None:
        self.rule = rule
        self.hits = hits

    def __call__(self, scores: Tensor) -> dict[str, float]:
        return self.rule(scores)


def _take(label, rows: np.ndarray):
    """The labels of the items at ``rows``, of the label's own type (a list stays a list)."""
    if isinstance(label, (list, tuple)):
        # one C-level gather (a bootstrap takes 1,000); fromiter keeps tuple labels whole, as objects
        return np.fromiter(label, dtype=object, count=len(label))[rows].tolist()
    if isinstance(label, np.ndarray):
        return label[rows]
    import torch

    return label.index_select(0, torch.from_numpy(rows))


class EmptyTextError(ValueError):
    """A benchmark item with an empty text (the evaluator adds the benchmark's name to the message)."""


@runtime_checkable
class LazyImage(Protocol):
    """An image decoded only when it is encoded. ``key`` identifies its pixels (two equal keys: one encoding)."""

    @property
    def key(self) -> str: ...

    def load(self) -> Image.Image: ...


@dataclass(frozen=True)
class ImageFile:
    """An image file, optionally cropped to ``box`` = (x, y, width, height) in pixels (ARO's bounding boxes)."""

    path: str
    box: tuple[float, float, float, float] | None = None

    @property
    def key(self) -> str:
        return self.path if self.box is None else f"{self.path}#{','.join(f'{v:g}' for v in self.box)}"

    def load(self) -> Image.Image:
        image = open_image(self.path)  # a damaged or oversized file: an ImageFileError naming it
        if self.box is not None:
            x, y, width, height = self.box
            image = image.crop((x, y, x + width, y + height))
        return image


ImageSource = LazyImage | Image.Image | np.ndarray


def image_source_key(source: ImageSource) -> str:
    """A lazy image's own key; for pixels in memory, a hash of their content."""
    if isinstance(source, LazyImage):
        return source.key
    pixels = np.asarray(source)
    digest = hashlib.blake2b(pixels.tobytes(), digest_size=16)
    digest.update(f"{pixels.shape}{pixels.dtype}".encode())
    return "pixels:" + digest.hexdigest()


def load_image(source: ImageSource) -> Image.Image:
    """The RGB image of any source (called in DataLoader workers)."""
    if isinstance(source, LazyImage):
        return source.load()
    image = source if isinstance(source, Image.Image) else Image.fromarray(np.asarray(source))
    return rgb(image)


@dataclass(frozen=True)
class Items:
    """Per item, what the failure browser shows: an id, a subtype, and whether the model got it right.

    ``correct`` maps scores (N, K, I) to a bool tensor (N,), with the
    benchmark's own tie rule (e.g. SugarCrepe: s(pos) > s(neg), strict).
    """

    ids: list[str]
    subtypes: list[str]
    correct: Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Task:
    """Distinct images and texts to encode and how to read their scores.

    Item tasks (``image_index`` (N, I) and ``text_index`` (N, K) set): ``metrics``
    receives scores (N, K, I); only those are computed, never the full matrix
    (25k images x 50k texts would not fit). Gallery tasks (indices None):
    ``metrics`` receives the full (len(images), len(texts)) cosine matrix, or
    with ``text_pool`` the (len(images), classes) matrix of pooled texts.
    """

    images: list[ImageSource]
    texts: list[str]
    metrics: MetricFn
    image_index: Tensor | None = None
    text_index: Tensor | None = None
    items: Items | None = None
    text_pool: Tensor | None = None  # (classes, len(texts)): prompt ensembles, see `pool_texts`
    units: list[str] | None = None  # items resampled together by the bootstrap (default: each item alone)
    text_only: bool = False  # items of texts only (no image): scores (N, K, K) = cos(text k, text j)

    @property
    def n_items(self) -> int:
        return len(self.image_index) if self.image_index is not None else len(self.images)

    def item_indices(self) -> tuple[Tensor, Tensor]:
        """(image_index, text_index) of an item task; a gallery task has none, so asking for them is a bug."""
        if self.image_index is None or self.text_index is None:
            raise ValueError("a gallery task (the full images x texts matrix) has no per-item indices")
        return self.image_index, self.text_index


def grid_task(images: Sequence[Sequence[ImageSource]], texts: Sequence[Sequence[str]], metrics: MetricFn,
              ids: Sequence[str] | None = None, subtypes: Sequence[str] | None = None,
              correct: Callable[[Tensor], Tensor] | None = None, units: Sequence[str] | None = None,
              text_only: bool = False) -> Task:
    """An item task: item n has images ``images[n]`` (I each) and candidate texts ``texts[n]`` (K each).

    Images (by ``image_source_key``) and texts are deduplicated here. Give
    ``correct`` (with ``ids`` and ``subtypes``, default: the item number and
    "all") to make the items browsable as failures. ``units`` names the items the bootstrap resamples together
    (ARO-Order: a caption's items under every seed). ``text_only`` items have no image (``images`` rows are
    empty) and are read from text-text cosines (SugarCrepe++'s text-only task).
    """
    import torch

    if len({len(row) for row in images}) > 1 or len({len(row) for row in texts}) > 1:
        raise ValueError("every item needs the same number of images and of texts (split the benchmark by shape)")
    image_ids: dict[str, int] = {}
    distinct_images: list[ImageSource] = []
    image_rows = []
    for row in images:
        keys = [image_source_key(source) for source in row]
        for key, source in zip(keys, row):
            if key not in image_ids:
                image_ids[key] = len(distinct_images)
                distinct_images.append(source)
        image_rows.append([image_ids[key] for key in keys])
    _check_texts(texts, ids)
    text_ids: dict[str, int] = {}
    text_rows = [[text_ids.setdefault(text, len(text_ids)) for text in row] for row in texts]
    n_items = len(image_rows)
    image_index = torch.tensor(image_rows, dtype=torch.long).reshape(n_items, len(images[0]) if images else 0)
    text_index = torch.tensor(text_rows, dtype=torch.long).reshape(n_items, -1)
    items = None
    if correct is not None:
        items = Items([str(i) for i in (ids if ids is not None else range(n_items))],
                      list(subtypes) if subtypes is not None else ["all"] * n_items, correct)
    return Task(distinct_images, list(text_ids), metrics, image_index, text_index, items,
                units=list(units) if units is not None else None, text_only=text_only)


def _check_texts(texts: Sequence[Sequence[str]], ids: Sequence[str] | None) -> None:
    """Refuse an item with an empty text: it would be scored as the bare start and end tokens, a number that
    means nothing. Long texts are cut at the model's context length by its tokenizer, as every published CLIP
    evaluation does."""
    empty = [n for n, row in enumerate(texts) if any(not str(text).strip() for text in row)]
    if empty:
        first = ids[empty[0]] if ids is not None else empty[0]
        raise EmptyTextError(f"{len(empty)} item(s) have an empty text (first: item {first}); the benchmark's "
                             "data is damaged: fetch it again or fix its file")


def pool_texts(text_emb: Tensor, pool: Tensor) -> Tensor:
    """Prompt ensembles (CLIP's zero-shot recipe): each class is the re-normalised mean of its prompts' embeddings.

    The mean must be taken over embeddings, not scores: the norm of the mean
    differs per class, so averaging cosines would rank classes differently.
    """
    import torch

    return torch.nn.functional.normalize(pool.to(text_emb.dtype) @ text_emb, dim=-1)


def item_scores(image_emb: Tensor, text_emb: Tensor, task: Task, chunk: int = 4096) -> Tensor:
    """Scores (N, K, I) of an item task from normalised embeddings, ``chunk`` items at a time (bounded memory);
    a text-only task's are (N, K, K), text against text."""
    import torch

    image_index, text_index = task.item_indices()
    parts = []
    for start in range(0, task.n_items, chunk):
        texts = text_emb[text_index[start:start + chunk]]  # (n, K, D)
        images = texts if task.text_only else image_emb[image_index[start:start + chunk]]  # (n, I, D)
        parts.append(torch.einsum("nkd,nid->nki", texts.float(), images.float()))
    if not parts:
        return torch.empty(0, text_index.shape[1], text_index.shape[1] if task.text_only else image_index.shape[1])
    return torch.cat(parts)


# -- per-item correctness rules shared by benchmarks (docs/REFERENCE.md, "Metrics") -----------------------------

def first_caption_wins(scores: Tensor) -> Tensor:
    """Image 0 scores caption 0 above every other caption, strictly (SugarCrepe, ARO VG-R/VG-A, VALSE)."""
    return scores[:, 0, 0] > scores[:, 1:, 0].max(dim=1).values


def original_not_beaten(scores: Tensor) -> Tensor:
    """Caption 0 scores >= every perturbation: a tie goes to the original (ARO COCO/Flickr-Order)."""
    return scores[:, 0, 0] >= scores[:, 1:, 0].max(dim=1).values


def group_correct(scores: Tensor) -> Tensor:
    """The 2x2 Group flag (BiVLC, Winoground): both captions pick their image and both images their caption."""
    from backend.metrics import group_scores

    return group_scores(scores)["Group"]


def first_maximum(values: Tensor) -> Tensor:
    """Per row of ``values`` (N, C), the index of its first maximum: ``torch.argmax``'s documented tie rule, made
    explicit so it never depends on a kernel (SPEC, ImageCoDe: the candidate at ``label`` wins a tie only with
    candidates after it)."""
    import torch

    positions = torch.arange(values.shape[1]).expand_as(values)
    return positions.masked_fill(values < values.max(dim=1, keepdim=True).values, values.shape[1]).min(dim=1).values


def fraction(flags: Tensor) -> float:
    return flags.double().mean().item()
