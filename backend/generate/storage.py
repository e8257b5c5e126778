"""Candidate images on disk: a lossless original named by its content hash, and a small display copy.

Why content-addressed: a rerun, a second rank or a regeneration that yields
the same pixels writes the same name, so storing is idempotent and a
resumed job never duplicates files; the name also lets anyone check a file
(`sha256sum`). The hash is of the PNG file's bytes.

Why a display copy: annotators download every image they judge (BiVLC showed
4 per task), so they get a WebP of at most 512 px on its long side (quality
85, a few tens of kB instead of hundreds), or a JPEG where this Pillow has no
WebP support. The PNG stays the reference for exports and regeneration.

Writes are atomic (a temporary file in the same folder, then `os.replace`),
so a job killed mid-write never leaves a truncated image under a final name;
the temporary file such a kill leaves is removed by the next run
(`remove_partial`), and a failed write (a full disk) removes its own.
"""
from __future__ import annotations

import hashlib
import io
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageOps, features

from backend.core.images import open_image

DISPLAY_MAX_SIDE = 512
DISPLAY_QUALITY = 85
PARTIAL = ".part"  # suffix of a file being written (write_atomic)
EXIF_ORIENTATION = 0x0112
TURNED = (5, 6, 7, 8)  # EXIF orientations a viewer turns a quarter: width and height swap


def display_format() -> tuple[str, str]:
    """(Pillow format, file suffix) of display copies: WebP when this Pillow can write it, else JPEG."""
    return ("WEBP", ".webp") if features.check("webp") else ("JPEG", ".jpg")


def png_bytes(image: Image.Image) -> bytes:
    """The lossless encoding whose hash names the image (no metadata, so equal pixels give equal bytes)."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def display_bytes(image: Image.Image) -> bytes:
    """The annotators' copy: at most DISPLAY_MAX_SIDE px on the long side, lossy."""
    copy = image.convert("RGB")
    if max(copy.size) > DISPLAY_MAX_SIDE:
        copy.thumbnail((DISPLAY_MAX_SIDE, DISPLAY_MAX_SIDE), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    copy.save(buffer, format=display_format()[0], quality=DISPLAY_QUALITY)
    return buffer.getvalue()


def write_atomic(path: Path, data: bytes) -> None:
    """`data` at `path`, all or nothing: written beside it under a temporary name, then renamed over it.

    An `OSError` (a full disk: ENOSPC) names `path`, which a failed write() alone would not.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=PARTIAL)
    except OSError as error:
        error.filename = error.filename or str(path)
        raise
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            error.filename = str(path)
        raise


def remove_partial(root: Path, before: float) -> int:
    """Delete the temporary files that writes interrupted by a kill left under `root` (those last modified
    before `before`, so another process's write in flight is spared); return how many."""
    removed = 0
    for path in Path(root).rglob(f".*{PARTIAL}"):
        if path.is_file() and path.stat().st_mtime < before:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def display_copy(root: Path, path: Path, size: tuple[int, int] | None = None) -> Path:
    """The display copy of an image file of the campaign folder `root`, made on first use; a display copy as is.
    With `size` (`shared_display_size`), the copy is cut to that size's aspect ratio around its centre and scaled
    to it exactly.

    Why every image an annotator sees is one: a pair task (step 4, T2I) shows the original beside the generated
    image, and a PNG original beside a WebP display copy told which was which by the bytes' format alone
    (issue 22). The copy is named by the SHA-256 of the file's bytes, as `store_image` names its own (and its size
    when it has one).
    """
    root, path = Path(root), Path(path)
    if size is None and path.parent == root / "display":
        return path
    data = path.read_bytes()
    sized = f"-{size[0]}x{size[1]}" if size else ""
    target = root / "display" / f"{hashlib.sha256(data).hexdigest()}{sized}{display_format()[1]}"
    if not target.is_file():  # upright: as a browser shows a photo with an EXIF orientation
        image = open_image(data, str(path), upright=True)
        if size:
            image = ImageOps.fit(image, size, Image.Resampling.LANCZOS)
        write_atomic(target, display_bytes(image))
    return target


def upright_size(path: Path) -> tuple[int, int]:
    """(width, height) as a viewer shows the file (EXIF orientations 5-8 swap them), read from its header."""
    with Image.open(path) as image:
        width, height = image.size
        turned = image.getexif().get(EXIF_ORIENTATION, 1) in TURNED
    return (height, width) if turned else (width, height)


def shared_display_size(sizes: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """One size for the display copies of every image of a task (their upright `sizes`), or None when their
    display copies come out the same size anyway.

    Why: a pair task shows a photo (any shape: COCO's are mostly 640x480) beside a generated image (square), and a
    512x384 copy beside a 512x512 one told which was the original, whatever the names and formats said. Every
    image is cut to the aspect ratio of the least square one around its centre (the generated image loses its top
    and bottom, a photo as wide keeps all of itself: crop, never stretch) and scaled to the largest width that
    every one of them reaches without being enlarged, at most DISPLAY_MAX_SIDE on the long side.
    """
    if len({_thumbnail_size(size) for size in sizes}) <= 1:
        return None
    width, height = max(sizes, key=lambda size: abs(math.log(size[0] / size[1])))
    aspect = width / height
    widths = []
    for w, h in sizes:
        crop = (min(w, h * aspect), min(h, w / aspect))
        widths.append(crop[0] * min(1.0, DISPLAY_MAX_SIDE / max(crop)))
    shared = math.floor(min(widths))
    return shared, max(1, round(shared / aspect))


def _thumbnail_size(size: tuple[int, int]) -> tuple[int, int]:
    """The size `display_bytes` gives an image of `size` (Pillow's thumbnail rounding)."""
    image = Image.new("1", size)
    image.thumbnail((DISPLAY_MAX_SIDE, DISPLAY_MAX_SIDE))
    return image.size


def store_image(root: Path, image: Image.Image) -> tuple[str, str, str]:
    """Store `image` under a campaign folder `root`; return (sha256, path, display path), paths relative to root.

    Layout: ``images/<sha256[:2]>/<sha256>.png`` and ``display/<sha256>.webp`` (``.jpg`` without WebP).
    A file already there is kept when it is intact (the original's hash is checked), so calling this twice
    with the same image writes nothing the second time.
    """
    root = Path(root)
    data = png_bytes(image)
    digest = hashlib.sha256(data).hexdigest()
    original = Path("images") / digest[:2] / f"{digest}.png"
    display = Path("display") / f"{digest}{display_format()[1]}"
    target = root / original
    if not (target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest):
        write_atomic(target, data)
    if not (root / display).is_file():
        write_atomic(root / display, display_bytes(image))
    return digest, original.as_posix(), display.as_posix()
