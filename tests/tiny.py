"""A tiny open_clip model for tests: real architecture code, random weights, a few MB."""
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
    config = {"model_cfg": MODEL_CFG, "architecture": ARCH, "activation": "gelu"}
    local_dir = root / "tiny-dir"
    local_dir.mkdir()
    save_file(state, local_dir / "open_clip_model.safetensors")
    (local_dir / "open_clip_config.json").write_text(json.dumps(config))
    _lay_out_hub_cache(hub_cache, local_dir)
    return TinyCheckpoints(f"{ARCH}:{file_path}", f"local-dir:{local_dir}", f"hf-hub:{HUB_ID}", root)


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
