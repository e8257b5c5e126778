"""Export a finished campaign in BiVLC's schema, and every raw answer as CSV.

BiVLC's Hub dataset has the columns image, caption, negative_caption,
negative_image, type, subtype; this export adds item_id so every row can be
traced back to its answers. The caller (the campaign code) passes plain rows,
so this module needs no database.

Images: `build_dataset` keeps each image as a path (the `Image()` feature
stores {"bytes": None, "path": ...}), so building is cheap even for thousands
of 1024px PNGs. The bytes are embedded when the dataset is written, one shard
at a time: in datasets 5.2 `save_to_disk` writes with `embed_local_files=True`
and `push_to_hub` has `embed_external_files=True` by default; both keep only
the file's base name as `path`. The saved or pushed dataset therefore never
points at the campaign's files (tests/test_annotate_export.py deletes them and
reads the images back).

`datasets` is imported inside the functions: it takes most of a second to
import and the app should not pay that until somebody exports.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.core.files import atomic_folder, atomic_path

if TYPE_CHECKING:
    import datasets

COLUMNS = ("image", "caption", "negative_caption", "negative_image", "type", "subtype", "item_id")
ANSWER_COLUMNS = ("campaign", "item_id", "stage", "annotator", "choice", "correct", "time_ms", "answered_at",
                  "source", "study_id", "session_id", "gold")
# A cell a spreadsheet would run as a formula (=HYPERLINK(...), +cmd, -1+1, @SUM) starts with one of these (OWASP's
# CSV injection list; tab and carriage return too): such a text gets a leading apostrophe, which shows it as text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
REQUIRED_ANSWER_KEYS = ("campaign", "item_id", "stage", "annotator", "choice")


class ExportError(ValueError):
    """An export that cannot be made as asked; the message says what to change."""


@dataclass(frozen=True)
class ExportRow:
    """One accepted item: the original image and caption with the chosen negative image and caption."""

    image: Path | str
    caption: str
    negative_caption: str
    negative_image: Path | str
    type: str
    subtype: str
    item_id: int


def features() -> datasets.Features:
    """The export's schema, in BiVLC's column order with item_id last."""
    import datasets
    text = datasets.Value("string")
    return datasets.Features({"image": datasets.Image(), "caption": text, "negative_caption": text,
                              "negative_image": datasets.Image(), "type": text, "subtype": text,
                              "item_id": datasets.Value("int64")})


def build_dataset(rows: list[ExportRow]) -> datasets.Dataset:
    """A `datasets.Dataset` in BiVLC's schema, images still referenced by path.

    Missing image files and repeated item ids are refused here, naming the
    item, rather than surfacing later as an error deep inside a save or push.
    """
    import datasets
    seen: set[int] = set()
    for row in rows:
        if row.item_id in seen:
            raise ExportError(f"item {row.item_id} appears twice in the export")
        seen.add(row.item_id)
        for column in ("image", "negative_image"):
            if not Path(getattr(row, column)).is_file():
                raise ExportError(f"item {row.item_id}: {column} file {getattr(row, column)} does not exist")
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for row in rows:
        for name in COLUMNS:
            value = getattr(row, name)
            columns[name].append(str(value) if isinstance(value, Path) else value)
    return datasets.Dataset.from_dict(columns, features=features())


def save_dataset(rows: list[ExportRow], out_dir: Path) -> Path:
    """Build the dataset and write it with `save_to_disk`, image bytes embedded; returns `out_dir`.

    Read it back with `datasets.load_from_disk(out_dir)`. An empty export is
    written as one empty shard: datasets 5.2 otherwise writes zero shards, and
    `load_from_disk` then fails with an IndexError instead of returning 0 rows.
    """
    out_dir = Path(out_dir)
    dataset = build_dataset(rows)
    with atomic_folder(out_dir) as building:  # a killed re-export leaves the last whole export, never half one
        dataset.save_to_disk(str(building), num_shards=1 if not rows else None)
    return out_dir


def push_dataset(rows: list[ExportRow], repo_id: str, token: str, private: bool = True, api: Any = None) -> Any:
    """Push the dataset to the Hub as a dataset repo `repo_id`; returns the push's CommitInfo.

    The repo is created first through `api` (default `huggingface_hub.HfApi()`)
    with `private` (default private: crowd answers and generated images are not
    for the public until someone decides so). That call fails fast on a bad
    token or a namespace the token cannot write to, before a single image is
    read; every failure comes back as an `ExportError` naming the repo. The
    upload itself is `Dataset.push_to_hub`, which embeds the image bytes.
    """
    if not repo_id or "/" not in repo_id:
        raise ExportError(f"repo id {repo_id!r} is not of the form 'owner/name'")
    if not token:
        raise ExportError(f"no Hugging Face token to push to the dataset repo {repo_id}: set HF_TOKEN to a token "
                          "with write access to that namespace (https://huggingface.co/settings/tokens)")
    if not rows:
        raise ExportError(f"nothing to push to {repo_id}: the campaign has no accepted item")
    if api is None:
        from huggingface_hub import HfApi
        api = HfApi()
    try:
        api.create_repo(repo_id=repo_id, repo_type="dataset", private=private, exist_ok=True, token=token)
    except Exception as error:
        raise ExportError(f"cannot create or reach the dataset repo {repo_id} with this token "
                          f"(does it have write access to that namespace?): {error}") from error
    dataset = build_dataset(rows)
    try:
        return dataset.push_to_hub(repo_id, private=private, token=token)
    except Exception as error:
        raise ExportError(f"pushing the dataset to {repo_id} failed: {error}") from error


def _iso_utc(value: Any) -> str:
    """ISO-8601 in UTC with a Z, to the millisecond, from a datetime, an epoch number or an ISO string.

    Naive datetimes and strings are taken as UTC: SQLite's CURRENT_TIMESTAMP
    and `datetime.utcnow()` both produce naive UTC.
    """
    if value is None or value == "":
        return ""
    if isinstance(value, (int, float)):
        moment = datetime.fromtimestamp(value, tz=UTC)
    elif isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError as error:
            raise ExportError(f"answered_at {value!r} is not an ISO-8601 time") from error
    else:
        raise ExportError(f"answered_at {value!r} is neither a time nor a timestamp")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _flag(value: Any) -> str:
    """"true"/"false" for a yes/no value (an answer's correctness, an item's gold flag), "" when unknown."""
    if value is None or value == "":
        return ""
    return "true" if bool(value) else "false"


def _answer_row(answer: dict, number: int) -> dict[str, Any]:
    """One CSV row from one answer; `number` (1-based) names the answer in errors."""
    missing = [key for key in REQUIRED_ANSWER_KEYS if answer.get(key) in (None, "")]
    if missing:
        raise ExportError(f"answer {number} has no {', '.join(missing)}: {answer}")
    time_ms = answer.get("time_ms")
    return {
        **{key: _text_cell(answer[key]) for key in REQUIRED_ANSWER_KEYS},
        "correct": _flag(answer.get("correct")),
        "time_ms": "" if time_ms is None else int(time_ms),
        "answered_at": _iso_utc(answer.get("answered_at")),
        **{key: _text_cell(answer.get(key) or "") for key in ("source", "study_id", "session_id")},
        "gold": _flag(answer.get("gold")),
    }


def _text_cell(value: Any) -> Any:
    """A text as a cell no spreadsheet executes (see `FORMULA_START`); numbers as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def write_answers_csv(answers: Iterable[dict], path: Path) -> int:
    """Write one CSV row per raw answer (nothing aggregated away) and return the row count.

    Columns, exactly: campaign, item_id, stage, annotator, choice, correct,
    time_ms, answered_at (ISO-8601 UTC), source, study_id and session_id
    (Prolific's STUDY_ID and SESSION_ID of the annotator's link), gold
    (whether the item is a gold item). Keys outside these are ignored (a
    database row may carry its own id); the columns from correct on may be
    missing or None and are written empty. Texts that a spreadsheet would run
    as a formula are written with a leading apostrophe (`FORMULA_START`).
    Empty input writes just the header, so a reader always finds the columns.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with atomic_path(path) as partial:  # a bad answer or a kill must not leave half a CSV at `path`
        with partial.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=ANSWER_COLUMNS)
            writer.writeheader()
            for answer in answers:
                writer.writerow(_answer_row(answer, count + 1))
                count += 1
    return count
