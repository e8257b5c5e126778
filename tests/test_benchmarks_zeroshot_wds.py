"""The VTAB sets of the zero-shot suite in clip_benchmark's webdataset form, on fixtures written as clip_benchmark's
own exporter writes them (``clip_benchmark.webdataset_builder.convert_dataset``, the tool that made the
``clip-benchmark/wds_*`` hub repos: webdataset's ShardWriter, keys ``s%07d``, lossless webp, an int ``cls``,
``classnames.txt``, ``zeroshot_classification_templates.txt``, ``test/nshards.txt``; its image encoder
``PIL_to_bytes`` is used as is, its DataLoader of 8 worker processes is not), read back here and by
clip_benchmark's builder, which must agree item for item."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from backend.benchmarks import get_benchmark, prepare
from backend.benchmarks.data import DataMissing
from backend.benchmarks.zeroshot_wds import WDS_SETS

CLASSES = ["airplane", "airport", "baseball diamond"]
TEMPLATES = ["a satellite photo of {c}.", "an aerial photo of the {c}."]
LABELS = [2, 0, 1, 0, 2]


def pixels(n: int) -> Image.Image:
    rng = np.random.default_rng(n)
    return Image.fromarray(rng.integers(0, 256, size=(12 + n, 10, 3), dtype=np.uint8))


def export(folder: Path, labels=LABELS) -> None:
    """convert_dataset's output for (pixels(n), label) pairs, two samples a shard (so three shards)."""
    import webdataset
    from clip_benchmark.webdataset_builder import PIL_to_bytes

    (folder / "test").mkdir(parents=True)
    (folder / "classnames.txt").write_text("\n".join(CLASSES) + "\n")
    (folder / "zeroshot_classification_templates.txt").write_text("\n".join(TEMPLATES) + "\n")
    sink = webdataset.ShardWriter(str(folder / "test" / "%d.tar"), maxcount=2, verbose=0)
    for index, label in enumerate(labels):
        sink.write({"__key__": f"s{index:07d}", "webp": PIL_to_bytes("webp")(pixels(index)), "cls": label})
    shards = sink.shard
    sink.close()
    (folder / "test" / "nshards.txt").write_text(f"{shards}\n")


@pytest.mark.filterwarnings("ignore:.*shardshuffle")  # the builder's own pipeline, iterated here to compare
def test_the_shards_read_as_the_builder_reads_them(tmp_path):
    from clip_benchmark.datasets.builder import build_dataset

    export(tmp_path / "resisc45")
    assert (tmp_path / "resisc45" / "test" / "nshards.txt").read_text().strip() == "3"
    task = prepare("resisc45", root=tmp_path)
    assert task.metrics.labels[0].tolist() == LABELS
    builder = list(build_dataset("wds/vtab/resisc45", root=str(tmp_path / "resisc45"), split="test"))
    assert [label for _, label in builder] == LABELS
    for ours, (theirs, _), n in zip(task.images, builder, range(len(LABELS)), strict=True):
        assert np.array_equal(np.asarray(ours.load()), np.asarray(theirs.convert("RGB")))
        assert np.array_equal(np.asarray(ours.load()), np.asarray(pixels(n)))  # lossless webp
    per_class = int(task.text_pool[0].count_nonzero())
    assert task.texts[:per_class] == ["a satellite photo of airplane.", "an aerial photo of the airplane."]
    assert task.texts[2 * per_class] == "a satellite photo of baseball diamond."


def test_limit_keeps_the_first_images_of_every_class(tmp_path):
    export(tmp_path / "svhn")
    task = prepare("svhn", limit=1, root=tmp_path)
    assert task.metrics.labels[0].tolist() == [2, 0, 1]
    assert [image.key.rsplit("#", 1)[1] for image in task.images] == ["s0000000", "s0000001", "s0000002"]


@pytest.mark.parametrize("entry", WDS_SETS, ids=lambda entry: entry.name)
def test_missing_data_gives_the_download_command(entry, tmp_path):
    with pytest.raises(DataMissing) as raised:
        get_benchmark(entry.name).build(None, tmp_path)
    message = str(raised.value)
    folder = tmp_path / entry.name
    assert f"{folder / 'test' / 'nshards.txt'} is missing" in message
    command = f"hf download {entry.hub_repo} --repo-type dataset --include 'test/*' '*.txt' --local-dir {folder}"
    assert command in message
    assert not folder.exists()


def test_labels_beyond_the_class_names_are_refused(tmp_path):
    export(tmp_path / "pcam", labels=[0, 3])
    with pytest.raises(DataMissing, match="labels outside clip_benchmark's 3 classes"):
        get_benchmark("pcam").build(None, tmp_path)


def test_a_folder_without_class_names_is_refused(tmp_path):
    export(tmp_path / "clevr-count")
    (tmp_path / "clevr-count" / "classnames.txt").unlink()
    with pytest.raises(DataMissing, match="reading it failed"):
        get_benchmark("clevr-count").build(None, tmp_path)
