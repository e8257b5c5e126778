"""The training engine on the built-in world: real open_clip model, real data, real checkpoints."""
import io
import json

import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from backend.core.store import Store
from backend.jobs.reporter import Reporter
from backend.models import checkpoint
from backend.models.loading import load_model
from backend.toyworld import training as toy_training
from backend.train import data as train_data
from backend.train.config import LOSSES, TrainConfig
from backend.train.divergence import FiniteWatch, TrainingDiverged
from backend.train.loop import build_model, run_job, train
from backend.train.losses import CE_CLIP_TYPES
from backend.train.step import cosine_lr, parameter_groups

TINY = dict(base_model="toyworld:random", data="toyworld-finetune", steps=6, batch_size=8, dataset_size=24,
            eval_every=3, eval_benchmarks=[], warmup_steps=2, lr=1e-3)


def _config(tmp_path, **overrides) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, "output_dir": str(tmp_path), **overrides})


def _metrics(config, split="train"):
    lines = (config.run_dir / "metrics.jsonl").read_text().splitlines()
    return [row for row in map(json.loads, lines) if row["split"] == split]


def _last_weights(config) -> dict:
    return load_file(config.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors")


RESUMED = dict(loss="negclip")  # 6 steps, checkpoints at 3 and 6


@pytest.fixture(scope="module")
def straight_weights(tmp_path_factory):
    """The final weights of an uninterrupted RESUMED run: what every interrupted run must end with."""
    config = _config(tmp_path_factory.mktemp("straight"), **RESUMED)
    train(config)
    return _last_weights(config)


def _assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


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
                                        ("hp_hn", "hp"), ("trohn_img", "t2i"), ("tripletclip", "negative"),
                                        ("fsc_clip", "hard_negative"), ("countercurate", "t2i"),
                                        ("eqsim", "eq_image")])
def test_every_loss_trains_and_logs_its_named_parts(tmp_path, loss, part):
    config = _config(tmp_path, loss=loss, steps=2, eval_every=2)
    result = train(config)
    logged = _metrics(config)
    assert part in logged[-1] and all(torch.isfinite(torch.tensor(row["loss"])) for row in logged)
    assert (config.run_dir / "checkpoints" / "last" / "open_clip_model.safetensors").is_file()
    assert result["best"].endswith("best")


def test_resumed_run_ends_with_the_same_weights_as_an_uninterrupted_one(tmp_path, straight_weights):
    """Augmentation is on (the default): its crops must replay exactly too."""
    interrupted = _config(tmp_path, **RESUMED)
    assert interrupted.augment == "open_clip"
    assert train(interrupted, stop_after=5) == {"stopped_at": 5}  # last checkpoint is at step 3
    train(interrupted)
    _assert_same_weights(straight_weights, _last_weights(interrupted))


def test_a_crash_while_saving_keeps_the_previous_checkpoint_and_resume_continues_from_it(
        tmp_path, monkeypatch, straight_weights):
    interrupted = _config(tmp_path, **RESUMED)
    switch = checkpoint._switch

    def crash_at_step_6(link, version):
        if link.name == "last" and "step6" in version.name:
            raise OSError("killed while saving")
        switch(link, version)

    monkeypatch.setattr(checkpoint, "_switch", crash_at_step_6)
    with pytest.raises(OSError, match="killed while saving"):
        train(interrupted)
    last = interrupted.run_dir / "checkpoints" / "last"
    assert checkpoint.load_trainer_state(last)["step"] == 3
    monkeypatch.setattr(checkpoint, "_switch", switch)
    train(interrupted)
    _assert_same_weights(straight_weights, _last_weights(interrupted))
    assert checkpoint.load_trainer_state(last)["step"] == 6
    versions = sorted(p.name for p in last.parent.iterdir() if p.name.startswith("last@"))
    assert len(versions) == 1 and "step6" in versions[0]  # the interrupted save's folder is gone


@pytest.mark.parametrize("damage, problem", [
    (lambda last: (last / "open_clip_model.safetensors").write_bytes(
        (last / "open_clip_model.safetensors").read_bytes()[:1000]), "open_clip_model.safetensors is unreadable"),
    (lambda last: (last / "trainer_state.pt").unlink(), "trainer_state.pt is missing"),
    (lambda last: torch.save({"step": 1}, last / "trainer_state.pt"),
     "its trainer state lacks optimizer, thresholds, torch_rng"),
])
def test_resume_refuses_a_damaged_checkpoint_loudly(tmp_path, damage, problem):
    config = _config(tmp_path, steps=2, eval_every=1)
    train(config, stop_after=1)
    last = config.run_dir / "checkpoints" / "last"
    damage(last)
    with pytest.raises(checkpoint.CheckpointError) as error:
        train(config)
    message = str(error.value)
    assert problem in message and str(last) in message
    assert f"delete {config.run_dir}" in message and "another run name" in message


def test_fp16_trains_with_a_loss_scaler_saved_for_an_exact_resume(tmp_path):
    """CPU autocast runs fp16 too, so the scaler path (scale, unscale, step, update, state) is tested here."""
    straight = _config(tmp_path / "a", precision="fp16", steps=4, eval_every=2)
    train(straight)
    state = checkpoint.load_trainer_state(straight.run_dir / "checkpoints" / "last")
    assert state["scaler"]["scale"] > 0 and state["scaler"]["_growth_tracker"] == 4
    interrupted = _config(tmp_path / "b", precision="fp16", steps=4, eval_every=2)
    train(interrupted, stop_after=3)
    train(interrupted)
    _assert_same_weights(_last_weights(straight), _last_weights(interrupted))


def test_gradient_clipping_bounds_a_huge_learning_rate_step(tmp_path):
    """Adam's first step moves a weight by lr * g / (|g| + eps); with every |g| <= clip that is <= lr * clip / eps."""
    common = dict(steps=1, eval_every=1, warmup_steps=1, lr=10.0, weight_decay=0.0, augment="none")
    start = {k: v.detach().clone() for k, v in build_model(_config(tmp_path), "cpu").model.state_dict().items()}
    moved = {}
    for name, clip in (("clipped", 1e-9), ("free", None)):
        config = _config(tmp_path, name=name, grad_clip_norm=clip, **common)
        train(config)
        weights = _last_weights(config)
        moved[name] = max(float((weights[k] - start[k]).abs().max()) for k in start if k != "logit_scale")
    assert moved["clipped"] <= 10.0 * 1e-9 / 1e-6 + 1e-6
    assert moved["free"] > 1.0


def test_weights_gone_non_finite_under_a_finite_loss_are_never_saved(tmp_path):
    """An update can overflow although the loss it came from was finite; the save after it must refuse.
    (A real NaN loss, lr 1e6, runs as a job in tests/test_train_tab.py.)"""
    config = _config(tmp_path, steps=4, eval_every=2)
    model = build_model(config, "cpu").model
    watch = FiniteWatch("cpu", total=4, lr=1e-3, checkpoints=config.run_dir / "checkpoints")
    watch.see(2, torch.tensor(1.5), {"i2t": torch.tensor(1.0), "t2i": torch.tensor(2.0)})
    watch.check(saved_step=None, model=model, step=2)  # all finite: nothing to say
    with torch.no_grad():
        model.visual.proj.fill_(float("inf"))
    with pytest.raises(TrainingDiverged) as stopped:
        watch.check(saved_step=2, model=model, step=4)
    assert str(stopped.value).startswith("Training stopped at step 4 of 4, before saving: 1 weight tensor(s) became "
                                         "non-finite (visual.proj) while the loss was finite. The last good "
                                         f"checkpoint (step 2) is kept in {config.run_dir / 'checkpoints' / 'last'}.")


def test_training_reports_progress_metrics_and_result_through_its_reporter(tmp_path):
    store = Store(tmp_path / "lab.db")
    job_id = store.create_job("train", {})
    log = io.StringIO()
    config = _config(tmp_path, steps=2, eval_every=2, eval_benchmarks=["toy-retrieval"])
    result = run_job(config, Reporter(store, job_id, out=log))
    job = store.get_job(job_id)
    assert job["result"] == result and job["progress"] == 1.0 and job["run_dir"] == str(config.run_dir)
    assert job["message"].startswith("step 2/2 loss ") and job["message"].endswith(" samples/s")
    train_metrics = store.latest_metrics(job_id, "train")
    assert {"loss", "i2t", "lr", "logit_scale", "samples_per_second"} <= set(train_metrics)
    assert "seconds_per_step" not in train_metrics
    assert store.latest_metrics(job_id, "eval") == result["final_metrics"] != {}
    assert [row["step"] for row in store.metrics(job_id, "train") if row["name"] == "loss"] == [1, 2]
    lines = log.getvalue().splitlines()
    assert any("step 1/2 loss" in line and "samples/s, ETA" not in line for line in lines)
    assert any(line.endswith("eval at step 2: " + ", ".join(f"{k} {v:.4g}" for k, v in result["final_metrics"].items()))
               for line in lines)
    assert _metrics(config)[-1]["samples_per_second"] > 0  # the run folder keeps its own copy


def test_checkpoint_loads_through_the_registry_with_its_tokenizer_and_activation(tmp_path):
    config = _config(tmp_path, steps=3)
    result = train(config)
    for name in ("last", "best"):
        assert result[name].endswith(f"checkpoints/{name}")
        loaded = load_model(f"local-dir:{result[name]}", device="cpu")
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
    data = toy_training.world_data("toyworld-finetune", 20, 0, preprocess=None, families=["negclip_swap"],
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
    assert set(LOSSES) == {"clip", "negclip", "ce_clip", "hp_hn", "trohn_img", "tripletclip", "fsc_clip",
                           "countercurate", "eqsim"}
    for bad in (["relation", "colour"], "relation"):
        with pytest.raises(ValueError, match="aux_types"):
            TrainConfig.from_dict({"loss": "ce_clip", "loss_weights": {"aux_types": bad}})


def test_ce_clip_default_aux_types_are_the_loss_types():
    """The config spells the four types out (it must not import torch); they must stay the loss's."""
    assert tuple(TrainConfig(loss="ce_clip").weights["aux_types"]) == CE_CLIP_TYPES
