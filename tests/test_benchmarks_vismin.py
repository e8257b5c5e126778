"""VisMin on the Hub table's layout (mair-lab/vismin-bench at 2f379d5: data/test/ saved with save_to_disk; columns
id, text_0, text_1, image_0, image_1, category) and on a parquet copy: the authors' strict metric (metric.py) on
hand-made scores with ties, per category and pooled, intervals that resample whole items within their category,
``limit`` per category, the missing-data steps, and a tiny model against the rule computed item by item.

The table is not reachable offline. The first row's captions are the one real VisMin pair published in the authors'
README (github.com/rabiulcste/vismin at 29ce2c0, a counting edit); the others are written here per category."""
from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import torch
from PIL import Image

from backend.benchmarks import prepare, run_task, stats, vismin
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.benchmark_files import mean, winoground_by_hand, write_image

ROWS = [
    ("counting", "Two men holding a brown and white dog in a van.",
     "Three men holding a brown and white dog in a van."),
    ("object", "A glass of ice water sitting next to a wine glass.",
     "A glass of milk sitting next to a wine glass."),
    ("attribute", "A red bus parked beside a white building.", "A blue bus parked beside a white building."),
    ("relation", "A paint brush is to the left of a palette.", "A paint brush is to the right of a palette."),
    ("object", "A cat sleeping on a laptop keyboard.", "A dog sleeping on a laptop keyboard."),
]


def table(folder: Path, rows=ROWS) -> datasets.Dataset:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [[write_image(folder / f"{n}_{k}.png", seed=2 * n + k + 1) for k in (0, 1)] for n in range(len(rows))]
    return datasets.Dataset.from_dict({
        "id": [f"vm{n:04d}" for n in range(len(rows))],
        "text_0": [text_0 for _, text_0, _ in rows], "text_1": [text_1 for _, _, text_1 in rows],
        "image_0": [str(p[0]) for p in paths], "image_1": [str(p[1]) for p in paths],
        "category": [category for category, _, _ in rows],
    }).cast_column("image_0", datasets.Image()).cast_column("image_1", datasets.Image())


def write_repo_copy(root: Path, rows=ROWS) -> datasets.Dataset:
    """What `huggingface-cli download mair-lab/vismin-bench` leaves: data/test/ as a saved table."""
    dataset = table(root / "pictures", rows)
    dataset.save_to_disk(str(root / vismin.NAME / "data" / "test"))
    return dataset


def test_strict_rules_per_category_on_hand_made_scores_with_ties(tmp_path):
    write_repo_copy(tmp_path)
    task = prepare(vismin.NAME, None, tmp_path)
    assert task.items.subtypes == ["counting", "object", "attribute", "relation", "object"]
    assert task.items.ids == ["vm0000", "vm0001", "vm0002", "vm0003", "vm0004"]
    # s[n, caption, image] = T<caption>_I<image>. 0 all right; 1 tie T0_I0 == T1_I0 (text wrong, strict);
    # 2 tie T0_I0 == T0_I1 (image wrong); 3 all right; 4 all wrong
    scores = torch.tensor([[[0.9, 0.1], [0.2, 0.8]],
                           [[0.5, 0.1], [0.5, 0.8]],
                           [[0.4, 0.4], [0.1, 0.9]],
                           [[0.7, 0.3], [0.3, 0.7]],
                           [[0.1, 0.9], [0.9, 0.1]]])
    got = task.metrics(scores)
    assert (got["text"], got["image"], got["group"]) == (0.6, 0.6, 0.4)  # pooled over the 5 items
    assert (got["object/text"], got["object/image"], got["object/group"]) == (0.0, 0.5, 0.0)
    assert (got["attribute/text"], got["attribute/image"]) == (1.0, 0.0)
    assert got["counting/group"] == 1.0 and got["relation/group"] == 1.0
    assert task.items.correct(scores).tolist() == [True, False, False, True, False]


def test_intervals_resample_items_within_their_category(tmp_path):
    write_repo_copy(tmp_path, ROWS * 2)
    task = prepare(vismin.NAME, None, tmp_path)
    right, wrong = [[0.9, 0.1], [0.2, 0.8]], [[0.1, 0.9], [0.8, 0.2]]
    # objects always wrong, the rest always right: each draw keeps 4 object items of 10, so pooled group is 0.6
    scores = torch.tensor([wrong if c == "object" else right for c in task.items.subtypes])
    intervals = stats.bootstrap_intervals(task, scores, resamples=200)
    assert intervals["group"] == (0.6, 0.6) and intervals["object/group"] == (0.0, 0.0)


def test_limit_counts_per_category_and_a_parquet_copy_loads(tmp_path):
    write_repo_copy(tmp_path)
    assert prepare(vismin.NAME, 1, tmp_path).items.subtypes == ["counting", "object", "attribute", "relation"]
    copy = tmp_path / "parquet"
    table(copy / "pictures").to_parquet(str(copy / vismin.NAME / "test-00000-of-00001.parquet"))
    assert prepare(vismin.NAME, None, copy).items.ids == [f"vm{n:04d}" for n in range(5)]


def test_a_wrong_table_and_no_data_say_what_to_do(tmp_path, monkeypatch):
    folder = tmp_path / vismin.NAME / "data" / "test"
    datasets.Dataset.from_dict({"id": ["a"], "caption": ["b"]}).save_to_disk(str(folder))
    with pytest.raises(DataMissing, match="has no column text_0, text_1, image_0, image_1, category"):
        prepare(vismin.NAME, None, tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(DataMissing) as error:
        prepare(vismin.NAME, None, tmp_path / "empty")
    message = str(error.value)
    assert f"datasets.load_dataset('{vismin.HUB_ID}', split='test')" in message
    assert f"--revision {vismin.REVISION}" in message and str(tmp_path / "empty" / "vismin") in message


def test_a_tiny_model_scores_as_the_authors_rule(tmp_path, tiny_checkpoints):
    write_repo_copy(tmp_path)
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare(vismin.NAME, None, tmp_path), StreamEncoder(loaded, workers=0), intervals=True)
    pictures = tmp_path / "pictures"
    flags = winoground_by_hand(loaded, [([Image.open(pictures / f"{n}_{k}.png").convert("RGB") for k in (0, 1)],
                                         [text_0, text_1]) for n, (_, text_0, text_1) in enumerate(ROWS)])
    assert result.metrics["text"] == pytest.approx(mean([t for t, _ in flags]))
    assert result.metrics["image"] == pytest.approx(mean([i for _, i in flags]))
    assert result.metrics["group"] == pytest.approx(mean([t and i for t, i in flags]))
    assert result.metrics["object/group"] == pytest.approx(mean([flags[1][0] and flags[1][1],
                                                                 flags[4][0] and flags[4][1]]))
    for key in ("text", "image", "group"):
        low, high = result.intervals[key]
        assert low <= result.metrics[key] <= high
