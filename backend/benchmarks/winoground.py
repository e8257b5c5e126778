"""Winoground (Thrush et al. 2022): 400 pairs of images and captions with the same words in another order.

Data: the gated Hub dataset ``facebook/winoground`` (split test; needs a
token of an account that accepted the terms), or a local copy in
``<benchmarks_dir>/winoground/``: the original release layout
(``data/examples.jsonl`` with id, caption_0, caption_1, image_0, image_1,
tag, secondary_tag, num_main_preds, collapsed_tag; ``images/<image_0>.png``,
the content of the release's images.zip), or the Hub table saved with
``save_to_disk`` / as parquet. The local copy wins when present.

Scores use Winoground's names: text = I2T, image = T2I, group; strict, as in
the paper's code (``c0_i0 > c1_i0 and c1_i1 > c0_i1``): a tie is wrong.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks import hub
from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import (
    TWO_BY_TWO_CHANCE,
    grouped_fractions,
    label_masks,
    multi_label_masks,
    two_by_two_flags,
)
from backend.benchmarks.task import (
    ImageFile,
    ImageSource,
    LabelledMetric,
    Task,
    grid_task,
    group_correct,
)

NAME = "winoground"
HUB_ID = "facebook/winoground"
HUB_PAGE = f"https://huggingface.co/datasets/{HUB_ID}"
SPLIT = "test"
COLUMNS = ("id", "image_0", "image_1", "caption_0", "caption_1", "tag", "secondary_tag", "num_main_preds",
           "collapsed_tag")
NAMES = {"i2t": "text", "t2i": "image"}
HEADLINE = ("text", "image", "group")


@dataclass(frozen=True)
class Example:
    """One Winoground example, whatever copy it came from."""

    id: str
    images: tuple[ImageSource, ImageSource]
    captions: tuple[str, str]
    collapsed_tag: str
    secondary_tags: tuple[str, ...]
    num_main_preds: int


def secondary_tags(value: str | None) -> tuple[str, ...]:
    """The release writes several secondary tags comma-separated, none as an empty string."""
    return tuple(tag.strip() for tag in (value or "").split(",") if tag.strip())


def _example(row: dict, images: tuple[ImageSource, ImageSource]) -> Example:
    return Example(str(row["id"]), images, (row["caption_0"], row["caption_1"]), str(row["collapsed_tag"]),
                   secondary_tags(row.get("secondary_tag")), int(row["num_main_preds"]))


def winoground_metrics(scores: Tensor, examples: Sequence[Example]) -> dict[str, float]:
    """text, image, group (and the four single comparisons) overall, per collapsed tag (``object/text``),
    per secondary tag (``secondary/symbolic/text``) and per number of main predicates (``main_preds_1/text``)."""
    groups = {**label_masks([e.collapsed_tag.lower() for e in examples]),
              **{f"secondary/{tag.lower()}": mask
                 for tag, mask in multi_label_masks([e.secondary_tags for e in examples]).items()},
              **label_masks([f"main_preds_{e.num_main_preds}" for e in examples])}
    return grouped_fractions(two_by_two_flags(scores, NAMES), groups)


def _release_examples(folder: Path) -> list[Example]:
    """The original layout: data/examples.jsonl and images/<name>.png."""
    lines = (folder / "data" / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    images = folder / "images"
    missing = [name for row in rows for name in (row["image_0"], row["image_1"])
               if not (images / f"{name}.png").is_file()]
    if missing:
        raise DataMissing(steps_message(NAME, images, [
            f"{len(missing)} images named in data/examples.jsonl are missing (first: {missing[0]}.png)",
            f"unzip the release's data/images.zip from {HUB_PAGE} into {folder} (it holds images/<name>.png)"]))
    return [_example(row, (ImageFile(str(images / f"{row['image_0']}.png")),
                           ImageFile(str(images / f"{row['image_1']}.png")))) for row in rows]


def _table_examples(dataset, where: str) -> list[Example]:
    """The Hub table (or a saved copy of it): images are lazy rows."""
    hub.check_columns(NAME, dataset, COLUMNS, where)
    plain = hub.text_columns(dataset, tuple(c for c in COLUMNS if not c.startswith("image_")))
    rows = [dict(zip(plain, values)) for values in zip(*plain.values())]
    return [_example(row, (hub.RowImage(dataset, r, "image_0"), hub.RowImage(dataset, r, "image_1")))
            for r, row in enumerate(rows)]


def _steps(folder: Path) -> list[str]:
    return [(f"Winoground is gated: log in at {HUB_PAGE} and accept its terms, create a read token at "
            "https://huggingface.co/settings/tokens, and set HF_TOKEN (or the hf_token setting) to it"),
            (f"or place a local copy in {folder}: the release's data/examples.jsonl as {folder}/data/examples.jsonl "
            f"and its data/images.zip unzipped into {folder} (giving {folder}/images/ex_0_img_0.png, ...)")]


def load_examples(root: Path) -> list[Example]:
    """The local copy under ``root/winoground`` when there is one, else the gated Hub dataset (token required)."""
    folder = root / NAME
    if (folder / "data" / "examples.jsonl").is_file():
        return _release_examples(folder)
    return _table_examples(*hub.gated_table(NAME, HUB_ID, SPLIT, folder, _steps(folder)))


def _build(limit: int | None, root: Path) -> Task:
    examples = load_examples(root)[:limit]
    return grid_task([list(e.images) for e in examples], [list(e.captions) for e in examples],
                     LabelledMetric(winoground_metrics, examples), ids=[e.id for e in examples],
                     subtypes=[e.collapsed_tag for e in examples], correct=group_correct)


register(Benchmark(
    NAME,
    "Winoground: two images x two captions made of the same words. text (both images pick their caption), "
    "image (both captions pick their image), group (both); strict. Overall, per collapsed tag, per secondary "
    "tag and per number of main predicates.",
    f"{HUB_ID}@main/{SPLIT} (400 examples) or the release layout in winoground/",
    _build, chance={"text": 0.25, "image": 0.25, "group": TWO_BY_TWO_CHANCE["group"],
                    **{k: v for k, v in TWO_BY_TWO_CHANCE.items() if k not in ("i2t", "t2i", "group")}},
    headline=HEADLINE))
