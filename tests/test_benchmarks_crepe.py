"""CREPE productivity: the authors' rank rule (the caption's position in a descending argsort over the caption and
its hard negatives; R@k = rank < k; a tie goes to the caption) on hand-made scores, the loader on files laid out
as their zip unpacks (``prod_hard_negatives/<type>/prod_vg_hard_negs_<type>_complexity_<k>.csv``, columns
image_id, x, y, width, height, caption, hard_negs as a list literal; Visual Genome images in VG_100K or
VG_100K_2, cropped to the row's box), missing data, and a tiny model against their loop.

The CSVs are inside a zip in their repository (not readable here): the rows below follow the columns their
``BaseCsvDataset`` reads; they are not copied rows."""
from __future__ import annotations

import ast
import csv
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import crepe, prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.sugarcrepe_sample import block_image

COLUMNS = ["image_id", "x", "y", "width", "height", "caption", "hard_negs"]


def rows_for(complexity: int) -> list[dict]:
    """Two images per complexity; the second row of every odd complexity has one negative fewer."""
    rows = []
    for n in range(2):
        image_id = 1000 * complexity + n
        caption = f"a dog on a red mat near {complexity} cups"
        negatives = [f"a dog on a blue mat near {complexity} cups", f"a cat on a red mat near {complexity} cups",
                     f"a dog not on a red mat near {complexity} cups"]
        if complexity % 2 and n == 1:
            negatives = negatives[:2]
        rows.append({"image_id": image_id, "x": 4 + n, "y": 2, "width": 40, "height": 30, "caption": caption,
                     "hard_negs": str(negatives)})
    return rows


def write_root(root: Path, negative_type: str = "swap") -> Path:
    """The nine complexity files and one 64x48 image per row (odd ids in VG_100K_2, as VG splits them)."""
    folder = root / crepe.FOLDER
    for name in crepe.VG_FOLDERS:
        (folder / name).mkdir(parents=True, exist_ok=True)
    for k in crepe.COMPLEXITIES:
        path = crepe.csv_path(folder, negative_type, k)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS)
            writer.writeheader()
            for row in rows_for(k):
                writer.writerow(row)
                block_image(folder / crepe.VG_FOLDERS[row["image_id"] % 2] / f"{row['image_id']}.jpg",
                            seed=row["image_id"])
    return root


def test_the_rank_counts_negatives_strictly_above_the_caption():
    # (N, 4 candidates, 1): caption first; the last row has 3 real candidates and one padding column
    scores = torch.tensor([[0.30, 0.20, 0.10, 0.00],    # rank 0
                           [0.30, 0.30, 0.10, 0.00],    # a tie with a negative: rank 0 (their argsort order)
                           [0.20, 0.30, 0.25, 0.10],    # two above: rank 2
                           [0.20, 0.10, 0.10, 0.90],    # the 0.90 is padding: never read, rank 0
                           [0.10, 0.20, 0.30, 0.40]])[:, :, None]  # last of four: rank 3
    candidates = torch.tensor([4, 4, 4, 3, 4])
    assert crepe.ground_truth_rank(scores, candidates).tolist() == [0, 0, 2, 0, 3]
    assert crepe.crepe_correct(scores, candidates).tolist() == [True, True, False, True, False]
    metrics = crepe.crepe_metrics(scores, candidates, ["complexity_4"] * 2 + ["complexity_5"] * 3)
    assert metrics["R@1"] == 0.6 and metrics["R@3"] == 0.8 and metrics["R@5"] == 1.0
    assert metrics["complexity_4/R@1"] == 1.0 and metrics["complexity_5/R@1"] == pytest.approx(1 / 3)
    assert metrics["complexity_5/R@3"] == pytest.approx(2 / 3)
    # their rule on the same rows: torch.argsort(descending) on CPU orders these short rows' ties by position
    ranks = [int(torch.where(torch.argsort(s[:n, 0], descending=True) == 0)[0]) for s, n in zip(scores, candidates)]
    assert ranks == [0, 0, 2, 0, 3]


def test_the_files_load_with_crops_padding_and_both_image_folders(tmp_path):
    root = write_root(tmp_path)
    task = prepare("crepe-prod-swap", None, root)
    assert task.n_items == 18 and tuple(task.text_index.shape) == (18, 4)
    assert task.items.ids[:3] == ["complexity_4/0", "complexity_4/1", "complexity_5/0"]
    assert task.items.subtypes[::2] == [f"complexity_{k}" for k in crepe.COMPLEXITIES]
    first, second = task.images[task.image_index[0, 0]], task.images[task.image_index[1, 0]]
    assert first.path.endswith("crepe/VG_100K/4000.jpg") and first.box == (4.0, 2.0, 40.0, 30.0)
    assert second.path.endswith("crepe/VG_100K_2/4001.jpg") and second.box == (5.0, 2.0, 40.0, 30.0)
    texts = [task.texts[i] for i in task.text_index[3].tolist()]  # complexity 5, the row with two negatives
    assert texts == ["a dog on a red mat near 5 cups", "a dog on a blue mat near 5 cups",
                     "a cat on a red mat near 5 cups", "a cat on a red mat near 5 cups"]  # padded with its last
    assert task.metrics.labels[0].tolist()[:4] == [4, 4, 4, 3]
    limited = prepare("crepe-prod-swap", 1, root)
    assert limited.n_items == 9 and limited.items.ids[1] == "complexity_5/0"


def test_missing_data_and_bad_files_are_named(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("crepe-prod-negate", None, tmp_path)
    message = str(error.value)
    assert crepe.ZIP_URL in message and "images.zip" in message and "VG_100K_2" in message
    assert "prod_vg_hard_negs_negate_complexity_4.csv must exist (9 of the 9 files are missing)" in message
    root = write_root(tmp_path / "damaged", "atom")
    (root / "crepe/VG_100K_2/7001.jpg").unlink()
    with pytest.raises(DataMissing, match=r"VG_100K/7001.jpg must exist \(1 of the 18"):
        prepare("crepe-prod-atom", None, root)
    path = crepe.csv_path(root / "crepe", "atom", 6)
    path.write_text(path.read_text().replace("['a dog on a blue mat near 6 cups'", "[__import__('os')"))
    with pytest.raises(ValueError, match="row 0's hard_negs is not a non-empty list literal"):
        prepare("crepe-prod-atom", None, root)
    path.write_text("image_id,caption\n1,a dog\n")
    with pytest.raises(ValueError, match="has no column x, y, width, height, hard_negs"):
        prepare("crepe-prod-atom", None, root)


def test_a_tiny_model_scores_as_the_authors_loop(tmp_path, tiny_checkpoints):
    root = write_root(tmp_path)
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare("crepe-prod-swap", None, root), StreamEncoder(loaded, batch_size=8, workers=0),
                      intervals=True)
    folder = root / "crepe"
    ranks: dict[int, list[int]] = {}
    with torch.no_grad():
        for k in crepe.COMPLEXITIES:
            for row in rows_for(k):
                image = Image.open(folder / crepe.VG_FOLDERS[row["image_id"] % 2] / f"{row['image_id']}.jpg")
                x, y, w, h = row["x"], row["y"], row["width"], row["height"]
                crop = image.convert("RGB").crop((x, y, x + w, y + h))  # torchvision's TF.crop(image, y, x, h, w)
                i = F.normalize(loaded.model.encode_image(loaded.preprocess(crop)[None]), dim=-1)
                texts = [row["caption"], *ast.literal_eval(row["hard_negs"])]
                t = F.normalize(loaded.model.encode_text(loaded.tokenizer(texts)), dim=-1)
                order = torch.argsort(i @ t.T, descending=True)
                ranks.setdefault(k, []).append(int(torch.where(order == 0)[1]))
    flat = [rank for k in crepe.COMPLEXITIES for rank in ranks[k]]
    assert result.correct.tolist() == [rank == 0 for rank in flat]
    for at in crepe.RECALL_AT:
        assert result.metrics[f"R@{at}"] == pytest.approx(sum(rank < at for rank in flat) / 18)
    assert result.metrics["complexity_7/R@1"] == pytest.approx(sum(rank == 0 for rank in ranks[7]) / 2)
    assert set(result.intervals) == set(result.metrics)
    for key, (low, high) in result.intervals.items():
        assert low <= result.metrics[key] + 1e-12 and result.metrics[key] - 1e-12 <= high, key
