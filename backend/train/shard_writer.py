"""Training data as WebDataset tar shards: `python -m backend shards SOURCE OUT`.

A manifest of image paths is fine for COCO on a local disk; 300k generated images
on a cluster's shared file system are 300k small random reads per epoch. Shards
turn that into a few large sequential reads (`backend.train.shards` streams them).

Sources: a manifest (CSV/JSONL/JSON, `backend.train.data.read_manifest`, TROHN-style
``negative_image``/``negative_caption`` columns included), or a folder written by
`datasets`' ``save_to_disk`` in BiVLC's schema (image, caption, negative_image,
negative_caption): a campaign export (`backend.annotate.export`), or BiVLC/TROHN
data saved from the Hub.

Layout, standard WebDataset (files sharing a key are one sample): each distinct
image of a shard is stored once, as ``KEY.<ext>`` (its original bytes, so decoding
it gives exactly what decoding the file gave), with ``KEY.json`` = the rows that
use it as their image: ``{"rows": [{"row", "caption", "negatives", "positives",
"typed", "positive_negatives", "negative_caption", "negative_key"}]}``. A negative
image is a sample of its own (rows may be empty), referred to by ``negative_key``.
All rows of an image go to one shard. Hard negatives and positives the manifest
lacks are generated now (`backend.train.data.row_texts`), with the families and
seed recorded in ``index.json``, which is written last: a folder without it is an
interrupted write.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

SHARD_INDEX = "index.json"
FORMAT = 1
IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "bmp", "gif", "tif", "tiff")


@dataclass
class ImageRef:
    """An image of the source: who it is (for storing it once), how to read its bytes, its file extension."""

    identity: str
    read: Callable[[], bytes]
    ext: str


def _extension(name: str) -> str:
    ext = Path(name).suffix.lower().lstrip(".")
    return ext if ext in IMAGE_EXTENSIONS else "img"


def _file_ref(path: str) -> ImageRef:
    return ImageRef(path, lambda: Path(path).read_bytes(), _extension(path))


def _manifest_rows(path: Path) -> tuple[list[dict], Counter]:
    from backend.train.data import read_manifest

    rows, skipped = read_manifest(path)
    if any(str(row.get("group") or "").strip() for row in rows):
        raise ValueError(f"{path} has a group column (CounterCurate's grouping), which shards do not keep yet: "
                         "train on the manifest itself")
    for row in rows:
        row["image"] = _file_ref(row["image"])
        row["negative_image"] = _file_ref(row["negative_image"]) if row.get("negative_image") else None
    return rows, skipped


def _bytes_ref(value: dict) -> ImageRef:
    data = value.get("bytes") or Path(value["path"]).read_bytes()
    return ImageRef(hashlib.sha256(data).hexdigest(), lambda: data, _extension(value.get("path") or ".png"))


def _dataset_rows(folder: Path) -> tuple[list[dict], Counter]:
    """A `save_to_disk` folder in BiVLC's schema: each row's negative caption is also its hard negative."""
    import datasets

    data = datasets.load_from_disk(str(folder))
    missing = sorted({"image", "caption"} - set(data.column_names))
    if missing:
        raise ValueError(f"{folder} has no {', '.join(missing)} column; a BiVLC-style export has image, caption, "
                         "negative_image, negative_caption")
    for column in ("image", "negative_image"):
        if column in data.column_names:
            data = data.cast_column(column, datasets.Image(decode=False))
    rows = []
    for record in data:
        negative_caption = str(record.get("negative_caption") or "").strip()
        rows.append({"caption": str(record["caption"]).strip(), "image": _bytes_ref(record["image"]),
                     "negative_image": _bytes_ref(record["negative_image"]) if record.get("negative_image") else None,
                     "negative_caption": negative_caption, "negatives": [negative_caption] if negative_caption else []})
    return rows, Counter()


def read_source(source: Path) -> tuple[list[dict], Counter]:
    """The rows of a manifest file or a `save_to_disk` folder, images as `ImageRef`s, and what was skipped."""
    source = Path(source)
    if source.is_dir():
        return _dataset_rows(source)
    if source.is_file():
        return _manifest_rows(source)
    raise ValueError(f"{source} is neither a manifest file nor a dataset folder")


def _plan(rows: list[dict], shard_size: int) -> list[list[int]]:
    """Rows per shard: whole images (every row of an image together), in order of first appearance."""
    by_image: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_image.setdefault(row["image"].identity, []).append(index)
    shards: list[list[int]] = [[]]
    for members in by_image.values():
        if shards[-1] and len(shards[-1]) + len(members) > shard_size:
            shards.append([])
        shards[-1].extend(members)
    return [sorted(shard) for shard in shards if shard]


def _write_shard(path: Path, rows: list[dict], texts: list[dict], members: list[int], first_key: int) -> int:
    """One tar: every distinct image of these rows once; returns how many images it holds."""
    import webdataset as wds

    keys: dict[str, str] = {}
    samples: dict[str, dict] = {}

    def key_of(image: ImageRef) -> str:
        if image.identity not in keys:
            keys[image.identity] = key = f"{first_key + len(keys):09d}"
            samples[key] = {"__key__": key, image.ext: image.read(), "json": {"rows": []}}
        return keys[image.identity]

    for index in members:
        row = rows[index]
        key = key_of(row["image"])
        negative_key = key_of(row["negative_image"]) if row.get("negative_image") else None
        samples[key]["json"]["rows"].append({
            "row": index, "caption": row["caption"], **texts[index],
            "negative_caption": str(row.get("negative_caption") or ""), "negative_key": negative_key})
    temporary = path.with_suffix(".tar.partial")
    with wds.TarWriter(str(temporary)) as sink:
        for sample in samples.values():
            sink.write(sample)
    os.replace(temporary, path)
    return len(samples)


def write_shards(source: Path | str, out_dir: Path | str, shard_size: int = 1000,
                 families: Sequence[str] = ("negclip_swap",), seed: int = 0) -> dict:
    """Write `source` as shards of about `shard_size` rows into `out_dir` (new or empty); return the index."""
    from backend.train.data import row_texts

    out_dir = Path(out_dir)
    if shard_size < 1:
        raise ValueError("shard size must be at least 1 row")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ValueError(f"{out_dir} is not empty: write shards into a new folder")
    rows, skipped = read_source(Path(source))
    if not rows:
        raise ValueError(f"{source} has no usable rows")
    texts = row_texts(rows, families, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    shards, first_key = [], 0
    for number, members in enumerate(_plan(rows, shard_size)):
        name = f"shard-{number:06d}.tar"
        images = _write_shard(out_dir / name, rows, texts, members, first_key)
        first_key += images
        shards.append({"name": name, "rows": len(members), "images": images})
    index = {"format": FORMAT, "rows": len(rows), "families": list(families), "seed": seed,
             "negative_images": all(row.get("negative_image") for row in rows), "shards": shards,
             "skipped": dict(skipped), "source": str(source)}
    (out_dir / SHARD_INDEX).write_text(json.dumps(index, indent=2))
    return index
