"""What the published-benchmark loader tests share: images drawn on disk, a local HTTP server, one-item scoring.

The loaders read real files, so the tests write real files (JSON in the
authors' formats, PNG/JPG images drawn with PIL) and evaluate them with a
real open_clip model; numbers are then recomputed item by item with
``Encoder.score``, a path that shares nothing with the benchmark's task,
deduplication and streaming code.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path
from typing import Iterator, Sequence

from PIL import Image, ImageDraw

from backend.benchmarks import prepare, run_task
from backend.benchmarks.evaluator import TaskResult
from backend.benchmarks.stream import StreamEncoder
from backend.benchmarks.task import Task
from backend.models.encoder import Encoder
from backend.models.loading import LoadedModel

BLUE, RED = (0, 0, 255), (255, 0, 0)


def write_image(path: Path, seed: int, size: tuple[int, int] = (64, 48),
                square: tuple[int, int, int, int] | None = None) -> Path:
    """A distinct picture per ``seed`` (two coloured bars on blue), plus a red ``square`` (x, y, w, h) if given."""
    image = Image.new("RGB", size, BLUE)
    draw = ImageDraw.Draw(image)
    width, height = size
    draw.rectangle((seed * 7 % width, 0, seed * 7 % width + 5, height), fill=(seed * 37 % 256, 200, 60))
    draw.rectangle((0, seed * 5 % height, width, seed * 5 % height + 4), fill=(90, seed * 53 % 256, 10))
    if square is not None:
        x, y, w, h = square
        draw.rectangle((x, y, x + w - 1, y + h - 1), fill=RED)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving ``folder`` from a thread; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def go_online(monkeypatch) -> None:
    """Let ``data.ensure`` download (the suite runs offline), straight to 127.0.0.1."""
    for name in ("COMPLAB_OFFLINE", "HF_HUB_OFFLINE", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)


def evaluate(name: str, root: Path, loaded: LoadedModel, limit: int | None = None) -> tuple[Task, TaskResult]:
    """The benchmark's task and its result, through the public entry points."""
    task = prepare(name, limit, root)
    return task, run_task(task, StreamEncoder(loaded, batch_size=16))


def item_texts(task: Task, n: int) -> list[str]:
    return [task.texts[i] for i in task.text_index[n].tolist()]


def one_by_one(loaded: LoadedModel, items: Sequence[tuple[Image.Image, Sequence[str]]]) -> list[list[float]]:
    """Per (image, texts) item, cosine(image, text k), each item scored on its own (the slow path)."""
    encoder = Encoder(loaded)
    return [encoder.score([image], list(texts)).cosine[0].tolist() for image, texts in items]


def mean(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags)


def winoground_by_hand(loaded: LoadedModel, items: Sequence[tuple[Sequence[Image.Image], Sequence[str]]]
                       ) -> list[tuple[bool, bool]]:
    """Per 2x2 item (two images, caption k of image k), Winoground's (text, image) flags, strict, each item scored on
    its own with ``Encoder.score`` (c[i][k] = cosine(image i, caption k))."""
    encoder = Encoder(loaded)
    flags = []
    for images, captions in items:
        c = encoder.score(list(images), list(captions)).cosine.tolist()
        flags.append((c[0][0] > c[0][1] and c[1][1] > c[1][0], c[0][0] > c[1][0] and c[1][1] > c[0][1]))
    return flags
