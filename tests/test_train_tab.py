"""The Train tab's endpoints through gradio_client against a real server on 127.0.0.1 and a real store."""
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from backend import jobs
from backend.cli import main
from backend.core.auth import cli_actor
from backend.core.markup import literal
from backend.core.settings import ROOT
from backend.core.store import Store
from backend.jobs import process
from backend.models import checkpoint
from tests.support.appserver import running_app, workspace_settings
from tests.support.clients import local_client
from tests.support.crashes import settled
from tests.support.forms import form

SLEEPER = "import time; print('step 1 of 3', flush=True); time.sleep(120)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    output = tmp_path_factory.mktemp("train-tab")
    store = Store(output / "lab.db")
    with running_app(output, ["toyworld"], output, db_path=store.path) as url:
        yield local_client(url), store, output


@pytest.mark.parametrize("overrides, message", [
    ({"lr": -1}, "lr must be positive"),
    ({"data": "manifest"}, "data 'manifest' needs a manifest path"),
    ({"data": "manifest", "manifest": "data/coco.csv"}, "manifest 'data/coco.csv' does not exist"),
    ({"data": "manifest", "manifest": "/etc/passwd"}, "manifest '/etc/passwd' is outside the allowed folders"),
    ({"name": "../../escape"}, "run name '../../escape' is not allowed"),
    ({"base_model": "local-dir:/etc"}, "base model path '/etc' is outside"),
    ({"target": "hf"}, "HF_TOKEN is not set"),
    ({"target": "slurm"}, "is not in the list of choices"),  # a call the page never offers: Gradio refuses it
])
@pytest.mark.system
def test_invalid_launch_is_a_message_and_creates_no_job(app, monkeypatch, overrides, message):
    client, store, _ = app
    monkeypatch.delenv("HF_TOKEN", raising=False)
    before = store.list_jobs()
    with pytest.raises(Exception, match=message):
        client.predict(*form(**overrides), api_name="/launch")
    assert store.list_jobs() == before


@pytest.mark.system
def test_runs_table_status_curves_and_cancel(app, tmp_path):
    client, store, output = app
    done = store.create_job("train", {"loss": "negclip", "base_model": "toyworld"}, name="finished-run")
    (output / "best").mkdir()
    store.update_job(done, status="done", progress=1.0,
                     result={"best": str(output / "best"), "final_metrics": {"toy-sugarcrepe/swap_att": 0.8125}})
    store.log_metrics(done, 5, {"loss": 1.25, "itc": 1.0, "cmr": 0.25, "threshold/relation": 0.5, "lr": 1e-4,
                                "logit_scale": 14.0, "samples_per_second": 512.0})
    store.log_metrics(done, 0, {"toy-sugarcrepe/swap_att": 0.8}, split="baseline")
    store.log_metrics(done, 5, {"toy-sugarcrepe/swap_att": 0.75}, split="eval")
    store.log_metrics(done, 10, {"toy-sugarcrepe/swap_att": 0.875}, split="eval")
    running = store.create_job("train", {"loss": "clip"}, name="live-run")
    process.start(store, running, [sys.executable, "-c", SLEEPER], tmp_path / "live.log", cwd=ROOT)

    _choices, table = client.predict(api_name="/list_runs")
    rows = {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}
    assert rows[done]["name"] == "finished-run" and rows[done]["status"] == "done"
    assert rows[done]["toy-sugarcrepe/swap_att (%)"] == 81.2 and rows[done]["loss"] == "negclip"
    assert rows[running]["status"] == "running"

    status, losses, thresholds, scale, lr, speed, _log, evals = client.predict(done, api_name="/run_status")
    assert "**done**" in status and f"local-dir:{output / 'best'}" in status
    assert losses["columns"] == ["step", "value", "name"]
    assert sorted(losses["data"]) == [[5, 0.25, "cmr"], [5, 1.0, "itc"], [5, 1.25, "loss"]]
    assert thresholds["data"] == [[5, 0.5, "threshold/relation"]]
    assert scale["data"] == [[5, 14.0, "logit_scale"]]
    assert lr["data"] == [[5, 1e-4, "lr"]] and speed["data"] == [[5, 512.0, "samples_per_second"]]
    assert evals["headers"] == ["metric", "base model (%)", "value (%)", "change (points)", "step"]
    assert evals["data"] == [["toy-sugarcrepe/swap_att", 80.0, 87.5, 7.5, 10]]  # percent, as the CLI prints
    # the run's result against its base model's (step 0): the final metrics, not the last table row
    assert "**Against the base model** (evaluated at step 0): toy-sugarcrepe/swap\\_att 80.0 → 81.2 (+1.2)" in status
    assert client.predict(api_name="/model_choices")["choices"][-1] == ["finished-run (best)",
                                                                         f"local-dir:{output / 'best'}"]

    deadline = time.monotonic() + 30
    while "step 1 of 3" not in client.predict(running, api_name="/run_status")[6]:
        assert time.monotonic() < deadline, "the live run's log never showed up"
        time.sleep(0.2)
    status, _table = client.predict(running, api_name="/cancel")
    assert "**cancelled**" in status and store.get_job(running)["status"] == "cancelled"
    with pytest.raises(Exception, match="already cancelled"):
        client.predict(running, api_name="/cancel")
    with pytest.raises(Exception, match="No job 9999"):
        client.predict(9999, api_name="/run_status")


@pytest.mark.system
def test_a_loss_gone_nan_stops_the_run_with_its_message_and_resume_replays_from_the_checkpoint(app, capsys):
    """lr 1e6 on the built-in world: a real divergence (step 1's loss is finite, step 2's is NaN), nothing injected."""
    client, store, output = app
    config = {"base_model": "toyworld:random", "data": "toyworld-finetune", "steps": 6, "batch_size": 8, "dataset_size": 24, "eval_every": 1,
              "eval_benchmarks": [], "warmup_steps": 1, "lr": 1e6, "workers": 0, "name": "diverging"}
    job_id = jobs.submit(cli_actor(), "train", config, store=store, settings=workspace_settings(output, store.path))
    job = settled(store, job_id)
    last = output / "runs" / "diverging" / "checkpoints" / "last"
    message = job["error"].splitlines()[0]
    assert job["status"] == "failed" and message == (
        "Training stopped at step 2 of 6: the loss became non-finite (loss nan, i2t nan, t2i nan). The last good "
        f"checkpoint (step 1) is kept in {last}. Lower the learning rate (lr is 1e+06; try 10x lower, or clip "
        "gradients with grad_clip_norm) or check the data (empty or broken captions and images), then launch the "
        "run again under a new name: resuming would replay the same steps.")
    assert checkpoint.load_trainer_state(last)["step"] == 1  # not overwritten by what the NaN touched
    assert all(torch.isfinite(weights).all() for weights in load_file(last / checkpoint.WEIGHTS).values())
    status, *_ = client.predict(job_id, api_name="/run_status")
    assert f"**#{job_id} diverging** on `local`: **failed**" in status and literal(message) in status  # as typed
    assert main(["jobs", "show", str(job_id), "--db", str(store.path)]) == 0
    assert f"error: {message}" in capsys.readouterr().out

    notice, _runs, _table = client.predict(job_id, api_name="/resume")  # the Resume button
    resumed = int(notice.removeprefix(f"Resumed run #{job_id} as #").rstrip("."))
    again = settled(store, resumed)
    assert again["status"] == "failed" and again["error"].splitlines()[0] == message  # an exact replay
    assert f"resuming from step 1 ({last})" in again["error"]
    assert f"(resumed as job {resumed} (failed))" in client.predict(job_id, api_name="/run_status")[0]
    assert f"(resumes job {job_id})" in client.predict(resumed, api_name="/run_status")[0]
    with pytest.raises(Exception, match=f"Job {job_id} was already resumed as job {resumed}"):
        client.predict(job_id, api_name="/resume")


@pytest.mark.system
def test_launch_records_the_form_as_the_job_config(app):
    """What the form says (here: IMC and CMR on relation negatives only) is what the job trains with, and the
    chosen recipe's settings the form has no field for (the built-in world's runs are measured without
    augmentation) come with it."""
    client, store, _ = app
    before = {job["id"] for job in store.list_jobs()}
    client.predict(*form(name="relation-only", aux_types=["relation"], alpha=0.1, recipe="built-in world: ce_clip"),
                   api_name="/launch")
    [job] = [job for job in store.list_jobs() if job["id"] not in before]
    try:
        assert job["name"] == "relation-only"
        assert job["args"]["loss_weights"] == {"alpha": 0.1, "beta": 0.4, "imc": "contrastive",
                                               "aux_types": ["relation"]}
        assert (job["args"]["augment"], job["args"]["dataset_size"], job["args"]["steps"]) == ("none", 4000, 5)
    finally:
        client.predict(job["id"], api_name="/cancel")


def test_every_recipe_is_a_valid_config_and_fills_the_form():
    from backend.train.config import TrainConfig
    from backend.train.recipes import recipes
    from ui.tabs.train import FORM_KEYS, recipe_values

    for name, values in recipes().items():
        TrainConfig.from_dict({**values, "manifest": "coco.csv"})  # raises on a bad recipe
        form = dict(zip(FORM_KEYS, recipe_values(name)))
        assert form["loss"] == values["loss"] and form["steps"] == values["steps"] and form["name"] == ""
    negclip = dict(zip(FORM_KEYS, recipe_values("built-in world: negclip")))
    assert (negclip["lr"], negclip["batch_size"], negclip["families"]) == (2e-3, 128, ["negclip_swap"])
    hn_only = dict(zip(FORM_KEYS, recipe_values("built-in world: hn_only")))
    assert (hn_only["w_hn"], hn_only["w_hp"]) == (1.0, 0.0)
    coco = dict(zip(FORM_KEYS, recipe_values("COCO: NegCLIP (ARO; lr swept in the paper, 1e-6 here)")))
    assert coco["base_model"] == "ViT-B-32-quickgelu:openai" and coco["hard_negative_images"] and coco["lr"] == 1e-6


def test_losses_are_named_with_their_paper():
    from backend.train.config import LOSSES
    from backend.train.recipes import loss_label

    assert loss_label("negclip").startswith("NegCLIP (Yuksekgonul et al. 2023, ARO): hard-negative captions")
    assert all("et al." in loss_label(loss) for loss in LOSSES)
