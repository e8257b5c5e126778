"""The registered ``sugarcrepe`` benchmark's data handling: pinned files, exact steps when data is missing, items.

These tests run offline (conftest sets HF_HUB_OFFLINE=1), so a missing file
is never downloaded: ``DataMissing`` must say where to get it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from backend.benchmarks import BENCHMARKS, prepare, sugarcrepe
from backend.benchmarks.data import DataMissing
from tests.support.sugarcrepe_sample import SAMPLE, pin_checksums, write_sugarcrepe_root


def sample_annotations() -> dict[str, dict]:
    return {s: json.loads((SAMPLE / f"{s}.json").read_text()) for s in sugarcrepe.SUBSETS}


def test_missing_annotations_name_the_pinned_url_and_the_manual_steps(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("sugarcrepe", None, tmp_path)
    message = str(error.value)
    assert f"{sugarcrepe.SOURCE}/replace_obj.json" in message and sugarcrepe.COMMIT in message
    assert "offline mode" in message and "git clone https://github.com/RAIVNLab/sugar-crepe" in message
    assert str(tmp_path / "sugarcrepe") in message


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    """The sample holds 15 items a subset, so its checksum is not the pinned one of the full file."""
    root = write_sugarcrepe_root(tmp_path, sample_annotations())
    with pytest.raises(DataMissing, match="SHA-256 mismatch .*replace_obj.json.*9d299600"):
        prepare("sugarcrepe", None, root)


def test_missing_coco_images_give_wget_and_unzip_steps(tmp_path, monkeypatch):
    root = write_sugarcrepe_root(tmp_path, sample_annotations())
    pin_checksums(root, monkeypatch)
    images = root / "coco" / "val2017"
    for path in images.iterdir():
        path.unlink()
    with pytest.raises(DataMissing) as error:
        prepare("sugarcrepe", None, root)
    message = str(error.value)
    assert "wget -c http://images.cocodataset.org/zips/val2017.zip -O /tmp/val2017.zip" in message
    assert f"mkdir -p {root / 'coco'} && unzip -q /tmp/val2017.zip -d {root / 'coco'}" in message
    assert str(images) in message


def test_one_missing_image_is_named_before_anything_is_encoded(tmp_path, monkeypatch):
    root = write_sugarcrepe_root(tmp_path, sample_annotations())
    pin_checksums(root, monkeypatch)
    first = sample_annotations()["replace_obj"]["0"]["filename"]
    (root / "coco" / "val2017" / first).unlink()
    with pytest.raises(DataMissing, match=f"1 image\\(s\\) .*missing \\(first: {first}\\)"):
        prepare("sugarcrepe", None, root)


def test_items_limit_ids_and_metric_keys(tmp_path, monkeypatch):
    root = write_sugarcrepe_root(tmp_path, sample_annotations())
    pin_checksums(root, monkeypatch)
    task = prepare("sugarcrepe", 2, root)
    assert task.items.ids[:3] == ["replace_obj/0", "replace_obj/1", "replace_att/0"]
    assert task.items.subtypes == [s for s in sugarcrepe.SUBSETS for _ in range(2)]
    first = sample_annotations()["replace_obj"]["0"]
    assert task.texts[task.text_index[0, 0]] == first["caption"]
    assert task.texts[task.text_index[0, 1]] == first["negative_caption"]
    assert Path(task.images[task.image_index[0, 0]].path) == root / "coco" / "val2017" / first["filename"]
    benchmark = BENCHMARKS["sugarcrepe"]
    metrics = task.metrics(torch.tensor([[[1.0], [0.0]]] * 7 + [[[0.5], [0.5]]] * 7))  # replace, swap_obj right
    assert set(metrics) == set(benchmark.chance) and set(benchmark.headline) <= set(metrics)
    assert metrics["micro/replace"] == 1.0 and metrics["swap_obj"] == 0.5 and metrics["micro/swap"] == 0.25
    assert metrics["overall"] == pytest.approx(3.5 / 7)  # the rest tie (0.5 vs 0.5): wrong
    assert benchmark.version.startswith("sugar-crepe@0047054")
