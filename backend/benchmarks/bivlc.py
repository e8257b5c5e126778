"""BiVLC (Miranda et al. 2024): two images x two captions per instance, scored in both directions.

Data: the Hub dataset ``imirandam/BiVLC`` (split test, 2,933 instances;
columns image, caption, negative_caption, negative_image, type, subtype),
or a local copy in ``<benchmarks_dir>/bivlc/`` (a ``save_to_disk`` folder or
parquet/JSON files of that schema), which wins when present so that an
offline machine can evaluate. Caption/image 0 are the positive pair,
caption/image 1 the negative pair, so ``metrics.group_scores`` applies as is.

``bivlc_task`` is public because an exported annotation campaign has this
very schema (plus item_id) and is scored by exactly these rules
(``campaign.py``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from backend.benchmarks import hub
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import (
    TWO_BY_TWO_CHANCE,
    first_per_label,
    grouped_fractions,
    label_masks,
    two_by_two_flags,
)
from backend.benchmarks.task import LabelledMetric, Task, grid_task, group_correct

if TYPE_CHECKING:
    import datasets

NAME = "bivlc"
HUB_ID = "imirandam/BiVLC"
SPLIT = "test"
COLUMNS = ("image", "caption", "negative_caption", "negative_image", "type", "subtype")
HEADLINE = ("group", "i2t", "t2i")  # "the group score is the main metric" (Miranda et al. 2024, Sec. 3)


def bivlc_metrics(scores: Tensor, types: Sequence[str], subtypes: Sequence[str]) -> dict[str, float]:
    """The seven flags overall, per type (``swap/i2t``) and per type and subtype (``swap/obj/i2t``)."""
    groups = {**label_masks(types), **label_masks([f"{t}/{s}" for t, s in zip(types, subtypes)])}
    return grouped_fractions(two_by_two_flags(scores), groups)


def bivlc_task(dataset: datasets.Dataset, limit: int | None, where: str, benchmark: str = NAME) -> Task:
    """The 2x2 task of a BiVLC-schema table; item ids are its ``item_id`` column when it has one, else row numbers."""
    hub.check_columns(benchmark, dataset, COLUMNS, where)
    has_ids = "item_id" in dataset.column_names
    plain = ["caption", "negative_caption", "type", "subtype", *(["item_id"] if has_ids else [])]
    columns = hub.text_columns(dataset, tuple(plain))
    rows = first_per_label(columns["type"], limit)
    types = [str(columns["type"][r]) for r in rows]
    subtypes = [str(columns["subtype"][r]) for r in rows]
    ids = [str(columns["item_id"][r]) if has_ids else str(r) for r in rows]
    images = [[hub.RowImage(dataset, r, "image"), hub.RowImage(dataset, r, "negative_image")] for r in rows]
    texts = [[columns["caption"][r], columns["negative_caption"][r]] for r in rows]
    return grid_task(images, texts, LabelledMetric(bivlc_metrics, types, subtypes), ids=ids,
                     subtypes=[f"{t}/{s}" for t, s in zip(types, subtypes)], correct=group_correct)


def _steps(folder: Path) -> list[str]:
    return [(f"on a machine that reaches the Hub, run load_dataset({HUB_ID!r}, split={SPLIT!r}) once (about 540 MB "
            "into the datasets cache, HF_DATASETS_CACHE); with HF_HUB_OFFLINE=1 that cached copy is used"),
            (f"or save a copy: python -c \"import datasets; datasets.load_dataset({HUB_ID!r}, split={SPLIT!r})"
            f".save_to_disk('{folder}')\" (or put the repo's data/test-*.parquet files in {folder})")]


def load_bivlc(root: Path) -> tuple[datasets.Dataset, str]:
    """The local copy under ``root/bivlc`` when there is one, else the Hub dataset; with where it came from."""
    folder = root / NAME
    if folder.is_dir() and any(folder.iterdir()):
        return hub.load_local(NAME, folder, _steps(folder)), str(folder)
    return hub.load_hub(NAME, HUB_ID, SPLIT, folder, _steps(folder), hub.hf_token()), f"hub:{HUB_ID}"


def _build(limit: int | None, root: Path) -> Task:
    dataset, where = load_bivlc(root)
    return bivlc_task(dataset, limit, where)


register(Benchmark(
    NAME,
    "BiVLC: per instance two images (COCO original, generated negative) x two captions (original, SugarCrepe "
    "negative). Ipos2T, Ineg2T, Tpos2I, Tneg2I, I2T, T2I, Group overall, per type and per type/subtype "
    "(keys lowercase); every comparison strict (a tie is wrong).",
    f"{HUB_ID}@main/{SPLIT} (2,933 instances) or the local copy in bivlc/",
    _build, chance=dict(TWO_BY_TWO_CHANCE), headline=HEADLINE))
