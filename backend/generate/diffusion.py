"""Candidate images from a diffusers text-to-image pipeline, each reproducible from its own record.

Reproducibility is the point. BiVLC's code created a seeded generator and
never passed it to the pipeline, so none of its images can be regenerated.
Here every image gets its own seed and its own CPU `torch.Generator`, and the
record stored with it (model, UNet, resolved revision, prompt, seed, steps,
guidance, dtype, size, batch) is enough for `regenerate` to draw it again.

Batching is a choice (`batch_size`, default 1), and regeneration re-runs the
whole batch. One pipeline call may draw N images, each from its own
generator (diffusers takes a list of prompts and a list of generators), so an
image's initial noise is the same in any batch. Its pixels are not quite: on
the tiny SDXL test pipeline (CPU, fp32) a batch of 4 gives outputs that differ
from 4 single calls by ~1e-6 (the UNet's time-embedding Linear takes another
kernel path for 8 rows, 4 images x 2 for guidance, than for 2), enough to
flip a pixel's last bit now and then; a full-size model amplifies such
differences over 50 steps, and GPUs choose kernels by shape too. So an image
drawn in a batch regenerates exactly only in the very same batch: its record's
``batch`` holds the prompts and seeds of the whole batch, in order, and its
``index`` in it, and `regenerate` draws that batch again and keeps that image.
The cost: each record of a batch of N carries N prompts and N seeds (a few
hundred bytes per image for BiVLC's prompts at N=4), and regenerating one
image costs a whole batch's drawing. A batch-1 record's ``batch`` is None, as
is every record made before batching existed; it regenerates alone. A batched
job's batches are formed from the images still missing, so a resumed, sharded
or limited run may batch a slot with other neighbours than one uninterrupted
run would: same seed, pixels possibly a last bit apart, and still exactly
regenerable from its own record. Everything is pixel-identical only on the
same kind of device with the same library versions (not across CPU and GPU:
record and regenerate on the same kind of device).

CPU generators: the initial noise then does not depend on the device, and
`diffusers` documents CPU generators as the reproducible choice.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from PIL import Image

from backend.core import env
from backend.core.errors import first_line
from backend.generate.presets import DTYPE_CHOICES, Preset, find_preset, offline_presets, prompt_for

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}  # as recorded
_CHOICE_OF_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
LOCAL = "local"  # the revision recorded for a model loaded from a folder


class GenerationError(ValueError):
    """A model that cannot be loaded or used; the message names it and says what to do."""


def pick_dtype(dtype: str, device: str) -> torch.dtype:
    """`auto`: fp16 on a GPU (the SDXL and Turbo model cards' choice; SDXL's VAE upcasts itself), fp32 on CPU."""
    if dtype not in DTYPE_CHOICES:
        raise GenerationError(f"dtype must be one of {', '.join(DTYPE_CHOICES)}, not {dtype!r}")
    on_cpu = not device.startswith(("cuda", "mps"))
    if dtype == "auto":
        return torch.float32 if on_cpu else torch.float16
    if dtype == "fp16" and on_cpu:
        raise GenerationError("fp16 on the CPU is not supported by diffusion models' ops; use fp32 or bf16")
    return DTYPES[dtype]


@dataclass
class LoadedPipeline:
    """A pipeline on its device with what a record needs to name it."""

    pipeline: Any
    preset: Preset
    revision: str  # the commit hash the pipeline's files came from, the requested revision, or "local"
    unet: str | None  # the swapped-in UNet's id, "@commit" appended when the cache says which
    dtype: torch.dtype
    device: str


def _is_local(model_id: str) -> bool:
    return Path(model_id).expanduser().is_dir()


def _cached_commit(repo_id: str, filename: str, revision: str | None) -> str | None:
    """The commit of the cached snapshot holding `filename` (where `from_pretrained` read it), if any."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename, revision=revision)
    if not isinstance(found, str):
        return None
    parts = Path(found).parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts else None


def _load_error(what: str, model_id: str, revision: str | None, error: Exception) -> GenerationError:
    """The error a failed load raises: what was tried, why it may have failed, and the ways out."""
    where = ("HF_HUB_OFFLINE is set, so only the local Hugging Face cache was searched"
             if env.hub_offline() else "HF_HUB_OFFLINE is not set, so the download itself failed")
    cause = first_line(error)
    return GenerationError(
        f"Could not load the {what} {model_id!r} (revision {revision or 'main'}): {where} "
        f"({type(error).__name__}: {cause}). To fix it: download the model on a machine with network "
        f"(`hf download {model_id}`) and copy its Hugging Face cache (HF_HUB_CACHE) here, or pass a local folder "
        "saved with `save_pretrained`; for a gated model, accept its licence on the hub and set HF_TOKEN; or "
        f"generate with a preset that needs no download ({', '.join(offline_presets()) or 'none installed'}).")


def load_pipeline(preset: Preset, device: str = "auto", dtype: str = "auto", revision: str | None = None,
                  unet_revision: str | None = None) -> LoadedPipeline:
    """The preset's pipeline (its UNet swapped in when it names one) on `device` in `dtype`.

    Loading reads safetensors only (`use_safetensors=True`): a pickled checkpoint can run code. A failed
    load raises `GenerationError` saying what was tried and what to do; it is never retried silently.
    """
    from diffusers import AutoPipelineForText2Image, UNet2DConditionModel

    if preset.generator != "diffusers":
        raise GenerationError(f"preset {preset.name!r} is not a diffusers model")
    device = env.pick_device(device)
    torch_dtype = pick_dtype(dtype, device)
    variant = preset.variant if torch_dtype == torch.float16 else None
    components = {}
    unet_label = preset.unet_id
    if preset.unet_id:
        try:
            components["unet"] = UNet2DConditionModel.from_pretrained(
                preset.unet_id, subfolder="unet", revision=unet_revision, dtype=torch_dtype, use_safetensors=True)
        except Exception as error:  # every failure of a load is reported with what to do
            raise _load_error("UNet", preset.unet_id, unet_revision, error) from error
        if not _is_local(preset.unet_id):
            commit = _cached_commit(preset.unet_id, "unet/config.json", unet_revision)
            unet_label = f"{preset.unet_id}@{commit}" if commit else preset.unet_id
    try:
        pipeline = AutoPipelineForText2Image.from_pretrained(
            preset.model_id, revision=revision, dtype=torch_dtype, variant=variant, use_safetensors=True, **components)
    except Exception as error:
        raise _load_error("pipeline", preset.model_id, revision, error) from error
    resolved = LOCAL if _is_local(preset.model_id) else \
        _cached_commit(preset.model_id, "model_index.json", revision) or revision or "main"
    pipeline.set_progress_bar_config(disable=True)
    return LoadedPipeline(pipeline.to(device), preset, resolved, unet_label, torch_dtype, device)


def _draw_batch(loaded: LoadedPipeline, prompts: Sequence[str], seeds: Sequence[int], steps: int,
                guidance: float) -> list[Image.Image]:
    """One pipeline call for the whole batch, image i from prompt i and its own CPU generator seeded with seed i,
    at the preset's generation size."""
    preset = loaded.preset
    generators = [torch.Generator(device="cpu").manual_seed(int(seed)) for seed in seeds]
    with torch.inference_mode():
        return loaded.pipeline(prompt=list(prompts), negative_prompt=None, num_inference_steps=steps,
                               guidance_scale=guidance, height=preset.height, width=preset.width,
                               num_images_per_prompt=1, generator=generators, output_type="pil").images


def _resized(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    return image if image.size == size else image.resize(size, Image.Resampling.LANCZOS)


def stored_size(generated: tuple[int, int], output_size: int) -> tuple[int, int]:
    """The stored image's (width, height): shrunk to `output_size` on the long side, never enlarged."""
    width, height = generated
    if max(width, height) <= output_size:
        return width, height
    scale = output_size / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def generate_batch(loaded: LoadedPipeline, captions: Sequence[str], seeds: Sequence[int],
                   ) -> list[tuple[Image.Image, dict]]:
    """One image per (caption, seed) pair, all in one pipeline call (the preset's prompt suffix added to each
    caption), each with its record.

    The record has what `regenerate` needs and what a campaign stores: generator, model, unet, revision,
    prompt, negative_prompt, seed, steps, guidance, dtype, width and height (of the stored image), and batch:
    None for a batch of one, else {"index": i, "prompts": [...], "seeds": [...]} (the whole batch, in order).
    """
    preset = loaded.preset
    if preset.steps is None or preset.guidance is None:  # only a plug-in's own generator may leave them out
        raise ValueError(f"preset {preset.name!r} draws with diffusers but names no step count or guidance")
    if len(captions) != len(seeds) or not seeds:
        raise ValueError(f"a batch needs one caption per seed, not {len(captions)} captions and {len(seeds)} seeds")
    prompts = [prompt_for(caption, preset) for caption in captions]
    seeds = [int(seed) for seed in seeds]
    out = []
    for index, raw in enumerate(_draw_batch(loaded, prompts, seeds, preset.steps, preset.guidance)):
        image = _resized(raw, stored_size(raw.size, preset.output_size))
        out.append((image, {
            "generator": "diffusers", "model": preset.model_id, "unet": loaded.unet, "revision": loaded.revision,
            "prompt": prompts[index], "negative_prompt": None, "seed": seeds[index], "steps": preset.steps,
            "guidance": preset.guidance, "dtype": DTYPE_NAMES[loaded.dtype], "width": image.width,
            "height": image.height,
            "batch": {"index": index, "prompts": prompts, "seeds": seeds} if len(seeds) > 1 else None}))
    return out


def generate(loaded: LoadedPipeline, caption: str, seeds: Sequence[int], batch_size: int = 1,
             ) -> list[tuple[Image.Image, dict]]:
    """One image per seed for `caption`, `batch_size` of them per pipeline call (the last call may draw fewer)."""
    chunks = [list(seeds[start:start + batch_size]) for start in range(0, len(seeds), batch_size)]
    return [drawn for chunk in chunks for drawn in generate_batch(loaded, [caption] * len(chunk), chunk)]


def batch_of(record: dict) -> tuple[list[str], list[int], int]:
    """(prompts, seeds, index) of the batch a record's image was drawn in; a record without one was drawn alone.

    A record read from the store holds the batch as JSON text. A batch that does not hold the record's own
    prompt and seed at its index is refused: regenerating from it would give another image.
    """
    batch = record.get("batch")
    if batch is None:
        return [record["prompt"]], [int(record["seed"])], 0
    batch = json.loads(batch) if isinstance(batch, str) else batch
    prompts, seeds, index = list(batch["prompts"]), [int(s) for s in batch["seeds"]], int(batch["index"])
    if len(prompts) != len(seeds) or not 0 <= index < len(seeds) or \
            (prompts[index], seeds[index]) != (record["prompt"], int(record["seed"])):
        raise GenerationError(f"the record's batch does not hold its own prompt and seed at index {index}: "
                              "it cannot be regenerated from this record")
    return prompts, seeds, index


@lru_cache(maxsize=1)
def _loaded_for(model: str, unet: str | None, revision: str, dtype: str, device: str) -> LoadedPipeline:
    """The last pipeline `regenerate` loaded, kept: regenerating a campaign's images reuses it."""
    unet_id, _, unet_commit = (unet or "").partition("@")
    preset = find_preset(model, unet_id or None) or Preset.custom(model, unet_id=unet_id or None)
    return load_pipeline(preset, device=device, dtype=_CHOICE_OF_NAME[dtype],
                         revision=None if revision == LOCAL else revision, unet_revision=unet_commit or None)


def regenerate(record: dict, device: str = "auto") -> Image.Image:
    """Draw a stored diffusers image again from its record alone (same model revision, seeds, settings).

    An image drawn in a batch is drawn again in that same batch (see the module's note on batching). Pixel-
    identical to the stored image when run on the same kind of device with the same library versions; the files
    are pinned to the recorded commit.
    """
    if record.get("generator") != "diffusers":
        raise GenerationError(f"not a diffusers record (generator {record.get('generator')!r})")
    prompts, seeds, index = batch_of(record)
    loaded = _loaded_for(record["model"], record.get("unet"), record["revision"], record["dtype"],
                         env.pick_device(device))
    image = _draw_batch(loaded, prompts, seeds, record["steps"], record["guidance"])[index]
    return _resized(image, (record["width"], record["height"]))
