"""Image generation throughput: our generate path, unbatched and batched, against diffusers' plain pipeline loop in
the same run, with a 95% interval on each ratio; whether a batched image regenerates pixel-identical; and the time a
BiVLC-scale campaign (2,933 captions x 4 images) would take at the measured rates.

Every side draws with ONE loaded pipeline (same weights, device, dtype, scheduler, steps, guidance and size):
  peer     diffusers' plain loop, one call per image: `pipe(prompt, num_inference_steps, guidance_scale, height,
           width, generator=torch.Generator("cpu").manual_seed(seed))`, the prompt already suffixed as ours is.
  ours-N   `backend.generate.diffusion.generate_batch`, N images per pipeline call, each from its own CPU generator,
           with what our path adds (the prompt suffix, the resize to the stored size, the record); the captions x
           seeds are cut into batches in order across captions, as the generate job does. Storing the PNG and
           WebP files and the store's rows is not timed.
Each round every side draws the same --images images (captions x 4 seeds, as a campaign has them); the sides take
turns in an order that rotates round by round, so a shared machine's load drift hits all alike. Each round's ratio
is ours-N/peer images/s; the reported ratio is their geometric mean with a 95% t-interval on the mean log-ratio
(`bench.train_step.interval`). Rounds go on until every interval's half-width is below --resolve, or --max-rounds,
or --max-minutes per model.

Models: `tiny` (the SDXL-shaped test pipeline, built here offline: a CPU check of the code, not of a real model's
speed); a preset (`sdxl-turbo`, `bivlc`, `sd-turbo`) loaded by the real code (`load_pipeline`, from the Hugging
Face cache: set HF_HUB_CACHE where its weights are); or, with --random-weights, the preset's settings on a pipeline
of SDXL's architecture with random weights, saved and loaded back through `load_pipeline` (for a GPU machine that
cannot reach the hub: the same shapes, so the same work per image, but the images are noise; sdxl-turbo and
bivlc only, which are SDXL models).

    .venv/bin/python bench/generate_throughput.py --model tiny --device cpu              # here (1 thread)
    .venv/bin/python bench/generate_throughput.py --model sdxl-turbo bivlc --device cuda --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.train_step import interval  # noqa: E402 (the project root is on sys.path from here on)

BIVLC_IMAGES = 2933 * 4  # BiVLC's test captions, 4 candidates each
CAPTIONS = ["A dog sitting on a red sofa next to a window.", "Two children playing with a ball in the park.",
            "A man riding a bicycle down a busy street.", "A white plate with a sandwich and a cup of coffee.",
            "A cat sleeping under a wooden table.", "A woman holding an umbrella in the rain.",
            "A boat on a calm lake at sunset.", "A bowl of oranges beside a green bottle."]
SEEDS_PER_CAPTION = 4
SDXL_SHAPED = {"stabilityai/stable-diffusion-xl-base-1.0": "bivlc", "stabilityai/sdxl-turbo": "sdxl-turbo"}


def tiny_preset(work: Path, steps: int):
    from backend.generate.presets import Preset
    from tests.support import tiny_diffusion

    return Preset.custom(str(tiny_diffusion.save_tiny_sdxl(work)), steps=steps, guidance=5.0)


def sdxl_shaped_preset(name: str, work: Path, device: str):
    """The named preset on a pipeline of SDXL base's architecture with random weights, saved under `work` in fp16
    and read back by `load_pipeline`, as a downloaded model would be. Its native size is the preset's, so that
    `regenerate` (which knows the folder as a custom model, drawn at its native size) draws what the preset drew."""
    import torch
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

    from backend.generate.presets import get_preset
    from tests.support import tiny_diffusion

    preset = get_preset(name)
    if preset.model_id not in SDXL_SHAPED:
        raise SystemExit(f"--random-weights builds SDXL's architecture: {', '.join(SDXL_SHAPED.values())}, not {name}")
    tokenizer = CLIPTokenizer.from_pretrained(tiny_diffusion.write_tokenizer_files(work / "tokenizer-src"),
                                              model_max_length=77)
    text = {"vocab_size": 49408, "max_position_embeddings": 77, "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id}
    with torch.device(device):  # random init on the GPU: seconds, not minutes
        torch.manual_seed(0)
        encoder = CLIPTextModel(CLIPTextConfig(hidden_size=768, intermediate_size=3072, num_attention_heads=12,
                                               num_hidden_layers=12, hidden_act="quick_gelu", **text))
        encoder_2 = CLIPTextModelWithProjection(CLIPTextConfig(
            hidden_size=1280, intermediate_size=5120, num_attention_heads=20, num_hidden_layers=32,
            projection_dim=1280, hidden_act="gelu", **text))
        unet = UNet2DConditionModel(  # stabilityai/stable-diffusion-xl-base-1.0's unet/config.json
            sample_size=(preset.height or 1024) // 8,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
            block_out_channels=(320, 640, 1280), layers_per_block=2, transformer_layers_per_block=(1, 2, 10),
            attention_head_dim=(5, 10, 20), cross_attention_dim=2048, use_linear_projection=True,
            addition_embed_type="text_time", addition_time_embed_dim=256, projection_class_embeddings_input_dim=2816)
        vae = AutoencoderKL(  # its vae/config.json
            down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
            block_out_channels=(128, 256, 512, 512), layers_per_block=2, latent_channels=4, sample_size=1024,
            scaling_factor=0.13025, force_upcast=True)
    scheduler = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                       steps_offset=1, timestep_spacing="leading")
    pipeline = StableDiffusionXLPipeline(vae=vae, text_encoder=encoder, text_encoder_2=encoder_2, tokenizer=tokenizer,
                                         tokenizer_2=tokenizer, unet=unet, scheduler=scheduler)
    folder = work / "sdxl-shaped"
    pipeline.to(torch.float16).save_pretrained(folder)
    return replace(preset, model_id=str(folder), unet_id=None, variant=None)


def work_of(batch_size: int, n_images: int) -> list[tuple[list[str], list[int]]]:
    """The round's images as pipeline calls of `batch_size`: captions x seeds in order, cut across captions."""
    pairs = [(caption, 1000 * index + slot) for index, caption in enumerate(CAPTIONS * n_images)
             for slot in range(SEEDS_PER_CAPTION)][:n_images]
    return [([c for c, _ in pairs[i:i + batch_size]], [s for _, s in pairs[i:i + batch_size]])
            for i in range(0, len(pairs), batch_size)]


def make_sides(loaded, batch_sizes: list[int], n_images: int) -> dict[str, list[Callable[[], object]]]:
    """name -> the pipeline calls that draw the round's n_images images its way."""
    import torch

    from backend.generate.diffusion import generate_batch
    from backend.generate.presets import prompt_for

    preset = loaded.preset

    def peer(caption: str, seed: int) -> Callable[[], object]:
        def call() -> object:
            with torch.inference_mode():
                return loaded.pipeline(prompt=prompt_for(caption, preset), num_inference_steps=preset.steps,
                                       guidance_scale=preset.guidance, height=preset.height, width=preset.width,
                                       generator=torch.Generator(device="cpu").manual_seed(seed))
        return call

    def ours(captions: list[str], seeds: list[int]) -> Callable[[], object]:
        return lambda: generate_batch(loaded, captions, seeds)
    return {"peer": [peer(captions[0], seeds[0]) for captions, seeds in work_of(1, n_images)],
            **{f"ours-{size}": [ours(*call) for call in work_of(size, n_images)] for size in batch_sizes}}


def measure(sides: dict[str, list[Callable[[], object]]], n_images: int, args: argparse.Namespace) -> dict:
    """Rounds of every side in rotating order until each ratio's interval is narrow enough (or time is up)."""
    for calls in sides.values():
        calls[0]()  # warm-up, one call of each side's shape: kernels chosen, caches filled
    names, rates = list(sides), {name: [] for name in sides}
    started = time.monotonic()
    while True:
        turn = len(rates["peer"]) % len(names)
        for name in names[turn:] + names[:turn]:
            begin = time.perf_counter()
            for call in sides[name]:
                call()
            rates[name].append(n_images / (time.perf_counter() - begin))
        rounds = len(rates["peer"])
        ratios = {name: interval([a / b for a, b in zip(rates[name], rates["peer"])]) for name in names[1:]} \
            if rounds >= 2 else {}
        wide = any(max(high / mid, mid / low) - 1 > args.resolve for mid, low, high in ratios.values())
        out_of_time = time.monotonic() - started > 60 * args.max_minutes
        if rounds >= args.max_rounds or (rounds >= args.min_rounds and (not wide or out_of_time)):
            break
    return {"rounds": rounds, "seconds": round(time.monotonic() - started, 1),
            "images_per_s": {name: statistics.median(values) for name, values in rates.items()},
            "ratio_vs_peer": {name: {"ratio": mid, "low": low, "high": high}
                              for name, (mid, low, high) in ratios.items()}}


def regeneration_check(loaded, batch_sizes: list[int], device: str) -> dict:
    """For each batch size: draw one batch, regenerate its last image from its record (JSON, as stored) on the same
    kind of device, and compare pixels. Blank images (random weights can overflow fp16) would match trivially."""
    import numpy as np

    from backend.generate import regenerate
    from backend.generate.diffusion import generate_batch

    checks = {}
    for size in batch_sizes:
        captions, seeds = work_of(size, size)[0]
        image, record = generate_batch(loaded, captions, seeds)[-1]
        again = regenerate(json.loads(json.dumps(record)), device=device)
        pixels, regenerated = np.asarray(image.convert("RGB")), np.asarray(again.convert("RGB"))
        checks[f"batch of {size}"] = {
            "index": len(seeds) - 1, "identical": bool(np.array_equal(pixels, regenerated)),
            "max_abs_diff": int(np.abs(pixels.astype(int) - regenerated.astype(int)).max()),
            "image_std": round(float(pixels.std()), 2)}
    return checks


def bench_model(name: str, args: argparse.Namespace, work: Path) -> dict:
    import torch

    from backend.core import env
    from backend.generate.diffusion import load_pipeline
    from backend.generate.presets import get_preset

    device = env.pick_device(args.device)
    if name == "tiny":
        preset = tiny_preset(work / "tiny", args.steps or 4)
    elif args.random_weights:
        preset = sdxl_shaped_preset(name, work / name, device)
    else:
        preset = get_preset(name)
    preset = preset.with_settings(steps=args.steps)
    begin = time.monotonic()
    loaded = load_pipeline(preset, device=device, dtype=args.dtype)
    loading = time.monotonic() - begin
    sizes = [size for size in args.batch_sizes if size <= args.images]
    timing = measure(make_sides(loaded, sizes, args.images), args.images, args)
    checks = regeneration_check(loaded, sorted({1, *sizes}), device)
    hardware = torch.cuda.get_device_name(device) if device.startswith("cuda") else \
        f"CPU, {torch.get_num_threads()} threads"
    return {"model": name, "model_id": preset.model_id, "random_weights": bool(args.random_weights and name != "tiny"),
            "device": hardware, "dtype": str(loaded.dtype).removeprefix("torch."), "steps": preset.steps,
            "guidance": preset.guidance, "size": [preset.width, preset.height], "images_per_round": args.images,
            "load_seconds": round(loading, 1), **timing, "regeneration": checks,
            "bivlc_scale_hours": {side: BIVLC_IMAGES / rate / 3600 for side, rate in timing["images_per_s"].items()}}


def report(result: dict) -> None:
    size = "native size" if result["size"][0] is None else f"{result['size'][0]}x{result['size'][1]}"
    print(f"\n{result['model']} ({result['model_id']}{', random weights' if result['random_weights'] else ''}) on "
          f"{result['device']}, {result['dtype']}, {result['steps']} steps, guidance {result['guidance']}, {size}; "
          f"{result['images_per_round']} images per side per round, {result['rounds']} rounds in "
          f"{result['seconds']:.0f} s (loading took {result['load_seconds']:.0f} s)")
    if result["model"] == "tiny":
        print("  (the tiny test pipeline: a check of the code and of batching's effect, not a real model's time)")
    for side, rate in result["images_per_s"].items():
        ratio = result["ratio_vs_peer"].get(side)
        versus = f"; ours/peer {ratio['ratio']:.3f} [95% {ratio['low']:.3f}, {ratio['high']:.3f}]" if ratio else ""
        print(f"  {side:>8}: {rate:8.3f} images/s (median){versus}; BiVLC scale ({BIVLC_IMAGES:,} images): "
              f"{result['bivlc_scale_hours'][side]:.2f} h on one such device")
    for batch, check in result["regeneration"].items():
        blank = " (uninformative: a blank image)" if check["image_std"] == 0 else ""
        print(f"  regeneration, {batch}, image {check['index']}: "
              f"{'pixel-identical' if check['identical'] else 'DIFFERS, max |diff| ' + str(check['max_abs_diff'])}"
              f"{blank}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", nargs="+", default=["tiny"], help="tiny, or presets: sdxl-turbo bivlc sd-turbo")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--dtype", default="auto", choices=["auto", "fp32", "fp16", "bf16"])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 8], help="ours: images per call")
    parser.add_argument("--images", type=int, default=8, help="images per side per round")
    parser.add_argument("--steps", type=int, help="override the preset's steps (tiny: 4)")
    parser.add_argument("--random-weights", action="store_true",
                        help="SDXL's architecture with random weights under the preset's settings (no download)")
    parser.add_argument("--min-rounds", type=int, default=5)
    parser.add_argument("--max-rounds", type=int, default=40)
    parser.add_argument("--max-minutes", type=float, default=4, help="per model, after warm-up")
    parser.add_argument("--resolve", type=float, default=0.025, help="stop at this relative interval half-width")
    parser.add_argument("--threads", type=int, default=1, help="torch threads on the CPU (1: steadiest)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.min_rounds < 2 or args.images < 1 or min(args.batch_sizes) < 1:
        parser.error("--min-rounds must be >= 2, --images and every batch size >= 1")
    import diffusers
    import torch

    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, diffusers {diffusers.__version__}; sides take turns in rotating order; "
          "95% t-interval on the geometric-mean ratio", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as work:
        for name in args.model:
            results.append(bench_model(name, args, Path(work)))
            report(results[-1])
            if args.json:
                args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
