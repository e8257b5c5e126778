"""Bad data behind training and benchmarks: a training manifest's rows and files, a benchmark's images and texts.

A training manifest is a batch: rows that cannot be trained on (a damaged,
missing or oversized image, an empty or over-long caption) are skipped and
counted, while a file that cannot be read as records at all is refused with
its file and line, before any job exists. A benchmark is not skipped around: a
damaged image or an empty text fails the evaluation with the file or item
named (a result over fewer items would not compare with anyone's), and a
20,000-character text is cut at the model's context length by its tokenizer,
as every published CLIP evaluation does.
"""
from __future__ import annotations

import json
import re

import pytest

from backend.benchmarks import prepare, run_task
from backend.benchmarks.stream import BenchmarkImageError, StreamEncoder
from backend.benchmarks.task import ImageFile
from backend.cli import main
from backend.core.tabular import RecordFileError
from backend.models.encoder import Encoder
from backend.models.loading import load_model
from backend.train.config import TrainConfig
from backend.train.data import read_manifest
from tests.support.bad_files import BAD_IMAGES, good_image, malformed_record_files, write_bad_images, write_csv
from tests.support.sugarcrepe_sample import SAMPLE, pin_checksums, write_sugarcrepe_root

LONG = "a brown dog on the green grass " * 646  # 20,026 characters


def test_manifest_rows_that_cannot_be_trained_on_are_skipped_and_counted(tmp_path):
    images = write_bad_images(tmp_path / "images")
    good = good_image(tmp_path / "images" / "good.jpg").name
    row = {"image": f"images/{good}", "caption": "a brown dog on the grass", "negatives": "", "negative_image": ""}
    rows = [row, *({**row, "image": f"images/{name}"} for name in images),
            {**row, "image": "images/gone.jpg"}, {**row, "caption": "  "}, {**row, "caption": LONG},
            {**row, "negatives": json.dumps(["a green dog", LONG])}, {**row, "negatives": "[not json"},
            {**row, "negative_image": "images/truncated.jpg"}]
    kept, skipped = read_manifest(write_csv(tmp_path / "train.csv", rows))
    assert [(r["caption"], r["image"]) for r in kept] == [(row["caption"], str(tmp_path / "images" / good))]
    assert skipped == {"unreadable image": len(BAD_IMAGES), "missing image": 1, "empty caption": 1,
                       "caption over 1,000 characters": 1, "a negative over 1,000 characters": 1,
                       "malformed negatives, positives or paths": 1, "unreadable negative image": 1}


def test_malformed_manifests_are_named_with_their_line_and_refused_before_a_job(tmp_path):
    good_image(tmp_path / "good.jpg")
    for path, message in malformed_record_files(tmp_path, {"image": "good.jpg", "caption": "a brown dog"}):
        with pytest.raises(RecordFileError, match=f"Manifest {message}"):
            read_manifest(path)
        with pytest.raises(ValueError, match=f"Invalid training config: Manifest {message}"):
            TrainConfig.from_dict({"base_model": "toyworld", "data": "manifest", "manifest": str(path)})


@pytest.fixture
def sugarcrepe(tmp_path, monkeypatch):
    """A SugarCrepe root from the committed sample; `write(edit)` lays it out after `edit(annotations)`."""
    def write(edit=lambda annotations: None):
        annotations = {path.stem: json.loads(path.read_text()) for path in sorted(SAMPLE.glob("*.json"))}
        edit(annotations)
        root = write_sugarcrepe_root(tmp_path / "root", annotations)
        pin_checksums(root, monkeypatch)
        return root, annotations
    return write


def evaluate(root, spec, *extra):
    return main(["evaluate", "--model", spec, "--benchmarks", "sugarcrepe", "--limit", "1", "--no-store",
                 "--data-root", str(root), *extra])


@pytest.mark.parametrize("name", ["truncated.jpg", "notes.png", "bomb.png"])
def test_a_damaged_benchmark_image_fails_the_evaluation_with_the_file_named(sugarcrepe, tiny_checkpoints, capsys,
                                                                           tmp_path, name):
    root, annotations = sugarcrepe()
    target = root / "coco" / "val2017" / annotations["swap_att"]["0"]["filename"]
    target.write_bytes(write_bad_images(tmp_path / "bad")[name].read_bytes())
    assert evaluate(root, tiny_checkpoints.dir_spec) == 2
    error = capsys.readouterr().err
    assert re.search(f"error: cannot read image {re.escape(str(target))}: {BAD_IMAGES[name][1]}", error), error


@pytest.mark.system
def test_a_worker_that_cannot_read_an_image_reports_it_in_one_line(tiny_checkpoints, tmp_path):
    """In a DataLoader worker the error arrives wrapped in the worker's traceback; the message is its last line."""
    bad = write_bad_images(tmp_path)["truncated.jpg"]
    encoder = StreamEncoder(load_model(tiny_checkpoints.dir_spec, device="cpu"), batch_size=1, workers=1)
    with pytest.raises(BenchmarkImageError) as error:
        encoder.images([ImageFile(str(good_image(tmp_path / "good.png"))), ImageFile(str(bad))])
    assert re.fullmatch(f"cannot read image {re.escape(str(bad))}: {BAD_IMAGES['truncated.jpg'][1]}.*",
                        str(error.value))


def test_an_empty_benchmark_text_fails_with_the_item_named(sugarcrepe, tiny_checkpoints, capsys):
    root, _ = sugarcrepe(lambda annotations: annotations["swap_att"]["0"].update(negative_caption=" "))
    assert evaluate(root, tiny_checkpoints.dir_spec) == 2
    assert "error: sugarcrepe: 1 item(s) have an empty text (first: item swap_att/0)" in capsys.readouterr().err


def test_a_20000_character_benchmark_text_is_cut_at_the_context_length(sugarcrepe, tiny_checkpoints, capsys):
    root, annotations = sugarcrepe(lambda annotations: annotations["swap_att"]["0"].update(caption=LONG))
    assert evaluate(root, tiny_checkpoints.dir_spec, "--json") == 0
    assert "sugarcrepe" in json.loads(capsys.readouterr().out)["results"][0]["benchmark"]
    loaded = load_model(tiny_checkpoints.dir_spec, device="cpu")
    task = prepare("sugarcrepe", 1, root)
    position = task.items.ids.index("swap_att/0")
    scores = run_task(task, StreamEncoder(loaded)).scores
    image = ImageFile(str(root / "coco" / "val2017" / annotations["swap_att"]["0"]["filename"])).load()
    cut = Encoder(loaded).score([image], [LONG[:200]]).cosine[0, 0]  # 200 characters fill the 16 tokens too
    assert scores[position, 0, 0] == pytest.approx(float(cut), abs=1e-6)
