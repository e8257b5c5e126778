"""Training data as WebDataset shards: the writer (manifest, TROHN-style negative images, a campaign export), the
stream's per-rank/per-worker split, equality with training from the manifest, and exact resume."""
import io
import json
import tarfile

import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from backend.annotate.export import ExportRow, save_dataset
from backend.models import checkpoint
from backend.train import shards
from backend.train.config import TrainConfig
from backend.train.loop import train
from backend.train.shard_writer import write_shards

COLOURS = [("red", (220, 30, 30)), ("blue", (30, 30, 220)), ("green", (30, 200, 30)), ("yellow", (230, 220, 20))]


def _manifest(folder, rows=12):
    """TROHN-style rows (each with a negative image and caption); every image has two captions (stored once)."""
    lines = ["image,caption,negatives,negative_image,negative_caption"]
    for i in range(rows):
        colour, rgb = COLOURS[(i // 2) % 4]
        other, other_rgb = COLOURS[(i // 2 + 1) % 4]
        shape = ("circle", "square")[i % 2]
        Image.new("RGB", (36 + 2 * (i // 2), 32), rgb).save(folder / f"{i // 2}.png")
        Image.new("RGB", (32, 30 + i), other_rgb).save(folder / f"neg{i}.png")
        lines.append(f"{i // 2}.png,a {colour} {shape},a {other} {shape},neg{i}.png,a {other} {shape}")
    (folder / "train.csv").write_text("\n".join(lines) + "\n")
    return folder / "train.csv"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shard-data")
    manifest = _manifest(folder)
    one = write_shards(manifest, folder / "one", shard_size=100)
    many = write_shards(manifest, folder / "many", shard_size=2)
    return folder, manifest, one, many


def _run(folder, name, **overrides) -> TrainConfig:
    values = dict(base_model="toyworld:random", loss="tripletclip", steps=6, batch_size=2, eval_every=2,
                  eval_benchmarks=[], warmup_steps=1, lr=1e-3, workers=0, output_dir=str(folder / "runs"), name=name)
    return TrainConfig.from_dict({**values, **overrides})


def _weights(config):
    return load_file(config.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_each_image_is_stored_once_with_its_rows(data):
    folder, _, one, many = data
    assert one["rows"] == many["rows"] == 12 and one["negative_images"]
    assert [s["rows"] for s in many["shards"]] == [2] * 6  # an image's two captions stay in one shard
    with tarfile.open(folder / "one" / one["shards"][0]["name"]) as tar:
        names = tar.getnames()
        rows = [row for name in names if name.endswith(".json")
                for row in json.loads(tar.extractfile(name).read())["rows"]]
    assert sum(name.endswith(".png") for name in names) == 6 + 12  # 6 images + 12 negative images, once each
    assert sorted(row["row"] for row in rows) == list(range(12))
    assert rows[0]["negatives"] and rows[0]["positives"] and set(rows[0]["typed"]) >= {"relation", "object"}


def test_training_from_one_shard_equals_training_from_the_manifest(data):
    folder, manifest, _, _ = data
    from_manifest = _run(folder, "manifest", data="manifest", manifest=str(manifest))
    from_shards = _run(folder, "shards", data="shards", shards=str(folder / "one"))
    train(from_manifest)
    train(from_shards)
    assert _same(_weights(from_manifest), _weights(from_shards))


def test_readers_split_the_shards_of_every_epoch(data):
    folder, _, _, many = data
    source = shards.ShardSource(folder / "many", preprocess=None)
    for epoch in range(3):
        dealt = [shards.epoch_shards(source, 0, epoch, shards.Layout(r, 2, w, 3, 2)) for r in range(2)
                 for w in range(3)]
        assert sorted(n for shard_list in dealt for n in shard_list) == list(range(6))  # each shard to one reader
    with pytest.raises(ValueError, match="write at least 8 shards"):
        shards.epoch_shards(source, 0, 0, shards.Layout(0, 2, 0, 4, 2))


def test_a_reader_resumed_at_any_batch_reads_what_it_would_have_read(data):
    folder = data[0]
    source = shards.ShardSource(folder / "many", preprocess=None)
    seen = {}
    for rank in range(2):
        straight = shards.reader_rows(source, 0, shards.Layout(rank, 2, 0, 1, 2), 0)
        seen[rank] = [[row["row"] for row in next(straight)] for _ in range(9)]  # three epochs of 3 steps
    for epoch in range(3):  # the two ranks read every row once per epoch, each its own shards
        rows = [r for rank in range(2) for batch in seen[rank][3 * epoch:3 * epoch + 3] for r in batch]
        assert sorted(rows) == list(range(12))
    layout, seen = shards.Layout(1, 2, 0, 1, 2), seen[1]
    for start in (1, 3, 7):
        assert [row["row"] for row in next(shards.reader_rows(source, 0, layout, start))] == seen[start]


@pytest.mark.system  # the loader's workers are processes
def test_a_run_streaming_many_shards_through_workers_resumes_exactly(data):
    folder = data[0]
    common = dict(data="shards", shards=str(folder / "many"), workers=2)
    straight, interrupted = _run(folder, "straight", **common), _run(folder, "interrupted", **common)
    train(straight)
    assert train(interrupted, stop_after=5) == {"stopped_at": 5}  # the last checkpoint is at step 4
    state = checkpoint.load_trainer_state(interrupted.run_dir / "checkpoints" / "last")
    assert state["stream"]["workers"] == 2 and len(state["stream"]["readers"]) == 2
    train(interrupted)
    assert _same(_weights(straight), _weights(interrupted))
    other = TrainConfig.from_dict({**interrupted.to_dict(), "workers": 1, "steps": 8})
    with pytest.raises(ValueError, match="resume it the same way"):
        train(other)


def test_a_campaign_export_becomes_shards_with_its_negative_images(tmp_path):
    rows = []
    for i, (colour, rgb) in enumerate(COLOURS):
        Image.new("RGB", (32, 32), rgb).save(tmp_path / f"{i}.png")
        Image.new("RGB", (32, 32), COLOURS[(i + 1) % 4][1]).save(tmp_path / f"n{i}.png")
        rows.append(ExportRow(tmp_path / f"{i}.png", f"a {colour} square", f"a {COLOURS[(i + 1) % 4][0]} square",
                              tmp_path / f"n{i}.png", "replace", "object", i))
    export = save_dataset(rows, tmp_path / "export")
    index = write_shards(export, tmp_path / "shards", shard_size=2)
    assert index["rows"] == 4 and index["negative_images"] and len(index["shards"]) == 2
    read = shards.ShardSource(tmp_path / "shards", preprocess=None).read(1)
    assert [row["caption"] for row in read] == ["a green square", "a yellow square"]
    assert read[0]["negatives"] == ["a yellow square"]
    assert Image.open(io.BytesIO(read[0]["negative_image"])).getpixel((0, 0)) == COLOURS[3][1]


def test_bad_shard_folders_and_sources_are_refused(tmp_path, data):
    with pytest.raises(ValueError, match="no index.json"):
        shards.ShardSource(tmp_path, preprocess=None)
    with pytest.raises(ValueError, match="not empty"):
        write_shards(data[1], data[0] / "one")
    with pytest.raises(ValueError, match="families"):
        shards.ShardSource(data[0] / "one", preprocess=None, families=["replace"])
