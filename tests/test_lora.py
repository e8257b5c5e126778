"""LoRA finetuning through peft: adapter-only checkpoints with their base spec, exact resume, loading for the
Probe/Benchmarks/Sweep (merged), merge export, and a patching sweep between the base and the LoRA model."""
import json

import pytest
import torch
from safetensors.torch import load_file

from backend.cli import main
from backend.models import checkpoint, lora
from backend.models import loading
from backend.models.loading import load_model
from backend.train.config import TrainConfig
from backend.train.loop import train

BASE = "toyworld"  # the built-in world's shipped model: a saved open_clip model LoRA can adapt
RUN = dict(base_model=BASE, data="toyworld-finetune", loss="clip", steps=6, batch_size=8, dataset_size=24,
           eval_every=3, eval_benchmarks=[], warmup_steps=1, lr=5e-2, workers=0, lora_rank=4)
BENCHMARK = "toy-zeroshot-shape"
RUN_TARGETS = ["attn", "mlp"]  # the default


def _config(folder, **overrides) -> TrainConfig:
    return TrainConfig.from_dict({**RUN, "output_dir": str(folder), **overrides})


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory):
    config = _config(tmp_path_factory.mktemp("lora"))
    train(config)
    return config


def _last(config) -> str:
    return str(config.run_dir / "checkpoints" / "last")


def test_a_lora_checkpoint_holds_the_adapter_and_its_base_spec(lora_run):
    weights = load_file(f"{_last(lora_run)}/open_clip_model.safetensors")
    assert weights and all("lora_" in name for name in weights)
    assert {name.split(".")[0] for name in weights} == {"visual", "transformer"}  # both towers
    assert any(".attn." in name for name in weights) and any(".mlp.c_fc." in name for name in weights)
    config = json.loads((lora_run.run_dir / "checkpoints" / "last" / "open_clip_config.json").read_text())
    assert config["lora"] == {"base_model": BASE, "rank": 4, "alpha": 4.0, "towers": ["vision", "text"],
                              "targets": ["attn", "mlp"]}
    base_size = sum(v.numel() for v in load_model(BASE, device="cpu").model.state_dict().values())
    assert sum(v.numel() for v in weights.values()) < base_size / 5


def test_only_the_chosen_tower_and_layers_get_adapters(tmp_path):
    config = _config(tmp_path, steps=1, eval_every=1, lora_towers=["text"], lora_targets=["mlp"], lora_rank=2)
    train(config)
    names = load_file(f"{_last(config)}/open_clip_model.safetensors")
    assert names and all(n.startswith("transformer.") and ".mlp." in n for n in names)


def test_lora_configs_are_checked():
    for bad, message in (({"lora_rank": -1}, "lora_rank"), ({"lora_towers": ["audio"]}, "lora_towers"),
                         ({"lora_targets": []}, "lora_targets"), ({"base_model": "toyworld:random"}, "scratch")):
        with pytest.raises(ValueError, match=message):
            TrainConfig.from_dict({**RUN, **bad})


@pytest.mark.parametrize("targets, tolerance", [(["mlp"], 0.0), (["attn", "mlp"], 1e-5)])
def test_a_resumed_lora_run_ends_with_the_same_adapter(lora_run, tmp_path, targets, tolerance):
    """Exact on linear layers. peft's attention LoRA merges its update into the frozen weights for each forward
    and subtracts it after, which leaves ~1e-8 of rounding in them that an adapter-only checkpoint does not
    keep: a resumed run then ends within float noise of an uninterrupted one."""
    straight = lora_run if targets == RUN_TARGETS else _config(tmp_path / "straight", lora_targets=targets)
    if straight is not lora_run:
        train(straight)
    interrupted = _config(tmp_path / "interrupted", lora_targets=targets)
    assert train(interrupted, stop_after=5) == {"stopped_at": 5}
    train(interrupted)
    a, b = (load_file(f"{_last(c)}/open_clip_model.safetensors") for c in (straight, interrupted))
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=tolerance) for k in a)


def test_loading_merges_the_adapter_into_a_plain_model_that_scores_like_the_adapted_one(lora_run):
    merged = load_model(f"local-dir:{_last(lora_run)}", device="cpu")
    base = load_model(BASE, device="cpu")
    assert merged.model.state_dict().keys() == base.model.state_dict().keys()  # no adapter left: a plain model
    assert any("LoRA rank 4" in note for note in merged.notes)
    adapted = load_model(BASE, device="cpu")
    lora.add_lora(adapted.model, json.loads(
        (lora_run.run_dir / "checkpoints" / "last" / "open_clip_config.json").read_text())["lora"])
    checkpoint.load_adapter(adapted.model, load_file(f"{_last(lora_run)}/open_clip_model.safetensors"))
    tokens = base.tokenizer(["a red circle", "a blue square"])
    with torch.no_grad():
        want = adapted.model.eval().encode_text(tokens)
        got = merged.model.encode_text(tokens)
        assert torch.allclose(got, want, atol=1e-5)
        assert not torch.allclose(got, base.model.encode_text(tokens), atol=1e-3)  # training moved it


def test_merging_exports_a_plain_checkpoint(lora_run, tmp_path):
    spec = loading.export_merged(f"local-dir:{_last(lora_run)}", "merged-run", tmp_path)
    weights = load_file(spec.removeprefix("local-dir:") + "/open_clip_model.safetensors")
    assert not any("lora_" in name for name in weights)
    exported, merged = load_model(spec, device="cpu"), load_model(f"local-dir:{_last(lora_run)}", device="cpu")
    for key, value in merged.model.state_dict().items():
        assert torch.equal(exported.model.state_dict()[key], value)
    with pytest.raises(ValueError, match="not a LoRA checkpoint"):
        loading.export_merged(spec, "again", tmp_path)


@pytest.mark.system  # the evaluation's image workers are processes
def test_benchmarks_and_a_patching_sweep_take_the_lora_model(lora_run, capsys):
    """The sweep's alpha 0 is the base, alpha 1 the LoRA model, each scoring what `evaluate` gives it."""
    spec = f"local-dir:{_last(lora_run)}"
    assert main(["evaluate", "--model", BASE, spec, "--benchmarks", BENCHMARK, "--json", "--no-store"]) == 0
    expected = [{f"{BENCHMARK}/{k}": v for k, v in result["metrics"].items()}
                for result in json.loads(capsys.readouterr().out)["results"]]
    assert main(["patch", "--pretrained", BASE, "--finetuned", spec, "--alphas", "0", "1",
                 "--compositional", f"{BENCHMARK}/top1", "--object-centric", f"{BENCHMARK}/top1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row.pop("alpha") for row in rows] == [0.0, 1.0]
    assert rows == expected
