"""DAC and TSVLC checkpoints: open_clip state dicts with loralib LoRA factors beside the plain weights.

The checkpoint is written here in the authors' layout (github.com/SivanDoveh/DAC, ``src/training/main.py``:
``torch.save({"epoch", "name", "state_dict": model.state_dict(), "optimizer", "scaler"})`` of a DDP model, so
every key starts with ``module.``; ``src/open_clip/model.py`` with ``--lora 4``: loralib layers in every block of
both towers and the patch embedding, alpha 1), from a tiny open_clip model, and loaded the two ways the lab
loads a file: ``ARCH:/path/file.pt`` and a manual ``catalog:`` entry. The result must score exactly like the
same model whose weights were merged by hand (W + B @ A / rank).
"""
import numpy as np
import open_clip
import pytest
import torch
from safetensors.torch import save_file

from backend.models import catalog
from backend.models.encoder import Encoder
from backend.models.loading import load_model
from backend.models.spec import ModelLoadError
from tests.support.tiny import ARCH, solid_image

RANK = 4
PATCH = 16  # tests.support.tiny: vision patch_size
CAPTIONS = ["a red square", "a blue square", "a photo of a dog"]
BLOCKS = ("visual.transformer.resblocks.0", "transformer.resblocks.0")


def factor_shapes(state: dict) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """weight key -> (lora_A shape, lora_B shape) for every layer the authors' --lora R puts loralib on."""
    shapes = {}
    for block in BLOCKS:
        width = state[f"{block}.attn.out_proj.weight"].shape[0]
        shapes[f"{block}.attn.in_proj_weight"] = ((RANK, width), (3 * width, RANK))
        shapes[f"{block}.attn.out_proj.weight"] = ((RANK, width), (width, RANK))
        hidden = state[f"{block}.mlp.c_fc.weight"].shape[0]
        shapes[f"{block}.mlp.c_fc.weight"] = ((RANK, width), (hidden, RANK))
        shapes[f"{block}.mlp.c_proj.weight"] = ((RANK, hidden), (width, RANK))
    out_channels = state["visual.conv1.weight"].shape[0]
    shapes["visual.conv1.weight"] = ((RANK * PATCH, 3 * PATCH), (out_channels * PATCH, RANK * PATCH))
    return shapes


def factor_keys(weight_key: str) -> tuple[str, str]:
    """loralib's parameter names: ``<mha>.in_proj_weight_lora_A`` for the attention, ``<layer>.lora_A`` else."""
    if weight_key.endswith(".weight"):
        stem = weight_key.removesuffix(".weight")
        return f"{stem}.lora_A", f"{stem}.lora_B"
    return f"{weight_key}_lora_A", f"{weight_key}_lora_B"


@pytest.fixture
def upstream(tmp_path, tiny_checkpoints):
    """(the authors' checkpoint file, the hand-merged model as a safetensors file) for one tiny model."""
    torch.manual_seed(3)
    base = {k: v.clone() for k, v in open_clip.create_model(ARCH).state_dict().items()}
    factors, merged = {}, dict(base)
    for weight_key, (a_shape, b_shape) in factor_shapes(base).items():
        a, b = torch.randn(a_shape) * 0.3, torch.randn(b_shape) * 0.3
        a_key, b_key = factor_keys(weight_key)
        factors[a_key], factors[b_key] = a, b
        merged[weight_key] = base[weight_key] + (b @ a).view(base[weight_key].shape) / RANK
    checkpoint = {"epoch": 5, "name": "dac-tiny",
                  "state_dict": {f"module.{k}": v for k, v in {**base, **factors}.items()},
                  "optimizer": {"state": {}, "param_groups": [{"lr": np.float64(5e-6), "betas": (0.9, 0.98)}]},
                  "scaler": {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                             "_growth_tracker": 0}}
    raw = tmp_path / "dac-tiny.pt"
    torch.save(checkpoint, raw)
    by_hand = tmp_path / "merged-by-hand.safetensors"
    save_file({k: v.contiguous() for k, v in merged.items()}, by_hand)
    return raw, by_hand, base


def cosine(spec: str, models_dir=None) -> torch.Tensor:
    loaded = load_model(spec, device="cpu", models_dir=models_dir)
    return Encoder(loaded).score([solid_image((255, 0, 0)), solid_image((0, 0, 255))], CAPTIONS).cosine


@pytest.fixture
def manual_entry(monkeypatch):
    def add(name):
        raw = {"name": name, "label": f"Test {name}", "paper": "test", "kind": "manual", "architecture": ARCH,
               "activation": "gelu", "origin": "openai", "format": "test", "licence": "test", "size": "tiny",
               "found_at": ["https://example.org/readme"], "filename": f"{name}.pt", "sha256": None}
        monkeypatch.setitem(catalog.ENTRIES, name, catalog.validate(raw))
    return add


def test_a_checkpoint_file_with_factors_scores_as_the_hand_merged_model(upstream):
    raw, by_hand, base = upstream
    loaded = load_model(f"{ARCH}:{raw}", device="cpu")
    assert any("merged loralib LoRA factors (rank 4, alpha 1" in note and "into 9 layers" in note
               for note in loaded.notes)
    assert torch.equal(cosine(f"{ARCH}:{raw}"), cosine(f"{ARCH}:{by_hand}"))
    plain = raw.with_name("base.safetensors")
    save_file({k: v.contiguous() for k, v in base.items()}, plain)
    assert not torch.allclose(cosine(f"{ARCH}:{plain}"), cosine(f"{ARCH}:{raw}"), atol=1e-3)  # the factors count


def test_a_manual_catalog_entry_converts_the_authors_file(upstream, manual_entry, tmp_path):
    raw, by_hand, _ = upstream
    models_dir = tmp_path / "models"
    models_dir.mkdir()
    manual_entry("tiny-dac")
    (models_dir / "tiny-dac.pt").write_bytes(raw.read_bytes())  # where the catalog's notes say to save it
    first = load_model("catalog:tiny-dac", device="cpu", models_dir=models_dir)
    assert any("merged loralib LoRA factors" in note for note in first.notes)
    assert torch.equal(cosine("catalog:tiny-dac", models_dir), cosine(f"{ARCH}:{by_hand}"))


@pytest.mark.parametrize("damage, named", [
    (lambda sd: sd.__setitem__("module.visual.transformer.resblocks.0.mlp.c_fc.lora_B", torch.zeros(7, RANK)),
     "visual.transformer.resblocks.0.mlp.c_fc.weight (weight (128, 32), lora_A (4, 32), lora_B (7, 4))"),
    (lambda sd: sd.pop("module.transformer.resblocks.0.attn.in_proj_weight_lora_B"),
     "transformer.resblocks.0.attn.in_proj_weight_lora_A (no transformer.resblocks.0.attn.in_proj_weight_lora_B)"),
])
def test_factors_that_do_not_fit_are_refused_naming_the_layer(upstream, tmp_path, damage, named):
    raw, _, _ = upstream
    checkpoint = torch.load(raw, weights_only=False)
    damage(checkpoint["state_dict"])
    broken = tmp_path / "broken.pt"
    torch.save(checkpoint, broken)
    with pytest.raises(ModelLoadError) as refused:
        load_model(f"{ARCH}:{broken}", device="cpu")
    assert "LoRA factors do not fit their layers" in str(refused.value) and named in str(refused.value)
