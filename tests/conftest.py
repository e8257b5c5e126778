"""Shared fixtures (a tiny open_clip model built locally and saved three ways) and the tiers' rule.

The environment is set before anything imports huggingface_hub, which reads
HF_HUB_OFFLINE and HF_HUB_CACHE once at import time; under pytest-xdist every
worker is a process of its own that imports this file, so each gets its own
temporary hub cache.

Tiers (docs/TESTING.md): a test marked `system` may start processes, servers
and browsers; `slow` marks long trainings and measurements; an unmarked test is
a unit test, and `tests.support.tiers` fails one that starts a process or a server.
"""
import atexit
import gc
import os
import shutil
import tempfile
from pathlib import Path

RAM_DISK = Path("/dev/shm")
RAM_DISK_ROOM = 4 << 30  # the suite's folders take a few hundred MB; where /dev/shm is smaller (a container's 64 MB)
# the disk is used


def _temp_on_ram_disk() -> None:
    """The tests' folders (tmp_path, the caches below, job and browser files: TMPDIR is inherited) on a RAM disk
    where one with room exists and TMPDIR was not chosen. SQLite syncs each commit to the disk, and every answer,
    job row and metric is a commit: on this machine's disk a test answering 636 tasks took 23.5 s, on tmpfs 5.9 s.
    What the tests prove does not change: a crash of a process keeps what the kernel was given either way, and the
    full-disk tests mount a small tmpfs of their own."""
    if "TMPDIR" in os.environ or not RAM_DISK.is_dir() or not os.access(RAM_DISK, os.W_OK):
        return
    if shutil.disk_usage(RAM_DISK).free >= RAM_DISK_ROOM:
        os.environ["TMPDIR"] = str(RAM_DISK)
        tempfile.tempdir = None  # pytest's capture already asked: ask again


def _scratch(prefix: str) -> str:
    """A folder for this test process, removed when it exits (on a RAM disk, left-overs would hold memory)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


_temp_on_ram_disk()
_HUB_CACHE = Path(_scratch("hf-hub-cache-"))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_CACHE"] = str(_HUB_CACHE)
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
# One torch thread per test process (job subprocesses inherit it): the tiny models gain nothing from a second
# thread, and with one xdist worker per core two threads per worker wait for each other (a 0.3 s scoring call took
# up to 9 s that way). `OMP_NUM_THREADS=2 make test` overrides it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The tests speak plain HTTP to 127.0.0.1 only, yet httpx loads a CA bundle for every client it opens, and
# gradio_client opens one per request, upload and download (56 ms each here: 76 s of CPU per run of the suite).
# An empty certificate folder makes that free, and an HTTPS call that should never happen fails verification.
os.environ.pop("SSL_CERT_FILE", None)
os.environ["SSL_CERT_DIR"] = _scratch("no-ca-certs-")
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parents[1] / ".cache" / "nltk_data"))
# Gradio's file cache (uploads, downloads handed out) is one folder per machine by default, named by content: two
# test processes (xdist workers, or another checkout's run) probing the same image share a file, and an app's
# delete_cache (every second in test_uploads_are_deleted_from_the_cache) or its close removed it under the other.
os.environ["GRADIO_TEMP_DIR"] = _scratch("gradio-cache-")

import pytest  # noqa: E402

from tests.support import tiers  # noqa: E402
from tests.support.browser import chromium  # noqa: E402
from tests.support.tiers import (  # noqa: E402,F401 (hooks)
    pytest_collection_modifyitems,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
)

tiers.install()


@pytest.fixture(scope="session")
def hub_cache() -> Path:
    return _HUB_CACHE


@pytest.fixture(scope="session")
def browser():
    """One headless chromium per test process, launched on first use (a launch costs about 1.5 s of CPU); each
    test opens its pages in a context of its own (`tests.support.browser.new_page`), so none sees another's."""
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory, hub_cache):
    """One tiny model saved as a file, as a local dir, and as a cached hub repo (`tiny.TinyCheckpoints`). Imported
    here, not at the top: pytest-xdist's controller imports this file too, and runs no test that needs torch."""
    from tests.support import tiny

    return tiny.save_tiny_model(tmp_path_factory.mktemp("tiny-model"), hub_cache)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything collection made (torch, open_clip, gradio, spaCy: millions of objects that live as long as
    the process) out of the garbage collector's sight: each full collection during the tests would walk them all
    again. When it came in (e3f032d, 1,500 unit tests) `make test-unit` took 56 to 58 s with this and 61 to 63 s
    without, in alternated idle runs on that session's machine; the same commit takes about 140 s on a 2-core machine
    of stop 47, so only the ratio (about 8% saved) is a claim here."""
    gc.freeze()
