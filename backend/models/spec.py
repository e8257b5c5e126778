"""Model specs: what users type and results record, parsed and confined without loading anything (no torch).

Spec strings:
  ``ViT-B-32-quickgelu:openai``        open_clip architecture + pretrained tag
  ``ViT-B-32:/path/negclip.pt``         open_clip architecture + local checkpoint file
  ``hf-hub:org/name``                   Hugging Face hub repo in open_clip format
  ``local-dir:/path/run/checkpoint``    directory with ``open_clip_config.json`` + weights
  ``/path/run/checkpoint``              same as ``local-dir:`` when the path is a directory
  ``catalog:negclip``                   a paper's released checkpoint from `backend/models/catalog.json`:
                                        downloaded from its own URL or hub repo, SHA-256 checked, cached
  a plug-in's model name               a model a plug-in ships (`backend.plugins`, ``add_model``)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend import plugins
from backend.core import paths
from backend.models import catalog
from backend.models.catalog import CATALOG_PREFIX

CHECKPOINT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")
MAX_SPEC_CHARS = 4096
CONFIG_NAME = "open_clip_config.json"


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says what was tried and how to fix it.

    A ValueError, like every other input the user must fix: the command line prints it as ``error: ...``, a job
    ends with it as its last line and a tab shows it, where a RuntimeError was a traceback in all three."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: where the config comes from and where the weights come from."""

    raw: str
    source: str  # "tag", "file", "hf-hub", "local-dir", "catalog"
    architecture: str | None = None
    pretrained: str | None = None  # tag or file path
    location: str | None = None  # hub id or directory

    def required(self, name: Literal["architecture", "pretrained", "location"]) -> str:
        """A part every spec of this source has (tag and file: architecture and pretrained; hf-hub, local-dir and
        catalog: location), which `parse_spec` always sets: asking a spec for a part its source lacks is a bug."""
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"a {self.source} spec ('{self.raw}') has no {name}")
        return value

    @property
    def open_clip_name(self) -> str:
        if self.source == "hf-hub":
            return f"hf-hub:{self.location}"
        if self.source == "local-dir":
            return f"local-dir:{self.location}"
        return self.architecture or ""


def parse_spec(spec: str) -> ModelSpec:
    """Parse a spec string; raise ``ModelLoadError`` with the accepted forms when it is malformed."""
    spec = spec.strip()
    if not spec:
        raise ModelLoadError("Empty model spec. " + _SPEC_HELP)
    if len(spec) > MAX_SPEC_CHARS:
        raise ModelLoadError(f"The model spec '{spec[:60]}...' is {len(spec):,} characters long; the limit is "
                             f"{MAX_SPEC_CHARS:,} (the longest path Linux takes). " + _SPEC_HELP)
    if spec.startswith("hf-hub:"):
        return ModelSpec(spec, "hf-hub", location=spec[len("hf-hub:"):])
    if spec.startswith("local-dir:"):
        return ModelSpec(spec, "local-dir", location=spec[len("local-dir:"):])
    if spec.startswith(CATALOG_PREFIX):
        name = spec[len(CATALOG_PREFIX):]
        try:
            catalog.get_entry(name)  # only the catalog's own entries: never a URL a user typed
        except catalog.CatalogError as error:
            raise ModelLoadError(str(error)) from None
        return ModelSpec(spec, "catalog", location=name)
    builtin = plugins.hooks().models.get(spec)
    if builtin is not None:
        return ModelSpec(spec, "local-dir", location=str(builtin.folder))
    if _is_dir(spec):
        return ModelSpec(spec, "local-dir", location=spec)
    if ":" in spec:
        arch, pretrained = spec.split(":", 1)
        if not arch.strip() or not pretrained.strip():
            raise ModelLoadError(f"'{spec}' needs an architecture before its ':' and a pretrained tag or checkpoint "
                                 "after it (an empty tag would load random weights). " + _SPEC_HELP)
        source = "file" if pretrained.endswith(CHECKPOINT_SUFFIXES) or _names_a_path(pretrained) else "tag"
        return ModelSpec(spec, source, architecture=arch, pretrained=pretrained)
    if spec.endswith(CHECKPOINT_SUFFIXES):
        raise ModelLoadError(
            f"'{spec}' is a checkpoint file without an architecture. Write it as ARCH:{spec} "
            f"(e.g. ViT-B-32-quickgelu:{spec}) so the right tower and activation are built.")
    raise ModelLoadError(f"'{spec}' has no pretrained tag or checkpoint. " + _SPEC_HELP)


def _is_dir(spec: str) -> bool:
    try:
        return Path(spec).is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: not a folder either way
        return False


def _names_a_path(pretrained: str) -> bool:
    """Whether the part after ``ARCH:`` names a file whatever its suffix: open_clip loads any existing path given
    as a "pretrained tag", so such a spec must be confined like a checkpoint file (no tag has '/', '.' or '~')."""
    if any(mark in pretrained for mark in ("/", "\\", "\x00")) or pretrained.startswith((".", "~")):
        return True
    try:
        return Path(pretrained).exists()
    except (OSError, ValueError):  # a name too long for the file system: not an existing file
        return False


_SPEC_HELP = ("Accepted forms: 'ViT-B-32-quickgelu:openai' (architecture:tag), "
              "'ViT-B-32:/path/model.safetensors', 'hf-hub:org/name', 'local-dir:/path/to/dir', "
              "'catalog:NAME' (a paper's released checkpoint).")


def local_path(spec: ModelSpec) -> str | None:
    """The file or folder on this machine that a spec reads, or None for hub ids and pretrained tags."""
    return spec.pretrained if spec.source == "file" else spec.location if spec.source == "local-dir" else None


def confine(spec: ModelSpec, allowed_roots: list[Path] | None) -> None:
    """Refuse local paths outside `allowed_roots` (the app passes the settings' roots; the CLI passes None)."""
    path = local_path(spec)
    if path is None or allowed_roots is None:
        return
    try:
        paths.confine(path, allowed_roots, "local model path")
    except paths.PathError as error:
        raise ModelLoadError(str(error)) from None
