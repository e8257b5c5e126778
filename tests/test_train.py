"""The training engine on the built-in world: real open_clip model, real data, real checkpoints."""
import json

import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from backend.losses import CE_CLIP_TYPES
from backend.models import load_model
from backend.train import data as train_data
from backend.train.config import LOSSES, TrainConfig
from backend.train.loop import cosine_lr, parameter_groups, train

TINY = dict(base_model="toyworld:random", data="toyworld-finetune", steps=6, batch_size=8, dataset_size=24,
            eval_every=3, eval_benchmarks=[], warmup_steps=2, lr=1e-3)


def _config(tmp_path, **overrides) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "output_dir": str(tmp_path), **overrides})


def _metrics(config, split="train"):
    lines = (config.run_dir / "metrics.jsonl").read_text().splitlines()
    return [row for row in map(json.loads, lines) if row["split"] == split]


def test_no_weight_decay_on_gains_biases_and_logit_scale():
    model = torch.nn.Module()
    model.proj = torch.nn.Linear(4, 4)
    model.ln_final = torch.nn.LayerNorm(4)
    model.logit_scale = torch.nn.Parameter(torch.ones([]))
    no_decay, decay = parameter_groups(model, 0.1)
    assert decay["weight_decay"] == 0.1 and [p.shape for p in decay["params"]] == [(4, 4)]
    assert no_decay["weight_decay"] == 0.0 and len(no_decay["params"]) == 4


def test_cosine_schedule_warms_up_then_decays_to_zero():
    config = TrainConfig(steps=100, warmup_steps=10, lr=1.0)
    assert cosine_lr(0, config) == pytest.approx(0.1)
    assert cosine_lr(9, config) == pytest.approx(1.0)
    assert cosine_lr(55, config) == pytest.approx(0.5)
    assert cosine_lr(100, config) == pytest.approx(0.0)


@pytest.mark.parametrize("loss, part", [("clip", "i2t"), ("negclip", "i2t"), ("ce_clip", "th_relation"),
                                        ("hp_hn", "hp"), ("trohn_img", "t2i")])
def test_every_loss_trains_and_logs_its_named_parts(tmp_path, loss, part):
    config = _config(tmp_path, loss=loss, steps=2, eval_every=2)
    result = train(config)
    logged = _metrics(config)
    assert part in logged[-1] and all(torch.isfinite(torch.tensor(row["loss"])) for row in logged)
    assert (config.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors").is_file()
    assert result["best"].endswith("best")


def test_resumed_run_ends_with_the_same_weights_as_an_uninterrupted_one(tmp_path):
    straight = _config(tmp_path / "a", loss="negclip")
    train(straight)
    interrupted = _config(tmp_path / "b", loss="negclip")
    assert train(interrupted, stop_after=5) == {"stopped_at": 5}  # last checkpoint is at step 3
    train(interrupted)
    a = load_file(straight.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")
    b = load_file(interrupted.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_checkpoint_loads_through_the_registry_with_its_tokenizer_and_activation(tmp_path):
    config = _config(tmp_path, steps=3)
    result = train(config)
    loaded = load_model(f"local-dir:{result['last']}", device="cpu")
    assert loaded.activation == "gelu"
    assert type(loaded.tokenizer).__name__ == "ToyTokenizer"
    saved = json.loads((config.run_dir / "checkpoints" / "last" / "open_clip_config.json").read_text())
    assert saved["trained_from"] == "toyworld:random" and saved["step"] == 3


def test_logit_scale_is_clamped_after_every_step(tmp_path):
    config = _config(tmp_path, steps=2, max_logit_scale=5.0)
    train(config)
    assert all(row["logit_scale"] <= 5.0 + 1e-5 for row in _metrics(config))


def test_hard_negative_images_are_other_images(tmp_path):
    config = _config(tmp_path, loss="negclip", steps=1, hard_negative_images=True)
    train(config)
    embeddings = torch.nn.functional.normalize(torch.randn(10, 8), dim=-1)
    neighbours = train_data.nearest_neighbours(embeddings, k=3)
    assert neighbours.shape == (10, 3)
    assert all(i not in row.tolist() for i, row in enumerate(neighbours))


def test_batches_are_a_pure_function_of_seed_and_step():
    data = train_data.toyworld_data("toyworld-finetune", 20, 0, preprocess=None, families=["negclip_swap"],
                                    mean_std=([0.5] * 3, [0.5] * 3))
    first = train_data.make_batch(data, 7, 4, seed=1)
    again = train_data.make_batch(data, 7, 4, seed=1)
    assert first.captions == again.captions and first.negatives == again.negatives
    assert torch.equal(first.images, again.images)
    assert all(n and n != c for n, c in zip(first.negatives, first.captions))


def _manifest(tmp_path, rows):
    lines = ["image,caption,negatives"] + [",".join(row) for row in rows]
    path = tmp_path / "train.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_manifest_bad_rows_are_skipped_and_counted(tmp_path):
    Image.new("RGB", (32, 32), (200, 10, 10)).save(tmp_path / "red.png")
    (tmp_path / "broken.png").write_text("not an image")
    path = _manifest(tmp_path, [("red.png", "a red square", "a blue square"), ("gone.png", "a dog", ""),
                                ("broken.png", "a cat", ""), ("red.png", "", "")])
    rows, skipped = train_data.read_manifest(path)
    assert [row["caption"] for row in rows] == ["a red square"]
    assert skipped == {"missing image": 1, "unreadable image": 1, "empty caption": 1}


def test_manifest_with_no_usable_rows_is_a_clear_error(tmp_path):
    path = _manifest(tmp_path, [("gone.png", "a dog", "")])
    with pytest.raises(ValueError, match="no usable rows"):
        train_data.read_manifest(path)


def test_bad_config_is_rejected_with_every_problem_named():
    with pytest.raises(ValueError) as error:
        TrainConfig.from_dict({"loss": "triplet", "steps": 0, "colour": "red"})
    assert "colour" in str(error.value)
    with pytest.raises(ValueError) as error:
        TrainConfig.from_dict({"loss": "triplet", "steps": 0})
    assert "triplet" in str(error.value) and "steps" in str(error.value)
    assert set(LOSSES) == {"clip", "negclip", "ce_clip", "hp_hn", "trohn_img"}
    for bad in (["relation", "colour"], "relation"):
        with pytest.raises(ValueError, match="aux_types"):
            TrainConfig.from_dict({"loss": "ce_clip", "loss_weights": {"aux_types": bad}})


def test_ce_clip_default_aux_types_are_the_loss_types():
    """The config spells the four types out (it must not import torch); they must stay the loss's."""
    assert tuple(TrainConfig(loss="ce_clip").weights["aux_types"]) == CE_CLIP_TYPES
