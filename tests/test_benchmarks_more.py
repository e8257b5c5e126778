"""Winoground, VALSE and MMVP-VLM on data laid out exactly as their publishers ship it (JSON Lines + PNGs,
per-piece JSON + source image folders, Questions.csv + per-pattern JPEGs), scored by a tiny open_clip model
and recomputed item by item with the app's ``Encoder``; hand-made scores pin the tie rules."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
from PIL import Image

from backend.benchmarks import prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.mmvp import pair_correct
from backend.benchmarks.stream import StreamEncoder
from backend.benchmarks.valse import PIECES, RAW, valse_metrics
from backend.benchmarks.winoground import HUB_ID as WINOGROUND_ID
from backend.core.settings import get_settings
from backend.models.encoder import Encoder
from backend.models.loading import load_model


def noise(seed: int, size: int = 40) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8))


@pytest.fixture(scope="module")
def loaded(tiny_checkpoints):
    return load_model(tiny_checkpoints.file_spec, device="cpu")


@pytest.fixture(scope="module")
def encoder(loaded) -> Encoder:
    return Encoder(loaded)


def evaluate(name: str, root: Path, loaded, limit=None):
    return run_task(prepare(name, limit, root), StreamEncoder(loaded))


def mean(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


# -- Winoground ---------------------------------------------------------------------------------------------

EXAMPLES = [  # the release's examples.jsonl fields, tags as the release writes them
    {"id": 0, "caption_0": "an old person kisses a young person", "caption_1": "a young person kisses an old person",
     "tag": "Noun", "secondary_tag": "", "num_main_preds": 1, "collapsed_tag": "Object"},
    {"id": 1, "caption_0": "the dog is on the bed", "caption_1": "the bed is on the dog", "tag": "Noun",
     "secondary_tag": "Symbolic", "num_main_preds": 1, "collapsed_tag": "Object"},
    {"id": 2, "caption_0": "a person sits and a dog stands", "caption_1": "a person stands and a dog sits",
     "tag": "Verb", "secondary_tag": "Pragmatics, Symbolic", "num_main_preds": 2, "collapsed_tag": "Relation"},
    {"id": 3, "caption_0": "there is less milk than coffee", "caption_1": "there is less coffee than milk",
     "tag": "Adjective-Comparative", "secondary_tag": "Series", "num_main_preds": 1, "collapsed_tag": "Both"},
]


def winoground_release(root: Path) -> Path:
    folder = root / "winoground"
    (folder / "data").mkdir(parents=True)
    (folder / "images").mkdir()
    lines = []
    for example in EXAMPLES:
        names = {k: f"ex_{example['id']}_img_{k[-1]}" for k in ("image_0", "image_1")}
        for k, name in names.items():
            noise(10 * example["id"] + int(k[-1])).save(folder / "images" / f"{name}.png")
        lines.append(json.dumps({**example, **names}))
    (folder / "data" / "examples.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def winoground_by_hand(encoder: Encoder, folder: Path) -> dict[str, float]:
    """Winoground's own code on each example: text = c0_i0 > c1_i0 and c1_i1 > c0_i1, image = c0_i0 > c0_i1
    and c1_i1 > c1_i0, group = both; then the fractions per tag."""
    flags = []
    for example in EXAMPLES:
        images = [Image.open(folder / "images" / f"ex_{example['id']}_img_{k}.png") for k in (0, 1)]
        cos = encoder.score(images, [example["caption_0"], example["caption_1"]]).cosine  # [image, caption]
        c0_i0, c1_i0, c0_i1, c1_i1 = cos[0, 0], cos[0, 1], cos[1, 0], cos[1, 1]
        text, image = bool(c0_i0 > c1_i0 and c1_i1 > c0_i1), bool(c0_i0 > c0_i1 and c1_i1 > c1_i0)
        flags.append({"text": text, "image": image, "group": text and image})
    groups = {"": list(range(4)), "object/": [0, 1], "relation/": [2], "both/": [3], "secondary/symbolic/": [1, 2],
              "secondary/pragmatics/": [2], "secondary/series/": [3], "main_preds_1/": [0, 1, 3], "main_preds_2/": [2]}
    return {f"{g}{flag}": mean([flags[i][flag] for i in members]) for g, members in groups.items()
            for flag in ("text", "image", "group")}


def test_winoground_release_layout_matches_its_own_scoring(tmp_path, loaded, encoder):
    folder = winoground_release(tmp_path)
    result = evaluate("winoground", tmp_path, loaded)
    expected = winoground_by_hand(encoder, folder)
    assert {k: result.metrics[k] for k in expected} == pytest.approx(expected)
    assert not any(k.endswith(("/i2t", "/t2i")) or k in ("i2t", "t2i") for k in result.metrics)
    task = prepare("winoground", None, tmp_path)
    assert task.items.ids == ["0", "1", "2", "3"] and task.items.subtypes == ["Object", "Object", "Relation", "Both"]
    per_item = [(result.scores[n, 0, 0] > result.scores[n, 1, 0]) & (result.scores[n, 1, 1] > result.scores[n, 0, 1])
                & (result.scores[n, 0, 0] > result.scores[n, 0, 1]) & (result.scores[n, 1, 1] > result.scores[n, 1, 0])
                for n in range(4)]
    assert result.correct.tolist() == [bool(v) for v in per_item]
    assert prepare("winoground", 2, tmp_path).items.ids == ["0", "1"]


def test_winoground_names_and_tags_on_hand_made_scores(tmp_path):
    winoground_release(tmp_path)
    task = prepare("winoground", None, tmp_path)
    # s[n, caption, image]: example 0 text only, 1 image only, 2 group, 3 a tie c0_i0 == c1_i0 (text wrong,
    # image right)
    scores = torch.tensor([[[0.5, 0.6], [0.1, 0.7]], [[0.2, 0.1], [0.3, 0.9]], [[0.9, 0.1], [0.2, 0.8]],
                           [[0.5, 0.1], [0.5, 0.8]]])
    got = task.metrics(scores)
    assert (got["text"], got["image"], got["group"]) == (0.5, 0.75, 0.25)
    assert (got["object/text"], got["object/image"], got["relation/group"], got["both/text"]) == (0.5, 0.5, 1.0, 0.0)
    assert got["secondary/symbolic/image"] == 1.0 and got["main_preds_1/group"] == 0.0
    assert task.items.correct(scores).tolist() == [False, False, True, False]


def test_winoground_hub_table_copy_scores_like_the_release(tmp_path, loaded):
    folder = winoground_release(tmp_path / "release")
    table = datasets.Dataset.from_dict({
        **{key: [example[key] for example in EXAMPLES] for key in EXAMPLES[0]},
        "image_0": [str(folder / "images" / f"ex_{e['id']}_img_0.png") for e in EXAMPLES],
        "image_1": [str(folder / "images" / f"ex_{e['id']}_img_1.png") for e in EXAMPLES]},
    ).cast_column("image_0", datasets.Image()).cast_column("image_1", datasets.Image())
    table.save_to_disk(str(tmp_path / "saved" / "winoground"))
    hub_copy = evaluate("winoground", tmp_path / "saved", loaded).metrics
    assert hub_copy == pytest.approx(evaluate("winoground", tmp_path / "release", loaded).metrics)


def test_winoground_gated_without_token_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    get_settings.cache_clear()
    with pytest.raises(DataMissing) as error:
        prepare("winoground", None, tmp_path)
    message = str(error.value)
    assert "no Hugging Face token is set" in message and "the Hub was not tried" in message
    assert f"https://huggingface.co/datasets/{WINOGROUND_ID}" in message and "accept its terms" in message
    assert "set HF_TOKEN" in message and f"{tmp_path / 'winoground'}/data/examples.jsonl" in message
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    get_settings.cache_clear()
    try:
        with pytest.raises(DataMissing) as error:
            prepare("winoground", None, tmp_path)
    finally:
        get_settings.cache_clear()
    assert f"tried datasets.load_dataset('{WINOGROUND_ID}', split='test', token=<HF_TOKEN>)" in str(error.value)
    assert "hf_secret_value" not in str(error.value)


def test_winoground_missing_images_are_named(tmp_path):
    folder = winoground_release(tmp_path)
    (folder / "images" / "ex_2_img_1.png").unlink()
    with pytest.raises(DataMissing, match=r"1 images named in data/examples.jsonl are missing \(first: ex_2_img_1"):
        prepare("winoground", None, tmp_path)


# -- VALSE --------------------------------------------------------------------------------------------------

SOURCE_OF = {"existence": ("visual7w", "visual7w", "v7w_{}.jpg"), "plurals": ("coco2017", "coco2017", "{:012d}.jpg"),
             "counting-hard": ("visual7w", "visual7w", "v7w_{}.jpg"),
             "counting-small-quant": ("visual7w", "visual7w", "v7w_{}.jpg"),
             "counting-adversarial": ("visual7w", "visual7w", "v7w_{}.jpg"),
             "relations": ("coco_2017", "coco2017", "{:012d}.jpg"),
             "action-replacement": ("SWiG", "swig", "act_{}.jpg"),
             "actant-swap": ("SWiG", "swig", "act_{}.jpg"),
             "coreference-standard": ("VisDial_v1.0", "visdial", "COCO_train2014_{:012d}.jpg"),
             "coreference-hard": ("VisDial_v1.0", "visdial", "VisualDialog_val2018_{:012d}.jpg"),
             "foil-it": ("FOIL dataset", "coco2014", "COCO_val2014_{:012d}.jpg")}
VOTES = [(3, 0, 0), (2, 1, 0), (1, 2, 0)]  # mturk caption, foil, other: the third item is not validated


def valse_release(root: Path) -> dict[str, list[tuple[str, dict]]]:
    folder = root / "valse"
    written = {}
    for p, piece in enumerate(PIECES):
        dataset, subfolder, pattern = SOURCE_OF[piece]
        entries = {}
        for n, (caption_votes, foil_votes, other) in enumerate(VOTES):
            image_file = pattern.format(100 * p + n)
            (folder / "images" / subfolder).mkdir(parents=True, exist_ok=True)
            noise(1000 + 10 * p + n).save(folder / "images" / subfolder / image_file)
            entries[f"{piece}_test_{n}"] = {
                "dataset": dataset, "original_split": "test", "linguistic_phenomena": piece.split("-")[0],
                "image_file": image_file, "caption": f"There are exactly {n + p} dogs.",
                "foil": f"There are exactly {n + p + 3} cats.", "classes": n, "classes_foil": n + 3,
                "mturk": {"caption": caption_votes, "foil": foil_votes, "other": other}}
        (folder / f"{piece}.json").write_text(json.dumps(entries))
        written[piece] = [(key, entry) for key, entry in entries.items()]
    return written


def test_valse_validated_items_pairwise_accuracy_by_hand(tmp_path, loaded, encoder):
    written = valse_release(tmp_path)
    result = evaluate("valse", tmp_path, loaded)
    per_piece = {}
    for piece, entries in written.items():
        hits = []
        for key, entry in entries[:2]:  # the validated ones
            _, subfolder, _ = SOURCE_OF[piece]
            image = Image.open(tmp_path / "valse" / "images" / subfolder / entry["image_file"])
            cos = encoder.score([image], [entry["caption"], entry["foil"]]).cosine[0]
            hits.append(bool(cos[0] > cos[1]))
        per_piece[piece] = mean(hits)
        assert result.metrics[f"{piece}/acc_r"] == pytest.approx(per_piece[piece]), piece
    assert result.metrics["acc_r"] == pytest.approx(sum(per_piece.values()) / len(PIECES))
    assert 0 < result.metrics["acc_r_pooled"] < 1, "a degenerate fixture"
    task = prepare("valse", None, tmp_path)
    assert len(task.items.ids) == 2 * len(PIECES) and "existence/existence_test_2" not in task.items.ids
    assert prepare("valse", 1, tmp_path).items.ids[:2] == ["existence/existence_test_0", "plurals/plurals_test_0"]


def test_valse_tie_is_wrong_and_average_is_over_pieces():
    scores = torch.tensor([[[0.5], [0.5]], [[0.6], [0.2]], [[0.1], [0.3]], [[0.4], [0.1]]])  # s[n, text, 0]
    got = valse_metrics(scores, ["existence", "existence", "existence", "plurals"])
    assert got["existence/acc_r"] == pytest.approx(1 / 3) and got["plurals/acc_r"] == 1.0
    assert got["acc_r"] == pytest.approx((1 / 3 + 1) / 2) and got["acc_r_pooled"] == pytest.approx(2 / 4)


def test_valse_missing_pieces_and_images(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("valse", None, tmp_path)
    assert f"download {RAW}/existence.json to {tmp_path / 'valse' / 'existence.json'}" in str(error.value)
    assert "offline mode" in str(error.value)
    valse_release(tmp_path)
    for image in (tmp_path / "valse" / "images" / "swig").iterdir():
        image.unlink()
    with pytest.raises(DataMissing, match=r"images of SWiG are missing: put SWiG .*valse/images/swig/") as error:
        prepare("valse", None, tmp_path)
    assert "4 images of SWiG" in str(error.value)  # 2 validated items x 2 SWiG pieces


# -- MMVP-VLM -----------------------------------------------------------------------------------------------

QUESTIONS = [(1, "Orientation", "the dog is facing left"), (2, "Orientation", "the dog is facing right"),
             (3, "Orientation", "the arrow points up"), (4, "Orientation", "the arrow points down"),
             (5, "Camera Perspective", "a photo taken from above"),
             (6, "Camera Perspective", "a photo taken from below"),
             (7, "Camera Perspective", "a close-up of a flower"), (8, "Camera Perspective", "a flower far away")]


def mmvp_release(root: Path) -> Path:
    folder = root / "mmvp-vlm"
    for qid, pattern, _ in QUESTIONS:
        (folder / "MLLM_VLM Images" / pattern).mkdir(parents=True, exist_ok=True)
        noise(500 + qid).convert("RGB").save(folder / "MLLM_VLM Images" / pattern / f"{qid}.jpg")
    with (folder / "Questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question ID", "Type", "Statement"])
        writer.writerows(QUESTIONS)
    return folder


def test_mmvp_pairs_follow_the_authors_rule(tmp_path, loaded, encoder):
    folder = mmvp_release(tmp_path)
    result = evaluate("mmvp-vlm", tmp_path, loaded)
    hits = []
    for first in range(0, len(QUESTIONS), 2):
        (qid1, pattern, s1), (qid2, _, s2) = QUESTIONS[first:first + 2]
        images = [Image.open(folder / "MLLM_VLM Images" / pattern / f"{q}.jpg") for q in (qid1, qid2)]
        logits = 100 * encoder.score(images, ["a photo of " + s1, "a photo of " + s2]).cosine.T  # [text, image]
        probs = logits.softmax(dim=-1)
        pred1 = "img1" if probs[0, 0] > 0.5 else "img2"
        pred2 = "img1" if probs[1, 0] > 0.5 else "img2"
        hits.append(pred1 == ("img1" if qid1 % 2 == 1 else "img2") and pred2 == ("img1" if qid2 % 2 == 1 else "img2"))
    assert result.metrics["pair_acc"] == pytest.approx(mean(hits))
    for n, first in enumerate(range(0, len(QUESTIONS), 2)):  # s[n, statement k, image i] is the authors' layout
        (qid1, pattern, s1), (qid2, _, s2) = QUESTIONS[first:first + 2]
        images = [Image.open(folder / "MLLM_VLM Images" / pattern / f"{q}.jpg") for q in (qid1, qid2)]
        cos = encoder.score(images, ["a photo of " + s1, "a photo of " + s2]).cosine.T
        assert result.scores[n] == pytest.approx(cos, abs=1e-5)
    assert result.metrics["orientation/pair_acc"] == pytest.approx(mean(hits[:2]))
    assert result.metrics["camera_perspective/pair_acc"] == pytest.approx(mean(hits[2:]))
    assert result.correct.tolist() == hits
    task = prepare("mmvp-vlm", 1, tmp_path)
    assert task.items.ids == ["1-2", "5-6"] and task.items.subtypes == ["orientation", "camera_perspective"]


def test_mmvp_owner_by_question_id_parity(tmp_path):
    mmvp_release(tmp_path)
    task = prepare("mmvp-vlm", None, tmp_path)
    right = torch.tensor([[0.9, 0.1], [0.1, 0.9]])  # statement 1 -> image 1, statement 2 -> image 2
    scores = torch.stack([right, right.flip(1), right, right])
    assert task.items.correct(scores).tolist() == [True, False, True, True]
    got = task.metrics(scores)
    assert (got["pair_acc"], got["orientation/pair_acc"], got["camera_perspective/pair_acc"]) == (0.75, 0.5, 1.0)


def test_mmvp_tie_goes_to_the_second_image():
    owner = torch.tensor([[0, 1]] * 3)
    scores = torch.tensor([[[0.5, 0.5], [0.1, 0.9]],   # statement 1 ties: picks image 2, wrong
                           [[0.9, 0.1], [0.5, 0.5]],   # statement 2 ties: picks image 2, right
                           [[0.9, 0.1], [0.2, 0.9]]])  # both strictly right
    assert pair_correct(scores, owner).tolist() == [False, True, True]


def test_mmvp_missing_data_says_how_to_download(tmp_path):
    with pytest.raises(DataMissing, match="huggingface-cli download MMVP/MMVP_VLM --repo-type dataset"):
        prepare("mmvp-vlm", None, tmp_path)
    folder = mmvp_release(tmp_path)
    (folder / "MLLM_VLM Images" / "Orientation" / "3.jpg").unlink()
    with pytest.raises(DataMissing, match=r"1 images are missing \(first: .*Orientation/3.jpg\)"):
        prepare("mmvp-vlm", None, tmp_path)
