"""Render speed of the toy world on one core, against a per-object PIL ImageDraw peer.

Usage: python bench/render_speed.py [--n 20000] [--batch 256] [--resolution 64] [--repeats 3]

Both renderers draw the same pre-sampled scenes (scene sampling is timed
separately), so the ratio compares drawing only; ours renders in batches of ``--batch``
(a data-loader batch). The peer is the obvious implementation: one PIL image
per scene and one ImageDraw call per object; the fraction of pixels on which
the two agree is printed to show they draw the same pictures.
Target: >= 2,000 images/s at 64x64.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from backend.toyworld.render import box_side, render, render_batch  # noqa: E402
from backend.toyworld.scene import COLOURS, Scene, sample_scene  # noqa: E402


def draw_with_pil(scene: Scene, resolution: int) -> np.ndarray:
    """Peer renderer: one ImageDraw primitive per object."""
    image = Image.new("RGB", (resolution, resolution), scene.background)
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        side = box_side(obj.size, resolution)
        x0, y0 = round(obj.x * resolution - side / 2), round(obj.y * resolution - side / 2)
        x1, y1 = x0 + side - 1, y0 + side - 1
        colour = COLOURS[obj.colour]
        if obj.shape == "circle":
            draw.ellipse((x0, y0, x1, y1), fill=colour)
        elif obj.shape == "square":
            inset = round(0.075 * side)
            draw.rectangle((x0 + inset, y0 + inset, x1 - inset, y1 - inset), fill=colour)
        elif obj.shape == "triangle":
            draw.polygon([((x0 + x1) / 2, y0), (x1, y1), (x0, y1)], fill=colour)
        else:  # cross
            arm = round(0.33 * side)
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            draw.rectangle((cx - arm / 2, y0, cx + arm / 2, y1), fill=colour)
            draw.rectangle((x0, cy - arm / 2, x1, cy + arm / 2), fill=colour)
    return np.asarray(image)


def best_rate(fn, n: int, repeats: int) -> float:
    """Best images/s over ``repeats`` runs (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return n / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    scenes = [sample_scene(rng) for _ in range(args.n)]
    sample_rate = args.n / (time.perf_counter() - start)

    batches = [scenes[i:i + args.batch] for i in range(0, args.n, args.batch)]
    ours = best_rate(lambda: [render_batch(b, args.resolution) for b in batches], args.n, args.repeats)
    single = best_rate(lambda: [render(s, args.resolution) for s in scenes], args.n, args.repeats)
    peer = best_rate(lambda: [draw_with_pil(s, args.resolution) for s in scenes], args.n, args.repeats)
    end_to_end = 1 / (1 / ours + 1 / sample_rate)
    check = scenes[:500]
    agreement = np.mean(np.all(render_batch(check, args.resolution) == np.stack(
        [draw_with_pil(s, args.resolution) for s in check]), axis=-1))
    print(f"images={args.n} batch={args.batch} resolution={args.resolution} cores=1 repeats={args.repeats}")
    rows = [("toyworld render_batch", f"{ours:,.0f} images/s"),
            ("toyworld render, 1 per call", f"{single:,.0f} images/s"),
            ("PIL ImageDraw peer", f"{peer:,.0f} images/s"),
            ("ratio render_batch / peer", f"{ours / peer:.1f}x"),
            ("ratio render / peer", f"{single / peer:.1f}x"),
            ("pixel agreement with peer", f"{agreement:.3f}"),
            ("scene sampling", f"{sample_rate:,.0f} scenes/s"),
            ("sample + render_batch", f"{end_to_end:,.0f} images/s")]
    for label, value in rows:
        print(f"{label:<28}{value:>18}")
    print(f"target >= 2,000 images/s: {'met' if end_to_end >= 2000 else 'NOT met'} (sample + render)")


if __name__ == "__main__":
    main()
