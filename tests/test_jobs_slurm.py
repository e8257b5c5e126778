"""The Slurm target against a real Slurm: a one-node cluster started by scripts/slurm_cluster.sh (CI's .ci/run does,
and so does `tests.support.slurm` where Slurm is installed but no cluster answers).

Real 2-task training jobs (torchrun's c10d rendezvous under srun, gloo on the CPU) submitted through the target,
followed, requeued as a preemption would (resumed from the last checkpoint), cancelled and resumed, and settled by
`reconcile` in a process other than the one that submitted them (an app restart). Skipped, with the reason, only
where Slurm is not installed, and not even there under COMPLAB_REQUIRE_SLURM=1 (CI sets it: there they must run).
"""
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend import jobs
from backend.core.auth import Actor
from backend.core.settings import ROOT
from backend.core.store import Store
from backend.jobs import slurm
from backend.models import checkpoint
from tests.support.appserver import workspace_settings
from tests.support.slurm import SLURM_ENV, ensure_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.system

ADMIN = Actor("alice", "admin", "password")
RUN = dict(base_model="toyworld:random", data="toyworld-finetune", loss="negclip", batch_size=4, dataset_size=32,
           eval_benchmarks=[], warmup_steps=1, lr=1e-3, workers=0)
TWO_TASKS = {"nodes": 1, "gpus_per_node": 2}
JOB_TIMEOUT = 420


@pytest.fixture(scope="module")
def cluster():
    ensure_cluster()


@pytest.fixture
def settings(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(slurm, "POLL_S", 0.5)
    return workspace_settings(tmp_path / "ws", **SLURM_ENV)


@pytest.fixture
def store(settings):
    return Store(settings.db)


def _submit(store, settings, name, **overrides) -> int:
    config = {**RUN, "name": name, **overrides}
    return jobs.submit(ADMIN, "train", config, "slurm", TWO_TASKS, store=store, settings=settings)


def _slurm_id(store, job_id) -> int:
    return store.get_job(job_id)["target_options"][slurm.SLURM_ID]


def _log(store, job_id) -> str:
    path = store.get_job(job_id).get("log_path")
    return Path(path).read_text() if path and Path(path).exists() else ""


def _settled(store, job_id) -> dict:
    return wait_for(lambda: (job := store.get_job(job_id))["status"] in jobs.FINAL and job, JOB_TIMEOUT,
                    f"job {job_id} to settle")


def _saved_step(run_dir: Path) -> int:
    return checkpoint.load_trainer_state(run_dir / "checkpoints" / "last")["step"]


def test_a_two_task_training_job_is_followed_requeued_and_resumes_from_its_checkpoint(store, settings):
    job_id = _submit(store, settings, "preempted", steps=120, eval_every=10)
    job = store.get_job(job_id)
    script = (slurm.slurm_folder(job, settings) / "job.sbatch").read_text()
    assert "#SBATCH --partition=debug" in script and "#SBATCH --requeue" in script
    assert "--nproc_per_node=2" in script and "--rdzv_backend=c10d" in script
    assert jobs.label(job) == f"slurm 1x2 (job {_slurm_id(store, job_id)})"
    wait_for(lambda: "saved checkpoint at step 10" in _log(store, job_id), JOB_TIMEOUT, "the first checkpoint")
    # a preemption: Slurm stops the job and queues it again; the lab only watches
    slurm_id = str(_slurm_id(store, job_id))
    subprocess.run(["scontrol", "requeue", slurm_id], check=True)
    wait_for(lambda: store.get_job(job_id)["status"] == "queued", 60, "the row to show the requeue")
    assert "requeued by Slurm" in store.get_job(job_id)["message"]
    subprocess.run(["scontrol", "update", f"JobId={slurm_id}", "StartTime=now"], check=True)  # skip the hold
    out = io.StringIO()
    assert jobs.follow(store, job_id, out, poll=0.2) == "done"
    log = out.getvalue()
    assert "(restart 1)" in log and "2 x 4 x 1 per step" in log  # two ranks of batch 4
    resumed_at = int(log.split("resuming from step ")[1].split()[0])
    assert resumed_at >= 10
    job = store.get_job(job_id)
    assert job["progress"] == 1.0 and Path(job["result"]["last"]).is_dir()
    assert _saved_step(Path(job["run_dir"])) == 120
    curve = store.metrics(job_id, "train")
    assert {row["step"] for row in curve if row["name"] == "loss"} >= {1, 120}  # streamed back from the events


def test_a_job_launched_elsewhere_is_reconciled_cancelled_and_resumed(store, settings, tmp_path):
    """The CLI submits and exits (no watcher left): this process reconciles it, as the app does after a restart."""
    config = tmp_path / "run.yaml"
    config.write_text("\n".join(f"{key}: {value!r}" if isinstance(value, str) else f"{key}: {value}"
                                for key, value in {**RUN, "name": "cancelled", "steps": 200, "eval_every": 10}.items()))
    env = {**os.environ, "COMPLAB_WORKSPACE": str(settings.workspace), "COMPLAB_DB": str(settings.db),
           "COMPLAB_RUNS_DIR": str(settings.runs_dir), **SLURM_ENV}
    launched = subprocess.run([sys.executable, "-m", "backend", "jobs", "launch", "train", "--config", str(config),
                               "--target", "slurm", "--gpus-per-node", "2"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
    assert launched.returncode == 0, launched.stderr
    job_id = int(launched.stdout.split()[0])

    def reconciled_running():
        jobs.reconcile(store, settings)
        return "saved checkpoint at step 10" in _log(store, job_id) and store.get_job(job_id)["status"] == "running"

    wait_for(reconciled_running, JOB_TIMEOUT, "the reconciled job to run and save a checkpoint")
    assert jobs.cancel(ADMIN, job_id, store=store, settings=settings)["status"] == "cancelled"
    slurm_id = str(_slurm_id(store, job_id))
    wait_for(lambda: subprocess.run(["squeue", "-h", "-j", slurm_id, "-o", "%T"], capture_output=True,
                                    text=True).stdout.strip() in ("", "CANCELLED"), 60, "scancel to end the job")
    jobs.reconcile(store, settings)
    assert store.get_job(job_id)["status"] == "cancelled"  # Slurm's CANCELLED does not overwrite the user's cancel

    again = jobs.resume(ADMIN, job_id, store=store, settings=settings)
    assert store.get_job(again)["target_options"]["gpus_per_node"] == 2
    assert _settled(store, again)["status"] == "done"
    log = _log(store, again).split(f"Slurm job {_slurm_id(store, again)} ")[-1]  # the resumed job's part of the log
    assert int(log.split("resuming from step ")[1].split()[0]) >= 10
    assert _saved_step(Path(store.get_job(again)["run_dir"])) == 200
