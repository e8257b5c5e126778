"""A tiny SDXL-shaped diffusers pipeline for tests: real pipeline code, random weights, under 1 MB, built offline.

Everything SDXL has is here in miniature, so the code paths users hit with
`stabilityai/stable-diffusion-xl-base-1.0` run for real: two text encoders
(the second with a projection, giving the pooled embedding), a UNet with
SDXL's "text_time" additional conditioning, a VAE, an Euler scheduler and a
CLIP BPE tokenizer. The tokenizer is built from a vocab.json and merges.txt
written here (byte-level symbols plus a few merges), because the usual test
tokenizer lives on the Hugging Face hub and tests run offline.

The pipeline's native resolution is 64x64 (UNet sample size 32, VAE scale 2),
so generating "at the pipeline's default size" is cheap on two CPU cores.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diffusers import StableDiffusionXLPipeline

HUB_ID = "complab-tests/tiny-sdxl"
HUB_COMMIT = "5d" * 20  # the snapshot's commit hash in the laid-out hub cache
HIDDEN = 16  # width of each text encoder; the UNet's cross-attention sees both concatenated
TIME_EMBED = 8  # SDXL's addition_time_embed_dim, scaled down
MERGES = ("r e", "e d</w>", "c i", "ci r", "cir c", "l e</w>", "s q", "u a", "r e</w>", "b l", "u e</w>")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's byte-to-printable-character table, which the byte-level pre-tokenizer produces."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    codes, extra = list(printable), 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in codes)))


def write_tokenizer_files(folder: Path) -> Path:
    """A CLIP BPE vocabulary (every byte alone and word-final, a few merges, the two special tokens)."""
    folder.mkdir(parents=True, exist_ok=True)
    symbols = list(_bytes_to_unicode().values())
    vocab = symbols + [s + "</w>" for s in symbols]
    for merge in MERGES:
        vocab.append(merge.replace(" ", ""))
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    (folder / "vocab.json").write_text(json.dumps({token: i for i, token in enumerate(vocab)}, ensure_ascii=False))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(MERGES) + "\n")
    return folder


def build_tiny_sdxl(folder: Path, seed: int = 0) -> StableDiffusionXLPipeline:
    """The tiny pipeline, its weights drawn from `seed` (tokenizer files go to `folder/tokenizer-src`).

    diffusers and transformers are imported here, not with this module: importing diffusers' models takes
    seconds, and a test process that collects a module importing this one may never build a pipeline.
    """
    import torch
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

    tokenizer = CLIPTokenizer.from_pretrained(write_tokenizer_files(folder / "tokenizer-src"), model_max_length=77)
    torch.manual_seed(seed)
    text_config = CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=HIDDEN, intermediate_size=32, num_attention_heads=2,
        num_hidden_layers=2, max_position_embeddings=77, projection_dim=HIDDEN, hidden_act="gelu",
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    unet = UNet2DConditionModel(
        sample_size=32, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=(2, 4), norm_num_groups=4, use_linear_projection=True, cross_attention_dim=2 * HIDDEN,
        addition_embed_type="text_time", addition_time_embed_dim=TIME_EMBED,
        # six micro-conditioning numbers (original size, crop corner, target size), each embedded, + pooled text
        projection_class_embeddings_input_dim=6 * TIME_EMBED + HIDDEN)
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 16), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=4,
        sample_size=64)
    scheduler = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                       steps_offset=1, timestep_spacing="leading")
    return StableDiffusionXLPipeline(
        vae=vae, text_encoder=CLIPTextModel(text_config).eval(),
        text_encoder_2=CLIPTextModelWithProjection(text_config).eval(), tokenizer=tokenizer, tokenizer_2=tokenizer,
        unet=unet.eval(), scheduler=scheduler)


def save_tiny_sdxl(folder: Path, seed: int = 0) -> Path:
    """Build the tiny pipeline and `save_pretrained` it into `folder/pipeline`; return that folder.

    The folder is what a user passes as a local model id; `lay_out_hub_cache` turns it into a cached repo.
    """
    folder = Path(folder)
    target = folder / "pipeline"
    build_tiny_sdxl(folder, seed).save_pretrained(target)
    return target


def save_tiny_unet(folder: Path, seed: int) -> Path:
    """A second UNet (other weights) saved as `folder/unet`, the layout of a finetuned-UNet repo like DPO-SDXL's."""
    unet = build_tiny_sdxl(folder, seed).unet
    unet.save_pretrained(folder / "unet")
    return folder


def lay_out_hub_cache(hub_cache: Path, source: Path, repo_id: str = HUB_ID, commit: str = HUB_COMMIT) -> str:
    """Copy a saved pipeline into `hub_cache` as `snapshot_download` leaves it, so HF_HUB_OFFLINE=1 finds `repo_id`."""
    repo = Path(hub_cache) / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    for file in sorted(p for p in Path(source).rglob("*") if p.is_file()):
        destination = snapshot / file.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(file.read_bytes())
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return repo_id
