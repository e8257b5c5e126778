"""The limits on what people hand the lab, in one place: image size, upload size, caption length.

Why limits at all: a crafted PNG of a few hundred bytes can declare 50,000 x 50,000
pixels (7.5 GB once decoded), a 50 MB upload fills the server's temporary folder for
nothing a CLIP model could use, and the perturbation engine's parse grows faster than
linearly with a caption's length (about 3 s at 1,000 characters on one core, see
``bench/bad_input.py``) while a CLIP text tower reads at most 77 tokens (~300
characters) of it anyway. Each limit is enforced where the input arrives: images in
`backend.core.images.open_image`, uploads by Gradio (``launch(max_file_size=...)`` in
``app.py``), captions by the probe, the perturbation engine, campaign files and
training manifests.
"""
from __future__ import annotations

MAX_IMAGE_PIXELS = 64_000_000  # 8,000 x 8,000: any camera photo; 192 MB decoded as RGB
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # 20 MB: the largest file the web app accepts
MAX_CAPTION_CHARS = 1000


def caption_problem(text: str | None) -> str | None:
    """Why `text` cannot be used as a caption (empty, or longer than the limit, with the limit), else None."""
    text = (text or "").strip()
    if not text:
        return "is empty"
    if len(text) > MAX_CAPTION_CHARS:
        return f"has {len(text):,} characters; the limit is {MAX_CAPTION_CHARS:,}"
    return None
