"""A tiny open_clip model for tests: real architecture code, random weights, a few MB; and the built-in toy
model's architecture freshly initialised, saved as a checkpoint folder (`random_toy_checkpoint`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import open_clip
import torch
from PIL import Image
from safetensors.torch import save_file

ARCH = "tiny-test-ViT"
HUB_ID = "complab-tests/tiny-clip"
MODEL_CFG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@dataclass
class TinyCheckpoints:
    file_spec: str
    dir_spec: str
    hub_spec: str
    directory: Path


def register_arch(root: Path) -> None:
    config_path = root / f"{ARCH}.json"
    config_path.write_text(json.dumps(MODEL_CFG))
    open_clip.add_model_config(config_path)


def save_tiny_model(root: Path, hub_cache: Path, seed: int = 0) -> TinyCheckpoints:
    register_arch(root)
    torch.manual_seed(seed)
    model = open_clip.create_model(ARCH)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    file_path = root / "tiny.safetensors"
    save_file(state, file_path)
    local_dir = save_local_dir(root / "tiny-dir", state, MODEL_CFG, ARCH)
    _lay_out_hub_cache(hub_cache, local_dir)
    return TinyCheckpoints(f"{ARCH}:{file_path}", f"local-dir:{local_dir}", f"hf-hub:{HUB_ID}", root)


def save_local_dir(folder: Path, state: dict, model_cfg: dict, architecture: str) -> Path:
    """A `local-dir:` checkpoint folder: safetensors weights and the config that rebuilds their model."""
    folder.mkdir(parents=True)
    save_file(state, folder / "open_clip_model.safetensors")
    config = {"model_cfg": model_cfg, "architecture": architecture, "activation": "gelu"}
    (folder / "open_clip_config.json").write_text(json.dumps(config))
    return folder


def save_wider_model(folder: Path, width: int = 48) -> str:
    """The tiny architecture with every width (and the embedding) at `width`: same keys, other shapes. Its spec."""
    model_cfg = {"embed_dim": width, "vision_cfg": {**MODEL_CFG["vision_cfg"], "width": width},
                 "text_cfg": {**MODEL_CFG["text_cfg"], "width": width}}
    torch.manual_seed(1)
    model = open_clip.model.CLIP(**model_cfg)
    save_local_dir(folder, {k: v.contiguous() for k, v in model.state_dict().items()}, model_cfg, f"{ARCH}-w{width}")
    return f"local-dir:{folder}"


def _lay_out_hub_cache(hub_cache: Path, source_dir: Path) -> None:
    """What `hf_hub_download` leaves behind, so HF_HUB_OFFLINE=1 resolves the repo from disk."""
    commit = "0" * 40
    repo = hub_cache / ("models--" + HUB_ID.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for name in ("open_clip_config.json", "open_clip_model.safetensors"):
        (snapshot / name).write_bytes((source_dir / name).read_bytes())


def solid_image(rgb: tuple[int, int, int], size: int = 48) -> Image.Image:
    return Image.new("RGB", (size, size), rgb)


def solid_image_file(folder: Path, rgb: tuple[int, int, int], size: int = 64, name: str = "scene.png") -> Path:
    """A one-colour PNG saved in `folder`: an image to probe when only the captions matter."""
    path = folder / name
    solid_image(rgb, size=size).save(path)
    return path


def random_toy_checkpoint(folder: Path) -> str:
    """The toy architecture freshly initialised (seed 0), saved as a checkpoint folder; returns its spec."""
    from backend.models.checkpoint import save_checkpoint  # here: the tiny model's users need no training code
    from backend.train.config import TrainConfig
    from backend.train.loop import build_model

    loaded = build_model(TrainConfig(base_model="toyworld:random"), "cpu")
    save_checkpoint(folder, loaded.model, loaded.architecture, {"trained_from": "toyworld:random"})
    return f"local-dir:{folder}"
