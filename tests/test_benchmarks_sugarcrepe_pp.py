"""SugarCrepe++ (ITT and TOT): the authors' rules on hand-made scores with ties, the loader on real rows in the
authors' file layout (pinned checksums, missing data), and a tiny open_clip model checked against a hand
computation of the authors' loop."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import prepare, run_task, sugarcrepe_pp
from backend.benchmarks.blind import not_applicable
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.core.files import sha256_of
from backend.models.loading import load_model
from tests.support.sugarcrepe_sample import block_image

SAMPLE = Path(__file__).resolve().parent / "data" / "sugarcrepe-pp-sample"


def write_root(root: Path) -> Path:
    """``<root>/sugarcrepe-pp/<subset>.json`` (the sample) and a generated image per COCO file name."""
    shutil.copytree(SAMPLE, root / sugarcrepe_pp.FOLDER, ignore=shutil.ignore_patterns("README.md"))
    images = root / "coco" / "val2017"
    images.mkdir(parents=True)
    for subset in sugarcrepe_pp.SUBSETS:
        for row in json.loads((SAMPLE / f"{subset}.json").read_text()):
            block_image(images / row["filename"], seed=int(row["filename"].split(".")[0]))
    return root


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """The sample with its own checksums pinned, so ``ensure`` checks them as it checks the real ones."""
    root = write_root(tmp_path)
    folder = root / sugarcrepe_pp.FOLDER
    monkeypatch.setattr(sugarcrepe_pp, "SUBSETS", {s: sha256_of(folder / f"{s}.json") for s in sugarcrepe_pp.SUBSETS})
    return root


def scores_itt(rows: list[tuple[float, float, float]]) -> torch.Tensor:
    return torch.tensor(rows)[:, :, None]


def test_itt_needs_both_positives_strictly_above_the_negative():
    scores = scores_itt([(0.30, 0.29, 0.20),   # both above: right
                         (0.30, 0.19, 0.20),   # P2 below: wrong (img_p1 right)
                         (0.20, 0.30, 0.20),   # P1 ties N: wrong (img_p2 right)
                         (0.25, 0.25, 0.25)])  # all tie: wrong everywhere
    subsets = ["swap_obj", "swap_obj", "replace_att", "replace_att"]
    metrics = sugarcrepe_pp.itt_metrics(scores, subsets)
    assert sugarcrepe_pp.itt_correct(scores).tolist() == [True, False, False, False]
    assert metrics["swap_obj/itt"] == 0.5 and metrics["replace_att/itt"] == 0.0
    assert metrics["itt"] == 0.25 and metrics["pooled/itt"] == 0.25  # equal subset sizes: mean = pooled
    assert metrics["swap_obj/img_p1"] == 1.0 and metrics["replace_att/img_p1"] == 0.0
    assert metrics["replace_att/img_p2"] == 0.5 and metrics["img_p2"] == (0.5 + 0.5) / 2


def test_tot_needs_the_positives_closer_to_each_other_than_to_the_negative():
    def item(p1p2: float, p1n: float, p2n: float) -> list[list[float]]:
        return [[1.0, p1p2, p1n], [p1p2, 1.0, p2n], [p1n, p2n, 1.0]]

    scores = torch.tensor([item(0.9, 0.8, 0.7),   # right
                           item(0.9, 0.9, 0.7),   # tie with cos(P1, N): wrong
                           item(0.8, 0.7, 0.85),  # P2 closer to N: wrong
                           item(0.6, 0.5, 0.5)])  # right
    assert sugarcrepe_pp.tot_correct(scores).tolist() == [True, False, False, True]
    metrics = sugarcrepe_pp.tot_metrics(scores, ["swap_att"] * 3 + ["replace_rel"])
    assert metrics["swap_att/tot"] == pytest.approx(1 / 3) and metrics["replace_rel/tot"] == 1.0
    assert metrics["tot"] == pytest.approx((1 / 3 + 1) / 2) and metrics["pooled/tot"] == 0.5


def test_missing_files_name_the_pinned_url_and_the_manual_steps(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare(sugarcrepe_pp.NAME, None, tmp_path)
    message = str(error.value)
    assert f"{sugarcrepe_pp.SOURCE}/replace_obj.json" in message and "offline mode" in message
    assert "git clone https://github.com/Sri-Harsha/scpp" in message and "Aman-J/SugarCrepe_pp" in message


def test_the_sample_is_not_the_pinned_full_file(tmp_path):
    with pytest.raises(DataMissing, match="SHA-256 mismatch .*replace_obj.json"):
        prepare(sugarcrepe_pp.TOT, None, write_root(tmp_path))


def test_a_missing_coco_image_is_named(root):
    first = json.loads((SAMPLE / "replace_obj.json").read_text())[0]["filename"]
    (root / "coco" / "val2017" / first).unlink()
    with pytest.raises(DataMissing, match=f"missing \\(first: {first}\\)"):
        prepare(sugarcrepe_pp.NAME, None, root)
    assert prepare(sugarcrepe_pp.TOT, None, root).n_items == 20  # the text-only task needs no image


def test_items_follow_the_authors_files(root):
    itt = prepare(sugarcrepe_pp.NAME, 2, root)
    tot = prepare(sugarcrepe_pp.TOT, 2, root)
    assert itt.n_items == tot.n_items == 10 and itt.items.ids[:2] == ["replace_obj/0", "replace_obj/1"]
    row = json.loads((SAMPLE / "swap_obj.json").read_text())[1]
    n = itt.items.ids.index(f"swap_obj/{row['id']}")
    assert [itt.texts[k] for k in itt.text_index[n]] == [row["caption"], row["caption2"], row["negative_caption"]]
    assert tot.images == [] and tot.image_index.shape == (10, 0) and tot.text_only
    assert "texts with texts" in not_applicable(tot) and not_applicable(itt) is None


def test_a_tiny_model_scores_as_the_authors_loop_does(root, tiny_checkpoints):
    """The authors' loop per row: encode the image and the three captions, normalised, compare cosines."""
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    encoder = StreamEncoder(loaded, batch_size=4, workers=0)
    itt = run_task(prepare(sugarcrepe_pp.NAME, None, root), encoder, intervals=True)
    tot = run_task(prepare(sugarcrepe_pp.TOT, None, root), encoder)
    expected_itt, expected_tot = [], []
    with torch.no_grad():
        for subset in sugarcrepe_pp.SUBSETS:
            for row in json.loads((SAMPLE / f"{subset}.json").read_text()):
                image = Image.open(root / "coco" / "val2017" / row["filename"]).convert("RGB")
                i = F.normalize(loaded.model.encode_image(loaded.preprocess(image)[None]), dim=-1)[0]
                p1, p2, neg = F.normalize(loaded.model.encode_text(loaded.tokenizer(
                    [row["caption"], row["caption2"], row["negative_caption"]])), dim=-1)
                expected_itt.append(bool(i @ p1 > i @ neg and i @ p2 > i @ neg))
                expected_tot.append(bool(p1 @ p2 > p1 @ neg and p1 @ p2 > p2 @ neg))
    assert itt.correct.tolist() == expected_itt and tot.correct.tolist() == expected_tot
    assert itt.metrics["pooled/itt"] == pytest.approx(sum(expected_itt) / 20)
    assert tot.metrics["pooled/tot"] == pytest.approx(sum(expected_tot) / 20)
    low, high = itt.intervals["itt"]
    assert low <= itt.metrics["itt"] <= high
