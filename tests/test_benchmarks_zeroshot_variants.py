"""The zero-shot suite's ImageNet variants, ObjectNet and VOC 2007, on tiny fixtures in the on-disk layout
clip_benchmark 1.6.2's builder reads (``clip_benchmark/datasets/builder.py``, ``imagenetv2.py``, ``objectnet.py``,
``voc2007.py``): labels and class names exactly as the builder gives them, nothing downloaded."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from backend.benchmarks import get_benchmark, prepare
from backend.benchmarks import zeroshot_suite as suite
from backend.benchmarks.data import DataMissing


def picture(path: Path, size: tuple[int, int] = (8, 8)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 30, 30)).save(path)


def builder_source() -> str:
    import clip_benchmark.datasets.builder as builder

    return Path(builder.__file__).read_text()


def imagenet_ids() -> list[str]:
    import clip_benchmark.datasets.builder as builder

    return list(builder.all_imagenet_wordnet_ids)


def imagenet_names() -> list[str]:
    import clip_benchmark.datasets.builder as builder

    return json.loads((Path(builder.__file__).parent / "en_classnames.json").read_text())["imagenet1k"]


def variant_ids(name: str) -> list[str]:
    """The 200 wnids the builder keeps for ImageNet-A/-R/-O (lists written out in its source)."""
    variable = {"imagenet-a": "imagenet_a_wnids", "imagenet-r": "imagenet_r_wnids", "imagenet-o": "imagenet_o_wnids"}
    body = re.search(rf"{variable[name]} = [\[{{]([^\]}}]*)[\]}}]", builder_source())
    assert body is not None
    return sorted(re.findall(r"n\d{8}", body.group(1)))


def texts_of(task, labels: list[int]) -> list[str]:
    per_class = int(task.text_pool[0].count_nonzero())
    return [task.texts[label * per_class] for label in labels]


@pytest.mark.parametrize("name", ["imagenet-a", "imagenet-r", "imagenet-o"])
def test_an_imagenet_variant_names_its_200_classes_as_the_builder_does(name, tmp_path):
    wnids = variant_ids(name)
    assert len(wnids) == 200
    for wnid in wnids:  # the archive's layout: one folder per wnid, straight in the set's folder
        picture(tmp_path / name / wnid / f"{wnid}_0.png")
    task = prepare(name, root=tmp_path)
    labels = task.metrics.labels[0].tolist()
    assert labels == list(range(200))
    full = dict(zip(imagenet_ids(), imagenet_names(), strict=True))
    for text, wnid in zip(texts_of(task, [0, 57, 199]), [wnids[0], wnids[57], wnids[199]], strict=True):
        assert full[wnid] in text  # the class the folder holds, as ImageNet names it (templates: ImageNet's 80)
    assert len(task.texts) == 200 * 80


def test_a_variant_missing_a_class_folder_is_refused_not_shifted(tmp_path):
    for wnid in variant_ids("imagenet-r")[:-1]:
        picture(tmp_path / "imagenet-r" / wnid / "0.png")
    with pytest.raises(DataMissing, match="found 199 classes but clip_benchmark names 200"):
        get_benchmark("imagenet-r").build(None, tmp_path)


def test_imagenet_sketch_reads_its_1000_folders(tmp_path):
    for wnid in imagenet_ids():
        picture(tmp_path / "imagenet-sketch" / wnid / "sketch_1.JPEG")
    task = prepare("imagenet-sketch", limit=1, root=tmp_path)
    assert task.metrics.labels[0].tolist() == list(range(1000))
    assert imagenet_names()[417] in texts_of(task, [417])[0]


def test_imagenetv2_labels_are_its_folder_numbers_in_path_order(tmp_path, monkeypatch):
    import clip_benchmark.datasets.imagenetv2 as v2

    base = tmp_path / "imagenetv2" / "ImageNetV2-matched-frequency"
    for label, name in ((999, "c"), (0, "b"), (1, "a"), (0, "a")):
        picture(base / str(label) / f"{name}.jpeg")
    # a partial copy makes the builder download the whole set: the count is checked first, then the builder's own
    # check (10,000 files) is set to the fixture's size
    with pytest.raises(DataMissing, match="holds 4 images, not 10000"):
        get_benchmark("imagenetv2").build(None, tmp_path)
    monkeypatch.setitem(suite.BY_NAME, "imagenetv2", dataclasses.replace(suite.BY_NAME["imagenetv2"], images=4))
    monkeypatch.setattr(v2, "V2_DATASET_SIZE", 4)
    task = prepare("imagenetv2", root=tmp_path)
    assert task.metrics.labels[0].tolist() == [0, 0, 1, 999]
    assert [Path(image.dataset.fnames[image.index]).name for image in task.images] == ["a.jpeg", "b.jpeg", "a.jpeg",
                                                                                       "c.jpeg"]
    assert imagenet_names()[999] in texts_of(task, [999])[0]


def test_objectnet_keeps_its_imagenet_classes_with_its_own_labels(tmp_path):
    folder = tmp_path / "objectnet"
    folder.mkdir()
    # objectnet-1.0/mappings/*, copied into the folder as the builder reads them
    (folder / "folder_to_objectnet_label.json").write_text(json.dumps({"alarm_clock": "Alarm clock",
                                                                       "fish_tank": "Fish tank", "chair": "Chair"}))
    (folder / "objectnet_to_imagenet_1k.json").write_text(json.dumps({"Alarm clock": "analog clock",
                                                                      "Fish tank": "tench; goldfish"}))
    (folder / "pytorch_to_imagenet_2012_id.json").write_text(json.dumps({"0": 0, "1": 1, "2": 2}))
    (folder / "imagenet_to_label_2012_v2").write_text("tench\ngoldfish\nanalog clock\n")
    for category in ("alarm_clock", "chair", "fish_tank"):  # chair has no ImageNet class: left out
        picture(folder / "objectnet-1.0" / "images" / category / "1.png")
    task = prepare("objectnet", root=tmp_path)
    assert task.metrics.labels[0].tolist() == [0, 1]
    assert [Path(image.dataset.samples[image.index][0]).parent.name for image in task.images] == ["alarm_clock",
                                                                                                   "fish_tank"]
    assert ["alarm clock" in texts_of(task, [0])[0], "fish tank" in texts_of(task, [1])[0]] == [True, True]


def annotation(objects: list[tuple[str, tuple[int, int, int, int]]]) -> str:
    boxes = "".join(f"<object><name>{name}</name><pose>Left</pose><truncated>0</truncated><difficult>0</difficult>"
                    f"<bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax></bndbox></object>"
                    for name, (x0, y0, x1, y1) in objects)
    return f"<annotation><folder>VOC2007</folder><filename>x.jpg</filename>{boxes}</annotation>"


def test_voc2007_is_one_item_per_object_crop(tmp_path):
    base = tmp_path / "voc2007" / "VOCdevkit" / "VOC2007"
    (base / "ImageSets" / "Main").mkdir(parents=True)
    (base / "ImageSets" / "Main" / "aeroplane_test.txt").write_text("000001 -1\n000002  1\n")
    (base / "Annotations").mkdir()
    (base / "Annotations" / "000001.xml").write_text(annotation([("dog", (2, 3, 20, 30)), ("person", (0, 0, 10, 12))]))
    (base / "Annotations" / "000002.xml").write_text(annotation([("aeroplane", (5, 5, 45, 25))]))
    for name in ("000001", "000002"):
        picture(base / "JPEGImages" / f"{name}.jpg", (48, 40))
    task = prepare("voc2007", root=tmp_path)
    assert task.metrics.labels[0].tolist() == [11, 14, 0]  # dog, person, aeroplane in clip_benchmark's order
    assert [image.load().size for image in task.images] == [(18, 27), (10, 12), (40, 20)]
    assert "dog" in texts_of(task, [11])[0] and "aeroplane" in texts_of(task, [0])[0]
