"""Kamath et al.'s REPLACE and SWAP loaders on the authors' rows, with drawn images and a real tiny model.

REPLACE uses a committed sample of the real files (tests/data/hard-positives-sample,
first 20 rows of each); SWAP's files are ARO VG-Attribution rows, written here.
Every metric is recomputed from item-by-item scores of the fixture's own rows.
"""
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from backend.benchmarks import hard_positives as hp
from backend.benchmarks import prepare
from backend.benchmarks.data import DataMissing
from backend.models.loading import load_model
from tests.support.benchmark_files import RED, evaluate, go_online, item_texts, mean, one_by_one, serve, write_image

SAMPLE = Path(__file__).parent / "data" / "hard-positives-sample"
FILES = {"att": "vl_checklist_attributes.json", "rel": "vl_checklist_relations.json"}


@pytest.fixture(scope="module")
def loaded(tiny_checkpoints):
    return load_model(tiny_checkpoints.file_spec, device="cpu")


def rows(folder: Path, kind: str, filename: str) -> list[dict]:
    return json.loads((folder / kind / filename).read_text())


def replace_root(tmp_path: Path, with_images: bool = True) -> Path:
    """<root>/hard-positives/ as the repository lays it out: the sample's JSON, a drawn image per image_path."""
    folder = tmp_path / hp.FOLDER
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("README.md"))
    paths = dict.fromkeys(row["image_path"] for name in FILES.values() for row in rows(folder, hp.ORIGINAL, name))
    for n, path in enumerate(paths if with_images else ()):
        write_image(folder / path, seed=n)
    return folder


def unpinned(monkeypatch) -> None:
    """The sample is a 20-row prefix, so it cannot match the lab's pins of the full files."""
    monkeypatch.setattr(hp, "PINNED_SHA256", {})


def hand_metrics(c: list[float], n: list[float], p: list[float]) -> dict[str, float]:
    return {"original_acc": mean([a > b for a, b in zip(c, n)]),
            "augmented_acc": mean([a > b and q > b for a, b, q in zip(c, n, p)]),
            "brittleness": mean([a > b > q or q > b > a for a, b, q in zip(c, n, p)])}


def hand_scores(loaded, items: list[tuple[Image.Image, list[str]]]) -> tuple[list, list, list]:
    scores = one_by_one(loaded, items)
    return [s[0] for s in scores], [s[1] for s in scores], [s[2] for s in scores]


def test_replace_real_rows_match_hand_recomputation(tmp_path, monkeypatch, loaded):
    unpinned(monkeypatch)
    folder = replace_root(tmp_path)
    task, result = evaluate("hard-positives-replace", tmp_path, loaded)
    expected, pooled, flags = {}, ([], [], []), []
    for subset, name in FILES.items():
        pairs = list(zip(rows(folder, hp.ORIGINAL, name), rows(folder, hp.POSITIVE, name)))
        items = [(Image.open(folder / o["image_path"]).convert("RGB"),
                  [o["true_caption"], o["false_caption"], h["true_caption"]]) for o, h in pairs]
        c, n, p = hand_scores(loaded, items)
        expected[subset] = hand_metrics(c, n, p)
        for whole, part in zip(pooled, (c, n, p)):
            whole.extend(part)
        flags += [a > b for a, b in zip(c, n)]
        for metric, value in expected[subset].items():
            assert result.metrics[f"{subset}/{metric}"] == pytest.approx(value)
    for metric, value in hand_metrics(*pooled).items():
        assert result.metrics[f"pooled/{metric}"] == pytest.approx(value)
        assert result.metrics[metric] == pytest.approx((expected["att"][metric] + expected["rel"][metric]) / 2)
    assert result.correct.tolist() == flags
    assert task.items.subtypes == ["att"] * 20 + ["rel"] * 20
    assert item_texts(task, 0) == ["walking elephant", "jumping elephant", "strolling elephant"]
    assert prepare("hard-positives-replace", 5, tmp_path).items.subtypes == ["att"] * 5 + ["rel"] * 5


def swap_rows(n_rows: int = 6) -> tuple[list[dict], list[dict]]:
    """SWAP in ARO VG-Attribution format: data/ has (c, c_n), swapped_data/ (c_p, the same c_n)."""
    objects = [("cat", "door"), ("dog", "ball"), ("man", "hat"), ("bird", "tree"), ("car", "road"), ("cup", "table")]
    attributes = [("crouched", "open"), ("brown", "red"), ("tall", "black"), ("small", "green"), ("white", "wet"),
                  ("empty", "wooden")]
    original, positive = [], []
    for k in range(n_rows):
        (o1, o2), (a1, a2) = objects[k % 6], attributes[k % 6]
        row = {"image_id": str(k), "image_path": f"{k % 3}.png", "bbox_x": 30, "bbox_y": 20, "bbox_w": 20,
               "bbox_h": 12 + k, "attributes": [a1, a2], "false_caption": f"the {a2} {o1} and the {a1} {o2}"}
        original.append({**row, "true_caption": f"the {a1} {o1} and the {a2} {o2}"})
        positive.append({**row, "true_caption": f"the {a2} {o2} and the {a1} {o1}"})
    return original, positive


def write_swap(root: Path, original: list[dict], positive: list[dict]) -> Path:
    folder = root / hp.FOLDER
    for kind, data in ((hp.ORIGINAL, original), (hp.POSITIVE, positive)):
        (folder / kind).mkdir(parents=True, exist_ok=True)
        (folder / kind / "visual_genome_attribution.json").write_text(json.dumps(data))
    for k in range(3):
        write_image(folder / hp.SWAP_IMAGES / f"{k}.png", seed=k, size=(80, 60), square=(30, 20, 20, 12))
    return folder


def test_swap_crops_like_aro_and_matches_hand_recomputation(tmp_path, loaded):
    original, positive = swap_rows()
    folder = write_swap(tmp_path, original, positive)
    task, result = evaluate("hard-positives-swap", tmp_path, loaded)
    first = task.images[0].load()
    assert first.size == (20, 12) and set(first.getdata()) == {RED}
    crops = [Image.open(folder / hp.SWAP_IMAGES / o["image_path"]).convert("RGB").crop(
        (o["bbox_x"], o["bbox_y"], o["bbox_x"] + o["bbox_w"], o["bbox_y"] + o["bbox_h"])) for o in original]
    c, n, p = hand_scores(loaded, [(crop, [o["true_caption"], o["false_caption"], h["true_caption"]])
                                   for crop, o, h in zip(crops, original, positive)])
    for metric, value in hand_metrics(c, n, p).items():
        assert result.metrics[f"att/{metric}"] == pytest.approx(value)
        assert result.metrics[metric] == pytest.approx(value) == result.metrics[f"pooled/{metric}"]
    assert result.correct.tolist() == [a > b for a, b in zip(c, n)]


def test_rows_that_are_not_aligned_are_refused(tmp_path):
    original, positive = swap_rows()
    positive[3] = {**positive[3], "false_caption": "a different negative"}
    write_swap(tmp_path, original, positive)
    with pytest.raises(ValueError, match="row 3 .* not row-aligned"):
        prepare("hard-positives-swap", None, tmp_path)
    assert prepare("hard-positives-swap", 3, tmp_path).n_items == 3  # the prefix before it is fine


def test_a_copy_that_is_not_the_pinned_file_is_refused(tmp_path):
    folder = replace_root(tmp_path)
    with pytest.raises(DataMissing, match="SHA-256 mismatch.*pinned by the lab"):
        prepare("hard-positives-replace", None, tmp_path)
    assert (folder / hp.ORIGINAL / FILES["att"]).exists()  # not downloaded by the lab: left for the user


def test_missing_files_and_images_list_the_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPLAB_OFFLINE", "1")
    folder = tmp_path / hp.FOLDER
    with pytest.raises(DataMissing) as missing:
        prepare("hard-positives-replace", None, tmp_path)
    message = str(missing.value)
    assert str(folder) in message and hp.RAW + "data/" + FILES["att"] in message
    assert "swapped_data/" + FILES["att"] in message and "VG_100K_2" in message and "  3. " in message
    unpinned(monkeypatch)
    replace_root(tmp_path, with_images=False)
    with pytest.raises(DataMissing) as no_images:
        prepare("hard-positives-replace", None, tmp_path)
    first = rows(folder, hp.ORIGINAL, FILES["att"])[0]["image_path"]
    assert str(folder / first) in str(no_images.value) and "images2.zip" in str(no_images.value)


@pytest.mark.system
def test_download_checks_the_pinned_sha256(tmp_path, monkeypatch):
    """Served at the pinned commit's URL: a file with the pinned SHA-256 is kept, another is deleted."""
    names = [f"{kind}/{FILES['att']}" for kind in (hp.ORIGINAL, hp.POSITIVE)]
    good = hashlib.sha256((SAMPLE / names[0]).read_bytes()).hexdigest()
    monkeypatch.setattr(hp, "PINNED_SHA256", {names[0]: good, names[1]: "0" * 64})
    go_online(monkeypatch)
    with serve(SAMPLE) as url:
        monkeypatch.setattr(hp, "RAW", url)
        with pytest.raises(DataMissing, match="SHA-256 mismatch"):
            hp.aligned_rows("hard-positives-replace", tmp_path, FILES["att"], None)
    assert (tmp_path / names[0]).read_bytes() == (SAMPLE / names[0]).read_bytes()
    assert not (tmp_path / names[1]).exists()
