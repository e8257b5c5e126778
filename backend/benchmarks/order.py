"""ARO's COCO-Order and Flickr30k-Order (Yuksekgonul et al., ICLR 2023) on the Karpathy test captions.

Data: the Karpathy test annotation files the authors load (BLIP's
``coco_karpathy_test.json`` / ``flickr30k_test.json``: a list of
``{"image": relative path, "caption": [captions]}``), fetched from their
public URL into ``<benchmarks_dir>/aro-coco-order/`` or
``.../aro-flickr30k-order/``, next to the images (COCO ``val2014/``,
Flickr30k ``flickr30k-images/``; the paths in the files are relative to
that folder).

Each caption is one item: the caption as ARO reads it (lower-cased,
punctuation stripped, at most 30 words: ``perturb.order.normalised``) and
its four order perturbations (``perturb.order.SHUFFLES``), one random draw
each as in ARO's code, so a draw may leave the caption unchanged. The
perturbations are random, so the benchmark holds every caption once per
seed of ``SEEDS`` (subtype ``seed=<k>``), each seed drawing afresh; the
headline ``accuracy`` is the mean over seeds, ``accuracy_std`` their sample
std (``metrics.mean_std``), ``seed=<k>/accuracy`` each seed's value. An item
is right when the original scores >= every perturbation (a tie, e.g. an
unchanged draw, goes to the original: ARO's ``argmax(...) == 0``). The
images of an image's five captions are one ``ImageFile``, encoded once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend import metrics as M
from backend.benchmarks.data import Remote, ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, LabelledMetric, Task, fraction, grid_task, original_not_beaten

SEEDS: tuple[int, ...] = (0, 1, 2)
"""Perturbation seeds; the paper reports one draw, docs/REFERENCE.md ("Metrics") asks for mean +- std over several."""
BLIP_ANNOTATIONS = "https://storage.googleapis.com/sfr-vision-language-research/datasets/"
FLICKR_SIGNUP = "https://forms.illinois.edu/sec/229675"
COCO_VAL2014 = "http://images.cocodataset.org/zips/val2014.zip"


@dataclass(frozen=True)
class OrderSource:
    """Where one order benchmark's captions and images live, and how a user gets the images."""

    folder: str
    annotations: Remote
    image_steps: tuple[str, ...]  # formatted with folder=<benchmark folder>


SOURCES = {
    "aro-coco-order": OrderSource(
        "aro-coco-order", Remote("coco_karpathy_test.json", BLIP_ANNOTATIONS + "coco_karpathy_test.json"),
        (f"cd {{folder}} && wget {COCO_VAL2014} && unzip -q val2014.zip   (creates {{folder}}/val2014/; "
         "the Karpathy test split is 5,000 of its images)",)),
    "aro-flickr30k-order": OrderSource(
        "aro-flickr30k-order", Remote("flickr30k_test.json", BLIP_ANNOTATIONS + "flickr30k_test.json"),
        (f"request the Flickr30k images at {FLICKR_SIGNUP} (sign-up; no public URL)",
         "unpack them so that {folder}/flickr30k-images/<id>.jpg exist")),
}


@dataclass(frozen=True)
class Caption:
    """One test caption: its image (relative path), its position among that image's captions, its text."""

    image: str
    index: int
    text: str


def captions(rows: list[dict], limit: int | None) -> list[Caption]:
    """Every caption of every row in file order (each is an item), the first ``limit`` of them."""
    found = [Caption(row["image"], j, text) for row in rows for j, text in enumerate(row["caption"])]
    return found[:limit]


def aro_words(texts: Sequence[str]) -> list[list[str]]:
    """Each text as ARO reads it: lower-cased words, punctuation dropped, at most 30 (``perturb.order``)."""
    from backend.perturb.order import aro_matches  # backend.perturb loads spaCy: only when an order set is built

    return [[match.group().lower() for match in aro_matches(text)] for text in texts]


def pos_tags(word_lists: Sequence[list[str]]) -> list[list[str]]:
    """Penn tags of pre-split words, one batched spaCy pass (25k COCO captions one by one would take minutes)."""
    from spacy.tokens import Doc

    from backend.perturb.nlp import load_spacy

    nlp = load_spacy()

    docs = nlp.pipe((Doc(nlp.vocab, words=words) for words in word_lists), batch_size=512)
    return [[token.tag_ for token in doc] for doc in docs]


def perturbations(words: list[str], tags: list[str], rng: random.Random) -> list[str]:
    """ARO's four order perturbations, one draw each (may equal the original, as in ARO's code)."""
    from backend.perturb.order import SHUFFLES

    return [" ".join(shuffle(words, tags, rng)) for shuffle in SHUFFLES.values()]


def draw_rng(seed: int, caption: Caption) -> random.Random:
    """A stream per (seed, caption): a caption's draws do not depend on ``limit`` or on other captions."""
    return random.Random(f"aro-order:{seed}:{caption.image}:{caption.index}")


def order_metrics(scores: Tensor, seeds: Sequence[int]) -> dict[str, float]:
    """``scores`` (N, 5, 1), item n drawn with ``seeds[n]``: per-seed accuracy, their mean and sample std."""
    import torch

    correct = M.aro_order_correct(scores[:, :, 0])
    seed_of = torch.tensor(list(seeds))
    per_seed = {seed: fraction(correct[seed_of == seed]) for seed in dict.fromkeys(seeds)}
    mean, std = M.mean_std(list(per_seed.values()))
    return {"accuracy": mean, "accuracy_std": std, **{f"seed={seed}/accuracy": v for seed, v in per_seed.items()}}


def order_task(items: list[Caption], image_dir: Path, seeds: Sequence[int] = SEEDS) -> Task:
    """Every caption once per seed: [original, 4 perturbations] against its image."""
    word_lists = aro_words([item.text for item in items])
    tags = pos_tags(word_lists)
    images, texts, ids, seed_of, units = [], [], [], [], []
    for seed in seeds:
        for item, words, item_tags in zip(items, word_lists, tags):
            images.append([ImageFile(str(image_dir / item.image))])
            texts.append([" ".join(words), *perturbations(words, item_tags, draw_rng(seed, item))])
            ids.append(f"{item.image}#{item.index}@seed={seed}")
            seed_of.append(seed)
            units.append(f"{item.image}#{item.index}")  # the bootstrap draws captions, each with all its seeds
    return grid_task(images, texts, LabelledMetric(order_metrics, seed_of), ids=ids, units=units,
                     subtypes=[f"seed={seed}" for seed in seed_of], correct=original_not_beaten)


def _build(name: str, limit: int | None, root: Path) -> Task:
    source = SOURCES[name]
    folder = root / source.folder
    steps = [step.format(folder=folder) for step in source.image_steps]
    path = ensure(name, folder, source.annotations, steps)
    items = captions(read_rows(path, ("image", "caption")), limit)
    require_files(name, folder, [folder / item.image for item in items], steps)
    return order_task(items, folder)


_DESCRIPTION = ("ARO {data}-Order: the Karpathy test caption (lower-cased, punctuation stripped, <= 30 words) vs "
                "its 4 order perturbations (nouns+adjectives, all but nouns+adjectives, trigrams, within "
                "trigrams); right when the original scores >= every perturbation (ties to the original). "
                f"accuracy = mean over {len(SEEDS)} perturbation seeds, accuracy_std, seed=<k>/accuracy.")

for _name, _data in (("aro-coco-order", "COCO"), ("aro-flickr30k-order", "Flickr30k")):
    register(Benchmark(_name, _DESCRIPTION.format(data=_data),
                       f"aro-order-karpathy-test-seeds{'-'.join(map(str, SEEDS))}-v1", functools.partial(_build, _name),
                       {"accuracy": 0.2}, ("accuracy",)))
