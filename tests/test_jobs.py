"""The job runner with real subprocesses and a real SQLite file; the HF target against a fake API."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from huggingface_hub import JobInfo

from backend import hf_jobs, jobs
from backend.store import Store

ROOT = Path(__file__).resolve().parents[1]
SLEEPER = "import time; print('working', flush=True); time.sleep(120)"


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "lab.db")


def wait_for(predicate, timeout=60.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def settled(store, job_id, timeout=60.0):
    return wait_for(lambda: (job := store.get_job(job_id))["status"] in jobs.FINAL and job, timeout,
                    f"job {job_id} to settle")


def alive(pid):
    return jobs.process_state(pid) not in (None, "Z")


def test_local_process_done_and_failed_record_status_and_log_tail(store, tmp_path):
    ok, bad = store.create_job("cli", {}), store.create_job("cli", {})
    jobs.run_local(store, ok, [sys.executable, "-m", "backend", "jobs", "list", "--db", str(store.path)],
                   tmp_path / "ok.log")
    jobs.run_local(store, bad, [sys.executable, "-m", "backend", "jobs", "show", "999", "--db", str(store.path)],
                   tmp_path / "bad.log")
    running = store.get_job(ok)
    assert running["pid"] and running["started_at"] and running["log_path"] == str(tmp_path / "ok.log")
    done, failed = settled(store, ok), settled(store, bad)
    assert done["status"] == "done" and done["ended_at"] >= done["started_at"] and done["error"] is None
    assert "id\tkind\tname" in Path(done["log_path"]).read_text()
    assert failed["status"] == "failed"
    assert failed["error"].startswith("exit code 2")
    assert "No job 999" in failed["error"]


def test_cancel_stops_the_whole_process_group_and_keeps_cancelled(store, tmp_path):
    # The job spawns a worker (as torchrun does) and ignores SIGTERM, so only SIGKILL ends it.
    script = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              f"w = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}]); print('worker', w.pid, flush=True); "
              "time.sleep(120)")
    job_id = store.create_job("cli", {})
    process = jobs.run_local(store, job_id, [sys.executable, "-c", script], tmp_path / "job.log")
    worker = int(wait_for(lambda: [line.split()[1] for line in (tmp_path / "job.log").read_text().splitlines()
                                   if line.startswith("worker")], what="worker pid")[0])
    started = time.monotonic()
    job = jobs.cancel(store, job_id, grace=1.0)
    assert job["status"] == "cancelled" and job["ended_at"]
    assert time.monotonic() - started < 8
    wait_for(lambda: process.poll() is not None, what="job process to be reaped")
    assert process.returncode == -signal.SIGKILL
    wait_for(lambda: not alive(worker), timeout=10, what="worker to die")
    time.sleep(0.3)  # the watcher has seen the exit by now and must not turn it into "failed"
    assert store.get_job(job_id)["status"] == "cancelled"
    with pytest.raises(jobs.JobError, match="already cancelled"):
        jobs.cancel(store, job_id)


def test_reconcile_marks_a_vanished_process_failed_with_its_log_tail(store, tmp_path):
    # A launcher process that exits right away leaves its job running unwatched (like `jobs launch`).
    launcher = (f"import sys; from backend.jobs import run_local; from backend.store import Store; "
                f"s = Store({str(store.path)!r}); j = s.create_job('cli', {{}}); "
                f"run_local(s, j, [sys.executable, '-c', {SLEEPER!r}], {str(tmp_path / 'job.log')!r}); print(j)")
    result = subprocess.run([sys.executable, "-c", launcher], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    job_id = int(result.stdout.split()[-1])
    job = store.get_job(job_id)
    wait_for(lambda: "working" in Path(job["log_path"]).read_text(), what="job output")
    assert jobs.reconcile(store) == [] and store.get_job(job_id)["status"] == "running"
    os.kill(job["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(job["pid"]), timeout=10, what="killed process to vanish")
    assert jobs.reconcile(store) == [job_id]
    failed = store.get_job(job_id)
    assert failed["status"] == "failed" and failed["error"].startswith(jobs.UNSEEN)
    assert failed["error"].endswith("working")


def test_reconcile_counts_a_vanished_run_with_a_result_as_done(store):
    job_id = store.create_job("train", {})
    store.update_job(job_id, status="running", pid=2 ** 22 + 7, started_at=time.time())  # no such pid
    store.update_job(job_id, result={"best": "/nowhere", "last": "/nowhere"})
    assert jobs.reconcile(store) == [job_id]
    assert store.get_job(job_id)["status"] == "done"


def test_invalid_or_clashing_train_config_creates_no_job(store, tmp_path):
    with pytest.raises(ValueError, match="loss must be one of"):
        jobs.launch(store, "train", {"loss": "nonsense"})
    with pytest.raises(ValueError, match="Unknown training config keys: stepz"):
        jobs.launch(store, "train", {"stepz": 3})
    with pytest.raises(jobs.JobError, match="Unknown target"):
        jobs.launch(store, "train", {}, target="cloud")
    assert store.list_jobs() == []
    busy = store.create_job("train", {}, name="taken")
    store.update_job(busy, status="running", run_dir=str(tmp_path / "runs" / "taken"))
    with pytest.raises(jobs.JobError, match=f"Job {busy} is still writing to"):
        jobs.launch(store, "train", {"name": "taken", "output_dir": str(tmp_path / "runs")})
    assert [job["id"] for job in store.list_jobs()] == [busy]


def test_finished_checkpoints_lists_existing_best_dirs_newest_first(store, tmp_path):
    specs = []
    for name in ("old", "new"):
        job_id = store.create_job("train", {}, name=name)
        (tmp_path / name / "best").mkdir(parents=True)
        store.update_job(job_id, status="done", result={"best": str(tmp_path / name / "best"), "last": "/gone"})
        specs.insert(0, f"local-dir:{tmp_path / name / 'best'}")
    gone = store.create_job("train", {})
    store.update_job(gone, status="done", result={"best": str(tmp_path / "deleted")})
    failed = store.create_job("train", {})
    store.update_job(failed, status="failed", result={"best": str(tmp_path / "old" / "best")})
    assert jobs.finished_checkpoints(store) == specs


def test_torchrun_prefix_runs_the_command_as_ranks(store, tmp_path):
    job_id = store.create_job("cli", {})
    rank = "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'], flush=True)"
    jobs.run_local(store, job_id, [sys.executable, *jobs.torchrun_prefix(2), "--no-python", sys.executable,
                                   "-c", rank], tmp_path / "ranks.log")
    job = settled(store, job_id, timeout=120)
    assert job["status"] == "done", job["error"]
    log = Path(job["log_path"]).read_text()
    assert "rank 0 of 2" in log and "rank 1 of 2" in log


class FakeHfApi:
    """The four HfApi methods the HF target uses, scripted: stages to report, log lines to stream."""

    def __init__(self, stages, logs):
        self.stages, self.logs, self.calls = list(stages), logs, []

    def run_job(self, *, image, command, env=None, secrets=None, flavor=None, timeout=None, labels=None,
                token=None, **rest):
        self.calls.append(("run_job", dict(image=image, command=command, env=env, secrets=secrets,
                                           flavor=flavor, labels=labels, token=token)))
        return self._info("SCHEDULING")

    def inspect_job(self, *, job_id, namespace=None, token=None):
        self.calls.append(("inspect_job", dict(job_id=job_id, token=token)))
        stage, message = self.stages.pop(0) if len(self.stages) > 1 else self.stages[0]
        return self._info(stage, message)

    def fetch_job_logs(self, *, job_id, namespace=None, follow=False, tail=None, token=None):
        self.calls.append(("fetch_job_logs", dict(job_id=job_id, follow=follow, token=token)))
        yield from self.logs

    def cancel_job(self, *, job_id, namespace=None, token=None):
        self.calls.append(("cancel_job", dict(job_id=job_id, token=token)))

    @staticmethod
    def _info(stage, message=None):
        return JobInfo(id="hf-123", owner={"id": "u1", "name": "me", "type": "user"},
                       status={"stage": stage, "message": message})


@pytest.fixture
def hf_env(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setattr(hf_jobs, "POLL_S", 0.05)


@pytest.mark.parametrize("stages, status, in_error", [
    ([("SCHEDULING", None), ("RUNNING", None), ("COMPLETED", None)], "done", None),
    ([("RUNNING", None), ("ERROR", "CUDA out of memory")], "failed", "CUDA out of memory"),
])
def test_hf_target_submits_streams_logs_and_maps_stages(store, hf_env, stages, status, in_error):
    api = FakeHfApi(stages, ["step 1 loss 2.0", "step 2 loss 1.5"])
    job_id = jobs.launch(store, "train", {"steps": 7, "name": "remote"}, target="hf", flavor="l4x1",
                         image="ghcr.io/me/complab:1", api=api)
    job = settled(store, job_id, timeout=20)
    name, call = api.calls[0]
    assert name == "run_job" and call["flavor"] == "l4x1" and call["image"] == "ghcr.io/me/complab:1"
    assert call["token"] == "hf_secret" and call["secrets"] == {"HF_TOKEN": "hf_secret"}
    assert "python -m backend jobs launch train --config /tmp/complab/job.yaml" in call["command"][-1]
    assert "steps: 7" in call["env"][hf_jobs.CONFIG_ENV]
    assert job["target"] == "hf:l4x1" and job["result"]["hf_job"] == "hf-123"
    assert job["status"] == status and job["started_at"]
    assert Path(job["log_path"]).read_text() == "step 1 loss 2.0\nstep 2 loss 1.5\n"
    assert ("fetch_job_logs", {"job_id": "hf-123", "follow": True, "token": "hf_secret"}) in api.calls
    if in_error:
        assert in_error in job["error"] and job["error"].endswith("step 2 loss 1.5")


def test_hf_cancel_and_bad_requests(store, hf_env, monkeypatch):
    api = FakeHfApi([("SCHEDULING", None)], [])
    job_id = jobs.launch(store, "train", {}, target="hf", image="img", api=api)
    assert jobs.cancel(store, job_id, api=api)["status"] == "cancelled"
    assert ("cancel_job", {"job_id": "hf-123", "token": "hf_secret"}) in api.calls
    with pytest.raises(jobs.JobError, match="Unknown GPU flavor 'cpu-basic'"):
        jobs.launch(store, "train", {}, target="hf", flavor="cpu-basic", image="img", api=api)
    monkeypatch.delenv(hf_jobs.IMAGE_ENV, raising=False)
    with pytest.raises(jobs.JobError, match="needs a docker image"):
        jobs.launch(store, "train", {}, target="hf", api=api)
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(jobs.JobError, match="HF_TOKEN is not set"):
        jobs.launch(store, "train", {}, target="hf", image="img", api=api)
    assert [job["id"] for job in store.list_jobs()] == [job_id]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "backend", "jobs", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_list_show_cancel(store, tmp_path):
    job_id = store.create_job("cli", {}, name="sleeper")
    jobs.run_local(store, job_id, [sys.executable, "-c", SLEEPER], tmp_path / "job.log")
    store.log_metrics(job_id, 3, {"loss": 0.5, "loss/itc": 0.25})
    store.log_metrics(job_id, 3, {"toy-sugarcrepe/swap_att": 0.75}, split="eval")
    db = str(store.path)
    listed = _cli("list", "--json", "--db", db)
    assert listed.returncode == 0, listed.stderr
    assert [(j["id"], j["status"]) for j in json.loads(listed.stdout)] == [(job_id, "running")]
    wait_for(lambda: "working" in (tmp_path / "job.log").read_text(), what="job output")
    shown = _cli("show", str(job_id), "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert "running" in shown.stdout and "loss/itc\t0.25" in shown.stdout
    assert "toy-sugarcrepe/swap_att\t0.75" in shown.stdout and shown.stdout.rstrip().endswith("working")
    cancelled = _cli("cancel", str(job_id), "--db", db)
    assert cancelled.returncode == 0 and f"job {job_id}: cancelled" in cancelled.stdout
    assert store.get_job(job_id)["status"] == "cancelled"
    wait_for(lambda: not alive(store.get_job(job_id)["pid"]), timeout=15, what="cancelled process to end")
    missing = _cli("launch", "train", "--config", str(tmp_path / "nope.yaml"), "--db", db)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


@pytest.mark.slow
def test_a_real_tiny_training_run_reports_metrics_and_ends_done(store, tmp_path):
    config = {"base_model": "toyworld:random", "loss": "negclip", "steps": 5, "batch_size": 8, "dataset_size": 64,
              "warmup_steps": 1, "eval_every": 5, "eval_benchmarks": ["toy-sugarcrepe"], "name": "tiny",
              "output_dir": str(tmp_path / "runs")}
    job_id = jobs.launch(store, "train", config)
    run_dir = tmp_path / "runs" / "tiny"
    assert store.get_job(job_id)["run_dir"] == str(run_dir) and (run_dir / "job.yaml").exists()
    job = settled(store, job_id, timeout=300)
    assert job["status"] == "done", job["error"]
    assert job["log_path"] == str(run_dir / "job.log")
    train = store.latest_metrics(job_id, "train")
    assert {"loss", "lr", "logit_scale"} <= set(train) and train["loss"] > 0
    assert 0 <= store.latest_metrics(job_id, "eval")["toy-sugarcrepe/swap_att"] <= 1
    assert jobs.finished_checkpoints(store) == [f"local-dir:{job['result']['best']}"]
    assert (Path(job["result"]["best"]) / "open_clip_config.json").exists()
