"""Generation presets: which model draws a campaign's candidate images, with which settings and licence.

BiVLC's protocol (docs/REFERENCE.md, "BiVLC annotation protocol") fixes one
recipe: SDXL base with the DPO-finetuned UNet released by the Diffusion-DPO
authors (Wallace, Dang et al.), guidance 5, the caption without its final
period plus ", high resolution, professional, 4k, highly detailed". The
protocol names no step count; 50 is the SDXL pipeline's default.
SDXL generates at 1024x1024; BiVLC stored 512x512, so the stored image is the
generated one resized (Lanczos), exactly as the DPO model card's example does.

The two Turbo presets trade quality for speed (one step, no guidance, at
their native 512x512): for trying a campaign out, or when the GPU budget is
small. Any other diffusers text-to-image model is `Preset.custom(model_id, steps,
guidance)`. Plug-ins add presets of their own generators (`backend.plugins`: the
built-in world's renderer, which needs no download and knows the truth of every
image); `presets()` lists them all.

Licences are recorded so that a campaign's export can say what governs its
images; they are what the model cards said when this was written, not legal
advice: read the linked card before publishing images.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

BIVLC_SUFFIX = ", high resolution, professional, 4k, highly detailed"
OUTPUT_SIZE = 512  # what annotators and exports get for diffusers images (BiVLC's size)
DTYPE_CHOICES = ("auto", "fp32", "fp16", "bf16")  # auto: fp16 on a GPU, fp32 on the CPU


@dataclass(frozen=True)
class Preset:
    """A named recipe. `width`/`height` are what the model generates (None: the pipeline's native size);
    `output_size` is the side of the stored image (it is resized when that differs)."""

    name: str
    model_id: str
    unet_id: str | None
    steps: int | None
    guidance: float | None
    images_per_caption: int
    prompt_suffix: str
    width: int | None
    height: int | None
    output_size: int
    licence: str
    licence_url: str
    summary: str
    generator: str = "diffusers"  # "diffusers", or a generator a plug-in registered
    variant: str | None = None  # weight files to fetch when running in fp16 ("fp16" halves the download)

    @classmethod
    def custom(cls, model_id: str, steps: int = 30, guidance: float = 5.0, unet_id: str | None = None) -> Preset:
        """Any diffusers text-to-image model (a hub id or a local `save_pretrained` folder), at its native size."""
        if not str(model_id).strip():
            raise ValueError("a custom preset needs a model id or a local model folder")
        return cls(name="custom", model_id=str(model_id).strip(), unet_id=unet_id, steps=steps, guidance=guidance,
                   images_per_caption=4, prompt_suffix="", width=None, height=None, output_size=OUTPUT_SIZE,
                   licence="see the model card", licence_url=model_card(str(model_id).strip()),
                   summary=f"{model_id}, {steps} steps, guidance {guidance}")

    def with_settings(self, steps: int | None = None, guidance: float | None = None) -> Preset:
        """This preset with steps and/or guidance overridden (None keeps the preset's)."""
        return replace(self, steps=self.steps if steps is None else steps,
                       guidance=self.guidance if guidance is None else guidance)


def model_card(model_id: str) -> str:
    """The model card's address for a hub id; a local folder has none."""
    return f"https://huggingface.co/{model_id}" if model_id.count("/") == 1 and not model_id.startswith((".", "/")) \
        else ""


PRESETS: dict[str, Preset] = {preset.name: preset for preset in (
    Preset(
        name="bivlc", model_id="stabilityai/stable-diffusion-xl-base-1.0", unet_id="mhdang/dpo-sdxl-text2image-v1",
        steps=50, guidance=5.0, images_per_caption=4, prompt_suffix=BIVLC_SUFFIX, width=1024, height=1024,
        output_size=OUTPUT_SIZE, variant="fp16",
        licence="SDXL base: CreativeML Open RAIL++-M. DPO UNet (mhdang/dpo-sdxl-text2image-v1, a finetune of SDXL "
                "base by the Diffusion-DPO authors): its model card named no licence when checked (a pull request "
                "there proposes openrail++, the base model's); see the model card",
        licence_url="https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/main/LICENSE.md",
        summary="BiVLC's recipe: SDXL base + DPO UNet, 50 steps, guidance 5, generated at 1024x1024 and "
                "resized to 512x512; the slowest preset (50 UNet passes, twice each for guidance)"),
    Preset(
        name="sdxl-turbo", model_id="stabilityai/sdxl-turbo", unet_id=None, steps=1, guidance=0.0,
        images_per_caption=4, prompt_suffix="", width=512, height=512, output_size=OUTPUT_SIZE, variant="fp16",
        licence="Stability AI Non-Commercial Research Community License (sai-nc-community); commercial use needs "
                "a Stability AI licence (https://stability.ai/license)",
        licence_url="https://huggingface.co/stabilityai/sdxl-turbo/blob/main/LICENSE.md",
        summary="SDXL-Turbo: 1 step, no guidance, 512x512; fast drafts, weaker prompt following"),
    Preset(
        name="sd-turbo", model_id="stabilityai/sd-turbo", unet_id=None, steps=1, guidance=0.0,
        images_per_caption=4, prompt_suffix="", width=512, height=512, output_size=OUTPUT_SIZE, variant="fp16",
        licence="Stability AI Non-Commercial Research Community License (sai-nc-community; newer copies of the "
                "card name the Stability AI Community License); commercial use needs a Stability AI licence",
        licence_url="https://huggingface.co/stabilityai/sd-turbo/blob/main/LICENSE.md",
        summary="SD-Turbo (distilled SD 2.1): 1 step, no guidance, 512x512; the smallest download")
)}


def presets() -> dict[str, Preset]:
    """Every named preset: the plug-ins' generators first (they need no download), then the diffusers ones."""
    from backend import plugins

    own = {preset.name: preset for generator in plugins.hooks().generators.values() for preset in generator.presets}
    return {**own, **PRESETS}


def offline_presets() -> list[str]:
    """Presets whose generator is a plug-in's (no model download, no GPU)."""
    return [name for name, preset in presets().items() if preset.generator != "diffusers"]


def get_preset(name: str) -> Preset:
    """A named preset; the error lists them and says how to use another model."""
    known = presets()
    if name not in known:
        raise ValueError(f"unknown preset {name!r}; one of {', '.join(known)}, or 'custom' with a model id")
    return known[name]


def find_preset(model_id: str, unet_id: str | None) -> Preset | None:
    """The preset that uses this model and UNet (how a stored record finds its generation size), if any."""
    return next((p for p in presets().values() if p.model_id == model_id and p.unet_id == unet_id), None)


def prompt_for(caption: str, preset: Preset) -> str:
    """The text the model sees: the caption without trailing whitespace and its final period, plus the suffix.

    BiVLC normalised captions to end with a period and then appended the suffix after removing it, so
    "A dog on a bed." becomes "A dog on a bed, high resolution, professional, 4k, highly detailed".
    """
    text = str(caption).strip()
    if text.endswith("."):
        text = text[:-1].rstrip()
    if not text:
        raise ValueError("cannot build a prompt from an empty caption")
    return text + preset.prompt_suffix
