"""NaturalBench (Li et al., NeurIPS 2024) in its retrieval form: 2x2 items of two natural images and their two
captions, chosen because CLIP-like models confuse them.

Format read from the authors' repository (github.com/Baiqi-Li/NaturalBench at commit 9967605,
``naturalbench_retrieval.py``) and the dataset card of ``BaiqiL/NaturalBench`` (revision b6a84a1, "Upload
NaturalBench-Retrieval.zip"): the release ``NaturalBench-Retrieval.zip`` unpacks to
``NaturalBench-Retrieval/metadata.json``, a JSON list of ``{"index", "image_0", "image_1", "caption_0",
"caption_1"}`` (``index`` equals the row's position; image names relative to ``images/``), and
``NaturalBench-Retrieval/images/``. Caption k describes image k.

Rule, exactly the authors' ``get_retrieval_acc``: ``text`` = both images score their own caption higher
(c0_i0 > c1_i0 and c1_i1 > c0_i1), ``image`` = both captions score their own image higher (c0_i0 > c0_i1 and
c1_i1 > c1_i0), ``group`` = both; strict, **a tie is wrong**; fractions over items. The paper's VQA form names
its scores Q-Acc / I-Acc / G-Acc (a question right on both images, an image right on both questions, all four);
the retrieval code reports these three under Winoground's names, and so does this module: ``image`` is the
retrieval counterpart of Q-Acc (each text finds its image), ``text`` of I-Acc, ``group`` of G-Acc. The four
single comparisons are reported too. Intervals resample whole 2x2 items.
"""
from __future__ import annotations

from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import WINOGROUND_CHANCE, winoground_fractions
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, grid_task, group_correct

NAME = "naturalbench-retrieval"
FOLDER = "naturalbench"
HUB_ID = "BaiqiL/NaturalBench"
REVISION = "b6a84a18ba24544169681d4b15543dd103d4d3bb"
ZIP = "NaturalBench-Retrieval.zip"
ZIP_SHA256 = "b0dfd01ea63abcdc2197010dc403d2c8c5bff9bb8df09995c5afbf9ea37db2b9"  # the LFS oid at REVISION
RELEASE = "NaturalBench-Retrieval"
COLUMNS = ("index", "image_0", "image_1", "caption_0", "caption_1")


def _steps(folder: Path) -> list[str]:
    return [(f"huggingface-cli download {HUB_ID} {ZIP} --repo-type dataset --revision {REVISION} "
             f"--local-dir {folder}   (332 MB; its SHA-256 is {ZIP_SHA256})"),
            f"cd {folder} && unzip -q {ZIP}   (creates {folder / RELEASE}/metadata.json and .../images/)"]


def load_rows(root: Path) -> tuple[list[dict], Path]:
    """The release's rows and its image folder; ``DataMissing`` with the steps when either is absent."""
    folder = root / FOLDER
    release = folder / RELEASE
    if not (release / "metadata.json").is_file():
        raise DataMissing(steps_message(NAME, folder, _steps(folder)))
    rows = read_rows(release / "metadata.json", COLUMNS)
    misplaced = [n for n, row in enumerate(rows) if int(row["index"]) != n]
    if misplaced:
        raise ValueError(f"{release / 'metadata.json'}: row {misplaced[0]} has index {rows[misplaced[0]]['index']} "
                         "(the release numbers its rows 0, 1, ...; is this the authors' file?)")
    images = release / "images"
    require_files(NAME, folder, [images / row[key] for row in rows for key in ("image_0", "image_1")],
                  _steps(folder))
    return rows, images


def build(limit: int | None, root: Path) -> Task:
    rows, images = load_rows(root)
    rows = rows[:limit]
    return grid_task([[ImageFile(str(images / row["image_0"])), ImageFile(str(images / row["image_1"]))]
                      for row in rows], [[row["caption_0"], row["caption_1"]] for row in rows],
                     LabelledMetric(winoground_fractions), ids=[str(row["index"]) for row in rows],
                     correct=group_correct)


register(Benchmark(
    NAME,
    "NaturalBench-Retrieval (Li et al. 2024): two natural images x their two captions that CLIP-like models "
    "confuse. text (both images pick their caption; the retrieval form of I-Acc), image (both captions pick their "
    "image; of Q-Acc), group (both; G-Acc); strict, as the authors' naturalbench_retrieval.py.",
    f"{HUB_ID}@{REVISION[:7]}/{ZIP}", build, chance=dict(WINOGROUND_CHANCE), headline=("text", "image", "group")))
