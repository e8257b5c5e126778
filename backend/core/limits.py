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

import math

MAX_IMAGE_PIXELS = 64_000_000  # 8,000 x 8,000: any camera photo; 192 MB decoded as RGB
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # 20 MB: the largest file the web app accepts
MAX_CAPTION_CHARS = 1000
# Writing a caption's variants takes well under a second warm (about 3 s at 1,000 characters): past this a rule is
# stuck on the caption, and the probes' worker stops it (`backend.core.worker.time_limit`).
PROBE_TEXTS_LIMIT_S = 60.0


# What anonymous visitors of the web app may spend (docs/SECURITY.md, "Anonymous use"). A probe loads a model
# and runs it on the CPU the crowd's annotation handlers share (in a worker process, `backend.probe.runner`): a
# few probes a minute per visitor, one running and a short line behind it; anyone beyond is told the server is
# busy.
GUEST_PROBES_PER_MINUTE = 6
PROBES_RUNNING, PROBES_WAITING = 1, 2
# A visitor's probe starts at least this long after the probe before it (anyone's; an admin's own start at once).
# Whatever a probe costs the web process itself (its upload, its request, its answer: ~60 ms of CPU on the 2-core
# test machine, however small the model) is then at most ~6% of a core; with the tiny built-in model, visitors'
# back-to-back probes came 6 a second (docs/RELIABILITY.md).
PROBE_SPACING_S = 1.0
# Sign-in: failed attempts per address, and from everyone together (a distributed guess), per window.
SIGN_IN_FAILURES, SIGN_IN_FAILURES_EVERYONE, SIGN_IN_WINDOW_S = 5, 50, 300
# Uploads land in Gradio's cache, which deletes each file CACHE_MAX_AGE_S after it was written (checked every
# CACHE_CHECK_S). Counting uploads over the time a file can live bounds what they hold on disk at any moment.
CACHE_CHECK_S, CACHE_MAX_AGE_S = 600, 3600
UPLOAD_WINDOW_S = CACHE_MAX_AGE_S + CACHE_CHECK_S
UPLOAD_BYTES_PER_CLIENT = 100 * 1024 * 1024
UPLOAD_BYTES_TOTAL = 1024 * 1024 * 1024
# Annotation, per client (a study participant's address; `backend.annotate.quality` caps the tasks one client
# holds): session starts (a study link opened or reloaded, a name typed) per window, and answers a minute. A person
# answers a task in seconds; one script answered 1,000 a minute. Two people behind one address fit.
ANNOTATE_JOINS_PER_CLIENT, ANNOTATE_JOIN_WINDOW_S = 20, 600
ANNOTATE_ANSWERS_PER_MINUTE = 120
# Campaign files: BiVLC has 2,933 items and all of SugarCrepe 7,512; a file is read whole before it is checked.
MAX_CAMPAIGN_ITEMS = 20_000
MAX_CAMPAIGN_FILE_BYTES = 50 * 1024 * 1024


def guest_probes_spent(wait_s: float) -> str:
    """What a visitor over `GUEST_PROBES_PER_MINUTE` reads, `wait_s` seconds before the next probe is theirs."""
    return (f"Visitors may run {GUEST_PROBES_PER_MINUTE} probes a minute: wait {math.ceil(wait_s)} s (or sign in "
            "as an admin).")


def caption_problem(text: str | None) -> str | None:
    """Why `text` cannot be used as a caption (empty, or longer than the limit, with the limit), else None.

    The length and emptiness checks of machine-made data (training manifests, whose web captions may hold a
    zero-width space); what people type goes through `backend.core.text.problem`, which also refuses control
    and invisible characters."""
    text = (text or "").strip()
    if not text:
        return "is empty"
    if len(text) > MAX_CAPTION_CHARS:
        return f"has {len(text):,} characters; the limit is {MAX_CAPTION_CHARS:,}"
    return None
