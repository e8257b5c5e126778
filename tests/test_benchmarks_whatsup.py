"""What'sUp Controlled Images A/B: the authors' rules (argmax, a tie to the correct caption; pair and set
accuracy by object pair) on hand-made scores, the loader on files laid out as the authors' (their JSON schema:
``image_path`` under ``data/controlled_images/`` and four ``caption_options``, the first correct), and a tiny
model against the authors' argmax computed by hand.

The authors' JSON is on Google Drive, not in their repository: the rows below follow the schema their loader
(``dataset_zoo/aro_datasets.py`` ``Controlled_Images``) reads, with their file-name scheme
``<object>_<preposition>_<object2>.jpeg``; they are not copied rows."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import prepare, run_task, stats, whatsup
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model

PREPOSITIONS_A = {"on": "on", "under": "under", "left_of": "to the left of", "right_of": "to the right of"}
OBJECTS = [("beer-bottle", "armchair"), ("mug", "table"), ("cap", "chair")]


def rows_a() -> list[dict]:
    """Three object pairs x four photos, captions in the order of the photo's own preposition first."""
    rows = []
    for first, second in OBJECTS:
        for slot, phrase in PREPOSITIONS_A.items():
            others = [p for s, p in PREPOSITIONS_A.items() if s != slot]
            rows.append({"image_path": f"data/controlled_images/{first}_{slot}_{second}.jpeg",
                         "caption_options": [f"A {first.replace('-', ' ')} {p} a {second}" for p in [phrase, *others]]})
    return rows


def write_root(root: Path, rows: list[dict]) -> Path:
    folder = root / whatsup.FOLDER
    (folder / "controlled_images").mkdir(parents=True)
    (folder / "controlled_images_dataset.json").write_text(json.dumps(rows))
    rng = np.random.default_rng(0)
    for row in rows:
        pixels = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
        Image.fromarray(pixels).resize((64, 48), Image.NEAREST).save(
            folder / "controlled_images" / Path(row["image_path"]).name, format="JPEG")
    return root


def test_file_names_are_read_as_the_authors_do():
    assert whatsup.name_fields("data/controlled_images/beer-bottle_left_of_armchair.jpeg") == (
        "beer-bottle", "left", "armchair")
    assert whatsup.name_fields("data/controlled_clevr/cube_in-front_of_sphere.jpeg") == ("cube", "in-front", "sphere")


def test_accuracy_pair_and_set_by_hand_with_ties_to_the_correct_caption():
    # pair 0: all four right (on wins by a tie: argmax picks the first maximum, the correct caption)
    # pair 1: left right, right wrong; on right, under right -> one pair of two, no set
    prepositions = ["on", "under", "left", "right"] * 2
    best = [0.30, 0.30, 0.30, 0.30, 0.30, 0.30, 0.30, 0.20]  # correct caption's score
    rival = [0.30, 0.20, 0.29, 0.10, 0.10, 0.10, 0.20, 0.25]  # best wrong caption's score
    scores = torch.tensor([[[b], [r], [0.0], [0.0]] for b, r in zip(best, rival)])
    metrics = whatsup.whatsup_metrics(scores, prepositions, vertical=("on", "under"), pair_of=[0] * 4 + [1] * 4)
    assert metrics["accuracy"] == 7 / 8
    assert metrics["on/accuracy"] == 1.0 and metrics["right/accuracy"] == 0.5
    assert metrics["pair_acc"] == 3 / 4  # pairs counted: (0: left/right, 0: on/under, 1: on/under) of N/2 = 4
    assert metrics["set_acc"] == 1 / 2


def test_a_missing_preposition_counts_as_wrong():
    scores = torch.tensor([[[0.3], [0.1], [0.0], [0.0]]] * 3)
    metrics = whatsup.whatsup_metrics(scores, ["left", "right", "on"], vertical=("on", "under"), pair_of=[0, 0, 0])
    assert metrics["accuracy"] == 1.0 and metrics["set_acc"] == 0.0  # "under" never seen: their dict keeps 0


def test_missing_data_gives_the_authors_drive_ids(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("whatsup-b", None, tmp_path)
    message = str(error.value)
    assert "gdown 1unNNosLbdy9NDjgj4l8fsQP3WiAAGA6z" in message and "13jdBpg8t3NqW3jrL6FK8HO93vwsUjDxG" in message
    assert "offline mode" in message and str(tmp_path / "whatsup") in message


def test_a_missing_photo_is_named(tmp_path):
    root = write_root(tmp_path, rows_a())
    (root / "whatsup" / "controlled_images" / "mug_under_table.jpeg").unlink()
    with pytest.raises(DataMissing, match="mug_under_table.jpeg must exist"):
        prepare("whatsup-a", None, root)


def test_the_bootstrap_draws_whole_object_pairs(tmp_path):
    task = prepare("whatsup-a", None, write_root(tmp_path, rows_a()))
    assert task.n_items == 12 and task.units == ["0"] * 4 + ["1"] * 4 + ["2"] * 4
    plan = stats.resample_plan(task.items.subtypes, task.units)
    rows = stats.draw(plan, np.random.default_rng(3))
    for start in (0, 4, 8):
        assert len({task.units[r] for r in rows[start:start + 4]}) == 1
        assert [task.items.subtypes[r] for r in rows[start:start + 4]] == task.items.subtypes[start:start + 4]


def test_a_tiny_model_scores_as_the_authors_argmax(tmp_path, tiny_checkpoints):
    root = write_root(tmp_path, rows_a())
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare("whatsup-a", None, root), StreamEncoder(loaded, batch_size=4, workers=0),
                      intervals=True)
    expected = []
    with torch.no_grad():
        for row in rows_a():
            image = Image.open(root / "whatsup" / "controlled_images" / Path(row["image_path"]).name).convert("RGB")
            i = F.normalize(loaded.model.encode_image(loaded.preprocess(image)[None]), dim=-1)[0]
            t = F.normalize(loaded.model.encode_text(loaded.tokenizer(row["caption_options"])), dim=-1)
            expected.append(int(np.argmax((t @ i).numpy())) == 0)
    assert result.correct.tolist() == expected
    assert result.metrics["accuracy"] == pytest.approx(sum(expected) / 12)
    for key, (low, high) in result.intervals.items():
        assert low <= result.metrics[key] + 1e-12 and result.metrics[key] - 1e-12 <= high, key
