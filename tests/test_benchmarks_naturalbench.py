"""NaturalBench-Retrieval on the authors' release layout (NaturalBench-Retrieval/metadata.json, a JSON list of
index, image_0, image_1, caption_0, caption_1, and images/; ``naturalbench_retrieval.py`` of Baiqi-Li/NaturalBench
at 9967605): their strict text/image/group on hand-made scores with ties, 2x2 items resampled whole, the
missing-data steps, and a tiny model against the rule computed item by item.

The release zip is not reachable offline: the rows follow the schema the authors' loader reads (captions written
here in the style of Flickr30k's), not copied rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from PIL import Image

from backend.benchmarks import naturalbench, prepare, run_task, stats
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.benchmark_files import mean, winoground_by_hand, write_image

CAPTIONS = [("A man in a red jacket rides a bike down a dirt trail.",
             "A man in a red jacket pushes a bike up a dirt trail."),
            ("Two dogs run across a snowy field.", "Two dogs sleep on a snowy porch."),
            ("A woman holds an umbrella over a child.", "A child holds an umbrella over a woman."),
            ("A crowd watches a street performer juggle.", "A street performer watches a crowd juggle.")]


def write_release(root: Path) -> Path:
    release = root / naturalbench.FOLDER / naturalbench.RELEASE
    (release / "images").mkdir(parents=True)
    rows = []
    for n, (caption_0, caption_1) in enumerate(CAPTIONS):
        names = [f"{n}_{k}.jpg" for k in (0, 1)]
        for k, name in enumerate(names):
            write_image(release / "images" / name, seed=2 * n + k + 1)
        rows.append({"index": n, "image_0": names[0], "image_1": names[1], "caption_0": caption_0,
                     "caption_1": caption_1})
    (release / "metadata.json").write_text(json.dumps(rows, indent=2))
    return release


def test_strict_rules_on_hand_made_scores_with_ties(tmp_path):
    write_release(tmp_path)
    task = prepare(naturalbench.NAME, None, tmp_path)
    # s[n, caption, image]. 0: all right. 1: text right, image wrong (caption 1 prefers image 0).
    # 2: a tie c0_i0 == c1_i0 makes text wrong (strict), image right. 3: a tie c0_i0 == c0_i1 makes image wrong.
    scores = torch.tensor([[[0.9, 0.1], [0.2, 0.8]],
                           [[0.9, 0.1], [0.75, 0.7]],
                           [[0.5, 0.1], [0.5, 0.8]],
                           [[0.4, 0.4], [0.1, 0.9]]])
    got = task.metrics(scores)
    assert (got["text"], got["image"], got["group"]) == (0.75, 0.5, 0.25)
    assert got["ipos2t"] == 0.75 and got["tpos2i"] == 0.75  # the two ties, each wrong on its own side
    assert task.items.correct(scores).tolist() == [True, False, False, False]
    assert task.items.ids == ["0", "1", "2", "3"]


def test_intervals_resample_whole_items(tmp_path):
    write_release(tmp_path)
    task = prepare(naturalbench.NAME, None, tmp_path)
    # every item right on text and wrong on image: any resample of whole items keeps text 1 and image 0
    scores = torch.tensor([[[0.5, 0.6], [0.1, 0.9]]] * 4)
    intervals = stats.bootstrap_intervals(task, scores, resamples=200)
    assert intervals["text"] == (1.0, 1.0) and intervals["image"] == (0.0, 0.0)
    mixed = torch.tensor([[[0.9, 0.1], [0.2, 0.8]], [[0.1, 0.9], [0.8, 0.2]]] * 2)
    low, high = stats.bootstrap_intervals(task, mixed, resamples=400)["group"]
    assert low < 0.5 < high and {low, high} <= {0.0, 0.25, 0.5, 0.75, 1.0}


def test_a_row_out_of_order_and_a_missing_image_are_refused(tmp_path):
    release = write_release(tmp_path)
    rows = json.loads((release / "metadata.json").read_text())
    (release / "images" / rows[2]["image_1"]).unlink()
    with pytest.raises(DataMissing, match="2_1.jpg must exist"):
        prepare(naturalbench.NAME, None, tmp_path)
    rows[1]["index"] = 7
    (release / "metadata.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError, match="row 1 has index 7"):
        prepare(naturalbench.NAME, None, tmp_path)


def test_no_data_gives_the_download_and_unzip_steps(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare(naturalbench.NAME, None, tmp_path)
    message = str(error.value)
    assert f"huggingface-cli download {naturalbench.HUB_ID} {naturalbench.ZIP}" in message
    assert naturalbench.REVISION in message and naturalbench.ZIP_SHA256 in message
    assert f"cd {tmp_path / 'naturalbench'} && unzip -q NaturalBench-Retrieval.zip" in message


def test_a_tiny_model_scores_as_the_authors_rule(tmp_path, tiny_checkpoints):
    release = write_release(tmp_path)
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare(naturalbench.NAME, None, tmp_path), StreamEncoder(loaded, workers=0), intervals=True)
    rows = json.loads((release / "metadata.json").read_text())
    flags = winoground_by_hand(loaded, [([Image.open(release / "images" / row[k]).convert("RGB")
                                          for k in ("image_0", "image_1")], [row["caption_0"], row["caption_1"]])
                                        for row in rows])
    assert result.metrics["text"] == pytest.approx(mean([t for t, _ in flags]))
    assert result.metrics["image"] == pytest.approx(mean([i for _, i in flags]))
    assert result.metrics["group"] == pytest.approx(mean([t and i for t, i in flags]))
    assert result.correct.tolist() == [t and i for t, i in flags]
    for key in ("text", "image", "group"):
        low, high = result.intervals[key]
        assert low <= result.metrics[key] <= high
