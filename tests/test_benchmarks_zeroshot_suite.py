"""The zero-shot suite on tiny fixtures in each set's on-disk layout (the one torchvision or clip_benchmark reads):
labels and class names as clip_benchmark gives them, images per class, the metrics by hand, missing data."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import get_benchmark, prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stats import bootstrap_intervals
from backend.benchmarks.stream import StreamEncoder
from backend.benchmarks.task import LabelledMetric, Task
from backend.benchmarks.zeroshot import RankMetric, mean_per_class_recall, true_class_rank, zero_shot_metrics
from backend.benchmarks.zeroshot_suite import SUITE
from backend.models.loading import load_model

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (220, 220, 40)]


def picture(path: Path, n: int, size: int = 24) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), COLOURS[n % len(COLOURS)]).save(path)
    return path


def classnames(dataset: str) -> list[str]:
    import clip_benchmark.datasets.builder as builder

    return json.loads((Path(builder.__file__).parent / "en_classnames.json").read_text())[dataset]


# ---- one writer per layout -> (labels in dataset order, each image's class name as clip_benchmark names it) -----

def food101(folder: Path):
    base = folder / "food-101"
    (base / "meta").mkdir(parents=True)
    (base / "meta" / "classes.txt").write_text("apple_pie\nbaby_back_ribs\n")
    (base / "meta" / "test.json").write_text(json.dumps({"apple_pie": ["apple_pie/1", "apple_pie/2"],
                                                         "baby_back_ribs": ["baby_back_ribs/3"]}))
    for n, rel in enumerate(["apple_pie/1", "apple_pie/2", "baby_back_ribs/3"]):
        picture(base / "images" / f"{rel}.jpg", n)
    return [0, 0, 1], ["apple pie", "apple pie", "baby back ribs"]


def pets(folder: Path):
    base = folder / "oxford-iiit-pet"
    (base / "annotations").mkdir(parents=True)
    (base / "annotations" / "test.txt").write_text("Abyssinian_1 1 1 1\nbeagle_2 2 2 1\nbeagle_3 2 2 1\n")
    for n, name in enumerate(["Abyssinian_1", "beagle_2", "beagle_3"]):
        picture(base / "images" / f"{name}.jpg", n)
    return [0, 1, 1], ["Abyssinian", "Beagle", "Beagle"]


def dtd(folder: Path):
    base = folder / "dtd" / "dtd"
    (base / "labels").mkdir(parents=True)
    (base / "labels" / "test1.txt").write_text("banded/banded_0002.jpg\nblotchy/blotchy_0003.jpg\n")
    for n, rel in enumerate(["banded/banded_0002.jpg", "blotchy/blotchy_0003.jpg"]):
        picture(base / "images" / rel, n)
    return [0, 1], ["banded", "blotchy"]


def eurosat(folder: Path):
    for n, name in enumerate(["AnnualCrop", "Forest"]):
        picture(folder / "eurosat" / "2750" / name / f"{name}_1.jpg", n)
    return [0, 1], classnames("eurosat")[:2]


def sun397(folder: Path):
    base = folder / "SUN397"
    base.mkdir(parents=True)
    (base / "ClassName.txt").write_text("/a/abbey\n/a/airplane_cabin\n")
    for n, rel in enumerate(["a/airplane_cabin/sun_b.jpg", "a/abbey/sun_c.jpg", "a/abbey/sun_a.jpg"]):
        picture(base / rel, n)
    return [0, 0, 1], ["abbey", "abbey", "airplane cabin"]  # in path order: abbey/sun_a, abbey/sun_c, airplane_cabin


def fgvc(folder: Path):
    data = folder / "fgvc-aircraft-2013b" / "data"
    data.mkdir(parents=True)
    (data / "variants.txt").write_text("707-320\nA300B4\n")
    (data / "images_variant_test.txt").write_text("1514522 A300B4\n0056978 707-320\n")
    for n, name in enumerate(["1514522", "0056978"]):
        picture(data / "images" / f"{name}.jpg", n)
    return [1, 0], ["A300B4", "707-320"]


def gtsrb(folder: Path):
    base = folder / "gtsrb"
    images = base / "GTSRB" / "Final_Test" / "Images"
    for n in range(2):
        picture(images / f"0000{n}.ppm", n)
    (base / "GT-final_test.csv").write_text("Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n"
                                            "00000.ppm;24;24;0;0;23;23;1\n00001.ppm;24;24;0;0;23;23;0\n")
    return [1, 0], [classnames("gtsrb")[1], classnames("gtsrb")[0]]


def mnist(folder: Path):
    raw = folder / "MNIST" / "raw"
    raw.mkdir(parents=True)
    pixels = np.zeros((3, 28, 28), dtype=np.uint8)
    pixels[1] = 255
    (raw / "t10k-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 3, 28, 28) + pixels.tobytes())
    (raw / "t10k-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 3) + bytes([7, 1, 7]))
    (raw / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 0, 28, 28))  # torchvision wants all four
    (raw / "train-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 0))
    return [7, 1, 7], [classnames("mnist")[7], classnames("mnist")[1], classnames("mnist")[7]]


def country211(folder: Path):
    for n, code in enumerate(["AD", "AE"]):
        picture(folder / "country211" / "test" / code / f"{n}.jpg", n)
    return [0, 1], classnames("country211")[:2]


def rendered_sst2(folder: Path):
    for n, label in enumerate(["negative", "positive"]):
        picture(folder / "rendered-sst2" / "test" / label / f"{n}.png", n)
    return [0, 1], ["negative", "positive"]


def caltech101(folder: Path):
    base = folder / "caltech101" / "101_ObjectCategories"
    categories = sorted(["BACKGROUND_Google", "Faces", "Faces_easy", "Leopards", "Motorbikes", "accordion",
                         *[f"category_{n:03d}" for n in range(96)]])
    for category in categories:
        (base / category).mkdir(parents=True)
    picture(base / "accordion" / "image_0001.jpg", 0)
    picture(base / "Leopards" / "image_0001.jpg", 1)
    index = categories.index
    return [index("Leopards"), index("accordion")], [classnames("caltech101")[index("Leopards")],
                                                      classnames("caltech101")[index("accordion")]]


def fer2013(folder: Path):
    for n, label in enumerate(["angry", "disgust"]):
        picture(folder / "test" / label / f"{n}.jpg", n)
    return [0, 1], classnames("fer2013")[:2]


LAYOUTS = {"food101": food101, "pets": pets, "dtd": dtd, "eurosat": eurosat, "sun397": sun397,
           "fgvc-aircraft": fgvc, "gtsrb": gtsrb, "mnist": mnist, "country211": country211,
           "rendered-sst2": rendered_sst2, "caltech101": caltech101, "fer2013": fer2013}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_each_layout_gives_clip_benchmarks_labels_names_and_templates(name, tmp_path):
    labels, names = LAYOUTS[name](tmp_path / name)
    task = prepare(name, root=tmp_path)
    pooled = task.text_pool
    texts_per_class = int(pooled[0].count_nonzero())
    assert task.metrics.labels[0].tolist() == labels
    class_text = [task.texts[label * texts_per_class] for label in labels]
    assert all(expected in text for text, expected in zip(class_text, names, strict=True))
    assert all(image.load().mode == "RGB" for image in task.images)


def test_limit_keeps_the_first_images_of_every_class(tmp_path):
    base = tmp_path / "rendered-sst2" / "rendered-sst2" / "test"
    for n in range(3):
        picture(base / "negative" / f"{n}.png", n)
        picture(base / "positive" / f"{n}.png", n)
    task = prepare("rendered-sst2", limit=2, root=tmp_path)
    assert task.metrics.labels[0].tolist() == [0, 0, 1, 1]
    assert [Path(image.dataset._samples[image.index][0]).name for image in task.images] == ["0.png", "1.png"] * 2


@pytest.mark.parametrize("entry", SUITE, ids=lambda entry: entry.name)
def test_missing_data_gives_the_exact_steps_and_never_downloads_offline(entry, tmp_path):
    with pytest.raises(DataMissing) as raised:
        get_benchmark(entry.name).build(None, tmp_path)
    message = str(raised.value)
    assert str(tmp_path / entry.name / entry.expect) in message and entry.archives[0] in message
    assert not any((tmp_path / entry.name).rglob("*.*"))  # nothing half-downloaded


def test_mean_per_class_recall_and_strict_ties_by_hand():
    sim = torch.tensor([[0.9, 0.1, 0.0],   # class 0, right
                        [0.5, 0.5, 0.0],   # class 0, a tie: wrong
                        [0.2, 0.7, 0.1],   # class 0, wrong
                        [0.1, 0.8, 0.0],   # class 1, right
                        [0.3, 0.2, 0.1]])  # class 1, wrong (top-2 right)
    labels = torch.tensor([0, 0, 0, 1, 1])
    assert true_class_rank(sim, labels).tolist() == [1, 2, 2, 1, 2]
    assert mean_per_class_recall(true_class_rank(sim, labels), labels, 3) == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert zero_shot_metrics(sim, labels) == {"top1": pytest.approx(2 / 5),  # class 2 has no image; no top-5
                                              "mean_per_class_recall": pytest.approx(5 / 12)}


def test_the_rank_bootstrap_equals_the_matrix_bootstrap():
    """Resampling ranks (what the intervals do) gives exactly the intervals of resampling the matrix's rows."""
    generator = torch.Generator().manual_seed(0)
    sim, labels = torch.randn(300, 12, generator=generator), torch.randint(0, 12, (300,), generator=generator)
    by_ranks = Task([], [], RankMetric(labels, 12))
    by_matrix = Task([], [], LabelledMetric(zero_shot_metrics, labels))
    assert by_ranks.metrics(sim) == zero_shot_metrics(sim, labels)
    assert bootstrap_intervals(by_ranks, sim, resamples=200) == bootstrap_intervals(by_matrix, sim, resamples=200)


def test_a_run_scores_by_the_pooled_templates_with_intervals(tmp_path, tiny_checkpoints):
    labels, _ = eurosat(tmp_path / "eurosat")
    task = prepare("eurosat", root=tmp_path)
    tiny = load_model(tiny_checkpoints.dir_spec, device="cpu")
    encoder = StreamEncoder(tiny)
    result = run_task(task, encoder, intervals=True)
    images = encoder.images(task.images)
    per_class = len(task.texts) // 10
    classes = F.normalize(encoder.texts(task.texts).reshape(10, per_class, -1).mean(1), dim=-1)
    assert result.metrics == pytest.approx(zero_shot_metrics(images @ classes.T, torch.tensor(labels)))
    assert set(result.intervals) == {"top1", "top5", "mean_per_class_recall"}
    assert all(low <= result.metrics[key] <= high for key, (low, high) in result.intervals.items())


def test_a_folder_with_other_classes_is_refused_not_mislabelled(tmp_path):
    base = tmp_path / "caltech101" / "caltech101" / "101_ObjectCategories"
    for category in ("Faces", "accordion", "zebra"):  # 3 class folders where clip_benchmark names 102
        picture(base / category / "image_0001.jpg", 0)
    with pytest.raises(DataMissing, match="found 3 classes but clip_benchmark names 102"):
        get_benchmark("caltech101").build(None, tmp_path)
