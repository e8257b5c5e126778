"""Candidate images for annotation campaigns: diffusers models, or a plug-in's generator (the built-in world's
renderer).

| module | role |
|---|---|
| `presets.py` | `Preset`, `PRESETS` (bivlc, sdxl-turbo, sd-turbo), `presets()` (plug-ins' too), `prompt_for` |
| `diffusion.py` | `load_pipeline`, `generate_batch` (N images in one call, a generator each), `regenerate` |
| `storage.py` | content-addressed PNG + WebP display copy, atomic and idempotent |
| `seeds.py` | an image's seed from (base seed, item id, slot) |
| `job.py` | the `generate` job kind: `GenerateConfig`, `run_job` (resumable, sharded under torchrun) |

Importing this package loads neither torch nor diffusers (listing job kinds stays fast).
"""
from __future__ import annotations

from PIL import Image


def regenerate(record: dict, device: str = "auto") -> Image.Image:
    """Draw a stored candidate again from its record, whichever generator made it (diffusers, or a plug-in's)."""
    from backend import plugins

    generator = plugins.hooks().generators.get(record.get("generator") or "diffusers")
    if generator is not None:
        return plugins.resolve(generator.regenerate)(record)
    from backend.generate import diffusion
    return diffusion.regenerate(record, device=device)
