"""VisMin (Awal et al., NeurIPS 2024): 2,084 human-verified 2x2 items of a COCO val2017 photo and its minimally
edited twin (one object, attribute, count or spatial relation changed), each with its caption.

Format read from the dataset card and files of ``mair-lab/vismin-bench`` (revision 2f379d5: ``data/test/`` is a
``save_to_disk`` table, split ``test``) and the authors' evaluation script beside it (``eval.py``,
``metric.py``): columns ``id``, ``text_0``, ``text_1``, ``image_0``, ``image_1``, ``category`` (``object``,
``attribute``, ``relation``, ``counting``) plus the MLLM questions, unused here. Text k describes image k: the
script scores ``T0_I0 = sim(text_0, image_0)`` and so on. Known pitfall: the card's discussion #1 ("The images
and captions are mixed up") questions that pairing on the Hub copy; the authors' metric keeps it, so does this
module, and a wrong pairing shows as a text score far below chance.

Rule, exactly the authors' ``compute_contrastive_accuracy``: ``text`` = T0_I0 > T1_I0 and T1_I1 > T0_I1,
``image`` = T0_I0 > T0_I1 and T1_I1 > T1_I0, ``group`` = both; strict, **a tie is wrong**; reported per category
as the paper's table does (``relation/group``), and over all items (pooled, not a mean of the categories), with
the four single comparisons. Intervals resample whole 2x2 items within their category.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets

from pathlib import Path

from backend.benchmarks import hub
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.grouping import WINOGROUND_CHANCE, first_per_label, winoground_fractions
from backend.benchmarks.task import LabelledMetric, Task, grid_task, group_correct

NAME = "vismin"
HUB_ID = "mair-lab/vismin-bench"
HUB_PAGE = f"https://huggingface.co/datasets/{HUB_ID}"
REVISION = "2f379d5b9a3af7f10d3266f6389b7b351e54c493"
SPLIT = "test"
COLUMNS = ("id", "text_0", "text_1", "image_0", "image_1", "category")
CATEGORIES = ("object", "attribute", "relation", "counting")


def _steps(folder: Path) -> list[str]:
    return [(f"on a machine that reaches the Hub, run load_dataset({HUB_ID!r}, split={SPLIT!r}) once (about 1.5 GB "
             "into the datasets cache, HF_DATASETS_CACHE); with HF_HUB_OFFLINE=1 that cached copy is used; if the Hub "
             f"asks for a login, accept the terms at {HUB_PAGE} and set HF_TOKEN"),
            (f"or copy the dataset repo: huggingface-cli download {HUB_ID} --repo-type dataset --revision {REVISION} "
             f"--local-dir {folder}   (gives {folder}/data/test/, a saved table)")]


def load_table(root: Path) -> tuple[datasets.Dataset, str]:
    """A local copy in ``root/vismin`` (the repo's ``data/test/`` or any saved/parquet copy), else the Hub."""
    folder = root / NAME
    repo_copy = folder / "data" / SPLIT
    if hub.is_saved_dataset(repo_copy):
        import datasets

        return datasets.load_from_disk(str(repo_copy)), str(repo_copy)
    if folder.is_dir() and any(folder.iterdir()):
        return hub.load_local(NAME, folder, _steps(folder)), str(folder)
    return hub.load_hub(NAME, HUB_ID, SPLIT, folder, _steps(folder), hub.hf_token()), f"hub:{HUB_ID}"


def build(limit: int | None, root: Path) -> Task:
    """The first ``limit`` items of each category, in the table's order."""
    dataset, where = load_table(root)
    hub.check_columns(NAME, dataset, COLUMNS, where)
    plain = hub.text_columns(dataset, ("id", "text_0", "text_1", "category"))
    rows = first_per_label([str(category).lower() for category in plain["category"]], limit)
    categories = [str(plain["category"][r]).lower() for r in rows]
    return grid_task([[hub.RowImage(dataset, r, "image_0"), hub.RowImage(dataset, r, "image_1")] for r in rows],
                     [[plain["text_0"][r], plain["text_1"][r]] for r in rows],
                     LabelledMetric(winoground_fractions, categories), ids=[str(plain["id"][r]) for r in rows],
                     subtypes=categories, correct=group_correct)


register(Benchmark(
    NAME,
    "VisMin (Awal et al. 2024): a COCO photo and its minimally edited twin x their two captions; one object, "
    "attribute, count or spatial relation changed. text, image, group as Winoground (the authors' metric.py); "
    "strict. Per category and pooled.",
    f"{HUB_ID}@{REVISION[:7]}/{SPLIT} (2,084 items)", build, chance=dict(WINOGROUND_CHANCE),
    headline=("text", "image", "group")))
