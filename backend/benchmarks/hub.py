"""Benchmarks stored as Hugging Face datasets: Hub loading, local copies, and lazy row images.

Why: BiVLC, Winoground and exported annotation campaigns are ``datasets``
tables with ``Image`` columns. Decoding every image up front would hold the
whole set in memory, so each image is a ``RowImage`` (dataset, row, column):
it satisfies ``task.LazyImage`` and is decoded in a DataLoader worker. A
memory-mapped dataset pickles as its file paths, so workers started by spawn
get a cheap reference, not a copy.

A Hub load that fails is never hidden: ``DataMissing`` says which
``load_dataset`` call was tried, the error it raised, and what to do.
``datasets`` is imported inside the functions (it takes most of a second).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from backend.benchmarks.data import DataMissing, steps_message
from backend.core.images import rgb

if TYPE_CHECKING:
    import datasets

LOCAL_PATTERNS = {"parquet": ("*.parquet", "**/*.parquet"), "json": ("*.jsonl", "*.json", "**/*.jsonl", "**/*.json")}


@dataclass(frozen=True)
class RowImage:
    """The image in ``column`` of row ``row`` of ``dataset``, decoded only by ``load()``."""

    dataset: Any  # datasets.Dataset (kept untyped: importing datasets here would slow every import)
    row: int
    column: str

    @property
    def key(self) -> str:
        return f"hf:{self.dataset._fingerprint}:{self.row}:{self.column}"

    def load(self) -> Image.Image:
        return rgb(self.dataset[self.column][self.row])


def hf_token() -> str:
    """The token for gated or private datasets: the ``hf_token`` setting (it reads ``HF_TOKEN``)."""
    from backend.core.settings import get_settings

    return get_settings().hf_token or os.environ.get("HF_TOKEN", "").strip()


def is_saved_dataset(folder: Path) -> bool:
    """Whether ``folder`` holds a ``Dataset.save_to_disk`` output (what the campaign export writes)."""
    return (folder / "dataset_info.json").is_file() and (folder / "state.json").is_file()


def load_local(benchmark: str, folder: Path, steps: list[str]) -> datasets.Dataset:
    """A local copy in ``folder``: a ``save_to_disk`` folder, else parquet files, else JSON/JSON Lines files."""
    import datasets

    if is_saved_dataset(folder):
        return datasets.load_from_disk(str(folder))
    for builder, patterns in LOCAL_PATTERNS.items():
        files = sorted({str(path) for pattern in patterns for path in folder.glob(pattern)})
        if files:
            return datasets.load_dataset(builder, data_files=files, split="train")
    raise DataMissing(steps_message(benchmark, folder, [
        f"{folder} holds neither a dataset saved with save_to_disk nor parquet or JSON files", *steps]))


def gated_table(benchmark: str, repo_id: str, split: str, folder: Path, steps: list[str]
                ) -> tuple[datasets.Dataset, str]:
    """A gated dataset's table and where it came from: a local copy in ``folder`` when it holds anything, else the
    Hub with the user's token; without a token the Hub is not tried and ``DataMissing`` says so, with ``steps``."""
    if folder.is_dir() and any(folder.iterdir()):
        return load_local(benchmark, folder, steps), str(folder)
    token = hf_token()
    if not token:
        raise DataMissing(steps_message(benchmark, folder, [
            f"no Hugging Face token is set, and {repo_id} is gated: the Hub was not tried", *steps]))
    return load_hub(benchmark, repo_id, split, folder, steps, token), f"hub:{repo_id}"


def load_hub(benchmark: str, repo_id: str, split: str, folder: Path, steps: list[str],
             token: str | None = None) -> datasets.Dataset:
    """``datasets.load_dataset(repo_id, split=split, token=...)``; on failure, ``DataMissing`` with what was tried.

    Offline (HF_HUB_OFFLINE), ``datasets`` itself falls back to a copy an
    earlier online load left in its cache (``HF_DATASETS_CACHE``).
    """
    import datasets

    call = f"datasets.load_dataset({repo_id!r}, split={split!r}{', token=<HF_TOKEN>' if token else ''})"
    try:
        return datasets.load_dataset(repo_id, split=split, token=token or None)
    except Exception as error:
        tried = f"tried {call}: it failed with {type(error).__name__}: {error}"
        raise DataMissing(steps_message(benchmark, folder, [tried, *steps])) from error


def check_columns(benchmark: str, dataset: datasets.Dataset, columns: tuple[str, ...], where: str) -> None:
    """Refuse a table without the benchmark's columns, naming the missing ones (a wrong copy, not a model error)."""
    missing = [column for column in columns if column not in dataset.column_names]
    if missing:
        raise DataMissing(f"{benchmark}: the data in {where} has no column {', '.join(missing)}; "
                          f"expected {', '.join(columns)}, found {', '.join(dataset.column_names)}")


def text_columns(dataset: datasets.Dataset, columns: tuple[str, ...]) -> dict[str, list]:
    """Plain columns as lists, without decoding any image column."""
    return dataset.select_columns(list(columns)).to_dict()
