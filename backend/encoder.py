"""Batched, cached encoding and scoring for a loaded model.

Probing re-scores the same image against many captions, and the same captions
against several models, so embeddings are cached by content: an image by the
hash of its pixels, a caption by its text, both per model identity. Re-probing
an image with a new caption then encodes only the new caption.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import open_clip
import torch
import torch.nn.functional as F
from PIL import Image

from backend.models import LoadedModel


def image_key(image: Image.Image) -> str:
    """Content hash of the decoded pixels (the same picture uploaded twice hits the cache)."""
    digest = hashlib.blake2b(image.tobytes(), digest_size=16)
    digest.update(f"{image.mode}{image.size}".encode())
    return digest.hexdigest()


class EmbeddingCache:
    """A bounded LRU map from (model identity, content key) to a normalised embedding."""

    def __init__(self, max_items: int = 20_000):
        self.max_items = max_items
        self._items: OrderedDict[tuple, torch.Tensor] = OrderedDict()

    def get(self, key: tuple) -> torch.Tensor | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: tuple, value: torch.Tensor) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.max_items:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class Scores:
    """Similarity of every image (rows) with every text (columns), with the model's identity."""

    cosine: torch.Tensor
    logits: torch.Tensor
    identity: dict[str, str]


class Encoder:
    """Encodes images and texts for one loaded model, in batches, reusing cached embeddings."""

    def __init__(self, loaded: LoadedModel, cache: EmbeddingCache | None = None, batch_size: int = 64):
        self.loaded = loaded
        self.cache = cache if cache is not None else EmbeddingCache()
        self.batch_size = batch_size
        self._tag = (loaded.spec, loaded.activation, loaded.precision, loaded.device)

    def encode_images(self, images: Sequence[Image.Image]) -> torch.Tensor:
        keys = [image_key(image) for image in images]
        return self._encode(keys, list(images), self._image_batch)

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        return self._encode(list(texts), list(texts), self._text_batch)

    def score(self, images: Sequence[Image.Image], texts: Sequence[str]) -> Scores:
        image_emb = self.encode_images(images)
        text_emb = self.encode_texts(texts)
        cosine = image_emb @ text_emb.T
        scale = self.loaded.model.logit_scale.detach().float().exp().cpu()
        return Scores(cosine=cosine, logits=scale * cosine, identity=self.loaded.identity)

    def _encode(self, keys: list, items: list, encode_batch) -> torch.Tensor:
        """Look each key up; encode the misses (deduplicated) in batches; return rows in input order."""
        missing = list(OrderedDict.fromkeys(k for k in keys if self.cache.get((*self._tag, k)) is None))
        by_key = dict(zip(keys, items))
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start:start + self.batch_size]
            for key, row in zip(chunk, encode_batch([by_key[k] for k in chunk])):
                self.cache.put((*self._tag, key), row)
        if not keys:
            return torch.empty(0, 0)
        return torch.stack([self.cache.get((*self._tag, k)) for k in keys])

    def _image_batch(self, images: list[Image.Image]) -> torch.Tensor:
        return pixel_embeddings(self.loaded, torch.stack([self.loaded.preprocess(i.convert("RGB")) for i in images]))

    def _text_batch(self, texts: list[str]) -> torch.Tensor:
        return text_embeddings(self.loaded, texts)


@torch.inference_mode()
def pixel_embeddings(loaded: LoadedModel, pixels: torch.Tensor) -> torch.Tensor:
    """One batch of preprocessed images: encoded under the model's autocast, normalised in fp32 on the CPU."""
    with loaded.autocast():
        features = loaded.model.encode_image(pixels.to(loaded.device, non_blocking=True))
    return F.normalize(features.float(), dim=-1).cpu()


@torch.inference_mode()
def text_embeddings(loaded: LoadedModel, texts: list[str]) -> torch.Tensor:
    """One batch of texts: tokenised, encoded under the model's autocast, normalised in fp32 on the CPU."""
    tokens = loaded.tokenizer(texts).to(loaded.device)
    with loaded.autocast():
        features = encode_text_trimmed(loaded.model, tokens)
    return F.normalize(features.float(), dim=-1).cpu()


def encode_text_trimmed(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """``model.encode_text`` over only the positions up to the batch's last end-of-text token.

    CLIP's text tower is causal and pools at the end-of-text token (the argmax id),
    so positions after it never influence the result: dropping them gives the same
    embedding while a 10-word caption costs ~15 positions instead of 77. Other
    towers (HF text models, CoCa, mean pooling) take the full ``encode_text`` path.
    """
    trimmable = (isinstance(model, open_clip.model.CLIP) and model.text_pool_type == "argmax"
                 and model.attn_mask is not None)
    if not trimmable:
        return model.encode_text(tokens)
    length = int(tokens.argmax(dim=-1).max()) + 1
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens[:, :length]).to(cast_dtype)
    x = x + model.positional_embedding[:length].to(cast_dtype)
    x = model.transformer(x, attn_mask=model.attn_mask[:length, :length])
    x = model.ln_final(x)
    x = x[torch.arange(x.shape[0]), tokens[:, :length].argmax(dim=-1)]
    return x @ model.text_projection if not isinstance(model.text_projection, torch.nn.Linear) \
        else model.text_projection(x)
