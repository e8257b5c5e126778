"""EqBen's 10% subset on the authors' layout (eqben_subset_10percent_final.json, a JSON list of image0, caption0,
image1, caption1 with paths under image_subset/<source>/...; README "Sub-Test Set" and src/eqben of
Wangt-CN/EqBen at ab6c79a): YouCook2 frames as BGR .npy arrays, the authors' strict cal_wino_score on hand-made
scores with ties, per-source scores, intervals that resample whole pairs within their source, the missing-data
steps, and a tiny model against the rule computed item by item.

The annotation file is on Google Drive, not in the repository: the rows follow the schema the authors' loaders
read, with captions written here in the style of each source, not copied rows."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from backend.benchmarks import eqben, prepare, run_task, stats
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.benchmark_files import mean, winoground_by_hand, write_image

ROWS = [
    {"image0": "eqbenag/P01_kitchen/frame_0012.jpg", "caption0": "A person is holding a cup.",
     "image1": "eqbenag/P01_kitchen/frame_0031.jpg", "caption1": "A person is putting down a cup."},
    {"image0": "eqbenyoucook2/v_abc/0001.npy", "caption0": "Add the chopped onions to the pan.",
     "image1": "eqbenyoucook2/v_abc/0007.npy", "caption1": "Stir the onions in the pan."},
    {"image0": "eqbenkubric_cnt/scene_3/rgba_00000.png", "caption0": "There are three cubes on the floor.",
     "image1": "eqbenkubric_cnt/scene_3/rgba_00001.png", "caption1": "There are four cubes on the floor."},
    {"image0": "eqbensd/4410/0.png", "caption0": "A red apple on a wooden table.",
     "image1": "eqbensd/4410/1.png", "caption1": "A green apple on a wooden table."},
]


def bgr_frame(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (24, 32, 3), dtype=np.uint8)


def write_subset(root: Path, rows: list[dict] = ROWS) -> Path:
    folder = root / eqben.FOLDER
    for n, row in enumerate(rows):
        for k, key in enumerate(("image0", "image1")):
            path = folder / eqben.IMAGES / row[key]
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".npy":
                np.save(path, bgr_frame(10 * n + k))
            else:
                write_image(path, seed=2 * n + k + 1)
    (folder / eqben.ANNOTATIONS).write_text(json.dumps(rows))
    return folder


def test_youcook2_frames_are_bgr_arrays_flipped_to_rgb(tmp_path):
    path = tmp_path / "frame.npy"
    frame = bgr_frame(3)
    np.save(path, frame)
    image = eqben.NpyImage(str(path)).load()
    assert image.mode == "RGB" and np.array_equal(np.asarray(image), frame[:, :, ::-1])
    np.save(path, np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match="expected an"):
        eqben.NpyImage(str(path)).load()
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):  # a pickled array is refused, never unpickled
        eqben.NpyImage(str(path)).load()


def test_strict_rules_per_source_on_hand_made_scores_with_ties(tmp_path):
    write_subset(tmp_path)
    task = prepare(eqben.NAME, None, tmp_path)
    assert task.items.subtypes == ["eqbenag", "eqbenyoucook2", "eqbenkubric_cnt", "eqbensd"]
    assert eqben.source_of("./eqbensd/4410/0.png") == eqben.source_of("/eqbensd/4410/0.png") == "eqbensd"
    assert isinstance(task.images[2], eqben.NpyImage) and task.images[2].path.endswith("0001.npy")
    # s[n, caption, image]: 0 all right; 1 a tie c1_i1 == c0_i1 (text wrong, strict); 2 a tie c1_i1 == c1_i0
    # (image wrong); 3 all wrong (captions swapped)
    scores = torch.tensor([[[0.9, 0.1], [0.2, 0.8]],
                           [[0.9, 0.5], [0.2, 0.5]],
                           [[0.9, 0.1], [0.6, 0.6]],
                           [[0.1, 0.9], [0.8, 0.2]]])
    got = task.metrics(scores)
    assert (got["text"], got["image"], got["group"]) == (0.5, 0.5, 0.25)
    assert (got["eqbenag/group"], got["eqbenyoucook2/text"], got["eqbenyoucook2/image"]) == (1.0, 0.0, 1.0)
    assert (got["eqbenkubric_cnt/text"], got["eqbenkubric_cnt/image"], got["eqbensd/group"]) == (1.0, 0.0, 0.0)
    assert task.items.correct(scores).tolist() == [True, False, False, False]


def test_intervals_resample_pairs_within_their_source(tmp_path):
    write_subset(tmp_path, ROWS * 3)  # three pairs per source
    task = prepare(eqben.NAME, None, tmp_path)
    right, wrong = [[0.9, 0.1], [0.2, 0.8]], [[0.1, 0.9], [0.8, 0.2]]
    # the sd pairs always right, every other pair always wrong: a draw keeps three pairs per source, so the
    # overall group is 3/12 in every resample and sd's is 1
    scores = torch.tensor([right if source == "eqbensd" else wrong for source in task.items.subtypes])
    intervals = stats.bootstrap_intervals(task, scores, resamples=200)
    assert intervals["group"] == (0.25, 0.25) and intervals["eqbensd/group"] == (1.0, 1.0)
    limited = prepare(eqben.NAME, 1, tmp_path)  # limit counts per source
    assert limited.items.subtypes == ["eqbenag", "eqbenyoucook2", "eqbenkubric_cnt", "eqbensd"]


def test_missing_annotations_or_images_give_the_steps(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare(eqben.NAME, None, tmp_path)
    message = str(error.value)
    assert "18BSRf1SnBtGiEc42mzRLirXaBLzYE5Tt" in message and "13Iuirsvx34-9F_1Mjhs4Dqn59yokyUjy" in message
    assert str(tmp_path / "eqben" / "eqben_subset_10percent_final.json") in message
    folder = write_subset(tmp_path)
    (folder / eqben.IMAGES / ROWS[3]["image1"]).unlink()
    with pytest.raises(DataMissing, match="eqbensd/4410/1.png must exist"):
        prepare(eqben.NAME, None, tmp_path)


def test_a_tiny_model_scores_as_the_authors_rule(tmp_path, tiny_checkpoints):
    folder = write_subset(tmp_path)
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare(eqben.NAME, None, tmp_path), StreamEncoder(loaded, workers=0), intervals=True)

    def picture(name: str) -> Image.Image:
        path = folder / eqben.IMAGES / name
        if path.suffix == ".npy":  # the authors' template: np.load(path)[:, :, [2, 1, 0]]
            return Image.fromarray(np.load(path)[:, :, [2, 1, 0]], "RGB")
        return Image.open(path).convert("RGB")

    flags = winoground_by_hand(loaded, [([picture(row["image0"]), picture(row["image1"])],
                                         [row["caption0"], row["caption1"]]) for row in ROWS])
    assert result.metrics["text"] == pytest.approx(mean([t for t, _ in flags]))
    assert result.metrics["image"] == pytest.approx(mean([i for _, i in flags]))
    assert result.metrics["group"] == pytest.approx(mean([t and i for t, i in flags]))
    assert result.metrics["eqbenyoucook2/text"] == float(flags[1][0])
    for key in ("text", "image", "group"):
        low, high = result.intervals[key]
        assert low <= result.metrics[key] <= high
