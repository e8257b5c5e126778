"""How long zipping a campaign's export takes, against writing the export itself (its peer, same run).

The Export view's "Export and download as zip" writes the BiVLC-schema dataset (`export.save_dataset`: every
image's bytes embedded in Arrow shards) and the answers CSV, then zips that folder
(`backend.core.files.zip_members`: text deflated, shards stored) and hands the zip to Gradio's cache, which
hashes and copies it (`ui.context.offer`). This script times the three on `--items` rows (default 1,000) whose
two images are `--size` px PNGs of noise (default 512, BiVLC's size; noise does not compress, as photographs
barely do), made once and shared by the rows, and prints each time with its ratio to the export's. Run it on
an idle machine: it writes about 2 x items x (image size) bytes three times over, in a temporary folder.

    .venv/bin/python bench/export_zip.py --items 1000
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.annotate.export import ExportRow, save_dataset, write_answers_csv  # noqa: E402
from backend.core.files import zip_members  # noqa: E402

DISTINCT_IMAGES = 16


def rows(folder: Path, n: int, size: int) -> list[ExportRow]:
    rng = np.random.default_rng(0)
    paths = []
    for k in range(DISTINCT_IMAGES):
        path = folder / f"image{k}.png"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return [ExportRow(image=paths[k % DISTINCT_IMAGES], caption=f"caption {k}", negative_caption=f"negative {k}",
                      negative_image=paths[(k + 1) % DISTINCT_IMAGES], type="replace", subtype="obj", item_id=k)
            for k in range(n)]


def timed(work) -> tuple[float, object]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--size", type=int, default=512)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="export-zip-") as temporary:
        folder = Path(temporary)
        (folder / "images").mkdir()
        made = rows(folder / "images", args.items, args.size)
        answers = [{"campaign": "bench", "item_id": row.item_id, "stage": stage, "annotator": f"p{k}", "choice": "2"}
                   for row in made for stage in ("select", "ambiguity") for k in range(3)]
        out = folder / "export"

        def export() -> None:
            save_dataset(made, out / "dataset")
            write_answers_csv(answers, out / "answers.csv")
        export_s, _ = timed(export)
        zip_s, files = timed(lambda: zip_members(out, ["dataset", "answers.csv"], folder / "bench.zip"))
        zipped = folder / "bench.zip"

        def cache_copy() -> None:  # what `offer` does: hash the file, copy it into Gradio's cache
            digest = hashlib.sha256()
            with zipped.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
            shutil.copyfile(zipped, folder / "cached.zip")
        offer_s, _ = timed(cache_copy)
        size_mb = zipped.stat().st_size / 1e6
        print(f"{args.items} items, {args.size}px images: export {size_mb:.0f} MB zipped into {files} files")
        for label, seconds in (("export (dataset + answers.csv)", export_s), ("zip", zip_s),
                               ("hash + copy into Gradio's cache", offer_s)):
            print(f"{label:34s} {seconds:7.2f} s  {seconds / export_s:5.2f} x export")


if __name__ == "__main__":
    main()
