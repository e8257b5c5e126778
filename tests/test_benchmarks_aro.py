"""ARO loaders (VG-Relation, VG-Attribution, COCO/Flickr30k-Order) on files in the authors' formats.

Each benchmark is evaluated with a real (tiny, random) open_clip model and
every number is recomputed by hand from item-by-item scores of the fixture's
own rows (crops cut here with PIL, captions read from the JSON).
"""
import hashlib
import json
import statistics
from pathlib import Path

import pytest
import torch
from PIL import Image

from backend import metrics as M
from backend.benchmarks import aro, order, prepare
from backend.benchmarks.data import DataMissing, Remote
from backend.models.loading import load_model
from tests.support.benchmark_files import RED, evaluate, go_online, item_texts, mean, one_by_one, serve, write_image

RELATIONS = [  # (relation, true caption, false caption); "near" is in ARO's filter list, the others are not
    ("on", "the cup is on the table", "the table is on the cup"),
    ("on", "the book is on the shelf", "the shelf is on the book"),
    ("on", "the cat is on the mat", "the mat is on the cat"),
    ("wearing", "the man is wearing the hat", "the hat is wearing the man"),
    ("wearing", "the girl is wearing the dress", "the dress is wearing the girl"),
    ("near", "the tree is near the house", "the house is near the tree"),
    ("near", "the car is near the road", "the road is near the car"),
    ("holding", "the boy is holding the kite", "the kite is holding the boy"),
]


@pytest.fixture(scope="module")
def loaded(tiny_checkpoints):
    return load_model(tiny_checkpoints.file_spec, device="cpu")


def _box(n: int) -> dict:
    return {"bbox_x": 2 + n % 5, "bbox_y": 1 + n % 3, "bbox_w": 30 + n % 7, "bbox_h": 24 + n % 4}


def write_vg(root: Path, name: str, rows: list[dict]) -> Path:
    """The authors' JSON under <root>/aro/ and one drawn image per distinct image_path under images/."""
    folder = root / aro.FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for n, path in enumerate(dict.fromkeys(row["image_path"] for row in rows)):
        write_image(folder / aro.IMAGES / path, seed=n + 1)
    (folder / name).write_text(json.dumps(rows))
    return folder


def relation_rows() -> list[dict]:
    return [{"image_id": str(100 + n % 3), "image_path": f"{100 + n % 3}.jpg", **_box(n), "relation_name": rel,
             "true_caption": true, "false_caption": false} for n, (rel, true, false) in enumerate(RELATIONS)]


def attribution_rows() -> list[dict]:
    """26 rows of the pair (white, black): one group over ARO's 25-item bar; 3 of (red, blue): under it."""
    objects = ["cup", "dog", "car", "shirt", "chair", "boat", "bird", "kite", "door", "vase", "hat", "box", "ball"]
    pairs = [("white", "black")] * 26 + [("red", "blue")] * 3
    return [{"image_id": str(200 + n % 4), "image_path": f"{200 + n % 4}.png", **_box(n), "attributes": [a, b],
             "true_caption": f"the {a} {objects[n % 13]} and the {b} {objects[(n + 5) % 13]}",
             "false_caption": f"the {b} {objects[n % 13]} and the {a} {objects[(n + 5) % 13]}"}
            for n, (a, b) in enumerate(pairs)]


def hand_crop(folder: Path, row: dict) -> Image.Image:
    x, y, w, h = (row[k] for k in ("bbox_x", "bbox_y", "bbox_w", "bbox_h"))
    return Image.open(folder / aro.IMAGES / row["image_path"]).convert("RGB").crop((x, y, x + w, y + h))


def hand_flags(loaded, folder: Path, rows: list[dict]) -> list[bool]:
    scores = one_by_one(loaded, [(hand_crop(folder, r), [r["true_caption"], r["false_caption"]]) for r in rows])
    return [true > false for true, false in scores]


def per_group(flags: list[bool], groups: list[str]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for flag, group in zip(flags, groups):
        out.setdefault(group, []).append(flag)
    return out


def test_vg_relation_matches_hand_recomputation(tmp_path, loaded):
    rows = relation_rows()
    folder = write_vg(tmp_path, "visual_genome_relation.json", rows)
    task, result = evaluate("aro-vg-relation", tmp_path, loaded)
    flags = hand_flags(loaded, folder, rows)
    groups = per_group(flags, [r["relation_name"] for r in rows])
    assert "near" in M.DEFAULT_SYMMETRIC_RELATIONS and not {"on", "wearing", "holding"} & M.DEFAULT_SYMMETRIC_RELATIONS
    assert result.correct.tolist() == flags
    assert result.metrics["micro"] == pytest.approx(mean(flags))
    assert result.metrics["macro"] == pytest.approx(mean([mean(groups[r]) for r in ("on", "wearing", "holding")]))
    assert result.metrics["macro_unfiltered"] == pytest.approx(mean([mean(g) for g in groups.values()]))
    assert result.metrics["relation/near"] == pytest.approx(mean(groups["near"]))
    assert task.items.subtypes == [r["relation_name"] for r in rows]
    assert [item_texts(task, n) for n in range(len(rows))] == [[r["true_caption"], r["false_caption"]] for r in rows]
    assert len(task.images) == len(rows)  # same file, different boxes: distinct crops


def test_vg_attribution_macro_keeps_only_pairs_with_25_items(tmp_path, loaded):
    rows = attribution_rows()
    folder = write_vg(tmp_path, "visual_genome_attribution.json", rows)
    task, result = evaluate("aro-vg-attribution", tmp_path, loaded)
    flags = hand_flags(loaded, folder, rows)
    assert result.correct.tolist() == flags
    assert result.metrics["macro"] == pytest.approx(mean(flags[:26]))  # (red, blue) has 3 items: left out
    assert result.metrics["micro"] == pytest.approx(mean(flags))
    assert set(task.items.subtypes) == {"white_black", "red_blue"}
    assert prepare("aro-vg-attribution", 10, tmp_path).n_items == 10
    short = evaluate("aro-vg-attribution", tmp_path, loaded, limit=10)[1]
    assert short.metrics["macro"] != short.metrics["macro"]  # NaN: no pair reaches 25 items in a 10-row prefix


def test_crop_is_the_authors_box(tmp_path):
    """A box around a red square on a blue image gives a red crop of the box's size: (x, y, x + w, y + h)."""
    row = {**relation_rows()[0], "image_path": "crop.png", "bbox_x": 30, "bbox_y": 20, "bbox_w": 20, "bbox_h": 12}
    folder = tmp_path / aro.FOLDER
    write_image(folder / aro.IMAGES / row["image_path"], seed=0, size=(100, 80), square=(30, 20, 20, 12))
    (folder / "visual_genome_relation.json").write_text(json.dumps([row]))
    crop = prepare("aro-vg-relation", None, tmp_path).images[0].load()
    assert crop.size == (20, 12)
    assert set(crop.getdata()) == {RED}
    whole = Image.open(folder / aro.IMAGES / row["image_path"]).convert("RGB")
    assert RED not in set(whole.crop((0, 0, 30, 80)).getdata())  # the square is only where the box says


def test_symmetric_filter_and_25_rule_on_hand_scores():
    """Hand-made scores (N, 2, 1): the filter and the >= 25 rule move the macro means as ARO's code would."""
    right, wrong, tie = [[0.3], [0.1]], [[0.1], [0.3]], [[0.2], [0.2]]
    scores = torch.tensor([wrong, wrong, right, right, tie])
    metrics = aro.relation_metrics(scores, ["near", "near", "on", "on", "wearing"])
    assert metrics["macro"] == pytest.approx(0.5)  # on 1.0, wearing 0.0 (a tie is wrong); near dropped
    assert metrics["macro_unfiltered"] == pytest.approx(1 / 3)
    assert metrics["micro"] == pytest.approx(2 / 5)
    assert aro.relation_metrics(scores, ["near"] * 5)["macro"] != aro.relation_metrics(scores, ["near"] * 5)["macro"]
    pair_scores = torch.tensor([right] * 20 + [wrong] * 5 + [wrong] * 24)
    pairs = ["a_b"] * 25 + ["c_d"] * 24
    assert aro.attribution_metrics(pair_scores, pairs)["macro"] == pytest.approx(0.8)  # c_d (24 items) left out
    assert aro.attribution_metrics(pair_scores, pairs, min_items=24)["macro"] == pytest.approx(0.4)
    assert aro.attribution_metrics(pair_scores, pairs)["micro"] == pytest.approx(20 / 49)


def test_missing_vg_data_lists_the_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPLAB_OFFLINE", "1")
    folder = tmp_path / aro.FOLDER
    with pytest.raises(DataMissing) as missing_json:
        prepare("aro-vg-relation", None, tmp_path)
    message = str(missing_json.value)
    assert str(folder) in message and "  1. " in message and "  4. " in message
    assert aro.RELATION_ID in message and aro.IMAGES_ID in message and "unzip" in message
    rows = relation_rows()
    folder.mkdir()
    (folder / "visual_genome_relation.json").write_text(json.dumps(rows))
    with pytest.raises(DataMissing) as missing_images:
        prepare("aro-vg-relation", None, tmp_path)
    assert str(folder / aro.IMAGES / rows[0]["image_path"]) in str(missing_images.value)
    assert "vgr_vga_images.zip" in str(missing_images.value) and "3 image files" in str(missing_images.value)


@pytest.mark.system
def test_download_records_checksum_and_refuses_a_changed_copy(tmp_path, monkeypatch):
    rows = relation_rows()
    served = tmp_path / "server"
    served.mkdir()
    (served / "visual_genome_relation.json").write_text(json.dumps(rows))
    root = tmp_path / "benchmarks"
    write_vg(root, "ignored.json", rows)
    local = root / aro.FOLDER / "visual_genome_relation.json"
    go_online(monkeypatch)
    with serve(served) as url:
        monkeypatch.setitem(aro.REMOTES, "aro-vg-relation", Remote(local.name, url + local.name))
        assert aro.build_relation(None, root).n_items == len(rows)
        book = json.loads((root / aro.FOLDER / "checksums.json").read_text())
        assert book[local.name]["sha256"] == hashlib.sha256(local.read_bytes()).hexdigest()
        assert local.read_bytes() == (served / local.name).read_bytes()
        local.write_text(json.dumps(rows[:-1]))  # a later copy that differs, put there by hand: kept, refused
        with pytest.raises(DataMissing, match="SHA-256 mismatch"):
            aro.build_relation(None, root)
        assert local.exists()
        local.unlink()
        (served / local.name).write_text(json.dumps(rows[1:]))  # the publisher's copy changed: fetched, refused
        with pytest.raises(DataMissing, match="SHA-256 mismatch"):
            aro.build_relation(None, root)
        assert not local.exists()


# -- COCO / Flickr30k order ------------------------------------------------------------------------------

KARPATHY = [  # BLIP's coco_karpathy_test.json format
    {"image": "val2014/COCO_val2014_000000391895.jpg", "caption": [
        "A man with a red helmet on a small moped on a dirt road. ",
        "Man riding a motor bike on a dirt road on the countryside.",
        "A man in a red shirt and a red hat is on a motorcycle on a hill side, looking at the large green trees "
        "and the tall grass near the old wooden fence by the side of the long dusty road"]},
    {"image": "val2014/COCO_val2014_000000522418.jpg", "caption": [
        "A woman wearing a net on her head cutting a cake. ",
        "A woman cutting a large white sheet cake.",
        "A woman wearing a hair net cutting a large sheet cake."]},
]


def write_order(root: Path, rows: list[dict] = KARPATHY) -> Path:
    folder = root / "aro-coco-order"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "coco_karpathy_test.json").write_text(json.dumps(rows))
    for n, row in enumerate(rows):
        write_image(folder / row["image"], seed=n + 3)
    return folder


def aro_reading(caption: str) -> str:
    """ARO's reading by hand for these captions: lower case, '.' and ',' dropped, at most 30 words."""
    return " ".join(caption.lower().replace(".", " ").replace(",", " ").split()[:30])


def test_order_seeds_give_mean_and_std_matching_hand_recomputation(tmp_path, loaded):
    folder = write_order(tmp_path)
    task, result = evaluate("aro-coco-order", tmp_path, loaded)
    captions = [(row["image"], c) for row in KARPATHY for c in row["caption"]]
    assert task.n_items == len(order.SEEDS) * len(captions) and len(task.images) == len(KARPATHY)
    texts = [item_texts(task, n) for n in range(task.n_items)]
    for n, item in enumerate(texts):
        caption = captions[n % len(captions)][1]
        assert item[0] == aro_reading(caption) and len(item) == 5
        assert all(sorted(p.split()) == sorted(item[0].split()) for p in item[1:])  # order changes, words do not
    assert len(texts[2][0].split()) == 30
    assert texts[:len(captions)] != texts[len(captions):2 * len(captions)]  # each seed draws afresh
    images = [Image.open(folder / captions[n % len(captions)][0]).convert("RGB") for n in range(task.n_items)]
    scores = one_by_one(loaded, list(zip(images, texts)))
    flags = [s[0] >= max(s[1:]) for s in scores]  # a tie goes to the original
    assert result.correct.tolist() == flags
    per_seed = [mean(flags[k * len(captions):(k + 1) * len(captions)]) for k in range(len(order.SEEDS))]
    for seed, value in zip(order.SEEDS, per_seed):
        assert result.metrics[f"seed={seed}/accuracy"] == pytest.approx(value)
    assert result.metrics["accuracy"] == pytest.approx(statistics.mean(per_seed))
    assert result.metrics["accuracy_std"] == pytest.approx(statistics.stdev(per_seed))
    assert set(task.items.subtypes) == {f"seed={seed}" for seed in order.SEEDS}


def test_order_prefix_keeps_each_captions_draws(tmp_path):
    write_order(tmp_path)
    full, short = prepare("aro-coco-order", None, tmp_path), prepare("aro-coco-order", 2, tmp_path)
    per_seed = full.n_items // len(order.SEEDS)
    assert short.n_items == 2 * len(order.SEEDS)
    for k in range(len(order.SEEDS)):
        for j in range(2):
            assert item_texts(short, 2 * k + j) == item_texts(full, per_seed * k + j)


def test_order_metrics_tie_rule_and_seed_spread_on_hand_scores():
    best, beaten, tied = [[0.5], [0.1], [0.2], [0.3], [0.4]], [[0.1], [0.5], [0.2], [0.3], [0.4]], [[0.5]] * 5
    metrics = order.order_metrics(torch.tensor([best, tied, best, beaten]), [0, 0, 1, 1])
    assert metrics["seed=0/accuracy"] == 1.0 and metrics["seed=1/accuracy"] == 0.5
    assert metrics["accuracy"] == pytest.approx(0.75)
    assert metrics["accuracy_std"] == pytest.approx(statistics.stdev([1.0, 0.5]))


def test_missing_order_images_list_the_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPLAB_OFFLINE", "1")
    with pytest.raises(DataMissing, match="coco_karpathy_test.json"):
        prepare("aro-coco-order", None, tmp_path)
    folder = write_order(tmp_path)
    (folder / KARPATHY[1]["image"]).unlink()
    with pytest.raises(DataMissing) as missing:
        prepare("aro-coco-order", None, tmp_path)
    assert "val2014.zip" in str(missing.value) and str(folder / KARPATHY[1]["image"]) in str(missing.value)
    with pytest.raises(DataMissing, match="forms.illinois.edu"):
        prepare("aro-flickr30k-order", None, tmp_path)
