"""The VTAB sets of the zero-shot suite that clip_benchmark builds only through TensorFlow Datasets, in the
webdataset form clip_benchmark publishes instead (the ``clip-benchmark/wds_*`` dataset repos on the Hugging Face
hub, read by ``clip_benchmark.datasets.builder.build_wds_dataset`` as ``wds/<name>``).

RESISC45, SVHN, KITTI (closest vehicle distance), CLEVR (count, closest object distance) and PCam: clip_benchmark
1.6.2 builds them as ``vtab/...`` with tensorflow_datasets and task_adaptation (not installed: too heavy for the
Space), or as ``wds/vtab/...`` from a folder laid out as the hub repos are::

    <folder>/test/nshards.txt   <folder>/test/0.tar ... (webdataset shards: <key>.webp|png|jpg|jpeg + <key>.cls)
    <folder>/classnames.txt     <folder>/zeroshot_classification_templates.txt

The class names and templates are clip_benchmark's builder's (it reads those two files; the repos hold the VTAB
names clip_benchmark wrote, e.g. CLEVR's "3" .. "10" objects). The builder's dataset is an iterable that decodes
every image to reach a label, so the shards are read here instead: labels from the ``.cls`` members, each image
kept as its offset in its shard and decoded only when it is encoded (``task.LazyImage``), in shard order as the
builder yields them. Metrics, ``limit`` and ties as the rest of the suite (`backend.benchmarks.zeroshot_suite`).
"""
from __future__ import annotations

import functools
import io
import tarfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.task import Task
from backend.benchmarks.zeroshot import chance_levels, ensemble_task
from backend.benchmarks.zeroshot_suite import clip_benchmark_builder, first_per_class
from backend.core.images import rgb

IMAGE_EXTENSIONS = ("webp", "png", "jpg", "jpeg")  # the builder's to_tuple order: the first one present is taken


@dataclass(frozen=True)
class WdsSet:
    """One set: our name, clip_benchmark's ``wds/`` name, what it is."""

    name: str
    builder: str  # clip_benchmark's dataset name after "wds/"
    label: str
    size: str
    classes: int

    @property
    def hub_repo(self) -> str:
        return "clip-benchmark/wds_" + self.builder.replace("/", "-")


WDS_SETS = (
    WdsSet("resisc45", "vtab/resisc45", "RESISC45 (VTAB split)", "6,300 images, 45 classes", 45),
    WdsSet("svhn", "vtab/svhn", "SVHN (VTAB)", "26,032 images, 10 classes", 10),
    WdsSet("kitti-distance", "vtab/kitti_closest_vehicle_distance", "KITTI closest vehicle distance (VTAB)",
           "711 images, 4 classes", 4),
    WdsSet("clevr-count", "vtab/clevr_count_all", "CLEVR object count (VTAB)", "15,000 images, 8 classes", 8),
    WdsSet("clevr-distance", "vtab/clevr_closest_object_distance", "CLEVR closest object distance (VTAB)",
           "15,000 images, 6 classes", 6),
    WdsSet("pcam", "vtab/pcam", "PatchCamelyon (VTAB)", "32,768 images, 2 classes", 2),
)
BY_NAME = {entry.name: entry for entry in WDS_SETS}


@dataclass(frozen=True)
class ShardImage:
    """An image stored in a webdataset shard, read from its offset only when it is encoded."""

    shard: Path
    offset: int
    size: int
    key: str

    def load(self):
        from PIL import Image

        with open(self.shard, "rb") as file:
            file.seek(self.offset)
            return rgb(Image.open(io.BytesIO(file.read(self.size))))


def missing_steps(entry: WdsSet, folder: Path, reason: str) -> list[str]:
    """The exact steps to put a set where clip_benchmark's webdataset builder reads it."""
    return [reason, f"with network access: `hf download {entry.hub_repo} --repo-type dataset --include 'test/*' "
                    f"'*.txt' --local-dir {folder}` (or `git clone https://huggingface.co/datasets/{entry.hub_repo} "
                    f"{folder}` with git-lfs), so that {folder / 'test' / 'nshards.txt'} exists"]


def read_shards(shards: list[Path]) -> tuple[list[ShardImage], list[int]]:
    """Every sample of the shards in order: (its image, its label). A webdataset sample is the tar members that
    share a key: the member path up to the first dot of its file name."""
    images, labels = [], []
    for shard in shards:
        samples: dict[str, dict[str, tarfile.TarInfo]] = {}
        with tarfile.open(shard) as tar:
            members = [member for member in tar.getmembers() if member.isfile()]
            for member in members:
                directory, _, base = member.name.rpartition("/")
                stem, _, extension = base.partition(".")
                samples.setdefault(f"{directory}/{stem}" if directory else stem, {})[extension.lower()] = member
            for key, parts in samples.items():
                image = next((parts[ext] for ext in IMAGE_EXTENSIONS if ext in parts), None)
                if image is None or "cls" not in parts:
                    continue  # the builder's to_tuple drops a sample without an image or a label too
                label = tar.extractfile(parts["cls"])
                labels.append(int(label.read().decode().strip()) if label else -1)
                images.append(ShardImage(shard, image.offset_data, image.size, f"wds:{shard}#{key}"))
    return images, labels


def build_wds_set(name: str, limit: int | None, root: Path) -> Task:
    """The set's test split (the first ``limit`` images of each class) with clip_benchmark's classes and
    templates."""
    entry = BY_NAME[name]
    folder = root / name
    count_file = folder / "test" / "nshards.txt"
    if not count_file.is_file():
        raise DataMissing(steps_message(name, folder, missing_steps(entry, folder, f"{count_file} is missing")))
    build_dataset = clip_benchmark_builder(name)
    try:
        with warnings.catch_warnings():  # webdataset: "shardshuffle is None": the builder's pipeline is not iterated
            warnings.filterwarnings("ignore", message=".*shardshuffle")
            dataset = build_dataset(f"wds/{entry.builder}", root=str(folder), split="test", transform=None)
        shards = [folder / "test" / f"{n}.tar" for n in range(int(count_file.read_text()))]
        images, labels = read_shards(shards)
    except (OSError, ValueError, AssertionError, tarfile.TarError) as error:
        raise DataMissing(steps_message(name, folder, missing_steps(entry, folder, f"reading it failed: {error}"))
                          ) from None
    classes, templates = list(dataset.classes), [t.replace("{c}", "{}") for t in dataset.templates]
    if not images or min(labels) < 0 or max(labels) >= len(classes):
        raise DataMissing(steps_message(name, folder, missing_steps(
            entry, folder, f"its {len(images)} samples have labels outside clip_benchmark's {len(classes)} classes "
                           "(or there are none)")))
    rows = first_per_class(labels, limit)
    return ensemble_task([images[n] for n in rows], [labels[n] for n in rows], classes, templates)


for _entry in WDS_SETS:
    register(Benchmark(
        _entry.name,
        f"{_entry.label}, test split ({_entry.size}), from clip_benchmark's webdataset export "
        f"({_entry.hub_repo}): zero-shot top-1/top-5 and mean per-class recall with its class names and templates; "
        "strict ties. Usable as a sweep's object-centric axis. `limit` = images per class.",
        f"clip_benchmark-1.6.2-wds-{_entry.builder.replace('/', '-')}-test",
        functools.partial(build_wds_set, _entry.name),
        chance=chance_levels(_entry.classes), headline=("top1",), object_centric=True))
