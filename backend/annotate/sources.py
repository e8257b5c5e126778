"""Where a campaign's items come from: a SugarCrepe or BiVLC file, a probe, a training manifest, or a plug-in's
source.

Every source returns `ItemSpec`s; `campaigns.create` normalises the captions
as BiVLC did. A plug-in's source (`backend.plugins`: the built-in world's)
may also provide gold items: items whose candidates its own generator
draws, so their right answers are known.
"""
from __future__ import annotations

import json
from pathlib import Path

from backend.annotate.campaigns import ItemSpec
from backend.core import tabular, text
from backend.core.images import image_problems, listed_problems
from backend.core.limits import MAX_CAMPAIGN_FILE_BYTES, MAX_CAMPAIGN_ITEMS, MAX_CAPTION_CHARS

BIVLC_COLUMNS = ("image", "caption", "negative_caption", "type", "subtype")


def items_from_file(path: Path, images_dir: Path | None = None) -> list[ItemSpec]:
    """Items from a SugarCrepe JSON (id -> {filename, caption, negative_caption}; type and subtype from the
    file name, e.g. ``swap_att.json``) or a BiVLC-format CSV/TSV/JSONL (image, caption, negative_caption, type,
    subtype). Image names are taken relative to `images_dir` (e.g. COCO val2017) when given.

    A file that cannot be read, larger than `MAX_CAMPAIGN_FILE_BYTES` or with more than `MAX_CAMPAIGN_ITEMS`
    records, or a record whose caption is empty, over-long or holds a control or invisible character
    (`backend.core.text`), is refused as a whole with its file and line (`backend.core.tabular`): a campaign
    is created complete or not at all."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"campaign file {path} does not exist")
    records = tabular.read_records(path, "campaign file", required=("caption", "negative_caption"),
                                   max_records=MAX_CAMPAIGN_ITEMS, max_bytes=MAX_CAMPAIGN_FILE_BYTES)
    type_, _, subtype = path.stem.partition("_") if path.suffix == ".json" else ("", "", "")
    return [_file_item(record, images_dir, type_, subtype) for record in records]


def _file_item(record: tabular.Record, images_dir: Path | None, type_: str, subtype: str) -> ItemSpec:
    captions = []
    for field in ("caption", "negative_caption"):
        value = record.text(field)
        problem = text.problem(value, MAX_CAPTION_CHARS)
        if problem:
            raise ValueError(f"{record.source}, {record.where}: {field} {problem}")
        captions.append(text.normalise(value))
    image = record.text("image") or record.text("filename") or None
    if image and images_dir is not None:
        image = str(Path(images_dir) / image)
    caption, negative_caption = captions
    return ItemSpec(caption, negative_caption, record.text("type") or type_, record.text("subtype") or subtype, image)


def check_images(items: list[ItemSpec], folder: Path) -> None:
    """Refuse items whose original image is missing, damaged, not an image or too large (`backend.core.images`):
    annotators would get a broken step 4 and the export would fail. Relative paths are in the campaign folder."""
    problems = image_problems(Path(folder) / item.image for item in items if item.image)
    if problems:
        raise ValueError(listed_problems(problems, "the items name") + ". Fix or remove them: nothing was created")


def items_from_probe(result: dict, image: str, failed_only: bool = True) -> list[ItemSpec]:
    """The negatives a probed model failed on (scored at least as high as the original), or every negative when
    not `failed_only` (a validation campaign judges them all), one item each, from a probe's JSON (the Probe tab's
    download, ``python -m backend probe --json``)."""
    rows = result.get("rows") if isinstance(result, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError("the probe result is not a probe's JSON (an object whose \"rows\" is a list of rows): "
                         "use the Probe tab's JSON download or `python -m backend probe --json`")
    original = next((row["text"] for row in rows if row.get("kind") == "original"), None)
    if original is None:
        raise ValueError("the probe result has no original caption row")
    failed = [row for row in rows if row.get("kind") == "negative" and (not failed_only or any(
        str(value).startswith("FAIL") for key, value in row.items() if key.endswith(" verdict")))]
    if not failed:
        raise ValueError("the probed model(s) failed on no negative: nothing to annotate" if failed_only else
                         "the probe result has no negative: nothing to annotate")
    return [ItemSpec(original, row["text"], row.get("family") or "probe", row.get("subtype") or "", image)
            for row in failed]


def items_from_manifest(path: Path, seed: int = 0) -> list[ItemSpec]:
    """One item per negative of a training manifest (`backend.train.data`: image, caption, optional negatives as
    a JSON list or one text): the row's own negatives, else the ones the perturbation engine makes for its caption
    (what a finetune on the manifest would train on). Images are relative to the manifest's folder."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"manifest {path} does not exist")
    records = tabular.read_records(path, "manifest", required=("image", "caption"), max_records=MAX_CAMPAIGN_ITEMS,
                                   max_bytes=MAX_CAMPAIGN_FILE_BYTES)
    items: list[ItemSpec] = []
    for record in records:
        caption, image = record.text("caption").strip(), record.text("image").strip()
        if not caption or not image:
            raise ValueError(f"{record.source}, {record.where}: a row needs an image and a caption")
        for negative, family, subtype in _manifest_negatives(record, caption, seed):
            items.append(_file_item(tabular.Record(record.source, record.where, {
                "caption": caption, "negative_caption": negative, "image": str(path.parent / image),
                "type": family, "subtype": subtype}), None, "", ""))
            if len(items) > MAX_CAMPAIGN_ITEMS:
                raise ValueError(f"manifest {path} makes more than {MAX_CAMPAIGN_ITEMS:,} items: split it")
    if not items:
        raise ValueError(f"manifest {path} gives no negative: nothing to annotate")
    return items


def _manifest_negatives(record: tabular.Record, caption: str, seed: int) -> list[tuple[str, str, str]]:
    """(negative, family, subtype) of a manifest row: its own (family "manifest"), else the engine's."""
    value = record.values.get("negatives")
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"{record.source}, {record.where}: negatives is not a JSON list ({error})") from error
    own = [str(v).strip() for v in (value if isinstance(value, list) else [value] if value else []) if str(v).strip()]
    if own:
        return [(negative, "manifest", "") for negative in own]
    from backend.perturb import perturb

    return [(v.text, v.family, v.subtype) for v in perturb(caption, seed=seed) if v.kind == "negative" and v.plausible]
