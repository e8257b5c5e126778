"""COCO / Flickr30k Karpathy-test retrieval on files laid out as the BLIP annotation files and image folders
(the ones ARO-Order reads): recall@K both ways against a brute-force count, the pessimistic tie rule on a
hand-made matrix, missing data."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.object_centric_files import ROWS, write_root


def brute_force(sim: torch.Tensor, owner: list[int], k: int) -> tuple[float, float]:
    """Recall@k counted query by query, ties with a wrong item against the query."""
    t2i = []
    for j, image in enumerate(owner):
        wrong_above = sum(1 for i in range(sim.shape[0]) if i != image and sim[i, j] >= sim[image, j])
        t2i.append(1 + wrong_above <= k)
    i2t = []
    for i in range(sim.shape[0]):
        mine = [j for j, o in enumerate(owner) if o == i]
        best = max(sim[i, j] for j in mine)
        wrong_above = sum(1 for j, o in enumerate(owner) if o != i and sim[i, j] >= best)
        i2t.append(1 + wrong_above <= k)
    return sum(i2t) / len(i2t), sum(t2i) / len(t2i)


def test_a_tiny_model_recalls_as_counted_by_hand(tmp_path, tiny_checkpoints):
    root = write_root(tmp_path)
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    task = prepare("coco-retrieval", None, root)
    assert len(task.images) == 4 and len(task.texts) == 8 and task.texts[0] == ROWS[0]["caption"][0]
    result = run_task(task, StreamEncoder(loaded, workers=0))
    folder = root / "aro-coco-order"
    with torch.no_grad():
        images = F.normalize(loaded.model.encode_image(torch.stack(
            [loaded.preprocess(Image.open(folder / row["image"]).convert("RGB")) for row in ROWS])), dim=-1)
        texts = F.normalize(loaded.model.encode_text(loaded.tokenizer(task.texts)), dim=-1)
    sim = images @ texts.T
    owner = [n for n, row in enumerate(ROWS) for _ in row["caption"]]
    for k in (1, 5, 10):
        i2t, t2i = brute_force(sim, owner, k)
        assert result.metrics[f"i2t_R@{k}"] == pytest.approx(i2t) and result.metrics[f"t2i_R@{k}"] == pytest.approx(t2i)


def test_ties_with_a_wrong_item_count_against_the_query(tmp_path):
    task = prepare("coco-retrieval", 2, write_root(tmp_path))  # 2 images, captions 0-1 of image 0, 2-3 of image 1
    sim = torch.tensor([[0.5, 0.2, 0.5, 0.1],    # image 0: its best caption ties caption 2 (image 1's): rank 2
                        [0.3, 0.2, 0.6, 0.4]])  # image 1: rank 1
    metrics = task.metrics(sim)
    assert metrics["i2t_R@1"] == 0.5 and metrics["i2t_R@5"] == 1.0
    # text queries: caption 0: 0.5 vs 0.3 -> 1; caption 1: 0.2 ties 0.2 -> 2; caption 2: 0.6 vs 0.5 -> 1;
    # caption 3: 0.4 vs 0.1 -> 1
    assert metrics["t2i_R@1"] == 0.75 and metrics["t2i_R@5"] == 1.0


def test_missing_files_say_where_to_get_them(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("flickr30k-retrieval", None, tmp_path)
    message = str(error.value)
    assert "flickr30k_test.json" in message and "forms.illinois.edu" in message and "offline mode" in message
    root = write_root(tmp_path / "coco")
    (root / "aro-coco-order" / ROWS[2]["image"]).unlink()
    with pytest.raises(DataMissing, match="COCO_val2014_000000483108.jpg must exist"):
        prepare("coco-retrieval", None, root)
