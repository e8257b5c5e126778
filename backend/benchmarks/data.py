"""Benchmark data on disk: where it lives, how it is fetched and checked, and what to do when it is missing.

Every benchmark keeps its files under ``<benchmarks_dir>/<folder>/`` (the
``benchmarks_dir`` setting). A loader names the files it needs as ``Remote``
entries: where the file comes from, and its SHA-256 where the publisher's
copy is pinned. ``ensure`` returns the local file, downloading it first when
a URL is known and the network allows, and checks its checksum; a file with
no pinned checksum is recorded at first download (``checksums.json``) and
must match afterwards. What cannot be fetched (COCO and Visual Genome images behind
zips of up to about 15 GB, gated or licence-bound data) raises ``DataMissing`` with the
exact steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.core import env
from backend.core.files import sha256_of
from backend.models.checkpoint_files import CatalogError, ChecksumBook, check_sha256, download_url


class DataMissing(ValueError):
    """A benchmark's data is not on disk; the message lists the exact steps to get it."""


@dataclass(frozen=True)
class Remote:
    """One file a benchmark needs: its name under the benchmark's folder, its URL, its pinned SHA-256 if known."""

    name: str
    url: str = ""
    sha256: str = ""


def default_root() -> Path:
    from backend.core.settings import get_settings

    return get_settings().benchmarks_dir


def steps_message(benchmark: str, folder: Path, steps: list[str]) -> str:
    numbered = "\n".join(f"  {i}. {step}" for i, step in enumerate(steps, 1))
    return f"{benchmark}: its data is not in {folder}. To get it:\n{numbered}"


def ensure(benchmark: str, folder: Path, remote: Remote, steps: list[str]) -> Path:
    """The local copy of ``remote`` under ``folder``: downloaded if missing and possible, checksum checked.

    ``steps`` are shown (with the URL tried, if any) when the file is neither
    here nor downloadable.
    """
    path = folder / remote.name
    book = ChecksumBook(folder / "checksums.json")
    owned = False
    if not path.is_file():
        if not remote.url:
            raise DataMissing(steps_message(benchmark, folder, steps))
        if env.hub_offline():
            raise DataMissing(steps_message(benchmark, folder, [
                f"download {remote.url} to {path} (not tried: offline mode, HF_HUB_OFFLINE or COMPLAB_OFFLINE)",
                *steps]))
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            download_url(remote.url, path)
        except CatalogError as error:
            raise DataMissing(steps_message(benchmark, folder, [f"{error}; download it to {path} by hand",
                                                                *steps])) from None
        owned = True
    expected = remote.sha256 or book.get(remote.name)
    if expected:
        try:
            check_sha256(path, expected, "pinned by the lab" if remote.sha256 else "recorded at first download",
                         owned)
        except CatalogError as error:
            raise DataMissing(str(error)) from None
    elif owned:
        book.record(remote.name, remote.url, sha256_of(path))
    return path


def require_dir(benchmark: str, folder: Path, steps: list[str]) -> Path:
    """``folder`` if it exists and is not empty, else ``DataMissing`` with ``steps``."""
    if not folder.is_dir() or not any(folder.iterdir()):
        raise DataMissing(steps_message(benchmark, folder, steps))
    return folder
