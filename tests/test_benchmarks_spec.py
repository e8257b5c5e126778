"""SPEC: the authors' rule (``argmax == label``; the first maximum wins a tie) on hand-made scores both ways, the
loader on a subset laid out as their ``data.zip`` unpacks (``<subset>/image2text.json``: query image, candidate
texts, label; ``<subset>/text2image.json``: query text, candidate images, label; paths relative to the subset
folder, as ``spec/dataset.py`` joins them), missing data, and a tiny model against their CLIP wrapper's loop.

The files are on the Hub inside a 1.5 GB zip, not in the repository: the rows below follow the schema their
loader reads; they are not copied rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import prepare, run_task, spec
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.models.loading import load_model
from tests.support.sugarcrepe_sample import block_image

SIZES = ("small", "medium", "large")
OBJECTS = ("cat", "teapot", "bicycle", "lamp")


def subset_rows() -> tuple[list[dict], list[dict]]:
    """Per object, one image per size; I2T asks each image for its text, T2I each text for its image."""
    i2t, t2i = [], []
    for n, thing in enumerate(OBJECTS):
        images = [f"images/{n}_{size}.jpg" for size in SIZES]
        texts = [f"a {size} {thing} in the picture" for size in SIZES]
        for label in range(len(SIZES)):
            i2t.append({"query": images[label], "keys": texts, "label": label})
            t2i.append({"query": texts[label], "keys": images, "label": label})
    return i2t, t2i


def write_root(root: Path, nested: bool = False) -> Path:
    """``<root>/spec/absolute_size/`` (or ``<root>/spec/data/absolute_size/`` when ``nested``)."""
    folder = root / spec.FOLDER / ("data" if nested else "") / "absolute_size"
    (folder / "images").mkdir(parents=True)
    i2t, t2i = subset_rows()
    (folder / "image2text.json").write_text(json.dumps(i2t))
    (folder / "text2image.json").write_text(json.dumps(t2i))
    for seed, row in enumerate(i2t):
        block_image(folder / row["query"], seed=seed)
    return root


def test_argmax_is_the_label_and_the_first_maximum_wins_a_tie():
    # I2T: (N, 3 texts, 1 image); label 1 each time
    i2t = torch.tensor([[0.1, 0.3, 0.2],    # alone on top: right
                        [0.1, 0.3, 0.3],    # ties a later candidate: right (their argmax picks index 1)
                        [0.3, 0.3, 0.1],    # ties an earlier candidate: wrong
                        [0.4, 0.3, 0.1]])[:, :, None]
    labels = torch.tensor([1, 1, 1, 1])
    assert spec.spec_correct(i2t, labels, "i2t").tolist() == [True, True, False, False]
    assert spec.spec_metrics(i2t, labels, direction="i2t") == {"accuracy": 0.5}
    # T2I: (N, 1 text, 3 images) read along the images; label 2 beats nobody but ties image 0 -> wrong
    t2i = torch.tensor([[0.2, 0.1, 0.2], [0.1, 0.1, 0.2]])[:, None, :]
    assert spec.spec_correct(t2i, torch.tensor([2, 2]), "t2i").tolist() == [False, True]
    assert spec.spec_correct(t2i, torch.tensor([0, 0]), "t2i").tolist() == [True, False]


def test_both_files_load_in_their_layout(tmp_path):
    root = write_root(tmp_path)
    i2t, t2i = prepare("spec-absolute-size-i2t", None, root), prepare("spec-absolute-size-t2i", None, root)
    assert (i2t.n_items, tuple(i2t.text_index.shape), tuple(i2t.image_index.shape)) == (12, (12, 3), (12, 1))
    assert (t2i.n_items, tuple(t2i.text_index.shape), tuple(t2i.image_index.shape)) == (12, (12, 1), (12, 3))
    assert len(i2t.images) == len(t2i.images) == 12 and len(i2t.texts) == len(t2i.texts) == 12
    folder = root / "spec" / "absolute_size"
    assert i2t.images[i2t.image_index[4, 0]].path == str(folder / "images/1_medium.jpg")
    assert [t2i.images[i].path for i in t2i.image_index[4].tolist()] == [str(folder / f"images/1_{s}.jpg")
                                                                         for s in SIZES]
    assert t2i.texts[t2i.text_index[4, 0]] == "a medium teapot in the picture"
    # every query's right candidate alone on top: 100%; everything tied: only label 0 is right (a third)
    scores = torch.zeros(12, 3, 1)
    scores[torch.arange(12), torch.tensor([r["label"] for r in subset_rows()[0]]), 0] = 1.0
    assert i2t.metrics(scores) == {"accuracy": 1.0}
    assert t2i.metrics(torch.zeros(12, 1, 3)) == {"accuracy": pytest.approx(1 / 3)}
    assert i2t.items.correct(scores).all() and i2t.items.subtypes == ["absolute_size"] * 12


def test_the_zip_unpacked_into_its_own_data_folder_is_found(tmp_path):
    task = prepare("spec-absolute-size-i2t", 2, write_root(tmp_path, nested=True))
    assert task.n_items == 2 and "/spec/data/absolute_size/images/" in task.images[0].path


def test_missing_data_and_bad_files_are_named(tmp_path):
    with pytest.raises(DataMissing) as error:
        prepare("spec-count-t2i", None, tmp_path)
    message = str(error.value)
    assert f"--revision {spec.REVISION}" in message and spec.ZIP_SHA256 in message
    assert f"{tmp_path}/spec/count/image2text.json is missing" in message and "unzip -q data.zip" in message
    root = write_root(tmp_path / "damaged")
    (root / "spec/absolute_size/images/2_large.jpg").unlink()
    with pytest.raises(DataMissing, match=r"2_large\.jpg must exist"):
        prepare("spec-absolute-size-t2i", None, root)
    i2t, _ = subset_rows()
    i2t[5]["keys"] = i2t[5]["keys"][:2]
    (root / "spec/absolute_size/image2text.json").write_text(json.dumps(i2t))
    with pytest.raises(ValueError, match=r"different numbers of candidates \(\[2, 3\]\)"):
        prepare("spec-absolute-size-i2t", None, root)


def test_a_tiny_model_scores_as_the_authors_wrapper(tmp_path, tiny_checkpoints):
    root = write_root(tmp_path)
    folder = root / "spec" / "absolute_size"
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    encoder = StreamEncoder(loaded, batch_size=8, workers=0)
    i2t_rows, t2i_rows = subset_rows()

    def image(path: str) -> torch.Tensor:
        return F.normalize(loaded.model.encode_image(loaded.preprocess(Image.open(folder / path).convert("RGB"))[None]),
                           dim=-1)

    def text(texts: list[str]) -> torch.Tensor:
        return F.normalize(loaded.model.encode_text(loaded.tokenizer(texts)), dim=-1)

    with torch.no_grad():  # their loop: scores = einsum over candidates, argmax, compare with the label
        i2t_hits = [int((text(r["keys"]) @ image(r["query"])[0]).argmax()) == r["label"] for r in i2t_rows]
        t2i_hits = [int((torch.cat([image(k) for k in r["keys"]]) @ text([r["query"]])[0]).argmax()) == r["label"]
                    for r in t2i_rows]
    for direction, hits in (("i2t", i2t_hits), ("t2i", t2i_hits)):
        result = run_task(prepare(f"spec-absolute-size-{direction}", None, root), encoder, intervals=True)
        assert result.correct.tolist() == hits, direction
        assert result.metrics["accuracy"] == pytest.approx(sum(hits) / 12)
        low, high = result.intervals["accuracy"]
        assert low <= result.metrics["accuracy"] + 1e-12 and result.metrics["accuracy"] - 1e-12 <= high


def test_the_published_clip_row_names_registered_benchmarks():
    from backend.benchmarks import BENCHMARKS
    from backend.benchmarks.reference import PUBLISHED

    row = next(r for r in PUBLISHED if "SPEC" in r["source"])
    keys = [key for key in row if key.startswith("spec-")]
    assert len(keys) == 12 and all(key.rsplit("/", 1)[0] in BENCHMARKS for key in keys)
    assert row["spec-existence-i2t/accuracy"] == 0.57 and "ad982a4" in row["source"]
