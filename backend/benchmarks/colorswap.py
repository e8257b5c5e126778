"""ColorSwap (Burapacheep et al. 2024): 2x2 items whose two captions hold the same words with the colour words
swapped between objects, in Winoground's schema.

Format read from the authors' repository (github.com/Top34051/colorswap at commit 4f2c9e4, README): the
release (a Google Drive zip) holds ``data/{train,test}.json``, a JSON list of ``{"id", "caption_1",
"caption_2", "image_1": "images/img_0_1.png", "image_2", "image_source", "caption_source"}``, and
``data/images.zip``; the gated Hub dataset ``stanfordnlp/colorswap`` has the same columns with the images
embedded. The benchmark is the **test** split. Caption k describes image k (as in Winoground).

Scores are Winoground's (the dataset follows its schema): ``text`` (I2T), ``image`` (T2I), ``group``, strict
(a tie is wrong), plus the four single comparisons; also per image source (``midjourney/text``, ...) and per
caption source.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

from collections.abc import Sequence
from pathlib import Path

from backend.benchmarks import hub
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import TWO_BY_TWO_CHANCE, grouped_fractions, label_masks, two_by_two_flags
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, ImageSource, LabelledMetric, Task, grid_task, group_correct

NAME = "colorswap"
HUB_ID = "stanfordnlp/colorswap"
HUB_PAGE = f"https://huggingface.co/datasets/{HUB_ID}"
RELEASE = "https://drive.google.com/file/d/1xdG94DQdz_eQVH1lrEeaHVz_BNkrVgb5/view"
SPLIT = "test"
COLUMNS = ("id", "caption_1", "caption_2", "image_1", "image_2", "image_source", "caption_source")
NAMES = {"i2t": "text", "t2i": "image"}
IMAGES = ("image_1", "image_2")


def colorswap_metrics(scores: Tensor, image_sources: Sequence[str], caption_sources: Sequence[str]
                      ) -> dict[str, float]:
    """text, image, group and the single comparisons, overall, per image source and per caption source."""
    groups = {**label_masks([f"image_source={s}" for s in image_sources]),
              **label_masks([f"caption_source={s}" for s in caption_sources])}
    return grouped_fractions(two_by_two_flags(scores, NAMES), groups)


def _steps(folder: Path) -> list[str]:
    return [(f"ColorSwap's Hub copy is gated: log in at {HUB_PAGE}, accept its conditions, create a read token at "
             "https://huggingface.co/settings/tokens and set HF_TOKEN (or the hf_token setting)"),
            (f"or download the authors' release from {RELEASE}, put its data/test.json at {folder}/data/test.json "
             f"and unzip its data/images.zip into {folder}/data (giving {folder}/data/images/img_0_1.png, ...)")]


def _release(folder: Path) -> tuple[list[dict], list[tuple[ImageSource, ImageSource]]]:
    rows = read_rows(folder / "data" / f"{SPLIT}.json", COLUMNS)
    data = folder / "data"
    require_files(NAME, data, [data / row[key] for row in rows for key in IMAGES], _steps(folder)[1:])
    return rows, [(ImageFile(str(data / row["image_1"])), ImageFile(str(data / row["image_2"]))) for row in rows]


def _table(dataset, where: str) -> tuple[list[dict], list[tuple[ImageSource, ImageSource]]]:
    hub.check_columns(NAME, dataset, COLUMNS, where)
    plain = hub.text_columns(dataset, tuple(c for c in COLUMNS if c not in IMAGES))  # image_source is text
    rows = [dict(zip(plain, values)) for values in zip(*plain.values())]
    return rows, [(hub.RowImage(dataset, r, "image_1"), hub.RowImage(dataset, r, "image_2")) for r in range(len(rows))]


def load(root: Path) -> tuple[list[dict], list[tuple[ImageSource, ImageSource]]]:
    """The release layout in ``root/colorswap`` when there is one, a saved Hub table there, else the gated Hub."""
    folder = root / NAME
    if (folder / "data" / f"{SPLIT}.json").is_file():
        return _release(folder)
    return _table(*hub.gated_table(NAME, HUB_ID, SPLIT, folder, _steps(folder)))


def build(limit: int | None, root: Path) -> Task:
    rows, images = load(root)
    rows, images = rows[:limit], images[:limit]
    return grid_task([list(pair) for pair in images], [[row["caption_1"], row["caption_2"]] for row in rows],
                     LabelledMetric(colorswap_metrics, [str(r["image_source"]) for r in rows],
                                    [str(r["caption_source"]) for r in rows]),
                     ids=[str(row["id"]) for row in rows], subtypes=[str(r["image_source"]) for r in rows],
                     correct=group_correct)


register(Benchmark(
    NAME,
    "ColorSwap (test split): two images x two captions with the colour words swapped between objects "
    "(Winoground schema). text (both images pick their caption), image (both captions pick their image), group; "
    "strict. Overall, per image source and per caption source.",
    f"{HUB_ID}@main/{SPLIT} or the authors' release (Top34051/colorswap@4f2c9e4 README layout)", build,
    chance={"text": 0.25, "image": 0.25, "group": TWO_BY_TWO_CHANCE["group"],
            **{k: v for k, v in TWO_BY_TWO_CHANCE.items() if k not in ("i2t", "t2i", "group")}},
    headline=("text", "image", "group")))
