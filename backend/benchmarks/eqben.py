"""EqBen (Wang et al., ICCV 2023), its official 10% subset: 2x2 items of two *visually* minimal-change images
(video frames, Kubric and Stable Diffusion renders) and their two captions.

Format read from the authors' repository (github.com/Wangt-CN/EqBen at commit ab6c79a, README "Sub-Test Set"
and ``src/eqben/eqben_utils.py``): the subset's annotation ``eqben_subset_10percent_final.json`` is "in
Winoground style", a JSON list of ``{"image0", "caption0", "image1", "caption1"}`` with image paths relative to
the unpacked ``image_subset/`` folder; the path's first component names the source (``eqbenag``,
``eqbenyoucook2``, ``eqbengebc``, ``eqbenkubric_{loc,attr,cnt}``, ``eqbensd``). Rows are randomly ordered.
YouCook2 frames are ``.npy`` arrays in BGR order: the authors' template flips them (``[:, :, [2, 1, 0]]``)
before use, and so does ``NpyImage`` (read with ``allow_pickle=False``).

Rule, exactly the authors' ``cal_wino_score`` (``src/eqben/eqben_acc.py``): ``text`` = c0_i0 > c1_i0 and c1_i1 >
c0_i1, ``image`` = c0_i0 > c0_i1 and c1_i1 > c1_i0, ``group`` = both; strict, **a tie is wrong**; fractions over
all pairs of the file (their subset score), plus the same per source (``eqbensd/group``) and the four single
comparisons. Intervals resample whole 2x2 pairs within their source.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import WINOGROUND_CHANCE, first_per_label, winoground_fractions
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, ImageSource, LabelledMetric, Task, grid_task, group_correct

NAME = "eqben-subset"
FOLDER = "eqben"
COMMIT = "ab6c79a3c34656f6a882b4e49439febd6fe313f8"
ANNOTATIONS = "eqben_subset_10percent_final.json"
IMAGES = "image_subset"
ANNOTATIONS_URL = "https://drive.google.com/file/d/18BSRf1SnBtGiEc42mzRLirXaBLzYE5Tt/view"
IMAGES_URL = "https://drive.google.com/file/d/13Iuirsvx34-9F_1Mjhs4Dqn59yokyUjy/view"
COLUMNS = ("image0", "caption0", "image1", "caption1")


@dataclass(frozen=True)
class NpyImage:
    """A YouCook2 frame stored as a ``.npy`` array in BGR channel order (the EqBen release's format)."""

    path: str

    @property
    def key(self) -> str:
        return self.path

    def load(self) -> Image.Image:
        pixels = np.load(self.path, allow_pickle=False)
        if pixels.ndim != 3 or pixels.shape[2] != 3:
            raise ValueError(f"{self.path}: expected an (H, W, 3) BGR frame, found shape {pixels.shape}")
        return Image.fromarray(np.ascontiguousarray(pixels[:, :, ::-1]).astype(np.uint8), "RGB")


def source_of(image_path: str) -> str:
    """The EqBen source a subset image comes from: the first component of its path (``eqbenkubric_cnt``)."""
    return next(part for part in image_path.replace("\\", "/").split("/") if part not in ("", "."))


def image_source(path: Path) -> ImageSource:
    return NpyImage(str(path)) if path.suffix == ".npy" else ImageFile(str(path))


def _steps(folder: Path) -> list[str]:
    return [f"pip install gdown && gdown --fuzzy {ANNOTATIONS_URL} -O {folder / ANNOTATIONS}",
            (f"gdown --fuzzy {IMAGES_URL} -O {folder}/subset_image.tar.gz && tar -xzf {folder}/subset_image.tar.gz "
             f"-C {folder}   (about 10 GB; creates {folder / IMAGES}/eqbenag/..., {folder / IMAGES}/eqbensd/...)"),
            ("both links are the README's 'Sub-Test Set' links in github.com/Wangt-CN/EqBen; if the archive unpacks "
             f"under another name, rename that folder to {folder / IMAGES}")]


def load_rows(root: Path) -> tuple[list[dict], Path]:
    """The subset's rows and its image folder, every image checked before any encoding starts."""
    folder = root / FOLDER
    if not (folder / ANNOTATIONS).is_file():
        raise DataMissing(steps_message(NAME, folder, _steps(folder)))
    rows = read_rows(folder / ANNOTATIONS, COLUMNS)
    images = folder / IMAGES
    require_files(NAME, folder, [images / row[key] for row in rows for key in ("image0", "image1")],
                  _steps(folder)[1:])
    return rows, images


def build(limit: int | None, root: Path) -> Task:
    """The first ``limit`` pairs of each source, in the file's (random) order."""
    rows, images = load_rows(root)
    rows = [rows[r] for r in first_per_label([source_of(row["image0"]) for row in rows], limit)]
    sources = [source_of(row["image0"]) for row in rows]
    return grid_task([[image_source(images / row["image0"]), image_source(images / row["image1"])] for row in rows],
                     [[row["caption0"], row["caption1"]] for row in rows],
                     LabelledMetric(winoground_fractions, sources), ids=[str(n) for n in range(len(rows))],
                     subtypes=sources, correct=group_correct)


register(Benchmark(
    NAME,
    "EqBen, the authors' 10% subset (Wang et al. 2023): two visually minimal-change images (video frames, Kubric, "
    "Stable Diffusion) x their two captions. text, image, group as Winoground (the authors' cal_wino_score); "
    "strict. Over the subset and per source.",
    f"EqBen@{COMMIT[:7]}/{ANNOTATIONS}", build, chance=dict(WINOGROUND_CHANCE), headline=("text", "image", "group")))
