"""Weight interpolation (REFERENCE.md, "Model patching") on hand-made and real open_clip state dicts."""
import pytest
import torch

from backend.models import load_model
from backend.patching import PatchingError, interpolate, patched_model


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
    ({"w": torch.zeros(3), "v": torch.zeros(1)}, "shapes differ"),
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
    assert torch.equal(start.model.state_dict()[key], load_model(tiny_checkpoints.dir_spec).model.state_dict()[key])


def test_patch_command_prints_one_row_per_alpha(tiny_checkpoints, capsys):
    import json

    from backend.cli import main

    spec = tiny_checkpoints.dir_spec
    assert main(["patch", "--pretrained", spec, "--finetuned", spec, "--alphas", "0", "0.5", "1",
                 "--benchmarks", "toy-zeroshot-shape", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["alpha"] for row in rows] == [0.0, 0.5, 1.0]
    assert rows[0]["toy-zeroshot-shape/top1"] == rows[2]["toy-zeroshot-shape/top1"]  # same model at both ends
