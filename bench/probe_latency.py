"""Probe latency: our cached, batched probe vs a naive per-pair loop, measured in the same run.

ViT-B-32 with random weights (timing does not depend on the weights), saved as
safetensors and loaded through the real registry route. CPU, one image, ~25
variants. Prints warm probe latency, re-probe latency (same image, new caption)
and the naive loop's time for the same texts, with the ratios.

    .venv/bin/python bench/probe_latency.py [--repeats 3] [--threads 2]
"""
from __future__ import annotations

import argparse
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import open_clip
import torch
import torch.nn.functional as F
from PIL import Image
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from backend.models.registry import (
    EmbeddingCache,  # noqa: E402
    ModelRegistry,  # noqa: E402
)
from backend.probe import build_texts, run_probe  # noqa: E402

CAPTIONS = ["the brown dog and the white cat are sitting on a red sofa",
            "a man is eating a sandwich next to a small black dog",
            "a woman holding a blue umbrella walks to the left of a yellow car",
            "two large white boats are floating on the calm green river"]


def random_image(seed: int) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    return Image.fromarray(pixels)


@torch.inference_mode()
def naive_loop(loaded, image: Image.Image, texts: list[str]) -> list[float]:
    """What a first script does: encode the image and the caption anew for every pair."""
    scores = []
    for text in texts:
        image_emb = F.normalize(loaded.model.encode_image(loaded.preprocess(image)[None]), dim=-1)
        text_emb = F.normalize(loaded.model.encode_text(loaded.tokenizer([text])), dim=-1)
        scores.append(float(image_emb @ text_emb.T))
    return scores


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # A run stopped by `timeout` or a deadline still removes its 600 MB model file (SIGTERM unwinds the `with`):
    # killed runs had left 13 of them, 7.8 GB, in /tmp.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vit-b-32-random.safetensors"
        save_file(open_clip.create_model("ViT-B-32-quickgelu").state_dict(), path)
        registry, cache = ModelRegistry(device="cpu"), EmbeddingCache()
        spec = f"ViT-B-32-quickgelu:{path}"
        load_time, loaded = timed(lambda: registry.get(spec))

        warm, reprobe, naive, n_texts = [], [], [], []
        for repeat in range(args.repeats):
            image = random_image(repeat)
            first, second = CAPTIONS[repeat % len(CAPTIONS)], CAPTIONS[(repeat + 1) % len(CAPTIONS)]
            seconds, result = timed(lambda: run_probe(image, first, [spec], registry, cache, seed=repeat))
            warm.append(seconds)
            n_texts.append(len(result.texts))
            reprobe.append(timed(lambda: run_probe(image, second, [spec], registry, cache, seed=repeat))[0])
            texts = [t.text for t in build_texts(first, None, repeat)]
            naive.append(timed(lambda: naive_loop(loaded, image, texts))[0])

    warm_s, reprobe_s, naive_s = (statistics.median(v) for v in (warm, reprobe, naive))
    print(f"device cpu, {torch.get_num_threads()} threads, ViT-B-32 (random weights), "
          f"{statistics.mean(n_texts):.0f} texts per probe, median of {args.repeats}")
    print(f"model load          {load_time:6.2f} s")
    print(f"warm probe          {warm_s:6.3f} s   (target <= 0.5 s on a 2-core CPU)")
    print(f"re-probe same image {reprobe_s:6.3f} s")
    print(f"naive per-pair loop {naive_s:6.3f} s")
    print(f"speed-up warm vs naive     {naive_s / warm_s:5.1f}x  (target >= 3x)")
    print(f"speed-up re-probe vs naive {naive_s / reprobe_s:5.1f}x")


if __name__ == "__main__":
    main()
