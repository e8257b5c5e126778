"""ColorSwap on the authors' release layout (data/test.json + data/images/img_<id>_<k>.png, README of
Top34051/colorswap) and on a saved Hub table with the same columns; Winoground's strict rules on hand-made
scores with a tie; the gated Hub without a token; a tiny model against the rules computed by hand."""
from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import prepare, run_task
from backend.benchmarks.colorswap import HUB_ID
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.core.settings import get_settings
from backend.models.loading import load_model

ROWS = [  # the README's example row, then rows of the same schema
    {"id": 0, "caption_1": "someone holding a yellow umbrella wearing a white dress",
     "caption_2": "someone holding a white umbrella wearing a yellow dress", "image_1": "images/img_0_1.png",
     "image_2": "images/img_0_2.png", "image_source": "midjourney", "caption_source": "human"},
    {"id": 1, "caption_1": "a red cup on a blue table", "caption_2": "a blue cup on a red table",
     "image_1": "images/img_1_1.png", "image_2": "images/img_1_2.png", "image_source": "dalle3",
     "caption_source": "human"},
    {"id": 2, "caption_1": "a green car next to a black bike", "caption_2": "a black car next to a green bike",
     "image_1": "images/img_2_1.png", "image_2": "images/img_2_2.png", "image_source": "midjourney",
     "caption_source": "gpt4"},
]


def release(root: Path) -> Path:
    data = root / "colorswap" / "data"
    (data / "images").mkdir(parents=True)
    (data / "test.json").write_text(json.dumps(ROWS))
    for n, row in enumerate(ROWS):
        for k, key in enumerate(("image_1", "image_2")):
            pixels = np.random.default_rng(10 * n + k).integers(0, 256, (5, 5, 3), dtype=np.uint8)
            Image.fromarray(pixels).resize((40, 40), Image.NEAREST).save(data / row[key])
    return data


def test_winoground_rules_on_hand_made_scores_with_a_tie(tmp_path):
    release(tmp_path)
    task = prepare("colorswap", None, tmp_path)
    # s[n, caption, image]: item 0 group right; item 1 text right, image wrong; item 2 text right, image wrong
    # by a tie c0_i0 == c0_i1 (strict)
    scores = torch.tensor([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.6], [0.1, 0.7]], [[0.4, 0.4], [0.1, 0.9]]])
    got = task.metrics(scores)
    assert (got["text"], got["image"], got["group"]) == (1.0, pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert got["tpos2i"] == pytest.approx(1 / 3)  # c0 picks image 0 only in item 0: the tie is wrong
    assert got["image_source=midjourney/group"] == 0.5 and got["caption_source=gpt4/text"] == 1.0
    assert task.items.correct(scores).tolist() == [True, False, False]
    assert task.items.ids == ["0", "1", "2"] and task.items.subtypes == ["midjourney", "dalle3", "midjourney"]


def test_a_tiny_model_on_the_release_and_on_a_saved_hub_table(tmp_path, tiny_checkpoints):
    data = release(tmp_path / "release")
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare("colorswap", None, tmp_path / "release"), StreamEncoder(loaded, workers=0),
                      intervals=True)
    text, image = [], []
    with torch.no_grad():
        for row in ROWS:
            i = F.normalize(loaded.model.encode_image(torch.stack(
                [loaded.preprocess(Image.open(data / row[k]).convert("RGB")) for k in ("image_1", "image_2")])), dim=-1)
            c = F.normalize(loaded.model.encode_text(loaded.tokenizer([row["caption_1"], row["caption_2"]])), dim=-1)
            s = c @ i.T  # s[caption, image]
            text.append(bool(s[0, 0] > s[1, 0] and s[1, 1] > s[0, 1]))
            image.append(bool(s[0, 0] > s[0, 1] and s[1, 1] > s[1, 0]))
    assert result.metrics["text"] == pytest.approx(sum(text) / 3)
    assert result.metrics["image"] == pytest.approx(sum(image) / 3)
    assert result.metrics["group"] == pytest.approx(sum(a and b for a, b in zip(text, image)) / 3)
    table = datasets.Dataset.from_dict({**{key: [row[key] for row in ROWS] for key in ROWS[0]},
                                        **{key: [str(data / row[key]) for row in ROWS] for key in ("image_1", "image_2")}}
                                       ).cast_column("image_1", datasets.Image()).cast_column("image_2", datasets.Image())
    table.save_to_disk(str(tmp_path / "saved" / "colorswap"))
    saved = run_task(prepare("colorswap", None, tmp_path / "saved"), StreamEncoder(loaded, workers=0))
    assert saved.metrics == pytest.approx(result.metrics)


def test_a_missing_image_is_named(tmp_path):
    data = release(tmp_path)
    (data / "images" / "img_1_2.png").unlink()
    with pytest.raises(DataMissing, match="img_1_2.png must exist"):
        prepare("colorswap", None, tmp_path)


def test_gated_without_token_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    get_settings.cache_clear()
    try:
        with pytest.raises(DataMissing) as error:
            prepare("colorswap", None, tmp_path)
    finally:
        get_settings.cache_clear()
    message = str(error.value)
    assert "the Hub was not tried" in message and f"https://huggingface.co/datasets/{HUB_ID}" in message
    assert "1xdG94DQdz_eQVH1lrEeaHVz_BNkrVgb5" in message and f"{tmp_path / 'colorswap'}/data/test.json" in message
