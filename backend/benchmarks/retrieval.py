"""COCO and Flickr30k image-text retrieval on the Karpathy test splits: recall@1/5/10 both ways.

The data is the one ARO's order benchmarks read (``order.SOURCES``): the BLIP Karpathy test files
(``coco_karpathy_test.json``: 5,000 COCO val2014 images with about 25,000 captions; ``flickr30k_test.json``:
1,000 images with 5,000), a JSON list of ``{"image": <path relative to the folder>, "caption": [...]}``, and
the same image folders (``<benchmarks_dir>/aro-coco-order/val2014/``, ``.../aro-flickr30k-order/flickr30k-images/``),
so one download serves both. Captions are scored as written (as clip_benchmark's ``mscoco_captions`` and
``flickr30k`` tasks do; BLIP's lower-casing ``pre_caption`` is not applied).

Rule: ``metrics.recall_at_k`` on the full (images x captions) cosine matrix: a query is retrieved at K when
its best correct item ranks <= K, rank = 1 + the wrong items scoring ``>=`` it, so **a tie with a wrong item
counts against** (clip_benchmark's ``topk`` breaks such ties by index). Image->text counts an image retrieved
when any of its captions is in the top K (CLIP papers' recall). Intervals: a query bootstrap that redraws
images together with their captions and keeps the gallery whole (``stats.query_intervals``;
docs/REFERENCE.md, "Intervals and paired tests").
"""
from __future__ import annotations

import functools
from pathlib import Path

from backend import metrics as M
from backend.benchmarks.data import ensure
from backend.benchmarks.evaluator import Benchmark, register
from backend.benchmarks.order import SOURCES
from backend.benchmarks.rows import read_rows, require_files
from backend.benchmarks.task import ImageFile, QueryMetric, Task

KS = (1, 5, 10)
DATA_OF = {"coco-retrieval": "aro-coco-order", "flickr30k-retrieval": "aro-flickr30k-order"}


def build(name: str, limit: int | None, root: Path) -> Task:
    """The first ``limit`` test images with all their captions (``limit`` cuts the gallery: not comparable)."""
    import torch

    source = SOURCES[DATA_OF[name]]
    folder = root / source.folder
    steps = [step.format(folder=folder) for step in source.image_steps]
    rows = read_rows(ensure(name, folder, source.annotations, steps), ("image", "caption"))[:limit]
    require_files(name, folder, [folder / row["image"] for row in rows], steps)
    texts = [caption for row in rows for caption in row["caption"]]
    owner = torch.tensor([n for n, row in enumerate(rows) for _ in row["caption"]])
    return Task([ImageFile(str(folder / row["image"])) for row in rows], texts,
                QueryMetric(functools.partial(M.recall_at_k, ks=KS, positives=owner),
                            functools.partial(M.retrieval_hits, ks=KS, positives=owner)))


for _name, _label, _size in (("coco-retrieval", "COCO", "5,000 images, about 25,000 captions"),
                             ("flickr30k-retrieval", "Flickr30k", "1,000 images, 5,000 captions")):
    register(Benchmark(
        _name,
        f"{_label} retrieval, Karpathy test split ({_size}): image->text and text->image recall@1/5/10 over the "
        "full gallery; a tie with a wrong item counts against. Usable as a sweep's object-centric axis.",
        f"karpathy-test-blip-{SOURCES[DATA_OF[_name]].annotations.name}", functools.partial(build, _name),
        chance={}, headline=("i2t_R@1", "t2i_R@1"), object_centric=True))
