"""ImageCoDe: the authors' rule (the first maximum over the 10 images is the target; static and video apart) on
hand-made scores with ties, the loader on real rows of their ``valid_data.json`` (tests/data/imagecode-sample)
with generated image sets named as theirs (``img<frame>.jpg``, ordered by the frame as an integer), pinned
checksum and missing data, and a tiny model against their loop (``torch.argmax`` per description)."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from backend.benchmarks import imagecode, prepare, run_task
from backend.benchmarks.data import DataMissing
from backend.benchmarks.stream import StreamEncoder
from backend.core.files import sha256_of
from backend.models.loading import load_model
from tests.support.sugarcrepe_sample import block_image

SAMPLE = Path(__file__).resolve().parent / "data" / "imagecode-sample" / "valid_data.json"
VIDEO_FRAMES = [0, 7, 14, 21, 28, 35, 42, 49, 56, 63]  # frame numbers: "img14" sorts before "img7" as text


def frame_numbers(image_set: str) -> list[int]:
    return VIDEO_FRAMES if imagecode.kind(image_set) == "video" else list(range(10))


def write_root(root: Path) -> Path:
    """The sample as ``<root>/imagecode/valid_data.json`` and 10 generated images per set under image-sets/."""
    folder = root / imagecode.NAME
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE, folder / imagecode.ANNOTATIONS.name)
    for n, image_set in enumerate(json.loads(SAMPLE.read_text())):
        directory = folder / imagecode.IMAGE_SETS / image_set
        directory.mkdir(parents=True)
        for k, frame in enumerate(frame_numbers(image_set)):
            block_image(directory / f"img{frame}.jpg", seed=100 * n + k)
    return root


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """The sample with its own checksum pinned, so ``ensure`` checks it as it checks the real file."""
    root = write_root(tmp_path)
    pinned = dataclasses.replace(imagecode.ANNOTATIONS, sha256=sha256_of(root / "imagecode" / "valid_data.json"))
    monkeypatch.setattr(imagecode, "ANNOTATIONS", pinned)
    return root


def test_the_first_maximum_is_the_answer_and_static_and_video_are_apart():
    base = [0.20] * 10
    rows = [dict(enumerate(base)) | {3: 0.30},                 # target 3 alone on top: right
            dict(enumerate(base)) | {3: 0.30, 5: 0.30},        # target 3 ties a later image: right (first max)
            dict(enumerate(base)) | {3: 0.30, 1: 0.30},        # target 3 ties an earlier image: wrong
            dict(enumerate(base)) | {0: 0.25}]                 # target 9 below image 0: wrong
    scores = torch.tensor([[list(row.values())] for row in rows])
    targets = torch.tensor([3, 3, 3, 9])
    assert imagecode.imagecode_correct(scores, targets).tolist() == [True, True, False, False]
    metrics = imagecode.imagecode_metrics(scores, targets, ["static", "video", "video", "static"])
    assert metrics == {"accuracy": 0.5, "static/accuracy": 0.5, "video/accuracy": 0.5}
    all_tied = torch.full((1, 1, 10), 0.2)
    assert imagecode.imagecode_correct(all_tied, torch.tensor([0])).tolist() == [True]  # image 0 is the first max
    assert imagecode.imagecode_correct(all_tied, torch.tensor([4])).tolist() == [False]


def test_real_rows_load_with_images_in_frame_order(root):
    task = prepare("imagecode", None, root)
    sample = json.loads(SAMPLE.read_text())
    expected = [(image_set, int(target), text.strip()) for image_set, described in sample.items()
                for target, text in described.items()]
    assert task.n_items == 14 and len(task.images) == 50  # 5 sets x 10 images, each encoded once
    assert task.items.ids == [f"{s}/{t}" for s, t, _ in expected]
    assert task.items.subtypes == ["static"] * 3 + ["video"] * 8 + ["static"] * 3
    assert [task.texts[i] for i in task.text_index[:, 0].tolist()] == [text for _, _, text in expected]
    video = expected[3][0]  # the first video set: its images in frame order 0, 7, 14, ..., not as text sorts them
    paths = [Path(task.images[i].path).name for i in task.image_index[3].tolist()]
    assert paths == [f"img{frame}.jpg" for frame in VIDEO_FRAMES] and video in task.images[task.image_index[3, 0]].path
    scores = torch.zeros(14, 1, 10)
    scores[torch.arange(14), 0, torch.tensor([t for _, t, _ in expected])] = 1.0  # every target alone on top
    assert task.metrics(scores) == {"accuracy": 1.0, "static/accuracy": 1.0, "video/accuracy": 1.0}


def test_the_pinned_checksum_refuses_another_file(tmp_path):
    write_root(tmp_path)  # the sample is not the authors' full file: its checksum is not the pinned one
    with pytest.raises(DataMissing, match="SHA-256"):
        prepare("imagecode", None, tmp_path)


def test_missing_data_and_a_damaged_set_are_named(tmp_path, root):
    with pytest.raises(DataMissing) as error:
        prepare("imagecode", None, tmp_path / "empty")
    message = str(error.value)
    assert imagecode.ANNOTATIONS.url in message and "offline mode" in message
    assert "https://zenodo.org/record/6518944/files/image-sets.zip" in message and "unzip -q image-sets.zip" in message
    sets = root / "imagecode" / imagecode.IMAGE_SETS
    shutil.rmtree(sets / "MSR-VTT-videoTestVideo_video9787-shot1_0")
    with pytest.raises(DataMissing, match=r"video9787-shot1_0 must exist \(1 of the 5 image sets"):
        prepare("imagecode", None, root)
    (sets / "open-images-1815_f91d6f546e63f20d" / "img4.jpg").unlink()
    with pytest.raises(ValueError, match=r"holds 9 img<N>\.jpg files, not 10"):
        prepare("imagecode", 3, root)


def test_a_tiny_model_scores_as_the_authors_loop(root, tiny_checkpoints):
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu", precision="fp32")
    result = run_task(prepare("imagecode", None, root), StreamEncoder(loaded, batch_size=8, workers=0),
                      intervals=True)
    folder = root / "imagecode" / imagecode.IMAGE_SETS
    expected: dict[str, list[bool]] = {"static": [], "video": []}
    with torch.no_grad():
        for image_set, described in json.loads(SAMPLE.read_text()).items():
            files = sorted(folder.joinpath(image_set).glob("*.jpg"), key=lambda p: int(p.stem[3:]))  # theirs
            images = torch.stack([loaded.preprocess(Image.open(f).convert("RGB")) for f in files])
            image_emb = F.normalize(loaded.model.encode_image(images), dim=-1)
            for target, text in described.items():
                text_emb = F.normalize(loaded.model.encode_text(loaded.tokenizer([text.strip()])), dim=-1)
                expected[imagecode.kind(image_set)].append(int(torch.argmax(image_emb @ text_emb[0])) == int(target))
    flat = expected["static"][:3] + expected["video"] + expected["static"][3:]
    assert result.correct.tolist() == flat
    assert result.metrics["accuracy"] == pytest.approx(sum(flat) / 14)
    assert result.metrics["static/accuracy"] == pytest.approx(sum(expected["static"]) / 6)
    assert result.metrics["video/accuracy"] == pytest.approx(sum(expected["video"]) / 8)
    assert set(result.intervals) == set(result.metrics)
    for key, (low, high) in result.intervals.items():
        assert low <= result.metrics[key] + 1e-12 and result.metrics[key] - 1e-12 <= high, key
