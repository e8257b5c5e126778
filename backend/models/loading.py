"""Model loading: one place that turns a spec string (`backend.models.spec`) into a loaded CLIP-like model,
and the registry that keeps a few loaded, shared by the web app's concurrent handlers.

The activation (GELU vs QuickGELU) is part of a model's identity: loading OpenAI
weights into a GELU tower silently changes every score (sugar-crepe issue 7, ARO
issue 35). So every loaded model records its activation, pretrained tags that
need QuickGELU get it, and a mismatch with what a checkpoint declares is a
warning the user sees.
"""
from __future__ import annotations

import contextlib
import difflib
import json
import pickle
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import open_clip
import torch
from open_clip.transformer import QuickGELU

from backend import plugins
from backend.core import env
from backend.core.errors import first_line
from backend.models import budget, catalog
from backend.models.spec import CONFIG_NAME, ModelLoadError, ModelSpec, confine, local_path, parse_spec

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pth")  # what open_clip looks for in a local-dir: folder
NO_WEIGHTS = "Required pretrained weights"  # the start of open_clip's require_pretrained error

if TYPE_CHECKING:
    class ClipModule(torch.nn.Module):
        """An open_clip model (CLIP, CustomTextCLIP, CoCa) as the project uses it, for the type checker only:
        open_clip ships no type information, and torch types any other module attribute as `Tensor | Module`."""

        logit_scale: torch.nn.Parameter

        def encode_image(self, image: torch.Tensor, normalize: bool = False) -> torch.Tensor: ...

        def encode_text(self, text: torch.Tensor, normalize: bool = False) -> torch.Tensor: ...

        def set_grad_checkpointing(self, enable: bool = True) -> None: ...


def tag_needs_quick_gelu(architecture: str, tag: str) -> bool:
    """True when open_clip's pretrained table says the tag was trained with QuickGELU."""
    cfg = open_clip.get_pretrained_cfg(architecture.replace("-quickgelu", ""), tag) or {}
    return bool(cfg.get("quick_gelu", False))


def model_activation(model: torch.nn.Module) -> str:
    """Read the activation off the built modules, not off the name: it is what runs."""
    return "quickgelu" if any(isinstance(m, QuickGELU) for m in model.modules()) else "gelu"


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
    model: ClipModule
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
        path = Path(hf_hub_download(spec.required("location"), CONFIG_NAME))
    elif spec.source == "local-dir":
        path = Path(spec.required("location")) / CONFIG_NAME
    elif spec.source == "file":
        path = Path(spec.required("pretrained")).with_suffix(".json")
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
        quick = tag_needs_quick_gelu(spec.required("architecture"), spec.required("pretrained"))
        return "quickgelu" if quick else "gelu"
    if "activation" in config:
        return config["activation"]
    model_cfg = config.get("model_cfg")
    if model_cfg is not None:
        return "quickgelu" if model_cfg.get("quick_gelu") else "gelu"
    return None


def _tokenizer_for(spec: ModelSpec, config: dict) -> Callable:
    """open_clip's tokenizer for the architecture, unless a plug-in registered one for it (a word-level tokenizer
    of a non-BPE model, `backend.plugins`, ``add_tokenizer``), named by the checkpoint's ``tokenizer`` key."""
    name = config.get("tokenizer") or config.get("architecture") or spec.architecture or ""
    factory = plugins.hooks().tokenizers.get(name)
    if factory is None:
        return open_clip.get_tokenizer(spec.open_clip_name)
    context_length = config.get("model_cfg", {}).get("text_cfg", {}).get("context_length")
    build = plugins.resolve(factory)
    return build(context_length=context_length) if context_length else build()


def _failure_message(spec: ModelSpec, error: Exception) -> str:
    offline = env.hub_offline()
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
    reason = first_line(error)
    return f"Could not load '{spec.raw}': tried {what}.{mode} Reason: {reason}. To fix: {hints}."


def check_spec(spec_str: str) -> ModelSpec:
    """Parse a spec and check what can be checked without loading it (its form, its open_clip architecture), so
    that a command with several models fails on a bad one before any work."""
    spec = parse_spec(spec_str)
    _check_architecture(spec)
    return spec


def _check_architecture(spec: ModelSpec) -> None:
    """An architecture open_clip does not know is named with the closest ones it does (open_clip's own message
    lists all of them, 144 in open_clip 3.3)."""
    if spec.source not in ("tag", "file"):
        return
    known = open_clip.list_models()
    name = spec.required("architecture").replace("/", "-")  # open_clip reads ViT-B/32 as ViT-B-32
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
                  models_dir: Path | None, max_parameters: int | None) -> LoadedModel:
    """A catalog entry: fetched, checked and converted by `catalog`, then loaded like any local folder.

    The folder is the lab's own conversion under the models folder, so it is not confined again; the result
    keeps the catalog spec as its identity, with the entry's provenance in its notes.
    """
    try:
        prepared = catalog.prepare(spec.required("location"), models_dir)
    except catalog.CatalogError as error:
        raise ModelLoadError(f"Could not load '{spec.raw}': {error}") from None
    loaded = load_model(prepared.spec, device, precision, max_parameters=max_parameters)
    loaded.spec = spec.raw
    loaded.notes = [*prepared.notes, *loaded.notes]
    return loaded


def _model_cfg(spec: ModelSpec, config: dict) -> dict | None:
    """The ``model_cfg`` open_clip will build: the checkpoint's own (a folder, a hub repo), else the named
    architecture's."""
    if spec.source in ("local-dir", "hf-hub"):
        return config.get("model_cfg")
    return open_clip.get_model_config(spec.required("architecture").replace("/", "-"))


def _check_weights_present(spec: ModelSpec) -> None:
    """A folder without a weights file would load as a model with random weights, which scores by chance."""
    if spec.source != "local-dir" or not Path(spec.required("location")).is_dir():
        return  # not a folder: open_clip says what is missing
    if not any(any(Path(spec.required("location")).glob(pattern)) for pattern in WEIGHT_PATTERNS):
        raise ModelLoadError(f"Refused '{spec.raw}': {spec.location} holds no weights file "
                             f"({', '.join(WEIGHT_PATTERNS)}), so the model would have random weights")



def _create(spec: ModelSpec, device: str, force_quick_gelu: bool, notes: list[str]) -> tuple[ClipModule, Callable]:
    """open_clip's model and preprocessing with the spec's weights; a checkpoint file holding loralib LoRA factors
    (DAC, TSVLC) is read weights-only, merged (`backend.models.lora_factors`) and loaded strictly."""
    from backend.models.checkpoint_files import holds_lora_factors, quiet_random_init, read_merged_state_dict

    factors = spec.source == "file" and holds_lora_factors(Path(spec.required("pretrained")))
    with warnings.catch_warnings(), quiet_random_init() if factors else contextlib.nullcontext():
        warnings.filterwarnings("ignore", message="QuickGELU mismatch")
        model, _, preprocess = open_clip.create_model_and_transforms(
            spec.open_clip_name, pretrained=None if factors else spec.pretrained, device=device,
            force_quick_gelu=force_quick_gelu, weights_only=True, pretrained_text=False,
            require_pretrained=not factors)
    if factors:
        state, merge_notes = read_merged_state_dict(Path(spec.required("pretrained")))
        model.load_state_dict(state)
        notes += merge_notes
    return model, preprocess


def load_model(spec_str: str, device: str | None = None, precision: str | None = None,
               allowed_roots: list[Path] | None = None, models_dir: Path | None = None,
               max_parameters: int | None = None) -> LoadedModel:
    """Load a model from a spec string, or raise ``ModelLoadError`` with a readable message.

    `models_dir` is where catalog models are cached (default: the settings' models folder). `max_parameters`
    refuses a larger model before it is built (`backend.models.budget`; None: no limit). A model whose weights
    could not be loaded is refused too: open_clip would go on with random weights and only log a warning.
    """
    spec = parse_spec(spec_str)
    if spec.source == "catalog":
        return _load_catalog(spec, device, precision, models_dir, max_parameters)
    confine(spec, allowed_roots)
    _check_architecture(spec)  # after confine: a refused path is refused before anything else is said about it
    _check_weights_present(spec)
    device = env.pick_device(device)
    precision = pick_precision(device, precision)
    notes: list[str] = []
    try:
        config = read_config(spec)
        if "lora" in config:  # an adapter checkpoint: its base model (budget-checked), the adapter merged in
            return _load_adapter_checkpoint(Path(spec.required("location")), config, spec.raw, device, precision,
                                           allowed_roots, models_dir, max_parameters)
        budget.check(spec.raw, _model_cfg(spec, config), max_parameters)
        expected = _expected_activation(spec, config)
        force_quick_gelu = spec.source in ("tag", "file") and expected == "quickgelu"
        if force_quick_gelu and "quickgelu" not in (spec.architecture or "").lower():
            notes.append(f"'{spec.raw}' was trained with QuickGELU; loaded with QuickGELU "
                         f"(as {spec.architecture}-quickgelu would be).")
        model, preprocess = _create(spec, device, force_quick_gelu, notes)
        tokenizer = _tokenizer_for(spec, config)
    except ModelLoadError:
        raise
    except Exception as error:  # any download/parse/shape failure becomes one clear message
        if _is_refused_pickle(error):
            raise ModelLoadError(_pickle_message(spec)) from None
        if NO_WEIGHTS in str(error):
            raise ModelLoadError(f"Refused '{spec.raw}': none of its weights could be loaded, and a model with "
                                 "random weights scores by chance. " + _failure_message(spec, error)) from None
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


def _load_adapter_checkpoint(directory: Path, config: dict, spec: str, device: str | None, precision: str | None,
                            allowed_roots: list[Path] | None, models_dir: Path | None = None,
                            max_parameters: int | None = None):
    """A LoRA checkpoint folder as a LoadedModel: its base loaded from the recorded spec, the adapter merged in."""
    from safetensors.torch import load_file

    from backend.models.checkpoint import WEIGHTS, load_adapter
    from backend.models.lora import LORA_KEY, add_lora

    lora = config[LORA_KEY]
    base = load_model(lora["base_model"], device=device, precision=precision, allowed_roots=allowed_roots,
                      models_dir=models_dir, max_parameters=max_parameters)
    wrapper = add_lora(base.model, lora)
    try:
        load_adapter(base.model, load_file(Path(directory) / WEIGHTS, device=str(next(base.model.parameters()).device)))
    except (OSError, ValueError) as error:  # safetensors' own errors for a damaged file are ValueError-like too
        raise ModelLoadError(f"Could not load the LoRA adapter in {directory}: {error}") from error
    base.model = wrapper.merge_and_unload().eval()
    base.notes.append(f"LoRA rank {lora['rank']} on the {' and '.join(lora['towers'])} tower(s) of "
                      f"{lora['base_model']}, merged into its weights.")
    base.spec = spec
    return base


def export_merged(spec: str, name: str, models_dir: Path | str) -> str:
    """Write a LoRA checkpoint merged into its base as a plain checkpoint under ``<models_dir>/merged/<name>``;
    returns its ``local-dir:`` spec."""
    from backend.core.paths import check_slug
    from backend.models.checkpoint import save_checkpoint
    from backend.models.lora import LORA_KEY, MERGED_FOLDER

    target = Path(models_dir) / MERGED_FOLDER / check_slug(name, "merged model name")
    if target.exists():
        raise ValueError(f"a merged model named {name!r} already exists in {target.parent}; pick another name")
    if LORA_KEY not in read_config(parse_spec(spec)):
        raise ValueError(f"{spec} is not a LoRA checkpoint: there is no adapter to merge")
    loaded = load_model(spec, device="cpu", precision="fp32")
    save_checkpoint(target, loaded.model, loaded.architecture, {"merged_from": spec})
    return f"local-dir:{target}"
