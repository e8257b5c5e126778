"""Validation campaigns (SugarCrepe's last step): people say whether a generated negative is really false of the
image, and the negatives they validate become a benchmark and training data.

A task shows one image, its caption and one generated negative, and asks "is the second text false of the
image?": ``false`` (yes: a valid negative), ``true`` (no, it is still true) or ``disfluent`` (it is not fluent).
Assignment, overlap, gold items, agreement, the Prolific flow and the backup are the BiVLC campaigns' own
(`backend.annotate.assign`); `backend.annotate.resolution` decides each item over its answers under the
campaign's rule. The protocol is `annotations/protocol-validate.md`.

Gold items (`gold_items`) come from the installed plug-in's world, whose oracle knows what every rendered image
shows: half keep the world's negative, false of the image by construction (answer ``false``); the other half show
the caption itself as the second text (answer ``true``), so that answering "false" to everything fails gold too.

The export (`export_validated`) is one folder, written whole or not at all (`backend.core.files.atomic_folder`):

- ``<subset>.json``: SugarCrepe's format (id -> {filename, caption, negative_caption}, one file per subset named
  ``<type>_<subtype>``), the validated negatives only; ``images/`` holds the images they name. `evaluate` reads it
  as ``campaign:<name>`` (`backend.benchmarks.campaign`) with SugarCrepe's metrics.
- ``manifest.jsonl``: a training manifest (`backend.train.data.read_manifest`): one row per image and caption with
  its validated ``negatives``.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from backend.annotate import campaigns, db
from backend.annotate.campaigns import ItemSpec
from backend.core.files import atomic_folder, sha256_of

FOLDER = "validated"  # the export's folder under the campaign's export folder
MANIFEST = "manifest.jsonl"
IMAGES = "images"
DEFAULT_SUBSET = "negatives"  # the subset of items whose source gave no type


def gold_items(plugin_items: list[ItemSpec]) -> list[ItemSpec]:
    """Gold items of a validation campaign from a plug-in's gold items (an image, its caption, a negative its
    oracle makes false of the image): even ones keep that negative (answer ``false``), odd ones show the caption
    as the second text (answer ``true``)."""
    gold = []
    for index, item in enumerate(plugin_items):
        if index % 2:
            gold.append(ItemSpec(item.caption, item.caption, item.type, item.subtype, item.image,
                                 {"validate": "true"}, gold=True))
        else:
            gold.append(ItemSpec(item.caption, item.negative_caption, item.type, item.subtype, item.image,
                                 {"validate": "false"}, gold=True))
    return gold


def validated_items(store_path: Path | str, name: str) -> list[dict]:
    """The campaign's items whose negative the crowd (or an admin) decided is false of the image, in file order."""
    campaign_id = campaigns.get(store_path, name)["id"]
    return [row for row in db.rows(store_path, "select * from items where campaign_id = ? and gold = 0 and stage = "
                                               "'done' and image is not null order by position", (campaign_id,))
            if db.loads(row["outcome"], {}).get("validate", {}).get("decision") == "false"]


def subset_of(item: dict) -> str:
    """SugarCrepe's subset name of an item, ``<category>_<kind>``: ``<type>_<subtype>`` (``replace_att``; a
    family's ``_`` becomes ``-``, ``binding-swap_att``, so that the type stays the category), its type alone, or
    `DEFAULT_SUBSET`."""
    parts = [re.sub(r"[^A-Za-z0-9]+", "-", part).strip("-") for part in (item["type"], item["subtype"])]
    parts = [part for part in parts if part]  # a file name: letters, digits and '-' only
    return "_".join(parts) or DEFAULT_SUBSET


def export_validated(store_path: Path | str, name: str, folder: Path, out: Path) -> dict:
    """Write the validated negatives of campaign `name` (images under its campaign `folder`) as a SugarCrepe-format
    benchmark and a training manifest into ``out/validated``; returns what was written."""
    items = validated_items(store_path, name)
    if not items:
        raise ValueError(f"campaign {name!r} has no validated negative yet: nothing to export")
    target = Path(out) / FOLDER
    subsets: dict[str, dict[str, dict]] = defaultdict(dict)
    negatives: dict[tuple[str, str], list[str]] = defaultdict(list)
    with atomic_folder(target) as building:
        (building / IMAGES).mkdir()
        copied: dict[str, str] = {}
        for item in items:
            image = Path(folder) / item["image"]  # an absolute path stays as it is
            if str(image) not in copied:
                copied[str(image)] = _copy_image(image, building / IMAGES)
            filename = copied[str(image)]
            subsets[subset_of(item)][str(item["id"])] = {"filename": filename, "caption": item["caption"],
                                                         "negative_caption": item["negative_caption"]}
            negatives[(filename, item["caption"])].append(item["negative_caption"])
        for subset, rows in subsets.items():
            (building / f"{subset}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
        with (building / MANIFEST).open("w", encoding="utf-8") as handle:
            for (filename, caption), texts in negatives.items():
                handle.write(json.dumps({"image": f"{IMAGES}/{filename}", "caption": caption, "negatives": texts},
                                        ensure_ascii=False) + "\n")
    return {"rows": len(items), "dataset": str(target), "subsets": {s: len(rows) for s, rows in subsets.items()},
            "manifest": str(target / MANIFEST), "benchmark": f"campaign:{name}"}


def _copy_image(image: Path, images: Path) -> str:
    """Copy an item's image into the export under a name from its content; the name."""
    if not image.is_file():
        raise ValueError(f"the image {image} of a validated item does not exist: restore it and export again")
    name = f"{sha256_of(image)[:16]}{image.suffix.lower()}"
    if not (images / name).exists():
        (images / name).write_bytes(image.read_bytes())
    return name


def read_export(folder: Path) -> dict[str, dict[str, dict]]:
    """A validation export's SugarCrepe files: subset -> id -> {filename, caption, negative_caption}."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(Path(folder).glob("*.json"))}


def is_export(folder: Path) -> bool:
    """Whether `folder` is a validation export (its manifest and images beside SugarCrepe files)."""
    return (folder / MANIFEST).is_file() and (folder / IMAGES).is_dir() and any(folder.glob("*.json"))
