"""Files written so that a crash, a kill or a full disk never leaves a half-written one under its final name, and
their content hashes.

The pattern everywhere: write under a private temporary name beside the target (same folder, so same file
system), flush it to disk, then rename it over the target with `os.replace` (one rename(2), atomic on POSIX).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def private_name(path: Path, suffix: str) -> Path:
    """A temporary sibling of `path` that no other thread or process writes to."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{suffix}")


def fsync(path: Path) -> None:
    """Flush a file or directory to disk, so that a rename can never land before the data it points to."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_text_atomic(path: Path, text: str) -> None:
    """`path` holds `text` afterwards, or its old content if anything failed on the way; never half of it."""
    with atomic_path(path) as temporary:
        temporary.write_text(text)


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_atomic(source: Path, target: Path) -> None:
    """`target` becomes a copy of `source` whole, or stays as it was: a kill mid-copy leaves only a temporary
    file (named by `private_name`), never a truncated `target`."""
    with atomic_path(target) as temporary:
        shutil.copyfile(source, temporary)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary sibling of `path` to write a file at (by any library); on success it is flushed and renamed
    over `path`, on failure removed: `path` never holds half a file."""
    path = Path(path)
    temporary = private_name(path, "tmp")
    try:
        yield temporary
        fsync(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@contextmanager
def atomic_folder(folder: Path) -> Iterator[Path]:
    """A temporary sibling folder to fill; on success it takes `folder`'s place (an older `folder` is moved aside
    first and removed after), on failure it is removed. A reader finds the old folder whole or the new one
    whole; a kill between the two renames leaves the old one complete under ``.<name>.old...``, beside."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    building, old = private_name(folder, "partial"), private_name(folder, "old")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    try:
        yield building
        for written in [*building.rglob("*"), building]:
            fsync(written)
        if folder.exists():
            os.replace(folder, old)
        os.replace(building, folder)
        fsync(folder.parent)
    finally:
        shutil.rmtree(building, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


DEFLATED_SUFFIXES = (".csv", ".json", ".jsonl", ".md", ".txt")  # text squeezes; images (in .arrow shards) do not


def zip_members(folder: Path, names: list[str], target: Path) -> int:
    """Zip `names` (files or folders, relative to `folder`; hidden files inside left out) into `target`, written
    atomically; returns the number of files. Text is deflated, the rest stored: a dataset's images are compressed
    already, and deflating them again costs CPU time for no smaller file."""
    import zipfile

    folder, target, count = Path(folder), Path(target), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as partial, zipfile.ZipFile(partial, "w", allowZip64=True) as archive:
        for name in names:
            top = folder / name
            for path in sorted([top, *top.rglob("*")] if top.is_dir() else [top]):
                relative = path.relative_to(folder)
                if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                    method = zipfile.ZIP_DEFLATED if path.suffix in DEFLATED_SUFFIXES else zipfile.ZIP_STORED
                    archive.write(path, relative.as_posix(), compress_type=method)
                    count += 1
    return count
