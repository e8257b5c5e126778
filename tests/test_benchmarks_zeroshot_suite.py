"""The zero-shot suite on tiny fixtures in each set's on-disk layout (the one torchvision or clip_benchmark reads):
labels and class names as clip_benchmark gives them, images per class, the metrics by hand, missing data."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from backend.benchmarks import get_benchmark, prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stats import bootstrap_intervals
from backend.benchmarks.stream import StreamEncoder
from backend.benchmarks.task import LabelledMetric, Task
from backend.benchmarks.zeroshot import RankMetric, mean_per_class_recall, true_class_rank, zero_shot_metrics
from backend.benchmarks.zeroshot_suite import SUITE
from backend.models.loading import load_model
from tests.support.object_centric_files import LAYOUTS, eurosat, picture


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
