"""The training-time image transform: open_clip's default augmentation, reproducible per item.

open_clip trains with ``RandomResizedCrop(size, scale=(0.9, 1.0), bicubic)`` and
normalisation, and evaluates with resize + centre crop; the two are separate
transforms, and so are they here (evaluation keeps the model's own preprocess).

The difference from torchvision's ``RandomResizedCrop``: the crop is drawn from
a generator seeded by (seed, step, item), never from the global RNG. A batch is
then still a pure function of (seed, step), so a resumed run sees exactly the
crops an uninterrupted one saw, and a DataLoader worker draws the same crop as
the training process would.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import open_clip
import torch
import torchvision.transforms.functional as F
from PIL import Image
from torchvision.transforms import InterpolationMode

SCALE = (0.9, 1.0)  # open_clip's AugmentationCfg default: the crop keeps 90-100% of the area
RATIO = (3 / 4, 4 / 3)  # torchvision's aspect-ratio range, which open_clip keeps
_TRIES = 10  # attempts at a crop inside the image before the centre-crop fallback (torchvision's count)


def crop_rng(seed: int, step: int, index: int) -> np.random.Generator:
    """The generator of one item's crop at one step: a different crop every epoch, the same on every replay."""
    return np.random.default_rng([seed & 0xFFFF_FFFF_FFFF_FFFF, step, index])


def crop_box(height: int, width: int, rng: np.random.Generator, scale: Sequence[float] = SCALE,
             ratio: Sequence[float] = RATIO) -> tuple[int, int, int, int]:
    """(top, left, height, width) of a random crop: area fraction uniform in `scale`, aspect log-uniform in `ratio`.

    The sampling rule of RandomResizedCrop; when no draw fits inside the image
    (very elongated images), the centre crop with the aspect ratio clamped to `ratio`.
    """
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(_TRIES):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(*log_ratio))
        w, h = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    aspect = min(max(width / height, ratio[0]), ratio[1])
    w, h = (width, round(width / aspect)) if width / height <= aspect else (round(height * aspect), height)
    return (height - h) // 2, (width - w) // 2, h, w


class TrainTransform:
    """Random resized crop to the model's input size (bicubic), then the model's normalisation.

    Takes a PIL image (decoded from a file) or a uint8 CHW tensor (the built-in
    world's in-memory renders); both come out as a normalised float CHW tensor.
    """

    def __init__(self, size: int | Sequence[int], mean: Sequence[float], std: Sequence[float],
                 scale: Sequence[float] = SCALE):
        self.size = [size, size] if isinstance(size, int) else list(size)
        self.mean, self.std = list(mean), list(std)
        self.scale = tuple(scale)

    def __call__(self, image: Image.Image | torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
        height, width = (image.height, image.width) if isinstance(image, Image.Image) else image.shape[-2:]
        top, left, h, w = crop_box(height, width, rng, self.scale)
        cropped = F.resized_crop(image, top, left, h, w, self.size, interpolation=InterpolationMode.BICUBIC,
                                 antialias=True)
        pixels = F.pil_to_tensor(cropped) if isinstance(cropped, Image.Image) else cropped
        return F.normalize(pixels.float() / 255, self.mean, self.std)

    def __repr__(self) -> str:
        return f"TrainTransform(size={self.size}, scale={self.scale}, bicubic, mean={self.mean}, std={self.std})"


def train_transform(model: torch.nn.Module, augment: str) -> TrainTransform | None:
    """The transform `augment` names for `model` (its input size and normalisation); None for "none"."""
    if augment == "none":
        return None
    if augment != "open_clip":
        raise ValueError(f"Unknown augmentation {augment!r}; one of 'open_clip', 'none'")
    cfg = open_clip.get_model_preprocess_cfg(model)
    return TrainTransform(cfg["size"], cfg["mean"], cfg["std"])
