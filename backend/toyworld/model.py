"""The tiny open_clip model for the toy world (``toyclip-v1``, ~0.23 M parameters).

Importing this module registers ``toyclip-v1.json`` with open_clip, so
``open_clip.create_model_and_transforms('toyclip-v1')`` works anywhere after
``import backend.toyworld``. open_clip's own ``get_tokenizer('toyclip-v1')``
would return its BPE tokenizer, whose ids exceed this model's vocabulary:
use the ``ToyTokenizer`` returned by ``create_toy_model``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import open_clip
import torch

from .tokenizer import ToyTokenizer

MODEL_NAME = "toyclip-v1"
CONFIG_PATH = Path(__file__).with_name(f"{MODEL_NAME}.json")
# open_clip reads normalisation only from pretrained tags, not from a model
# config, so it is passed explicitly. Measured over 20,000 rendered scenes
# (seed 123): the images are mostly light background.
IMAGE_MEAN = (0.897, 0.888, 0.883)
IMAGE_STD = (0.122, 0.134, 0.160)

open_clip.add_model_config(CONFIG_PATH)


def model_config() -> dict:
    """The registered open_clip config (as stored in ``toyclip-v1.json``)."""
    return json.loads(CONFIG_PATH.read_text())


def create_toy_model(seed: int = 0) -> tuple[torch.nn.Module, Callable, ToyTokenizer]:
    """A freshly initialised toy CLIP, its eval preprocess and its tokenizer.

    ``seed`` fixes the initial weights without touching the caller's global
    torch RNG. The preprocess expects 64x64 PIL images as rendered by
    ``render``; other sizes are resized (bicubic).
    """
    config = model_config()
    tokenizer = ToyTokenizer(context_length=config["text_cfg"]["context_length"])
    if tokenizer.vocab_size != config["text_cfg"]["vocab_size"]:
        raise RuntimeError(f"{CONFIG_PATH.name} vocab_size {config['text_cfg']['vocab_size']} "
                           f"!= tokenizer vocabulary {tokenizer.vocab_size}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model, _, preprocess = open_clip.create_model_and_transforms(
            MODEL_NAME, pretrained=None, image_mean=IMAGE_MEAN, image_std=IMAGE_STD)
    return model, preprocess, tokenizer
