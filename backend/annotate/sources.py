"""Where a campaign's items come from: a SugarCrepe or BiVLC file, the built-in world, or a probe.

Every source returns `ItemSpec`s; `campaigns.create` normalises the captions
as BiVLC did. Toy items carry their original image (rendered here) and learn
their right answers from the renderer when their candidates are drawn, which
is what makes them usable as gold items in any campaign.
"""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np

from backend.annotate.campaigns import ItemSpec

BIVLC_COLUMNS = ("image", "caption", "negative_caption", "type", "subtype")
TOY_RESOLUTION = 256


def items_from_file(path: Path, images_dir: Path | None = None) -> list[ItemSpec]:
    """Items from a SugarCrepe JSON (id -> {filename, caption, negative_caption}; type and subtype from the
    file name, e.g. ``swap_att.json``) or a BiVLC-format CSV/JSONL (image, caption, negative_caption, type,
    subtype). Image names are taken relative to `images_dir` (e.g. COCO val2017) when given."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"campaign file {path} does not exist")
    if path.suffix == ".json":
        records = _sugarcrepe_records(path)
    elif path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    elif path.suffix in (".csv", ".tsv"):
        with path.open(newline="") as handle:
            records = list(csv.DictReader(handle, dialect="excel-tab" if path.suffix == ".tsv" else "excel"))
    else:
        raise ValueError(f"{path.name}: expected a SugarCrepe .json or a BiVLC-format .csv/.tsv/.jsonl file")
    items = []
    for number, record in enumerate(records, start=1):
        missing = [key for key in ("caption", "negative_caption") if not str(record.get(key) or "").strip()]
        if missing:
            raise ValueError(f"{path.name}, record {number}: missing {', '.join(missing)}")
        image = record.get("image") or record.get("filename") or None
        if image and images_dir is not None:
            image = str(Path(images_dir) / image)
        items.append(ItemSpec(record["caption"], record["negative_caption"], record.get("type") or "",
                              record.get("subtype") or "", image))
    if not items:
        raise ValueError(f"{path.name} holds no items")
    return items


def _sugarcrepe_records(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    if isinstance(data, dict):
        data = list(data.values())
    type_, _, subtype = path.stem.partition("_")
    return [{**record, "type": record.get("type", type_), "subtype": record.get("subtype", subtype)}
            for record in data]


def toy_items(n: int, seed: int, folder: Path, gold: bool = False) -> list[ItemSpec]:
    """`n` BiVLC-style toy instances over the BiVLC types (add_* excluded: no image shows such a negative
    without the original), their original images rendered into ``folder/originals``."""
    from backend.toyworld.benchmarks import BIVLC_TYPES, pair_for_type
    from backend.toyworld.grammar import realise
    from backend.toyworld.render import render, to_pil

    rng = np.random.default_rng([seed, int(gold)])
    (folder / "originals").mkdir(parents=True, exist_ok=True)
    items = []
    for index in range(n):
        type_ = BIVLC_TYPES[index % len(BIVLC_TYPES)]
        scene, caption, negative = pair_for_type(type_, rng)
        image = to_pil(render(scene, TOY_RESOLUTION))
        digest = hashlib.sha256(image.tobytes()).hexdigest()[:16]
        relative = f"originals/{digest}.png"
        image.save(folder / relative)
        kind, _, subtype = type_.partition("_")
        items.append(ItemSpec(realise(caption), realise(negative), kind, subtype, relative, gold=gold))
    return items


def items_from_probe(result: dict, image: str) -> list[ItemSpec]:
    """The negatives a probed model failed on (scored at least as high as the original), one item each,
    from a probe's JSON (the Probe tab's download, ``python -m backend probe --json``)."""
    rows = result.get("rows") or []
    original = next((row["text"] for row in rows if row.get("kind") == "original"), None)
    if original is None:
        raise ValueError("the probe result has no original caption row")
    failed = [row for row in rows if row.get("kind") == "negative"
              and any(str(value).startswith("FAIL") for key, value in row.items() if key.endswith(" verdict"))]
    if not failed:
        raise ValueError("the probed model(s) failed on no negative: nothing to annotate")
    return [ItemSpec(original, row["text"], row.get("family") or "probe", row.get("subtype") or "", image)
            for row in failed]
