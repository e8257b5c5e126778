"""Weight interpolation (docs/REFERENCE.md, "Model patching") on hand-made and real open_clip state dicts."""
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from backend.cli import main
from backend.models.loading import load_model
from backend.patching.sweep import PatchingError, interpolate, patched_model
from backend.toyworld.model import create_toy_model
from backend.toyworld.plugin import SHIPPED_MODEL

TOY_DIR = SHIPPED_MODEL


def test_float_tensors_are_interpolated_and_integers_copied():
    a = {"w": torch.tensor([0.0, 10.0]), "logit_scale": torch.tensor(1.0), "ids": torch.tensor([1, 2])}
    b = {"w": torch.tensor([4.0, 20.0]), "logit_scale": torch.tensor(3.0), "ids": torch.tensor([7, 7])}
    out = interpolate(a, b, 0.25)
    assert out["w"].tolist() == [1.0, 12.5]
    assert out["logit_scale"].item() == 1.5
    assert out["ids"].tolist() == [1, 2]
    assert torch.equal(interpolate(a, b, 0.0)["w"], a["w"]) and torch.equal(interpolate(a, b, 1.0)["w"], b["w"])


@pytest.mark.parametrize("b, message", [
    ({"w": torch.zeros(2)}, "different parameters"),
    ({"w": torch.zeros(3), "v": torch.zeros(1)}, r"differ in shape .* w \[2\] vs \[3\]"),
])
def test_mismatched_models_are_refused(b, message):
    with pytest.raises(PatchingError, match=message):
        interpolate({"w": torch.zeros(2), "v": torch.zeros(1)}, b, 0.5)


def test_alpha_outside_unit_interval_is_refused():
    with pytest.raises(PatchingError, match="alpha"):
        interpolate({"w": torch.zeros(1)}, {"w": torch.ones(1)}, 1.5)


def test_patched_real_model_sits_between_its_endpoints(tiny_checkpoints):
    start = load_model(tiny_checkpoints.dir_spec, device="cpu")
    end = load_model(tiny_checkpoints.dir_spec, device="cpu")
    with torch.no_grad():
        for parameter in end.model.parameters():
            parameter.add_(1.0)
    half = patched_model(start, end, 0.5)
    key = "visual.conv1.weight"
    expected = start.model.state_dict()[key] + 0.5
    assert torch.allclose(half.model.state_dict()[key], expected)
    assert "alpha=0.5" in half.spec
    assert torch.equal(start.model.state_dict()[key], load_model(tiny_checkpoints.dir_spec, device="cpu").model.state_dict()[key])


def _save_toy_weights(directory: Path, state: dict[str, torch.Tensor]) -> str:
    """A local-dir checkpoint of the built-in toy architecture with the given weights."""
    directory.mkdir()
    save_file({k: v.contiguous() for k, v in state.items()}, directory / "open_clip_model.safetensors")
    (directory / "open_clip_config.json").write_bytes((TOY_DIR / "open_clip_config.json").read_bytes())
    return f"local-dir:{directory}"


def _perturbed_toy_weights(noise: float) -> dict[str, torch.Tensor]:
    """The built-in model's weights plus seeded Gaussian noise (`noise` x each tensor's std)."""
    model = create_toy_model(seed=0)[0]
    model.load_state_dict(load_file(TOY_DIR / "open_clip_model.safetensors"))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() > 1:  # logit_scale stays
                parameter.add_(noise * parameter.std() * torch.randn(parameter.shape, generator=generator))
    return model.state_dict()


@pytest.mark.system
def test_patch_command_interpolates_from_pretrained_to_finetuned(tmp_path, capsys):
    """Alpha 0 is the pretrained model, 1 the finetuned one, 0.5 the midpoint of their weights:
    each row has the numbers `evaluate` gives for that model, and the three differ."""
    finetuned = "toyworld"
    perturbed = _perturbed_toy_weights(noise=0.5)  # the metric moves smoothly from ~50% to 100% along the path
    trained = load_file(TOY_DIR / "open_clip_model.safetensors")
    midpoint = {k: torch.lerp(v, trained[k], 0.5) if v.is_floating_point() else v for k, v in perturbed.items()}
    pretrained = _save_toy_weights(tmp_path / "pretrained", perturbed)
    halfway = _save_toy_weights(tmp_path / "halfway", midpoint)
    benchmark = "toy-zeroshot-shape"

    assert main(["evaluate", "--model", pretrained, halfway, finetuned, "--benchmarks", benchmark, "--json",
                 "--no-store"]) == 0
    expected = [{f"{benchmark}/{k}": v for k, v in result["metrics"].items()}
                for result in json.loads(capsys.readouterr().out)["results"]]
    assert len({json.dumps(metrics) for metrics in expected}) == 3, f"the three models tie: {expected}"

    assert main(["patch", "--pretrained", pretrained, "--finetuned", finetuned, "--alphas", "0", "0.5", "1",
                 "--compositional", f"{benchmark}/top1", "--object-centric", f"{benchmark}/top1", "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    rows = output["rows"]
    assert [row.pop("alpha") for row in rows] == [0.0, 0.5, 1.0]
    assert rows == expected
    assert output["recommended"]["alpha"] == 1.0  # the same metric on both axes: the best one is never worse
