"""Batched, cached encoding and scoring for a loaded model.

Probing re-scores the same image against many captions, and the same captions
against several models, so embeddings are cached by content: an image by the
hash of its pixels, a caption by its text, both per model identity. Re-probing
an image with a new caption then encodes only the new caption.
"""
from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import open_clip
import torch
import torch.nn.functional as F
from PIL import Image

from backend.core.gpu import gpu_task
from backend.core.images import rgb
from backend.models.loading import LoadedModel
from backend.models.registry import EmbeddingCache

if TYPE_CHECKING:
    from backend.models.loading import ClipModule

# Seconds one request's encoding may hold a ZeroGPU GPU (a probe with one model; a model load included).
GPU_SECONDS = 60


def image_key(image: Image.Image) -> str:
    """Content hash of the decoded pixels (the same picture uploaded twice hits the cache)."""
    digest = hashlib.blake2b(image.tobytes(), digest_size=16)
    digest.update(f"{image.mode}{image.size}".encode())
    return digest.hexdigest()


@dataclass
class Scores:
    """Similarity of every image (rows) with every text (columns), with the model's identity."""

    cosine: torch.Tensor
    logits: torch.Tensor
    identity: dict[str, str]


class Encoder:
    """Encodes images and texts for one loaded model, in batches, reusing cached embeddings.

    What the cache lacks is encoded by `embed_on_device`, images and texts of one request together: on a
    ZeroGPU Space that is one GPU allocation per request, and the cache stays in this process.
    """

    def __init__(self, loaded: LoadedModel, cache: EmbeddingCache | None = None, batch_size: int = 64):
        self.loaded = loaded
        self.cache = cache if cache is not None else EmbeddingCache()
        self.batch_size = batch_size
        self._tag = (loaded.spec, loaded.activation, loaded.precision, loaded.device)

    def encode_images(self, images: Sequence[Image.Image]) -> torch.Tensor:
        keys = [image_key(image) for image in images]
        return _rows(self._embeddings(dict(zip(keys, images)), []), keys)

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        return _rows(self._embeddings({}, texts), list(texts))

    def score(self, images: Sequence[Image.Image], texts: Sequence[str]) -> Scores:
        keys = [image_key(image) for image in images]
        found = self._embeddings(dict(zip(keys, images)), texts)
        cosine = _rows(found, keys) @ _rows(found, list(texts)).T
        scale = self.loaded.model.logit_scale.detach().float().exp().cpu()
        return Scores(cosine=cosine, logits=scale * cosine, identity=self.loaded.identity)

    def _embeddings(self, images: dict[str, Image.Image], texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Every image's (by content key) and text's embedding: the cached ones, and the rest encoded in one device
        call and cached. The cache is read once: it is shared and bounded, so by a second read another request
        (or this one's own puts) may have evicted an entry."""
        found: dict[str, torch.Tensor] = {}
        for key in [*images, *texts]:
            if (cached := self.cache.get((*self._tag, key))) is not None:
                found[key] = cached
        image_keys = [key for key in images if key not in found]
        new_texts = list(OrderedDict.fromkeys(text for text in texts if text not in found))
        if not image_keys and not new_texts:
            return found
        pixels = [self.loaded.preprocess(rgb(images[key])) for key in image_keys]  # on the CPU, here
        image_rows, text_rows = embed_on_device(ModelHandle.of(self.loaded), pixels, new_texts, self.batch_size)
        for key, row in zip([*image_keys, *new_texts], [*image_rows, *text_rows]):
            self.cache.put((*self._tag, key), row)
            found[key] = row
        return found


def _rows(found: dict[str, torch.Tensor], keys: list[str]) -> torch.Tensor:
    return torch.stack([found[key] for key in keys]) if keys else torch.empty(0, 0)


# Loaded models by identity, for `ModelHandle.resolve`; weak, so the registry alone decides what stays loaded.
_RESIDENT: weakref.WeakValueDictionary[ModelHandle, LoadedModel] = weakref.WeakValueDictionary()


@dataclass(frozen=True)
class ModelHandle:
    """A loaded model named by its identity: what a GPU task is given instead of the model itself.

    ZeroGPU pickles a task's arguments into a worker forked from this process: a handle is a few strings,
    and the worker finds the model in the memory it inherited, or loads it itself when the worker was forked
    before the model was loaded here (ZeroGPU re-uses idle workers).
    """

    spec: str
    activation: str
    precision: str
    device: str

    @classmethod
    def of(cls, loaded: LoadedModel) -> ModelHandle:
        handle = cls(loaded.spec, loaded.activation, loaded.precision, loaded.device)
        _RESIDENT[handle] = loaded
        return handle

    def resolve(self) -> LoadedModel:
        loaded = _RESIDENT.get(self)
        return loaded if loaded is not None else _load_again(self)


@lru_cache(maxsize=2)
def _load_again(handle: ModelHandle) -> LoadedModel:
    """The model of a handle this process never saw loaded (a ZeroGPU worker's own copy, kept for its next
    calls). The spec was checked against the allowed folders when the web process loaded it."""
    from backend.models.loading import load_model

    return load_model(handle.spec, handle.device, handle.precision)


@gpu_task(duration=GPU_SECONDS)
def embed_on_device(model: ModelHandle, pixels: list[torch.Tensor], texts: list[str],
                    batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalised embeddings of preprocessed images and of texts, in batches: the web process's GPU work.

    Arguments and results are plain tensors and strings (ZeroGPU pickles them); results are on the CPU.
    """
    loaded = model.resolve()
    images = [pixel_embeddings(loaded, torch.stack(pixels[start:start + batch_size]))
              for start in range(0, len(pixels), batch_size)]
    text_rows = [text_embeddings(loaded, texts[start:start + batch_size]) for start in range(0, len(texts), batch_size)]
    return (torch.cat(images) if images else torch.empty(0)), (torch.cat(text_rows) if text_rows else torch.empty(0))


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


def encode_text_trimmed(model: ClipModule, tokens: torch.Tensor) -> torch.Tensor:
    """``model.encode_text`` over only the positions up to the batch's last end-of-text token.

    CLIP's text tower is causal and pools at the end-of-text token (the argmax id),
    so positions after it never influence the result: dropping them gives the same
    embedding while a 10-word caption costs ~15 positions instead of 77. Other
    towers (HF text models, CoCa, mean pooling) take the full ``encode_text`` path.
    """
    if not isinstance(model, open_clip.model.CLIP) or model.text_pool_type != "argmax" or model.attn_mask is None:
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
