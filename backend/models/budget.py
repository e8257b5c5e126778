"""How large a model is, counted from its config before it is built: the web app's guard on memory.

open_clip builds whatever architecture a config declares: a 300-byte
``open_clip_config.json`` in a hub repo added 1.8 GB of resident memory in 6 s, and
the registry keeps three models. So every model the web app loads is counted first
and refused above the `max_model_parameters` setting.

The count is exact and costs no memory: open_clip builds the declared model on
PyTorch's "meta" device, where tensors have shapes but no storage (~0.1-0.4 s for
ViT-B to ViT-bigG), from the very config the real build would read, with every
tower's own pretrained download switched off. Only the number of layers is checked
first, by hand: each is a Python object even on the meta device, and a config
declaring a million of them would make the count itself the attack.
"""
from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from backend.models.spec import CONFIG_NAME, ModelLoadError

MAX_LAYERS = 1000  # per tower; the largest open_clip model (ViT-bigG) has 48


def _layer_counts(config: Any) -> Iterator[int]:
    """Every number of layers the config declares (a ResNet declares a list, one per stage)."""
    if isinstance(config, dict):
        for key, value in config.items():
            if key == "layers":
                yield from (value if isinstance(value, (list, tuple)) else [value])
            else:
                yield from _layer_counts(value)


def parameter_count(model_cfg: dict) -> int:
    """The number of parameters of the model `model_cfg` (open_clip's ``model_cfg``) declares, built on the
    meta device; `ModelLoadError` when the config cannot describe a model."""
    import torch

    from backend.models.checkpoint_files import quiet_random_init

    layers = [count for count in _layer_counts(model_cfg) if isinstance(count, (int, float))]
    if any(count > MAX_LAYERS for count in layers):
        raise ModelLoadError(f"its config declares {max(layers):,} layers in one tower; at most {MAX_LAYERS:,} "
                             "are counted")
    import open_clip

    with tempfile.TemporaryDirectory(prefix="model-count-") as folder:
        (Path(folder) / CONFIG_NAME).write_text(json.dumps({"model_cfg": model_cfg}))
        try:
            with torch.device("meta"), quiet_random_init():
                model = open_clip.create_model(f"local-dir:{folder}", device="meta", load_weights=False,
                                               pretrained_image=False, pretrained_text=False)
        except Exception as error:  # a config open_clip cannot build: the real build would fail the same way
            raise ModelLoadError(f"its config does not describe a model open_clip can build "
                                 f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
                                 ) from None
    return sum(parameter.numel() for parameter in model.parameters())


def check(spec: str, model_cfg: dict | None, max_parameters: int | None) -> None:
    """Refuse `spec` when its model has more than `max_parameters` (None: no limit, the command line's case)."""
    if max_parameters is None:
        return
    if not isinstance(model_cfg, dict):
        raise ModelLoadError(f"Refused '{spec}': its config has no model_cfg, so its size cannot be checked "
                             "before it is built")
    try:
        count = parameter_count(model_cfg)
    except ModelLoadError as error:
        raise ModelLoadError(f"Refused '{spec}': {error}") from None
    if count > max_parameters:
        raise ModelLoadError(f"Refused '{spec}': it declares a model of {count:,} parameters; this server loads "
                             f"models of at most {max_parameters:,} (the max_model_parameters setting, "
                             "COMPLAB_MAX_MODEL_PARAMETERS)")
