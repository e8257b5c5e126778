"""What bad input costs: the perturbation engine by caption length, and checking image files before use.

Why these numbers: captions are capped at MAX_CAPTION_CHARS because the
engine's parse grows faster than linearly with length (a 20,000-character
caption is refused up front instead), and campaign files and training
manifests decode every image once before anything is created (a truncated
JPEG is found no other way), so that check's rate bounds how long a big
manifest takes to start. A decompression bomb is refused from its header.

    .venv/bin/python bench/bad_input.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from backend.core.images import ImageFileError, image_problems, open_image  # noqa: E402
from backend.core.limits import MAX_CAPTION_CHARS  # noqa: E402
from backend.perturb import perturb, warm_up  # noqa: E402
from tests.support.bad_files import bomb_png, good_image, truncated_jpeg  # noqa: E402

PHRASE = "a brown dog holding a white frisbee next to a red car and a small cat on the green grass "


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def refused(fn) -> None:
    try:
        fn()
    except (ValueError, ImageFileError):
        return
    raise AssertionError("expected a refusal")


def captions(repeats: int) -> None:
    warm_up()
    print(f"perturbation engine, every family, median of {repeats}:")
    for length in (100, 300, 500, MAX_CAPTION_CHARS):
        caption = (PHRASE * (length // len(PHRASE) + 1))[:length].rsplit(" ", 1)[0]
        print(f"  {len(caption):6,} characters  {median_seconds(lambda: perturb(caption), repeats):7.3f} s")
    long = PHRASE * (20_000 // len(PHRASE) + 1)
    seconds = median_seconds(lambda: refused(lambda: perturb(long)), repeats)
    print(f"  {len(long):6,} characters  {seconds:7.5f} s  (refused: the limit is {MAX_CAPTION_CHARS:,})")


def images(repeats: int, count: int = 200) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = [good_image(folder / f"{i}.jpg", seed=i, size=(640, 480)) for i in range(count)]
        seconds = median_seconds(lambda: image_problems(paths), repeats)
        print(f"image check (full decode, threads): {count} 640x480 JPEGs in {seconds:.3f} s = "
              f"{count / seconds:,.0f} images/s")
        for name, path in (("truncated JPEG", truncated_jpeg(folder / "cut.jpg")),
                           ("50,000 x 50,000 PNG bomb", bomb_png(folder / "bomb.png"))):
            seconds = median_seconds(lambda: refused(lambda: open_image(path)), repeats)
            print(f"  refusing a {name} ({path.stat().st_size:,} bytes): {1000 * seconds:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    captions(args.repeats)
    images(args.repeats)


if __name__ == "__main__":
    main()
