"""Checkpoint files from elsewhere, handled safely: download, SHA-256, weights-only reading, conversion.

This layer knows nothing of the catalog (`backend.model_catalog` decides what is
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

import hashlib
import json
import logging
import os
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import open_clip
import torch
from huggingface_hub import hf_hub_download
from safetensors.torch import load_file, save_file

CONFIG_NAME, WEIGHTS_NAME = "open_clip_config.json", "open_clip_model.safetensors"
_NUMPY_SCALAR = np._core.multiarray.scalar
_NUMERIC = ("Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
            "Bool")  # no object dtype: that would let a pickle smuggle arbitrary objects through
SAFE_NUMPY_GLOBALS = [(_NUMPY_SCALAR, "numpy.core.multiarray.scalar"), (_NUMPY_SCALAR, "numpy._core.multiarray.scalar"),
                      (np.dtype, "numpy.dtype"), *(getattr(np.dtypes, f"{kind}DType") for kind in _NUMERIC)]
_HASHED: dict[tuple, str] = {}  # (path, size, mtime) -> sha256: a converted model is hashed once per process


class CatalogError(RuntimeError):
    """A catalog checkpoint cannot be had or used; the message says what was tried and how to get it."""


def offline() -> bool:
    """HF_HUB_OFFLINE=1 means no network at all here, for URL downloads as for the hub."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() not in ("", "0", "false", "no")


def _private_name(path: Path, suffix: str) -> Path:
    """A temporary sibling no other thread or process writes to."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{suffix}")


class _NoDowngradeRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects (GitHub release assets and Google Drive use them), never from https to plain http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if req.full_url.startswith("https://") and not newurl.startswith("https://"):
            raise urllib.error.URLError(f"refused a redirect from https to {newurl}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download_url(url: str, target: Path) -> None:
    """Stream `url` to `target`; a half download never sits under the final name."""
    partial = _private_name(target, "part")
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
    try:
        return Path(hf_hub_download(repo, filename, local_dir=folder))
    except Exception as error:  # not found, gated, no network: one message
        raise CatalogError(f"downloading {filename} from the hub repo {repo} failed: "
                           f"{str(error).splitlines()[0][:300]}") from None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
        temporary = _private_name(self.path, "tmp")
        temporary.write_text(json.dumps(records, indent=2))
        os.replace(temporary, self.path)


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


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint file, read without running any code stored in it."""
    if path.suffix == ".safetensors":
        return _unwrap(load_file(path), path)
    try:
        with torch.serialization.safe_globals(SAFE_NUMPY_GLOBALS):
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        reason = str(error).strip().splitlines()[-1][:300] if str(error).strip() else type(error).__name__
        raise CatalogError(f"{path.name} was refused: it cannot be read as weights only (tensors, numbers, strings): "
                           f"{reason}. Reading it any other way could run code stored in the file") from None
    return _unwrap(payload, path)


def _unwrap(payload, path: Path) -> dict[str, torch.Tensor]:
    """Find the model's state dict in a training checkpoint; refuse formats open_clip cannot take."""
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


def build_model(architecture: str, pretrained: str | None, quick_gelu: bool) -> torch.nn.Module:
    """An open_clip model, weights required when named; quiet about the bare architecture's random init."""
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return open_clip.create_model(architecture, pretrained=pretrained, force_quick_gelu=quick_gelu,
                                      require_pretrained=pretrained is not None, weights_only=True)
    finally:
        logger.setLevel(level)


def write_open_clip_dir(target: Path, state: dict[str, torch.Tensor], architecture: str, activation: str,
                        provenance: dict) -> None:
    """Write config + safetensors to a temporary folder, prove open_clip loads it strictly, then move it in place."""
    temporary = _private_name(target, "tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    try:
        save_file({key: value.contiguous() for key, value in state.items()}, temporary / WEIGHTS_NAME)
        quick = activation == "quickgelu"
        try:
            build_model(architecture, str(temporary / WEIGHTS_NAME), quick_gelu=quick)
        except Exception as error:
            raise CatalogError(f"its weights do not fit open_clip's {architecture} "
                               f"({str(error).splitlines()[0][:300]})") from None
        config = {"model_cfg": {**open_clip.get_model_config(architecture), "quick_gelu": quick},
                  "architecture": architecture, "tokenizer": architecture, "activation": activation,
                  "catalog": {**provenance, "weights_sha256": sha256_of(temporary / WEIGHTS_NAME)}}
        (temporary / CONFIG_NAME).write_text(json.dumps(config, indent=2))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(temporary, target)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def is_intact(folder: Path) -> bool:
    """A written folder whose weights still hash to what was recorded; a damaged one is removed."""
    config_path, weights = folder / CONFIG_NAME, folder / WEIGHTS_NAME
    if not (config_path.is_file() and weights.is_file()):
        return False
    expected = json.loads(config_path.read_text()).get("catalog", {}).get("weights_sha256")
    stat = weights.stat()
    key = (str(weights), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = sha256_of(weights)
    if _HASHED[key] == expected:
        return True
    shutil.rmtree(folder, ignore_errors=True)
    return False
