"""Every image file the lab reads is opened by `open_image`: one pixel limit, one kind of message.

Why one function: PIL reads only a file's header in ``Image.open``, so its declared
size is known before any pixel is decoded, but PIL's own guard against decompression
bombs (``Image.MAX_IMAGE_PIXELS``) only warns at its limit and raises at twice it, and a
damaged file raises any of ``OSError``, ``SyntaxError``, ``ValueError``, ``EOFError``
or ``UnidentifiedImageError`` depending on its format. Here the declared size is checked
against `backend.core.limits.MAX_IMAGE_PIXELS` before decoding, and every failure becomes an
`ImageFileError` (a ``ValueError``: the command line and the tabs show it as the user's
to fix) that names the file and says why. PIL's own limit is set to the same value, so
a reader that cannot come through here (a ``datasets`` table decoding its own image
column) refuses a bomb at twice the limit rather than at twice PIL's default.

Pixels deeper than 8 bits: PIL reduces 16-bit RGB(A) and grey-with-alpha PNGs to 8 bits itself,
but a single-channel image deeper than 8 bits (16-bit grey PNG or TIFF: mode ``I;16``;
32-bit integer: ``I``; float: ``F``) is *clipped* by ``convert("RGB")``: every value
above 255 becomes white, so a 16-bit grey photo scored as an all-white image. `rgb`
scales such pixels to 8 bits instead (and refuses values outside the range its mode
can hold, rather than guess). Every image the lab scores goes through `rgb`.

A truncated JPEG opens and even passes ``Image.verify()``; only decoding finds the
missing bytes, so `image_problems` (what campaign files and training manifests are
checked with before anything is created or trained) decodes every file, on threads
(PIL releases the GIL while decoding).
"""
from __future__ import annotations

import io
import os
import warnings
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from backend.core.limits import MAX_IMAGE_PIXELS

Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
# PIL warns between the limit and twice it, before `open_image` refuses such a file with its own message: the
# warning would only repeat, in a log, what the user is told.
warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)
FORMATS = "PNG, JPEG, WebP, GIF, BMP, TIFF"
MISSING_FILE = "the file does not exist"
DAMAGED = (OSError, SyntaxError, ValueError, EOFError)  # what PIL's decoders raise on a damaged file


class ImageFileError(ValueError):
    """An image file that cannot be used. ``name`` is the file as the user knows it, ``reason`` why."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"Could not read the image {name!r}: {reason}.")
        self.name, self.reason = name, reason


def open_image(source: str | Path | bytes, name: str | None = None, *, upright: bool = False) -> Image.Image:
    """The decoded RGB image of a file (or of raw bytes), or `ImageFileError`.

    `name` is how the message calls the file (an upload's own name rather than the server's copy of it);
    `upright` turns the image as its EXIF orientation says, as a viewer shows it (the probe does; benchmarks
    read pixels as stored, as their published numbers did).
    """
    shown = name or ("(uploaded bytes)" if isinstance(source, bytes) else str(source))
    try:
        with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
            _check_size(image, shown)
            image.load()
            return rgb(ImageOps.exif_transpose(image) if upright else image, shown)
    except ImageFileError:
        raise
    except FileNotFoundError:
        raise ImageFileError(shown, MISSING_FILE) from None
    except UnidentifiedImageError:
        raise ImageFileError(shown, f"it is not an image file this app can open ({FORMATS})") from None
    except Image.DecompressionBombError:
        raise ImageFileError(shown, f"it declares more than {2 * MAX_IMAGE_PIXELS:,} pixels; the limit is "
                                    f"{MAX_IMAGE_PIXELS:,} (a guard against decompression bombs)") from None
    except DAMAGED as error:
        raise ImageFileError(shown, f"the file is damaged ({error or type(error).__name__})") from None


HIGH_DEPTH = {"I;16": 65535, "I;16L": 65535, "I;16B": 65535, "I;16N": 65535, "I": 65535, "F": 1.0}


def rgb(image: Image.Image, name: str = "(image)") -> Image.Image:
    """`image` as 8-bit RGB. Single-channel pixels deeper than 8 bits are scaled to 0-255 from the range their
    mode holds (16-bit: 0-65535, which a 32-bit integer image is read in too, as PIL stores 16-bit PNGs in it;
    float: 0-1), where ``convert`` would clip them to white; values outside that range are an `ImageFileError`."""
    full_scale = HIGH_DEPTH.get(image.mode)
    if full_scale is None:
        return image.convert("RGB")
    import numpy as np

    pixels = np.asarray(image, dtype=np.float64)
    low, high = (float(pixels.min()), float(pixels.max())) if pixels.size else (0.0, 0.0)
    if low < 0 or high > full_scale or not np.isfinite(pixels).all():
        raise ImageFileError(name, f"its {image.mode} pixels run from {low:g} to {high:g}, outside the 0-"
                                   f"{full_scale:g} this app reads such images in; save it with 8 or 16 bits per "
                                   "channel")
    grey = np.rint(pixels * (255.0 / full_scale)).astype(np.uint8)
    return Image.fromarray(grey, mode="L").convert("RGB")


def _check_size(image: Image.Image, shown: str) -> None:
    """Refuse a declared size over the limit; only the header has been read so far."""
    width, height = image.size
    if width * height > MAX_IMAGE_PIXELS:
        raise ImageFileError(shown, f"it declares {width:,} x {height:,} = {width * height:,} pixels; the limit is "
                                    f"{MAX_IMAGE_PIXELS:,} (a guard against decompression bombs)")


def image_problems(paths: Iterable[str | Path]) -> dict[str, str]:
    """Each distinct path that cannot be used -> why (missing, not an image, damaged, too large); {} when all can.

    Every file is decoded in full (a truncated JPEG is found no other way), on up to 8 threads.
    """
    distinct = list(dict.fromkeys(str(path) for path in paths))
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        reasons = list(pool.map(_problem, distinct))
    return {path: reason for path, reason in zip(distinct, reasons) if reason}


def _problem(path: str) -> str | None:
    try:
        open_image(path)
    except ImageFileError as error:
        return error.reason
    return None


def listed_problems(problems: dict[str, str], what: str, shown: int = 5) -> str:
    """One message for several unusable images: how many, then the first few with why."""
    first = "; ".join(f"{path}: {reason}" for path, reason in list(problems.items())[:shown])
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return f"{len(problems)} image(s) {what} cannot be used: {first}{more}"
