"""The committed SugarCrepe sample laid out as the loader expects it, with generated COCO-named images."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from backend.benchmarks import sugarcrepe
from backend.core.files import sha256_of

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sugarcrepe-sample"


def block_image(path: Path, seed: int, size: tuple[int, int] = (64, 48)) -> None:
    """Random colour blocks on a random grid (1x1 to 8x8): varied enough that a random model's choices vary."""
    rng = np.random.default_rng(seed)
    grid = int(rng.integers(1, 9))
    blocks = rng.integers(0, 256, (grid, grid, 3), dtype=np.uint8)
    Image.fromarray(blocks).resize(size, Image.NEAREST).save(path)


def write_sugarcrepe_root(root: Path, annotations: dict[str, dict]) -> Path:
    """``<root>/sugarcrepe/<subset>.json`` plus one generated JPEG per distinct COCO file name."""
    (root / sugarcrepe.ANNOTATIONS).mkdir(parents=True)
    images = root / sugarcrepe.COCO_VAL2017
    images.mkdir(parents=True)
    for subset, items in annotations.items():
        (root / sugarcrepe.ANNOTATIONS / f"{subset}.json").write_text(json.dumps(items))
        for item in items.values():
            if not (images / item["filename"]).exists():
                block_image(images / item["filename"], seed=int(item["filename"].split(".")[0]))
    return root


def pin_checksums(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin the sample files' own SHA-256s, so ``ensure`` checks them as it checks the real ones."""
    folder = root / sugarcrepe.ANNOTATIONS
    monkeypatch.setattr(sugarcrepe, "SUBSETS", {s: sha256_of(folder / f"{s}.json") for s in sugarcrepe.SUBSETS})
