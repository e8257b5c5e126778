"""Checkpoint files from elsewhere, handled safely: download, SHA-256, weights-only reading, conversion.

This layer knows nothing of the catalog (`backend.models.catalog` decides what is
fetched, from where, and what its checksum must be). What it guarantees:
- a download lands under a private temporary name and is moved in place only
  when complete, and https is never redirected to plain http;
- a file is read with ``torch.load(weights_only=True)``: tensors, numbers and
  strings, never code from the file. Research checkpoints keep optimizer state
  whose learning rates are numpy number scalars, so numeric numpy scalars (and
  only those types) are allowed too: they rebuild a number from bytes;
- what is written for open_clip (``open_clip_config.json`` with the activation,
  ``open_clip_model.safetensors``) has been loaded strictly into the
  architecture first, so a written folder always loads.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from backend.core.errors import first_line, last_line
from backend.core.files import private_name, sha256_of, write_text_atomic

if TYPE_CHECKING:  # torch, open_clip and safetensors are imported where files are read or written: listing
    import torch  # the catalog, or checking a folder's hash, must not cost their import

CONFIG_NAME, WEIGHTS_NAME = "open_clip_config.json", "open_clip_model.safetensors"
_NUMERIC = ("Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
            "Bool")  # no object dtype: that would let a pickle smuggle arbitrary objects through
_HASHED: dict[tuple, str] = {}  # (path, size, mtime) -> sha256: a converted model is hashed once per process


class CatalogError(RuntimeError):
    """A catalog checkpoint cannot be had or used; the message says what was tried and how to get it."""


class _NoDowngradeRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects (GitHub release assets and Google Drive use them), never from https to plain http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if req.full_url.startswith("https://") and not newurl.startswith("https://"):
            raise urllib.error.URLError(f"refused a redirect from https to {newurl}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download_url(url: str, target: Path) -> None:
    """Stream `url` to `target`; a half download never sits under the final name."""
    partial = private_name(target, "part")
    opener = urllib.request.build_opener(_NoDowngradeRedirect)
    request = urllib.request.Request(url, headers={"User-Agent": "compositionality-lab"})
    try:
        with opener.open(request, timeout=60) as response, open(partial, "wb") as out:
            if response.headers.get_content_type() == "text/html":
                raise CatalogError(f"{url} answered with a web page, not the file (a sign-in, quota or "
                                   "confirmation page)")
            shutil.copyfileobj(response, out, 1 << 20)
        os.replace(partial, target)
    except (urllib.error.URLError, OSError, TimeoutError) as error:
        raise CatalogError(f"downloading {url} failed: {getattr(error, 'reason', error)}") from None
    finally:
        partial.unlink(missing_ok=True)


def download_hub(repo: str, filename: str, folder: Path) -> Path:
    """One file of a hub repo into `folder` (HF_TOKEN is used for gated repos)."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo, filename, local_dir=folder))
    except Exception as error:  # not found, gated, no network: one message
        raise CatalogError(f"downloading {filename} from the hub repo {repo} failed: {first_line(error)}") from None


class ChecksumBook:
    """SHA-256s recorded at first download, for files whose publisher gave none: later copies must match."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _records(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.is_file() else {}

    def get(self, filename: str) -> str | None:
        return self._records().get(filename, {}).get("sha256")

    def record(self, filename: str, source: str, sha: str) -> None:
        records = {**self._records(), filename: {"source": source, "sha256": sha, "recorded": "first usable copy"}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, json.dumps(records, indent=2))


def check_sha256(path: Path, expected: str, origin: str, owned: bool) -> str:
    """The file's SHA-256 if it is `expected`; else raise, deleting the file when the lab downloaded it."""
    actual = sha256_of(path)
    if actual == expected:
        return actual
    if owned:
        path.unlink(missing_ok=True)
        fate = "the file was deleted; the next load downloads it again"
    else:
        fate = f"the file was left in place (the lab did not download it): delete or replace {path}"
    raise CatalogError(f"SHA-256 mismatch for {path}: expected {expected} ({origin}), got {actual}; {fate}")


def safe_numpy_globals() -> list:
    """The numpy types `torch.load(weights_only=True)` may rebuild: numeric scalars and dtypes, nothing else."""
    import numpy as np
    from numpy._core.multiarray import scalar

    return [(scalar, "numpy.core.multiarray.scalar"), (scalar, "numpy._core.multiarray.scalar"),
            (np.dtype, "numpy.dtype"), *(getattr(np.dtypes, f"{kind}DType") for kind in _NUMERIC)]


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint file, read without running any code stored in it."""
    import torch
    from safetensors.torch import load_file

    if path.suffix == ".safetensors":
        return _unwrap(load_file(path), path)
    try:
        with torch.serialization.safe_globals(safe_numpy_globals()):
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        reason = last_line(error)
        raise CatalogError(f"{path.name} was refused: it cannot be read as weights only (tensors, numbers, strings): "
                           f"{reason}. Reading it any other way could run code stored in the file") from None
    return _unwrap(payload, path)


def holds_lora_factors(path: Path) -> bool:
    """Whether a checkpoint file holds loralib LoRA factors, read from its keys only (a torch file is memory-mapped,
    so no tensor is read); False when it cannot be read that way (open_clip then reads it and says why)."""
    import torch

    try:
        if path.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(path, "pt") as handle:
                keys = list(handle.keys())
        else:
            with torch.serialization.safe_globals(safe_numpy_globals()):
                payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            keys = list(_unwrap(payload, path))
    except Exception:  # not a zip-format torch file, not weights only, no state dict: not ours to judge here
        return False
    return any(key.endswith(("lora_A", "lora_B")) for key in keys)


def read_merged_state_dict(path: Path) -> tuple[dict[str, torch.Tensor], list[str]]:
    """`read_state_dict`, with loralib LoRA factors (DAC, TSVLC) merged into their layers
    (`backend.models.lora_factors`), and a note when there were some."""
    from backend.models.lora_factors import has_factors, merge_factors

    state = read_state_dict(path)
    if not has_factors(state):
        return state, []
    try:
        merged, note = merge_factors(state)
    except ValueError as error:
        raise CatalogError(f"{path.name}: {error}") from None
    return merged, [f"{path.name}: {note}"]


def _unwrap(payload, path: Path) -> dict[str, torch.Tensor]:
    """Find the model's state dict in a training checkpoint; refuse formats open_clip cannot take."""
    import torch

    for key in ("state_dict", "model_state_dict", "model"):
        if isinstance(payload, dict) and isinstance(payload.get(key), dict):
            payload = payload[key]
            break
    if not isinstance(payload, dict) or not payload or not all(isinstance(v, torch.Tensor) for v in payload.values()):
        keys = ", ".join(map(str, list(payload)[:6])) if isinstance(payload, dict) else type(payload).__name__
        raise CatalogError(f"{path.name} holds no state dict of tensors (found: {keys})")
    state = {key.removeprefix("module."): value for key, value in payload.items()}
    if any(key.startswith(("text_model.", "vision_model.")) for key in state):
        raise CatalogError(f"{path.name} is a Hugging Face transformers CLIPModel state dict, not open_clip's: not "
                           "loadable here yet (open_clip's hf-hub: route needs an open_clip export with "
                           "open_clip_config.json), and loading it into an open_clip tower would be wrong")
    return state


class _QuietRandomInit(logging.Filter):
    """Drops open_clip's "initialized randomly" warnings, only in a thread inside `quiet_random_init` (a bare
    architecture that is filled with weights next, or counted on the meta device): the root logger's level, which
    every thread shares, is left alone."""

    building = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(self.building, "active", False) and
                    any(quiet in record.getMessage() for quiet in ("initialized randomly", "no CLIP weights found")))


_QUIET = _QuietRandomInit()
logging.getLogger().addFilter(_QUIET)


@contextmanager
def quiet_random_init() -> Iterator[None]:
    """In this thread, open_clip's "initialized randomly" warning is not logged (for builds that mean it)."""
    _QUIET.building.active = True
    try:
        yield
    finally:
        _QUIET.building.active = False


def build_model(architecture: str, pretrained: str | None, quick_gelu: bool) -> torch.nn.Module:
    """An open_clip model, weights required when named; quiet about the bare architecture's random init."""
    import open_clip

    with quiet_random_init():
        return open_clip.create_model(architecture, pretrained=pretrained, force_quick_gelu=quick_gelu,
                                      require_pretrained=pretrained is not None, weights_only=True)


def write_open_clip_dir(target: Path, state: dict[str, torch.Tensor], architecture: str, activation: str,
                        provenance: dict) -> None:
    """Write `state` as an open_clip checkpoint folder at `target`, with its weights' SHA-256 and `provenance`,
    through the one checkpoint writer (`backend.models.checkpoint`: written whole, then switched in); refused
    unless open_clip loads it strictly into `architecture`."""
    import open_clip

    from backend.models.checkpoint import save_checkpoint

    quick = activation == "quickgelu"

    def loads_strictly(version: Path) -> None:
        try:
            build_model(architecture, str(version / WEIGHTS_NAME), quick_gelu=quick)
        except Exception as error:
            raise CatalogError(f"its weights do not fit open_clip's {architecture} ({first_line(error)})") from None

    config = {"model_cfg": {**open_clip.get_model_config(architecture), "quick_gelu": quick},
              "architecture": architecture, "tokenizer": architecture, "activation": activation}
    save_checkpoint(target, state, config, {"catalog": provenance}, record_sha256=True, verify=loads_strictly)


def is_intact(folder: Path) -> bool:
    """A written folder whose weights still hash to what was recorded; a damaged one is removed."""
    config_path, weights = folder / CONFIG_NAME, folder / WEIGHTS_NAME
    if not (config_path.is_file() and weights.is_file()):
        return False
    config = json.loads(config_path.read_text())
    expected = config.get("weights_sha256") or config.get("catalog", {}).get("weights_sha256")  # older folders
    stat = weights.stat()
    key = (str(weights), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = sha256_of(weights)
    if _HASHED[key] == expected:
        return True
    from backend.models.checkpoint import remove_checkpoint

    remove_checkpoint(folder)
    return False
