"""Model registry: one place that turns a spec string into a loaded CLIP-like model.

Spec strings (what users type, what results record):
  ``ViT-B-32-quickgelu:openai``        open_clip architecture + pretrained tag
  ``ViT-B-32:/path/negclip.pt``         open_clip architecture + local checkpoint file
  ``hf-hub:org/name``                   Hugging Face hub repo in open_clip format
  ``local-dir:/path/run/checkpoint``    directory with ``open_clip_config.json`` + weights
  ``/path/run/checkpoint``              same as ``local-dir:`` when the path is a directory
  ``catalog:negclip``                   a paper's released checkpoint from `backend/model_catalog.json`:
                                        downloaded from its own URL or hub repo, SHA-256 checked, cached

The activation (GELU vs QuickGELU) is part of a model's identity: loading OpenAI
weights into a GELU tower silently changes every score (sugar-crepe issue 7, ARO
issue 35). So every loaded model records its activation, pretrained tags that
need QuickGELU get it, and a mismatch with what a checkpoint declares is a
warning the user sees.
"""
from __future__ import annotations

import difflib
import importlib
import json
import os
import pickle
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import open_clip
import torch
from open_clip.transformer import QuickGELU

from backend import model_catalog, paths
from backend.settings import SHIPPED_MODELS

CHECKPOINT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")
MAX_SPEC_CHARS = 4096
CONFIG_NAME = "open_clip_config.json"

# Models shipped in the repo, usable with no network: spec alias -> checkpoint directory.
BUILTIN_MODELS = {"toyworld": SHIPPED_MODELS / "toyclip-v1"}

TokenizerFactory = Callable[..., Callable]  # called with context_length=...
# Word-level tokenizers of non-BPE models, as "module:attribute" so importing them stays lazy.
_TOKENIZERS: dict[str, TokenizerFactory | str] = {"toyclip-v1": "backend.toyworld.tokenizer:ToyTokenizer"}


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says what was tried and how to fix it.

    A ValueError, like every other input the user must fix: the command line prints it as ``error: ...``, a job
    ends with it as its last line and a tab shows it, where a RuntimeError was a traceback in all three."""


def register_tokenizer(name: str, factory: TokenizerFactory | str) -> None:
    """Let a non-BPE model supply its tokenizer (a callable, or "module:attribute").

    `name` matches an architecture name or the ``tokenizer`` key of a checkpoint's
    ``open_clip_config.json``. The factory is called with ``context_length``.
    """
    _TOKENIZERS[name] = factory


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: where the config comes from and where the weights come from."""

    raw: str
    source: str  # "tag", "file", "hf-hub", "local-dir", "catalog"
    architecture: str | None = None
    pretrained: str | None = None  # tag or file path
    location: str | None = None  # hub id or directory

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
    if spec.startswith(model_catalog.CATALOG_PREFIX):
        name = spec[len(model_catalog.CATALOG_PREFIX):]
        try:
            model_catalog.get_entry(name)  # only the catalog's own entries: never a URL a user typed
        except model_catalog.CatalogError as error:
            raise ModelLoadError(str(error)) from None
        return ModelSpec(spec, "catalog", location=name)
    if spec in BUILTIN_MODELS:
        return ModelSpec(spec, "local-dir", location=str(BUILTIN_MODELS[spec]))
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


def tag_needs_quick_gelu(architecture: str, tag: str) -> bool:
    """True when open_clip's pretrained table says the tag was trained with QuickGELU."""
    cfg = open_clip.get_pretrained_cfg(architecture.replace("-quickgelu", ""), tag) or {}
    return bool(cfg.get("quick_gelu", False))


def model_activation(model: torch.nn.Module) -> str:
    """Read the activation off the built modules, not off the name: it is what runs."""
    return "quickgelu" if any(isinstance(m, QuickGELU) for m in model.modules()) else "gelu"


def pick_device(requested: str | None = None) -> str:
    if requested:
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def pick_precision(device: str, requested: str | None = None) -> str:
    """fp32 on CPU (autocast there is slow and creates ties); bf16 where the GPU runs it natively, else fp16.

    ``including_emulation=False``: an older GPU (e.g. a T4) "supports" bf16 only by emulation, far slower
    than its native fp16.
    """
    if requested:
        return requested
    if device.startswith("cuda"):
        return "bf16" if torch.cuda.is_bf16_supported(including_emulation=False) else "fp16"
    return "fp16" if device == "mps" else "fp32"


@dataclass
class LoadedModel:
    """A model ready to encode, with everything a result must carry about its identity."""

    spec: str
    model: torch.nn.Module
    preprocess: Callable
    tokenizer: Callable
    activation: str
    device: str
    precision: str
    notes: list[str] = field(default_factory=list)
    architecture: dict = field(default_factory=dict)  # model_cfg, preprocess_cfg, tokenizer, activation

    @property
    def identity(self) -> dict[str, str]:
        return {"model": self.spec, "activation": self.activation, "precision": self.precision}

    def autocast(self):
        return autocast_for(self.device, self.precision)


def autocast_for(device: str, precision: str):
    """Mixed precision on accelerators only; a disabled context on CPU/fp32."""
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    return torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None)


def read_config(spec: ModelSpec) -> dict:
    """Our checkpoints (and open_clip's hub exports) carry a JSON config next to the weights."""
    if spec.source == "hf-hub":
        from huggingface_hub import hf_hub_download
        path = Path(hf_hub_download(spec.location, CONFIG_NAME))
    elif spec.source == "local-dir":
        path = Path(spec.location) / CONFIG_NAME
    elif spec.source == "file":
        path = Path(spec.pretrained).with_suffix(".json")
    else:
        return {}
    return json.loads(path.read_text()) if path.is_file() else {}


def architecture_config(spec: ModelSpec, config: dict, model: torch.nn.Module, activation: str) -> dict:
    """What a checkpoint derived from this model must record so it loads back identically."""
    model_cfg = dict(config.get("model_cfg") or open_clip.get_model_config(spec.architecture) or {})
    model_cfg["quick_gelu"] = activation == "quickgelu"
    tokenizer = config.get("tokenizer") or spec.architecture or ""
    return {"model_cfg": model_cfg, "preprocess_cfg": dict(getattr(model.visual, "preprocess_cfg", {})),
            "architecture": config.get("architecture") or spec.architecture or spec.raw,
            "tokenizer": tokenizer, "activation": activation}


def _expected_activation(spec: ModelSpec, config: dict) -> str | None:
    if spec.source == "tag":
        return "quickgelu" if tag_needs_quick_gelu(spec.architecture, spec.pretrained) else "gelu"
    if "activation" in config:
        return config["activation"]
    model_cfg = config.get("model_cfg")
    if model_cfg is not None:
        return "quickgelu" if model_cfg.get("quick_gelu") else "gelu"
    return None


def _tokenizer_for(spec: ModelSpec, config: dict) -> Callable:
    name = config.get("tokenizer") or config.get("architecture") or spec.architecture
    factory = _TOKENIZERS.get(name)
    if factory is None:
        return open_clip.get_tokenizer(spec.open_clip_name)
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        factory = getattr(importlib.import_module(module), attribute)
    context_length = config.get("model_cfg", {}).get("text_cfg", {}).get("context_length")
    return factory(context_length=context_length) if context_length else factory()


def _failure_message(spec: ModelSpec, error: Exception) -> str:
    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    what = {
        "tag": f"open_clip pretrained weights '{spec.pretrained}' for {spec.architecture}",
        "file": f"checkpoint file {spec.pretrained} into architecture {spec.architecture}",
        "hf-hub": f"Hugging Face hub repo {spec.location} (config + weights)",
        "local-dir": f"directory {spec.location} ({CONFIG_NAME} + weights)",
    }[spec.source]
    hints = {
        "tag": "check the network or set HF_TOKEN for gated repos; or download the weights on a "
               "connected machine and load them as ARCH:/path/file.safetensors",
        "file": "check the path, and that the architecture matches the checkpoint",
        "hf-hub": "check the network and the repo name, set HF_TOKEN for private repos, or use "
                  "local-dir:/path with a downloaded copy",
        "local-dir": f"the directory needs {CONFIG_NAME} and an open_clip_model.safetensors",
    }[spec.source]
    mode = " HF_HUB_OFFLINE=1 is set, so nothing was downloaded." if offline else ""
    reason = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
    return f"Could not load '{spec.raw}': tried {what}.{mode} Reason: {reason}. To fix: {hints}."


def check_spec(spec_str: str) -> ModelSpec:
    """Parse a spec and check what can be checked without loading it (its form, its open_clip architecture), so
    that a command with several models fails on a bad one before any work."""
    spec = parse_spec(spec_str)
    _check_architecture(spec)
    return spec


def _check_architecture(spec: ModelSpec) -> None:
    """An architecture open_clip does not know is named with the closest ones it does (open_clip's own message
    lists all of its ~200)."""
    if spec.source not in ("tag", "file"):
        return
    known = open_clip.list_models()
    name = spec.architecture.replace("/", "-")  # open_clip reads ViT-B/32 as ViT-B-32
    if name in known:
        return
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = (f"did you mean {' or '.join(close)}?" if close else
            "python -c 'import open_clip; print(open_clip.list_models())' lists them.")
    raise ModelLoadError(f"Could not load '{spec.raw}': open_clip has no architecture {spec.architecture!r}; {hint}")


def _is_refused_pickle(error: BaseException | None) -> bool:
    """Whether torch.load(weights_only=True) refused the file (anywhere in the chain of causes)."""
    while error is not None:
        if isinstance(error, pickle.UnpicklingError):
            return True
        error = error.__cause__ or error.__context__
    return False


def _pickle_message(spec: ModelSpec) -> str:
    return (f"Refused '{spec.raw}': {local_path(spec)} is a pickled checkpoint that holds Python objects besides "
            "tensors, and torch.load(weights_only=True) refused to unpickle it: doing so could run code stored in "
            "the file, which the lab never does. Use a .safetensors file (where you trust the file: "
            "safetensors.torch.save_file(state_dict, 'model.safetensors')), a .pt holding only a state dict of "
            "tensors, or a local-dir: folder with open_clip_config.json and open_clip_model.safetensors.")


def _load_catalog(spec: ModelSpec, device: str | None, precision: str | None,
                  models_dir: Path | None) -> LoadedModel:
    """A catalog entry: fetched, checked and converted by `model_catalog`, then loaded like any local folder.

    The folder is the lab's own conversion under the models folder, so it is not confined again; the result
    keeps the catalog spec as its identity, with the entry's provenance in its notes.
    """
    try:
        prepared = model_catalog.prepare(spec.location, models_dir)
    except model_catalog.CatalogError as error:
        raise ModelLoadError(f"Could not load '{spec.raw}': {error}") from None
    loaded = load_model(prepared.spec, device, precision)
    loaded.spec = spec.raw
    loaded.notes = [*prepared.notes, *loaded.notes]
    return loaded


def load_model(spec_str: str, device: str | None = None, precision: str | None = None,
               allowed_roots: list[Path] | None = None, models_dir: Path | None = None) -> LoadedModel:
    """Load a model from a spec string, or raise ``ModelLoadError`` with a readable message.

    `models_dir` is where catalog models are cached (default: the settings' models folder).
    """
    spec = parse_spec(spec_str)
    if spec.source == "catalog":
        return _load_catalog(spec, device, precision, models_dir)
    confine(spec, allowed_roots)
    _check_architecture(spec)  # after confine: a refused path is refused before anything else is said about it
    device = pick_device(device)
    precision = pick_precision(device, precision)
    notes: list[str] = []
    try:
        config = read_config(spec)
        expected = _expected_activation(spec, config)
        force_quick_gelu = spec.source in ("tag", "file") and expected == "quickgelu"
        if force_quick_gelu and "quickgelu" not in (spec.architecture or "").lower():
            notes.append(f"'{spec.raw}' was trained with QuickGELU; loaded with QuickGELU "
                         f"(as {spec.architecture}-quickgelu would be).")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="QuickGELU mismatch")
            model, _, preprocess = open_clip.create_model_and_transforms(
                spec.open_clip_name, pretrained=spec.pretrained, device=device,
                force_quick_gelu=force_quick_gelu, weights_only=True)
        tokenizer = _tokenizer_for(spec, config)
    except ModelLoadError:
        raise
    except Exception as error:  # any download/parse/shape failure becomes one clear message
        if _is_refused_pickle(error):
            raise ModelLoadError(_pickle_message(spec)) from None
        raise ModelLoadError(_failure_message(spec, error)) from error
    model.eval()
    activation = model_activation(model)
    if expected is not None and expected != activation:
        notes.append(f"WARNING: '{spec.raw}' declares activation {expected} but runs {activation}: "
                     "every score will differ from the original model's.")
    if expected is None:
        notes.append(f"'{spec.raw}' carries no activation record; running {activation} as the "
                     "architecture defines. If it was finetuned from OpenAI weights use a -quickgelu architecture.")
    return LoadedModel(spec.raw, model, preprocess, tokenizer, activation, device, precision, notes,
                       architecture_config(spec, config, model, activation))


class ModelRegistry:
    """Loaded models, bounded LRU by count: several models side by side, but never all of them."""

    def __init__(self, max_models: int = 3, device: str | None = None, precision: str | None = None,
                 allowed_roots: list[Path] | None = None, models_dir: Path | None = None):
        self.max_models = max_models
        self.device = device
        self.precision = precision
        self.allowed_roots = allowed_roots
        self.models_dir = models_dir  # catalog models' cache; None: the settings' models folder
        self._models: OrderedDict[str, LoadedModel] = OrderedDict()

    def get(self, spec: str) -> LoadedModel:
        key = spec.strip()
        if key in self._models:
            self._models.move_to_end(key)
            return self._models[key]
        loaded = load_model(key, self.device, self.precision, self.allowed_roots, self.models_dir)
        self._models[key] = loaded
        while len(self._models) > self.max_models:
            self._models.popitem(last=False)
        return loaded

    def loaded(self) -> list[str]:
        return list(self._models)
