"""User-supplied names and paths, made safe: run names are slugs, paths stay inside the allowed roots.

Every path a user types (a manifest, a base model, an output folder, a data
folder) goes through `confine` before anything opens or creates it; every name
that becomes a folder goes through `check_slug`. Symbolic links are resolved
first, so a link inside the workspace that points elsewhere is refused too.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class PathError(ValueError):
    """A name or path the app will not use; the message says what is allowed."""


def check_slug(value: str, what: str = "name") -> str:
    """`value` if it is a safe folder name (letters, digits, '.', '_', '-'; no '..'), else a `PathError`."""
    if not SLUG.fullmatch(value or "") or ".." in value:
        raise PathError(f"{what} {value!r} is not allowed: use 1-100 letters, digits, '.', '_' or '-', "
                        "starting with a letter or digit (no '/', no '..')")
    return value


def confine(path: str | Path, roots: Iterable[Path], what: str = "path", base: Path | None = None) -> Path:
    """The resolved `path` (relative ones taken from `base`) if it lies inside one of `roots`, else a `PathError`."""
    if "\x00" in str(path):
        raise PathError(f"{what} {str(path)!r} contains a NUL byte: not a path")
    roots = [Path(root).resolve() for root in roots]
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and base is not None:
        candidate = base / candidate
    resolved = candidate.resolve()
    if not any(resolved.is_relative_to(root) for root in roots):
        raise PathError(f"{what} '{path}' is outside the allowed folders ({', '.join(str(r) for r in roots)}); "
                        "an admin can add a folder with the allowed_roots setting (COMPLAB_ALLOWED_ROOTS)")
    return resolved
