"""The shipped caption counts' sources: SugarCrepe's even ids and COCO's captions of photos no odd id shows."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from backend.perturb.caption_stats import SUBSETS, coco_captions, main, sugarcrepe_captions


def _sugarcrepe(folder: Path) -> Path:
    """Two items per subset file: an even id over photo 1 and an odd id over photo 2 (held out)."""
    folder.mkdir()
    for subset in SUBSETS:
        rows = {
            "0": {"filename": "000000000001.jpg", "caption": "A dog on a log.", "negative_caption": "A cat on a log."},
            "1": {"filename": "000000000002.jpg", "caption": "A man riding a horse.", "negative_caption": "x"},
        }
        (folder / f"{subset}.json").write_text(json.dumps(rows))
    return folder


def _coco(path: Path) -> Path:
    images = [{"id": n, "file_name": f"{n:012d}.jpg"} for n in (1, 2, 3)]
    notes = [
        {"image_id": 1, "id": 10, "caption": "A dog on a log."},  # the even caption again: counted once
        {"image_id": 1, "id": 11, "caption": "A brown dog lying on a wooden log. "},
        {"image_id": 2, "id": 20, "caption": "A person on a horse in a field."},  # the held-out photo's
        {"image_id": 3, "id": 30, "caption": "A frog sitting on a log next to a pond."},
    ]
    path.write_text(json.dumps({"images": images, "annotations": notes}))
    return path


def test_coco_captions_leave_out_every_caption_of_a_held_out_photo(tmp_path):
    data, coco = _sugarcrepe(tmp_path / "sc"), _coco(tmp_path / "captions_val2017.json")
    assert sugarcrepe_captions(data, 0) == ["A dog on a log."]
    assert coco_captions(coco, data) == [
        "A dog on a log.", "A brown dog lying on a wooden log.", "A frog sitting on a log next to a pond."]


def test_the_built_counts_hold_each_caption_once_and_nothing_of_held_out_photos(tmp_path):
    data, coco, out = _sugarcrepe(tmp_path / "sc"), _coco(tmp_path / "captions_val2017.json"), tmp_path / "s.json.gz"
    assert main(["--data", str(data), "--coco", str(coco), "--out", str(out)]) == 0
    with gzip.open(out, "rt") as handle:
        stats = json.load(handle)
    assert stats["captions"] == 3
    assert stats["nouns"]["log"] == 3 and stats["nouns"]["dog"] == 2
    assert "horse" not in stats["nouns"] and "person" not in stats["nouns"]
