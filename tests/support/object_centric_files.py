"""The object-centric benchmarks' data, tiny, in the on-disk layouts their loaders read, for the tests of those
loaders and of a sweep's object-centric axis: COCO Karpathy-test retrieval as BLIP's annotation file and image
folder (`ROWS`, `write_root`), and each zero-shot set of the suite in the layout torchvision or clip_benchmark
reads (`LAYOUTS`: one writer per set, returning the labels in dataset order and each image's class name as
clip_benchmark names it)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
from PIL import Image

ROWS = [  # the BLIP file's fields: image path relative to the folder, the image's captions
    {"image": "val2014/COCO_val2014_000000391895.jpg",
     "caption": ["A man with a red helmet on a small moped on a dirt road. ",
                 "Man riding a motor bike on a dirt road"]},
    {"image": "val2014/COCO_val2014_000000060623.jpg",
     "caption": ["A young girl inhales with the intent of blowing out a candle. ", "A girl blowing out a candle"]},
    {"image": "val2014/COCO_val2014_000000483108.jpg", "caption": ["A man on a bicycle riding next to a train"]},
    {"image": "val2014/COCO_val2014_000000384213.jpg",
     "caption": ["A kitchen is shown with a variety of items", "A kitchen with a stove and a sink",
                 "an empty kitchen"]},
]


def write_root(root: Path) -> Path:
    folder = root / "aro-coco-order"
    (folder / "val2014").mkdir(parents=True)
    (folder / "coco_karpathy_test.json").write_text(json.dumps(ROWS))
    for n, row in enumerate(ROWS):
        pixels = np.random.default_rng(n).integers(0, 256, (4, 4, 3), dtype=np.uint8)
        Image.fromarray(pixels).resize((48, 48), Image.NEAREST).save(folder / row["image"], format="JPEG")
    return root


COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (220, 220, 40)]


def picture(path: Path, n: int, size: int = 24) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), COLOURS[n % len(COLOURS)]).save(path)
    return path


def classnames(dataset: str) -> list[str]:
    import clip_benchmark.datasets.builder as builder

    return json.loads((Path(builder.__file__).parent / "en_classnames.json").read_text())[dataset]


# ---- one writer per layout -> (labels in dataset order, each image's class name as clip_benchmark names it) -----

def food101(folder: Path):
    base = folder / "food-101"
    (base / "meta").mkdir(parents=True)
    (base / "meta" / "classes.txt").write_text("apple_pie\nbaby_back_ribs\n")
    (base / "meta" / "test.json").write_text(json.dumps({"apple_pie": ["apple_pie/1", "apple_pie/2"],
                                                         "baby_back_ribs": ["baby_back_ribs/3"]}))
    for n, rel in enumerate(["apple_pie/1", "apple_pie/2", "baby_back_ribs/3"]):
        picture(base / "images" / f"{rel}.jpg", n)
    return [0, 0, 1], ["apple pie", "apple pie", "baby back ribs"]


def pets(folder: Path):
    base = folder / "oxford-iiit-pet"
    (base / "annotations").mkdir(parents=True)
    (base / "annotations" / "test.txt").write_text("Abyssinian_1 1 1 1\nbeagle_2 2 2 1\nbeagle_3 2 2 1\n")
    for n, name in enumerate(["Abyssinian_1", "beagle_2", "beagle_3"]):
        picture(base / "images" / f"{name}.jpg", n)
    return [0, 1, 1], ["Abyssinian", "Beagle", "Beagle"]


def dtd(folder: Path):
    base = folder / "dtd" / "dtd"
    (base / "labels").mkdir(parents=True)
    (base / "labels" / "test1.txt").write_text("banded/banded_0002.jpg\nblotchy/blotchy_0003.jpg\n")
    for n, rel in enumerate(["banded/banded_0002.jpg", "blotchy/blotchy_0003.jpg"]):
        picture(base / "images" / rel, n)
    return [0, 1], ["banded", "blotchy"]


def eurosat(folder: Path):
    for n, name in enumerate(["AnnualCrop", "Forest"]):
        picture(folder / "eurosat" / "2750" / name / f"{name}_1.jpg", n)
    return [0, 1], classnames("eurosat")[:2]


def sun397(folder: Path):
    base = folder / "SUN397"
    base.mkdir(parents=True)
    (base / "ClassName.txt").write_text("/a/abbey\n/a/airplane_cabin\n")
    for n, rel in enumerate(["a/airplane_cabin/sun_b.jpg", "a/abbey/sun_c.jpg", "a/abbey/sun_a.jpg"]):
        picture(base / rel, n)
    return [0, 0, 1], ["abbey", "abbey", "airplane cabin"]  # in path order: abbey/sun_a, abbey/sun_c, airplane_cabin


def fgvc(folder: Path):
    data = folder / "fgvc-aircraft-2013b" / "data"
    data.mkdir(parents=True)
    (data / "variants.txt").write_text("707-320\nA300B4\n")
    (data / "images_variant_test.txt").write_text("1514522 A300B4\n0056978 707-320\n")
    for n, name in enumerate(["1514522", "0056978"]):
        picture(data / "images" / f"{name}.jpg", n)
    return [1, 0], ["A300B4", "707-320"]


def gtsrb(folder: Path):
    base = folder / "gtsrb"
    images = base / "GTSRB" / "Final_Test" / "Images"
    for n in range(2):
        picture(images / f"0000{n}.ppm", n)
    (base / "GT-final_test.csv").write_text("Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n"
                                            "00000.ppm;24;24;0;0;23;23;1\n00001.ppm;24;24;0;0;23;23;0\n")
    return [1, 0], [classnames("gtsrb")[1], classnames("gtsrb")[0]]


def mnist(folder: Path):
    raw = folder / "MNIST" / "raw"
    raw.mkdir(parents=True)
    pixels = np.zeros((3, 28, 28), dtype=np.uint8)
    pixels[1] = 255
    (raw / "t10k-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 3, 28, 28) + pixels.tobytes())
    (raw / "t10k-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 3) + bytes([7, 1, 7]))
    (raw / "train-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, 0, 28, 28))  # torchvision wants all four
    (raw / "train-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 0))
    return [7, 1, 7], [classnames("mnist")[7], classnames("mnist")[1], classnames("mnist")[7]]


def country211(folder: Path):
    for n, code in enumerate(["AD", "AE"]):
        picture(folder / "country211" / "test" / code / f"{n}.jpg", n)
    return [0, 1], classnames("country211")[:2]


def rendered_sst2(folder: Path):
    for n, label in enumerate(["negative", "positive"]):
        picture(folder / "rendered-sst2" / "test" / label / f"{n}.png", n)
    return [0, 1], ["negative", "positive"]


def caltech101(folder: Path):
    base = folder / "caltech101" / "101_ObjectCategories"
    categories = sorted(["BACKGROUND_Google", "Faces", "Faces_easy", "Leopards", "Motorbikes", "accordion",
                         *[f"category_{n:03d}" for n in range(96)]])
    for category in categories:
        (base / category).mkdir(parents=True)
    picture(base / "accordion" / "image_0001.jpg", 0)
    picture(base / "Leopards" / "image_0001.jpg", 1)
    index = categories.index
    return [index("Leopards"), index("accordion")], [classnames("caltech101")[index("Leopards")],
                                                      classnames("caltech101")[index("accordion")]]


def fer2013(folder: Path):
    for n, label in enumerate(["angry", "disgust"]):
        picture(folder / "test" / label / f"{n}.jpg", n)
    return [0, 1], classnames("fer2013")[:2]


LAYOUTS = {"food101": food101, "pets": pets, "dtd": dtd, "eurosat": eurosat, "sun397": sun397,
           "fgvc-aircraft": fgvc, "gtsrb": gtsrb, "mnist": mnist, "country211": country211,
           "rendered-sst2": rendered_sst2, "caltech101": caltech101, "fer2013": fer2013}
