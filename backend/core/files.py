"""Files written so that a crash, a kill or a full disk never leaves a half-written one under its final name, and
their content hashes.

The pattern everywhere: write under a private temporary name beside the target (same folder, so same file
system), flush it to disk, then rename it over the target with `os.replace` (one rename(2), atomic on POSIX).
"""
from __future__ import annotations

import hashlib
import os
import threading
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
    path = Path(path)
    temporary = private_name(path, "tmp")
    try:
        temporary.write_text(text)
        fsync(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
