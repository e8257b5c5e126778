"""The common zero-shot classification suite (VTAB+/ELEVATER sets), built by clip_benchmark's own dataset builders.

vl_compo reports 21 zero-shot tasks beside compositionality; CLIP papers and clip_benchmark report most of them.
Each set here is ``clip_benchmark.datasets.builder.build_dataset`` (LAION-AI's CLIP_benchmark 1.6.2, pinned in
requirements.txt; without it a set says how to install it):
its torchvision dataset, its class names (``en_classnames.json``, e.g. Caltech-101's with the background class,
EuroSAT's "annual crop land") and its templates (``en_zeroshot_classification_templates.json``; ImageNet's 80
where a set has none). Nothing of that is rewritten: this module only lists the sets, turns a built dataset
into a gallery ``Task`` (an image decoded only when a DataLoader worker encodes it) and says how to get data.

Fetching: the sets under 1 GB are downloaded and MD5-checked by torchvision at their first evaluation (and by
``benchmarks --check``) when the network is allowed; the large ones (STL-10, Food-101, SUN397, FGVC Aircraft,
Country211: 2.6 to 37 GB) and those with no download (Stanford Cars, FER2013) are never fetched implicitly: their
steps say what to download and where.

Metrics (``zeroshot.zero_shot_metrics``): top-1, top-5 and mean per-class recall, the three clip_benchmark
reports for every classification set; ties are wrong (clip_benchmark's argmax gives a tie to the lower class
index, so the two agree except on exact ties). ``limit`` = images per class, so every class stays.

Also here, all by hand: VOC 2007 (clip_benchmark's cropped-object version), ImageNet-A, -R, -O, -Sketch, -V2 and
ObjectNet (the builder would shell out to wget/gdown/requests for them: never called without their data).
RESISC45, SVHN, KITTI, CLEVR and PCam are `backend.benchmarks.zeroshot_wds` (clip_benchmark's webdataset form:
its ``vtab/...`` form needs TensorFlow Datasets, not installed; PCam's torchvision form needs h5py). Left out:
DMLab and the other VTAB tasks (TensorFlow only), Hateful Memes (no builder in clip_benchmark 1.6.2).
"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backend.benchmarks.data import DataMissing, steps_message
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.task import Task
from backend.benchmarks.zeroshot import chance_levels, ensemble_task
from backend.core import env
from backend.core.images import rgb

_OXFORD = "https://www.robots.ox.ac.uk/~vgg/data"
_OPENAI = "https://openaipublic.azureedge.net/clip/data"
_HENDRYCKS = "https://people.eecs.berkeley.edu/~hendrycks"


@dataclass(frozen=True)
class SuiteSet:
    """One set: our name, clip_benchmark's, its split, what torchvision expects on disk and where it comes from."""

    name: str
    builder: str
    label: str
    split: str
    size: str
    classes: int
    expect: str  # the path under the set's folder that torchvision (or clip_benchmark) reads
    archives: tuple[str, ...] = ()  # what to download and extract into the set's folder, in order
    fetches: bool = True  # torchvision downloads and checks it (False: by hand: a large archive, or no download)
    note: str = ""
    unordered: bool = False  # the builder lists the files in file-system order: sort them (`_in_path_order`)
    images: int = 0  # the builder downloads (ImageNetV2) unless the folder holds exactly this many images
    every_folder: bool = False  # a folder per class, named by wnid: one missing would shift every later label


SUITE = (
    SuiteSet("cifar100", "cifar100", "CIFAR-100", "test", "10,000 images, 100 classes", 100, "cifar-100-python",
             ("https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",)),
    SuiteSet("stl10", "stl10", "STL-10", "test", "8,000 images, 10 classes", 10, "stl10_binary",
             ("http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz (2.6 GB)",), fetches=False),
    SuiteSet("food101", "food101", "Food-101", "test", "25,250 images, 101 classes", 101, "food-101/meta",
             ("http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz (5 GB)",), fetches=False),
    SuiteSet("pets", "pets", "Oxford-IIIT Pets", "test", "3,669 images, 37 classes", 37, "oxford-iiit-pet/annotations",
             (f"{_OXFORD}/pets/data/images.tar.gz", f"{_OXFORD}/pets/data/annotations.tar.gz"),
             note="extract both archives into oxford-iiit-pet/"),
    SuiteSet("flowers102", "flowers", "Oxford Flowers-102", "test", "6,149 images, 102 classes", 102, "flowers-102/jpg",
             (f"{_OXFORD}/flowers/102/102flowers.tgz", f"{_OXFORD}/flowers/102/imagelabels.mat",
              f"{_OXFORD}/flowers/102/setid.mat"), note="all three into flowers-102/ (the .mat files as they are)"),
    SuiteSet("dtd", "dtd", "Describable Textures (DTD), partition 1", "test", "1,880 images, 47 classes", 47,
             "dtd/dtd/labels", (f"{_OXFORD}/dtd/download/dtd-r1.0.1.tar.gz",), note="extract into dtd/"),
    SuiteSet("eurosat", "eurosat", "EuroSAT (RGB)", "test", "27,000 images, 10 classes (no split: all)", 10,
             "eurosat/2750", ("https://huggingface.co/datasets/torchgeo/eurosat/resolve/"
                              "c877bcd43f099cd0196738f714544e355477f3fd/EuroSAT.zip",), note="unzip into eurosat/"),
    SuiteSet("caltech101", "caltech101", "Caltech-101 (with background)", "test",
             "9,144 images, 102 classes (no split: all)", 102, "caltech101/101_ObjectCategories",
             ("https://drive.google.com/file/d/137RyRjvTBkBiIfeYBNZBtViDHQ6_Ewsp (101_ObjectCategories.tar.gz)",
              "https://drive.google.com/file/d/175kQy3UsZ0wUEHZjqkUDdNVssr7bgh_m (Annotations.tar)"),
             note="extract both into caltech101/"),
    SuiteSet("sun397", "sun397", "SUN397", "test", "108,754 images, 397 classes (no split: all)", 397, "SUN397",
             ("http://vision.princeton.edu/projects/2010/SUN/SUN397.tar.gz (37 GB)",), fetches=False, unordered=True),
    SuiteSet("cars", "cars", "Stanford Cars", "test", "8,041 images, 196 classes", 196, "stanford_cars/devkit",
             ("https://www.kaggle.com/datasets/rickyyyyyyy/torchvision-stanford-cars (the original site is gone; "
              "torchvision's layout: stanford_cars/{devkit,cars_test,cars_test_annos_withlabels.mat})",),
             fetches=False),
    SuiteSet("fgvc-aircraft", "fgvc_aircraft", "FGVC Aircraft (variants)", "test", "3,333 images, 100 classes", 100,
             "fgvc-aircraft-2013b/data", (f"{_OXFORD}/fgvc-aircraft/archives/fgvc-aircraft-2013b.tar.gz (2.6 GB)",),
             fetches=False),
    SuiteSet("gtsrb", "gtsrb", "GTSRB", "test", "12,630 images, 43 classes", 43, "gtsrb/GTSRB/Final_Test/Images",
             ("https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370/GTSRB_Final_Test_Images.zip",
              "https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370/GTSRB_Final_Test_GT.zip"),
             note="unzip both into gtsrb/"),
    SuiteSet("mnist", "mnist", "MNIST", "test", "10,000 images, 10 classes", 10, "MNIST/raw",
             ("https://ossci-datasets.s3.amazonaws.com/mnist/t10k-images-idx3-ubyte.gz",
              "https://ossci-datasets.s3.amazonaws.com/mnist/t10k-labels-idx1-ubyte.gz"),
             note="gunzip both into MNIST/raw/"),
    SuiteSet("country211", "country211", "Country211", "test", "21,100 images, 211 classes", 211, "country211/test",
             (f"{_OPENAI}/country211.tgz (11 GB)",), fetches=False),
    SuiteSet("rendered-sst2", "renderedsst2", "Rendered SST2", "test", "1,821 images, 2 classes", 2,
             "rendered-sst2/test", (f"{_OPENAI}/rendered-sst2.tgz",)),
    SuiteSet("fer2013", "fer2013", "FER2013", "test", "7,178 images, 7 classes", 7, "test",
             ("https://www.kaggle.com/datasets/msambare/fer2013 (`kaggle datasets download -d msambare/fer2013`)",),
             fetches=False, note="unzip into the folder, so that test/<emotion>/ exists"),
    SuiteSet("voc2007", "voc2007", "PASCAL VOC 2007 (every object cropped)", "test",
             "14,976 object crops, 20 classes", 20, "VOCdevkit/VOC2007/ImageSets/Main/aeroplane_test.txt",
             ("http://host.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtest_06-Nov-2007.tar",), fetches=False,
             note="tar xf it in the folder, so that VOCdevkit/VOC2007/ exists (by hand: clip_benchmark's own "
                  "download changes the process's working directory)"),
    *(SuiteSet(name, name, label, "test", size, 200, first, (f"{_HENDRYCKS}/{name}.tar ({gigabytes})",),
               fetches=False, every_folder=True,
               note=f"`tar xf {name}.tar --strip-components=1 -C` the folder: its class folders go straight in it")
      for name, label, size, first, gigabytes in (
          ("imagenet-a", "ImageNet-A (natural adversarial)", "7,500 images, 200 classes", "n01498041", "0.7 GB"),
          ("imagenet-r", "ImageNet-R (renditions)", "30,000 images, 200 classes", "n01443537", "2.1 GB"),
          ("imagenet-o", "ImageNet-O (out-of-distribution, as classification)", "2,000 images, 200 classes",
           "n01443537", "0.2 GB"))),
    SuiteSet("imagenet-sketch", "imagenet_sketch", "ImageNet-Sketch", "test", "50,889 images, 1,000 classes", 1000,
             "n01440764", ("https://drive.google.com/open?id=1Mj0i5HBthqH1p_yeXzsg22gZduvgoNeA "
                           "(ImageNet-Sketch.zip, 8.4 GB)",), fetches=False, every_folder=True,
             note="unzip it and move the 1,000 class folders of sketch/ into the folder"),
    SuiteSet("imagenetv2", "imagenetv2", "ImageNetV2 (matched frequency)", "test", "10,000 images, 1,000 classes",
             1000, "ImageNetV2-matched-frequency", ("https://huggingface.co/datasets/vaishaal/ImageNetV2/resolve/main/"
                                                    "imagenetv2-matched-frequency.tar.gz (1.2 GB)",),
             fetches=False, unordered=True, images=10_000,
             note="tar xzf it in the folder and rename imagenetv2-matched-frequency-format-val/ to "
                  "ImageNetV2-matched-frequency/"),
    SuiteSet("objectnet", "objectnet", "ObjectNet (the 113 ImageNet classes)", "test", "18,574 images, 113 classes",
             113, "objectnet-1.0/images", ("https://objectnet.dev/downloads/objectnet-1.0.zip (183 GB)",),
             fetches=False, note="`unzip -P objectnetisatestset` it in the folder, then `cp objectnet-1.0/mappings/* "
                                 ".` there (the builder reads the mappings from the folder itself)"),
)
BY_NAME = {entry.name: entry for entry in SUITE}


@dataclass(frozen=True)
class DatasetImage:
    """Image ``index`` of a built torchvision dataset, decoded only when it is encoded (``task.LazyImage``)."""

    dataset: object
    index: int
    key: str

    def load(self):
        return rgb(self.dataset[self.index][0])  # type: ignore[index]


def missing_steps(entry: SuiteSet, folder: Path, reason: str) -> list[str]:
    """The exact steps to put a set where torchvision reads it."""
    steps = [reason]
    if entry.fetches:
        steps.append(f"with network access, run `python -m backend benchmarks --check` (or any evaluation of "
                     f"{entry.name}) once: torchvision downloads it into {folder} and checks its MD5")
    steps.append(f"or by hand: download {' and '.join(entry.archives)} and extract into {folder}"
                 + (f" ({entry.note})" if entry.note else "") + f", so that {folder / entry.expect} exists")
    return steps


def labels_of(dataset) -> list[int]:
    """Each image's class index, read from the dataset's own lists (no image is decoded)."""
    if hasattr(dataset, "label_map"):  # ObjectNet: its samples are filtered, its ImageFolder targets are not
        return [dataset.label_map[Path(path).parent.name] for path, _ in dataset.samples]
    if hasattr(dataset, "bndboxes"):  # VOC 2007: one item per (image, box, class)
        return [int(box[2]) for box in dataset.bndboxes]
    if hasattr(dataset, "fnames"):  # ImageNetV2: the class index is the folder's name
        return [int(Path(path).parent.name) for path in dataset.fnames]
    for attribute in ("targets", "labels", "_labels", "y"):
        if hasattr(dataset, attribute):
            return [int(label) for label in getattr(dataset, attribute)]
    if hasattr(dataset, "_samples"):
        return [int(sample[1]) for sample in dataset._samples]
    raise TypeError(f"{type(dataset).__name__}: no class labels found")


def _in_path_order(dataset) -> None:
    """SUN397 and ImageNetV2 list their files in ``rglob`` order, which differs between file systems: sort files
    (and labels) together, so item n (and a ``limit``) is the same image everywhere."""
    if hasattr(dataset, "fnames"):
        dataset.fnames = sorted(dataset.fnames)
        return
    pairs = sorted(zip(dataset._image_files, dataset._labels))
    dataset._image_files = [path for path, _ in pairs]
    dataset._labels = [label for _, label in pairs]


def class_folders(dataset, entry: SuiteSet) -> int:
    """How many class folders a folder-per-class set found (0 for the others): the builder names the classes of
    the full set, so a missing folder would shift every later label (Caltech-101, the ImageNet variants)."""
    if hasattr(dataset, "categories"):
        return len(dataset.categories)
    return len(dataset.class_to_idx) if entry.every_folder else 0


def first_per_class(labels: list[int], limit: int | None) -> list[int]:
    """Positions of the first ``limit`` images of every class, in dataset order (all when ``limit`` is None)."""
    taken: dict[int, int] = {}
    rows = []
    for position, label in enumerate(labels):
        if limit is None or taken.get(label, 0) < limit:
            taken[label] = taken.get(label, 0) + 1
            rows.append(position)
    return rows


def clip_benchmark_builder(name: str) -> Callable:
    """clip_benchmark's ``build_dataset``, or `DataMissing` saying how to install it."""
    try:
        from clip_benchmark.datasets.builder import build_dataset
    except ImportError:
        raise DataMissing(f"{name}: the zero-shot suite is built by clip_benchmark's dataset builders, which are "
                          "not installed here: `pip install clip_benchmark==1.6.2` (requirements.txt)") from None
    return build_dataset


def build_suite_set(name: str, limit: int | None, root: Path) -> Task:
    """The set's test images (the first ``limit`` of each class) with clip_benchmark's classes and templates."""
    build_dataset = clip_benchmark_builder(name)
    entry = BY_NAME[name]
    folder = root / name
    if not (folder / entry.expect).exists() and not (entry.fetches and not env.hub_offline()):
        # by hand only, or offline: never let a builder try (clip_benchmark shells out to kaggle for some sets)
        raise DataMissing(steps_message(name, folder, missing_steps(entry, folder, f"{folder / entry.expect} is "
                                                                                   "missing")))
    if entry.images and (held := len(list((folder / entry.expect).glob("*/*.jpeg")))) != entry.images:
        raise DataMissing(steps_message(name, folder, missing_steps(
            entry, folder, f"{folder / entry.expect} holds {held} images, not {entry.images}")))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with warnings.catch_warnings():  # "split argument ignored" (EuroSAT, Caltech-101, SUN397): documented above
            warnings.filterwarnings("ignore", message="split argument ignored")
            dataset = build_dataset(entry.builder, root=str(folder), transform=None, split=entry.split,
                                    download=entry.fetches and not env.hub_offline())
    except (RuntimeError, OSError, AssertionError) as error:  # torchvision: "Dataset not found or corrupted", ...
        raise DataMissing(steps_message(name, folder, missing_steps(entry, folder, f"the builder said: {error}"))
                          ) from None
    if entry.unordered:
        _in_path_order(dataset)
    labels = labels_of(dataset)
    classes, templates = list(dataset.classes), [t.replace("{c}", "{}") for t in dataset.templates]
    found = class_folders(dataset, entry) or max(labels, default=-1) + 1
    if found > len(classes) or (class_folders(dataset, entry) and found != len(classes)):
        raise DataMissing(steps_message(name, folder, missing_steps(
            entry, folder, f"found {found} classes but clip_benchmark names {len(classes)}: the folder holds "
                           "another version of the set")))
    rows = first_per_class(labels, limit)
    images = [DatasetImage(dataset, n, f"{entry.builder}:{entry.split}:{folder}#{n}") for n in rows]
    return ensemble_task(images, [labels[n] for n in rows], classes, templates)


for _entry in SUITE:
    register(Benchmark(
        _entry.name,
        f"{_entry.label}, {_entry.split} split ({_entry.size}): zero-shot top-1/top-5 and mean per-class recall with "
        "clip_benchmark's class names and templates; strict ties. Usable as a sweep's object-centric axis. "
        "`limit` = images per class.",
        f"clip_benchmark-1.6.2-{_entry.builder}-{_entry.split}", functools.partial(build_suite_set, _entry.name),
        chance=chance_levels(_entry.classes),
        headline=("top1",), object_centric=True))
