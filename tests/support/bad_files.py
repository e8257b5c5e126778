"""Bad input made on the spot for the bad-input tests: damaged images, decompression bombs, record files that
are mis-encoded or malformed, and a pickle that must never run.

Each maker writes a real file of the kind a user could hand the lab, and the
tables pair every file with the message it must get, so the Probe, the
Campaigns tab, the command line and the training manifest are checked against
the same cases.
"""
from __future__ import annotations

import csv
import io
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

from backend.core.limits import MAX_IMAGE_PIXELS


def good_image(path: Path, seed: int = 0, size: tuple[int, int] = (64, 48)) -> Path:
    """A noisy JPEG or PNG (by suffix) of `size` (width, height) that opens and decodes."""
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return path


def truncated_jpeg(path: Path) -> Path:
    """A JPEG cut in the middle of its pixel data: it opens, and even passes Image.verify(); decoding fails."""
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(1).integers(0, 256, (128, 128, 3), dtype=np.uint8)).save(buffer, "JPEG")
    path.write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    return path


def text_file(path: Path) -> Path:
    path.write_text("these are notes, not a picture\n")
    return path


def zero_bytes(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(path: Path, width: int = 50_000, height: int = 50_000) -> Path:
    """A PNG of a few dozen bytes whose header declares width x height RGB pixels (50,000 x 50,000: 7.5 GB)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + _png_chunk(b"IEND", b""))
    return path


def bomb_jpeg(path: Path, width: int = 50_000, height: int = 50_000) -> Path:
    """A small real JPEG whose frame header (SOF0) is rewritten to declare width x height pixels."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (90, 120, 30)).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    frame = data.index(b"\xff\xc0")
    data[frame + 5:frame + 9] = struct.pack(">HH", height, width)
    path.write_bytes(bytes(data))
    return path


OVER_LIMIT_SIDE = int((1.5 * MAX_IMAGE_PIXELS) ** 0.5)  # over the limit, under twice it: only our check sees it
LIMIT = f"the limit is {MAX_IMAGE_PIXELS:,}"
# file name -> (maker, what the message says about it)
BAD_IMAGES = {
    "truncated.jpg": (truncated_jpeg, r"the file is damaged \(image file is truncated"),
    "notes.png": (text_file, "it is not an image file this app can open"),
    "empty.png": (zero_bytes, "it is not an image file this app can open"),
    "bomb.png": (bomb_png, f"it declares more than {2 * MAX_IMAGE_PIXELS:,} pixels; {LIMIT}"),
    "bomb.jpg": (bomb_jpeg, f"it declares more than {2 * MAX_IMAGE_PIXELS:,} pixels; {LIMIT}"),
    "large.png": (lambda path: bomb_png(path, OVER_LIMIT_SIDE, OVER_LIMIT_SIDE),
                  f"it declares {OVER_LIMIT_SIDE:,} x {OVER_LIMIT_SIDE:,} = {OVER_LIMIT_SIDE ** 2:,} pixels; {LIMIT}"),
}


def write_bad_images(folder: Path) -> dict[str, Path]:
    """Every file of BAD_IMAGES in `folder`: name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: maker(folder / name) for name, (maker, _) in BAD_IMAGES.items()}


def write_csv(path: Path, rows: list[dict], encoding: str = "utf-8") -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def malformed_record_files(folder: Path, row: dict) -> list[tuple[Path, str]]:
    """Record files built around one good `row` (its keys are the columns), each broken in one way, with the
    message it must get: Latin-1 text, truncated JSON and JSONL, JSON of the wrong shape, a missing column, a
    ragged row. The row's first text field gets an accented word, so the encoding matters."""
    folder.mkdir(parents=True, exist_ok=True)
    columns, text = list(row), next(key for key in row if "caption" in key)
    accented = {**row, text: row[text] + " café"}
    line = json.dumps(accented)
    ragged = folder / "ragged.csv"
    ragged.write_text(",".join(columns) + "\n" + ",".join(map(str, row.values())) + "\n"
                      + ",".join(map(str, row.values())) + ",extra,fields\n")
    (folder / "truncated.json").write_text(json.dumps({"0": accented, "1": row})[:-30])
    (folder / "truncated.jsonl").write_text(line + "\n" + line[: len(line) // 2] + "\n")
    (folder / "strings.json").write_text(json.dumps([row[text], row[text]]))
    (folder / "number.json").write_text("42")
    return [
        (write_csv(folder / "latin1.csv", [accented], "latin-1"),
         "latin1.csv is not UTF-8 text: line 2 has the byte 0xe9"),
        (folder / "truncated.json", "truncated.json is not valid JSON: .*was it cut short"),
        (folder / "truncated.jsonl", "truncated.jsonl, line 2: not valid JSON"),
        (folder / "strings.json", "strings.json, record 1: expected a JSON object with named fields, got a string"),
        (folder / "number.json", "number.json holds a number; expected a list of objects"),
        (write_csv(folder / "missing-column.csv", [{k: v for k, v in row.items() if k != text}]),
         f"missing-column.csv has no {text} column; its header \\(line 1\\) is"),
        (ragged, f"ragged.csv, line 3: {len(columns) + 2} field\\(s\\), but the header has {len(columns)}"),
    ]


class RunsCommand:
    """Unpickling this runs `touch <sentinel>` (what a malicious checkpoint does, harmlessly)."""

    def __init__(self, sentinel: Path):
        self.sentinel = sentinel

    def __reduce__(self):
        return os.system, (f"touch {self.sentinel}",)


def pickled_checkpoint(path: Path, sentinel: Path, state: dict) -> Path:
    """A .pt whose state dict is real but which also carries a payload that runs a command when unpickled."""
    import torch

    torch.save({"state_dict": state, "payload": RunsCommand(sentinel)}, path)
    return path
