"""The images of a task, served under names that say nothing, and only while the task is on its annotator's screen.

Before (issue 22's red-team pass): the page got the campaign folder's files, and Gradio served each under its
own name: the SHA-256 of its bytes (`backend.generate.storage`), or ``originals/…`` beside ``display/…``. From the
public code a script rebuilt the gold images, hashed them, and matched 40 of 40 names it was shown; the folder
names also told the original of a pair from the generated image.

Now every image of a task has a name of its own (`image_name`): an HMAC of the campaign's secret
(`backend.annotate.quality.campaign_secret`), the assignment and the slot. Nothing in it says which file, item
or side it is, and nobody without the secret can compute it. `TaskImages` remembers the names the page handed
out and opens a file only while its assignment is ``held`` (on its annotator's screen, `open`): once answered,
released or reclaimed, the name stops working, so another participant who got hold of a name cannot fetch the
image afterwards, and nobody can fetch images of tasks they never held. `ui.gate.TaskImageRoute` serves them.

Why a route and not per-session copies under opaque names in Gradio's cache: a copy costs the image's size on
disk per task shown (~0.1-1 MB; a 50-task session of four-image tasks ~100 MB), Gradio's cache names its folders
by a hash of the bytes, and the copies of tasks released inside SQL (a reclaim) would need a sweeper; a route
writes nothing per task (one display copy per original, once) and decides at fetch time. The names are kept in
memory (bounded, oldest first out): after a restart a page reload hands them out again (the same names: they are
computed, not drawn).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from PIL import Image

from backend.annotate import db
from backend.annotate.quality import mac
from backend.generate.storage import display_copy, shared_display_size, upright_size

NAME_CHARS = 32  # hex characters of the HMAC: 128 bits
REMEMBERED = 50_000  # names kept; a browser fetches a task's images as soon as it is shown, long before eviction


def image_name(secret: bytes, assignment_id: int, slot: int) -> str:
    """The name under which image `slot` of an assignment is served (no suffix: the format would tell an original
    from a generated image)."""
    return mac(secret, "task-image", assignment_id, slot).hex()[:NAME_CHARS]


class TaskImages:
    """The names handed out (name -> assignment and file), and the hold check at fetch time."""

    def __init__(self, store_path: Path | str, remembered: int = REMEMBERED):
        self.store_path = store_path
        self.remembered = remembered
        # name -> assignment, folder, file, the size shared by the task's images (None: as they come)
        self._files: OrderedDict[str, tuple[int, Path, Path, tuple[int, int] | None]] = OrderedDict()
        self._lock = threading.Lock()

    def publish(self, assignment_id: int, folder: Path, names: tuple[str | None, ...],
                paths: tuple[str | None, ...]) -> None:
        """Remember the files of a task just shown (paths in its campaign `folder`) under their names
        (`backend.annotate.assign.Task.names`), with the one size all of them are shown at."""
        files = [(name, folder / path) for name, path in zip(names, paths) if name is not None and path is not None]
        size = _shared_size([file for _, file in files])
        with self._lock:
            for name, file in files:
                self._files[name] = (assignment_id, folder, file, size)
                self._files.move_to_end(name)
            while len(self._files) > self.remembered:
                self._files.popitem(last=False)

    def open(self, name: str) -> Path | None:
        """The display copy (`backend.generate.storage.display_copy`: every image in one format and, within a
        task, at one size, so neither the bytes nor the shape tell an original from a generated image) of the
        file named `name`, while its task is held by the annotator it was shown to; else None."""
        with self._lock:
            entry = self._files.get(name)
        if entry is None:
            return None
        assignment_id, folder, path, size = entry
        held = db.rows(self.store_path, "select 1 from assignments where id = ? and status = 'held'",
                       (assignment_id,))
        if not (held and path.is_file()):
            return None
        shown = display_copy(folder, path, size)
        with self._lock:  # the copy once made is served as it is (not read and hashed again)
            if name in self._files:
                self._files[name] = (assignment_id, folder, shown, None)
        return shown


def _shared_size(files: list[Path]) -> tuple[int, int] | None:
    """`shared_display_size` of the task's files; None when one cannot be read (`open` then says it is gone)."""
    try:
        return shared_display_size([upright_size(file) for file in files])
    except (OSError, Image.DecompressionBombError):
        return None
