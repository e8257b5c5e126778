"""The job system with real subprocesses and a real SQLite file; the HF target against a fake API."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backend import jobs
from backend.cli import main
from backend.core.auth import Actor, PermissionDenied, cli_actor
from backend.core.paths import PathError
from backend.core.settings import ROOT
from backend.core.store import Store
from backend.jobs import hf, process
from backend.models import choices
from tests.support.appserver import workspace_settings
from tests.support.fake_hf_jobs import FakeHfApi
from tests.support.waiting import wait_for

SLEEPER = "import time; print('working', flush=True); time.sleep(120)"
ADMIN = Actor("alice", "admin", "password")

# A valid training config: the built-in world's model and data (a config names both; nothing is assumed).
TOY_RUN = {"base_model": "toyworld", "data": "toyworld-finetune"}


@pytest.fixture
def settings(tmp_path):
    return workspace_settings(tmp_path / "ws", HF_TOKEN="hf_secret", COMPLAB_HF_IMAGE="ghcr.io/me/complab:1")


@pytest.fixture
def store(settings):
    return Store(settings.db)


def settled(store, job_id, timeout=60.0):
    return wait_for(lambda: (job := store.get_job(job_id))["status"] in jobs.FINAL and job, timeout,
                    f"job {job_id} to settle")


def alive(pid):
    return process.process_state(pid) not in (None, "Z")


def watcher_done(job_id):
    return not any(t.name == f"job-{job_id}-watcher" and t.is_alive() for t in threading.enumerate())


def test_kinds_and_targets_are_listed(capsys):
    assert main(["jobs", "kinds"]) == 0
    out = capsys.readouterr().out
    assert "train\tfinetune a CLIP-like model" in out
    assert all(f"\n{name}\t" in out for name in ("local", "torchrun", "hf"))


@pytest.mark.system
def test_local_process_done_and_failed_record_status_and_log_tail(store, tmp_path):
    ok, bad = store.create_job("cli", {}), store.create_job("cli", {})
    process.start(store, ok, [sys.executable, "-c", "print('fine')"], tmp_path / "ok.log", cwd=ROOT)
    process.start(store, bad, [sys.executable, "-c", "import sys; print('broken input'); sys.exit(2)"],
                  tmp_path / "bad.log", cwd=ROOT)
    running = store.get_job(ok)
    assert running["pid"] and running["started_at"] and running["log_path"] == str(tmp_path / "ok.log")
    done, failed = settled(store, ok), settled(store, bad)
    assert done["status"] == "done" and done["ended_at"] >= done["started_at"] and done["error"] is None
    assert Path(done["log_path"]).read_text() == "fine\n"
    assert failed["status"] == "failed" and failed["error"] == "exit code 2\nbroken input"


@pytest.mark.system
def test_cancel_stops_the_whole_process_group_and_keeps_cancelled(store, settings, tmp_path):
    # The job spawns a worker (as torchrun does) and ignores SIGTERM, so only SIGKILL ends it.
    script = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              f"w = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}]); print('worker', w.pid, flush=True); "
              "time.sleep(120)")
    job_id = store.create_job("cli", {}, target="local")
    child = process.start(store, job_id, [sys.executable, "-c", script], tmp_path / "job.log", cwd=ROOT)
    worker = int(wait_for(lambda: [line.split()[1] for line in (tmp_path / "job.log").read_text().splitlines()
                                   if line.startswith("worker")], what="worker pid")[0])
    started = time.monotonic()
    job = jobs.cancel(ADMIN, job_id, store=store, settings=settings, grace=1.0)
    assert job["status"] == "cancelled" and job["ended_at"]
    assert time.monotonic() - started < 8
    wait_for(lambda: child.poll() is not None, what="job process to be reaped")
    assert child.returncode == -signal.SIGKILL
    wait_for(lambda: not alive(worker), timeout=10, what="worker to die")
    wait_for(lambda: watcher_done(job_id), timeout=60, what="the watcher to record the exit")
    assert store.get_job(job_id)["status"] == "cancelled"  # the watcher saw SIGKILL and kept the cancel
    with pytest.raises(jobs.JobError, match="already cancelled"):
        jobs.cancel(ADMIN, job_id, store=store, settings=settings)


@pytest.mark.system
def test_reconcile_marks_a_vanished_process_failed_with_its_log_tail(store, settings, tmp_path):
    # A launcher process that exits right away leaves its job running unwatched (like `jobs launch`).
    launcher = (f"import sys; from pathlib import Path; from backend.jobs import process; "
                f"from backend.core.store import Store; s = Store({str(store.path)!r}); j = s.create_job('cli', {{}}); "
                f"process.start(s, j, [sys.executable, '-c', {SLEEPER!r}], Path({str(tmp_path / 'job.log')!r}), "
                f"cwd=Path('.')); print(j)")
    result = subprocess.run([sys.executable, "-c", launcher], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    job_id = int(result.stdout.split()[-1])
    job = store.get_job(job_id)
    wait_for(lambda: "working" in Path(job["log_path"]).read_text(), what="job output")
    assert jobs.reconcile(store, settings) == [] and store.get_job(job_id)["status"] == "running"
    os.kill(job["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(job["pid"]), timeout=10, what="killed process to vanish")
    assert jobs.reconcile(store, settings) == [job_id]
    failed = store.get_job(job_id)
    assert failed["status"] == "failed" and failed["error"].startswith(process.UNSEEN)
    assert failed["error"].endswith("working")


def test_reconcile_counts_a_vanished_run_with_a_result_as_done(store, settings):
    job_id = store.create_job("train", {})
    store.update_job(job_id, status="running", pid=2 ** 22 + 7, started_at=time.time())  # no such pid
    store.update_job(job_id, result={"best": "/nowhere", "last": "/nowhere"})
    assert jobs.reconcile(store, settings) == [job_id]
    assert store.get_job(job_id)["status"] == "done"


def test_only_an_admin_may_launch_or_cancel(store, settings):
    guest = Actor("visitor")
    with pytest.raises(PermissionDenied, match="Launching a train job needs an admin; you are visitor"):
        jobs.submit(guest, "train", {}, store=store, settings=settings)
    job_id = store.create_job("train", {}, name="someone's run")
    store.update_job(job_id, status="running", pid=2 ** 22 + 7, started_at=time.time())
    with pytest.raises(PermissionDenied, match="Cancelling a job needs an admin"):
        jobs.cancel(guest, job_id, store=store, settings=settings)
    assert [job["id"] for job in store.list_jobs()] == [job_id] and store.get_job(job_id)["status"] == "running"


@pytest.mark.parametrize("config, error, message", [
    ({"loss": "nonsense"}, ValueError, "loss must be one of"),
    ({"stepz": 3}, ValueError, "Unknown training config keys: stepz"),
    ({"name": "../escape"}, ValueError, "run name '../escape' is not allowed"),
    ({"name": "a/b"}, ValueError, "run name 'a/b' is not allowed"),
    ({"output_dir": "/etc"}, PathError, "output dir '/etc' is outside the allowed folders"),
    ({"output_dir": "../../.."}, PathError, "is outside the allowed folders"),
    ({"data": "manifest", "manifest": "/etc/passwd"}, PathError, "manifest '/etc/passwd' is outside"),
    ({"data": "manifest", "manifest": "data/missing.csv"}, PathError, "manifest 'data/missing.csv' does not exist"),
    ({"base_model": "local-dir:/etc"}, PathError, "base model path '/etc' is outside"),
    ({"base_model": "local-dir:models/nothing-here"}, PathError, "base model path 'models/nothing-here' does not"),
])
def test_bad_configs_and_paths_create_no_job(store, settings, config, error, message):
    with pytest.raises(error, match=message):
        jobs.submit(ADMIN, "train", {**TOY_RUN, **config}, store=store, settings=settings)
    assert store.list_jobs() == []


def test_bad_targets_create_no_job(store, settings):
    with pytest.raises(jobs.JobError, match="Unknown target 'cloud'"):
        jobs.submit(ADMIN, "train", TOY_RUN, "cloud", store=store, settings=settings)
    with pytest.raises(jobs.JobError, match="at least 1 process"):
        jobs.submit(ADMIN, "train", TOY_RUN, "torchrun", {"nproc": 0}, store=store, settings=settings)
    with pytest.raises(jobs.JobError, match="takes only flavor"):
        jobs.submit(ADMIN, "train", TOY_RUN, "hf", {"image": "attacker/image"}, store=store, settings=settings)
    assert store.list_jobs() == []


def test_a_folder_another_active_job_writes_is_refused(store, settings):
    busy = store.create_job("train", {}, name="taken")
    store.update_job(busy, status="running", run_dir=str(settings.runs_dir / "taken"))
    with pytest.raises(jobs.JobError, match=f"Job {busy} is still writing to"):
        jobs.submit(ADMIN, "train", {**TOY_RUN, "name": "taken"}, store=store, settings=settings)
    assert [job["id"] for job in store.list_jobs()] == [busy]


def test_the_command_line_may_name_any_path_others_stay_confined(settings, tmp_path, monkeypatch):
    manifest = tmp_path / "elsewhere" / "m.csv"
    manifest.parent.mkdir()
    manifest.write_text("image,caption\n")
    kind = jobs.get_kind("train")
    with pytest.raises(PathError):
        jobs.service.confine_config(kind, {"manifest": str(manifest)}, ADMIN, settings)
    confined = jobs.service.confine_config(kind, {"manifest": str(manifest)}, cli_actor(), settings)
    assert confined == {"manifest": str(manifest), "output_dir": str(settings.runs_dir)}
    monkeypatch.chdir(manifest.parent)
    assert jobs.service.confine_config(kind, {"manifest": "m.csv"}, cli_actor(), settings)["manifest"] == str(manifest)


def test_trained_models_are_labelled_by_run_name_newest_first(store, tmp_path):
    expected = []
    for name in ("old", "new"):
        job_id = store.create_job("train", {}, name=name)
        (tmp_path / name / "best").mkdir(parents=True)
        store.update_job(job_id, status="done", result={"best": str(tmp_path / name / "best"), "last": "/gone"})
        expected.insert(0, (f"{name} (best)", f"local-dir:{tmp_path / name / 'best'}"))
    gone = store.create_job("train", {})
    store.update_job(gone, status="done", result={"best": str(tmp_path / "deleted")})
    failed = store.create_job("train", {})
    store.update_job(failed, status="failed", result={"best": str(tmp_path / "old" / "best")})
    assert choices.trained_models(store) == expected


@pytest.mark.system
def test_torchrun_target_runs_the_command_as_ranks(store, tmp_path):
    job_id = store.create_job("cli", {}, target="torchrun", target_options={"nproc": 2})
    # one write per rank: print() writes its arguments one by one, and two ranks' pieces could interleave
    rank = "import os; os.write(1, f\"rank {os.environ['RANK']} of {os.environ['WORLD_SIZE']}\\n\".encode())"
    prefix = jobs.get_target("torchrun").prefix({"nproc": 2})
    process.start(store, job_id, [sys.executable, *prefix, "--no-python", sys.executable, "-c", rank],
                  tmp_path / "ranks.log", cwd=ROOT)
    job = settled(store, job_id, timeout=120)
    assert job["status"] == "done", job["error"]
    log = Path(job["log_path"]).read_text()
    assert "rank 0 of 2" in log and "rank 1 of 2" in log
    assert jobs.label(job) == "torchrun x2"


@pytest.fixture
def fast_poll(monkeypatch):
    monkeypatch.setattr(hf, "POLL_S", 0.05)


@pytest.mark.parametrize("stages, status, in_error", [
    ([("SCHEDULING", None), ("RUNNING", None), ("COMPLETED", None)], "done", None),
    ([("RUNNING", None), ("ERROR", "CUDA out of memory")], "failed", "CUDA out of memory"),
])
def test_hf_target_submits_streams_logs_and_maps_stages(store, settings, fast_poll, stages, status, in_error):
    api = FakeHfApi(stages, ["step 1 loss 2.0", "step 2 loss 1.5"])
    job_id = jobs.submit(ADMIN, "train", {**TOY_RUN, "steps": 7, "name": "remote"}, "hf", {"flavor": "l4x1"}, store=store,
                         settings=settings, api=api)
    job = settled(store, job_id, timeout=20)
    name, call = api.calls[0]
    assert name == "run_job" and call["flavor"] == "l4x1" and call["image"] == "ghcr.io/me/complab:1"
    assert call["token"] == "hf_secret" and call["secrets"] == {"HF_TOKEN": "hf_secret"}
    assert "python -m backend jobs launch train --config /tmp/complab/job.yaml" in call["command"][-1]
    assert "steps: 7" in call["env"][hf.CONFIG_ENV]
    assert job["target"] == "hf" and job["target_options"] == {"flavor": "l4x1"} and jobs.label(job) == "hf l4x1"
    assert job["result"]["hf_job"] == "hf-123" and job["actor"] == "alice"
    assert job["status"] == status and job["started_at"]
    assert Path(job["log_path"]).read_text() == "step 1 loss 2.0\nstep 2 loss 1.5\n"
    assert ("fetch_job_logs", {"job_id": "hf-123", "follow": True, "token": "hf_secret"}) in api.calls
    if in_error:
        assert in_error in job["error"] and job["error"].endswith("step 2 loss 1.5")


def test_hf_image_comes_from_settings_and_a_space_uses_its_own(tmp_path):
    assert workspace_settings(tmp_path).default_hf_image == ""
    assert workspace_settings(tmp_path, SPACE_ID="lab/complab").default_hf_image == "hf.co/spaces/lab/complab"
    assert workspace_settings(tmp_path, SPACE_ID="lab/complab", COMPLAB_HF_IMAGE="me/img:2").default_hf_image == \
        "me/img:2"


def test_hf_cancel_and_bad_requests(store, settings, tmp_path, fast_poll):
    api = FakeHfApi([("SCHEDULING", None)], [])
    job_id = jobs.submit(ADMIN, "train", TOY_RUN, "hf", store=store, settings=settings, api=api)
    assert jobs.cancel(ADMIN, job_id, store=store, settings=settings, api=api)["status"] == "cancelled"
    assert ("cancel_job", {"job_id": "hf-123", "token": "hf_secret"}) in api.calls
    with pytest.raises(jobs.JobError, match="Unknown GPU flavor 'cpu-basic'"):
        jobs.submit(ADMIN, "train", TOY_RUN, "hf", {"flavor": "cpu-basic"}, store=store, settings=settings, api=api)
    no_image = workspace_settings(tmp_path / "ws", HF_TOKEN="hf_secret")
    with pytest.raises(jobs.JobError, match="No image for Hugging Face Jobs: set COMPLAB_HF_IMAGE"):
        jobs.submit(ADMIN, "train", TOY_RUN, "hf", store=store, settings=no_image, api=api)
    no_token = workspace_settings(tmp_path / "ws", COMPLAB_HF_IMAGE="img")
    with pytest.raises(jobs.JobError, match="HF_TOKEN is not set"):
        jobs.submit(ADMIN, "train", TOY_RUN, "hf", store=store, settings=no_token, api=api)
    assert [job["id"] for job in store.list_jobs()] == [job_id]


def test_reconcile_follows_a_remote_job_again_after_a_restart(store, settings, fast_poll, monkeypatch):
    job_id = store.create_job("train", {}, name="remote", target="hf", target_options={"flavor": "l4x1"})
    store.update_job(job_id, status="running", result={"hf_job": "hf-123"},
                     log_path=str(settings.workspace / "remote.log"))
    api = FakeHfApi([("COMPLETED", None)], ["last line"])
    monkeypatch.setattr(hf, "make_api", lambda: api)
    assert jobs.reconcile(store, settings) == []  # the remote job is followed, not guessed at
    job = settled(store, job_id, timeout=20)
    assert job["status"] == "done" and Path(job["log_path"]).read_text() == "last line\n"


@pytest.mark.system
def test_cli_list_show_cancel_in_process(store, settings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPLAB_WORKSPACE", str(settings.workspace))
    job_id = store.create_job("cli", {}, name="sleeper", actor="alice")
    process.start(store, job_id, [sys.executable, "-c", SLEEPER], tmp_path / "job.log", cwd=ROOT)
    store.update_job(job_id, message="step 3/9 loss 0.5000, ETA 12s")
    store.log_metrics(job_id, 3, {"loss": 0.5, "loss/itc": 0.25})
    store.log_metrics(job_id, 3, {"toy-sugarcrepe/swap_att": 0.75}, split="eval")
    db = str(store.path)
    assert main(["jobs", "list", "--json", "--db", db]) == 0
    assert [(j["id"], j["status"]) for j in json.loads(capsys.readouterr().out)] == [(job_id, "running")]
    wait_for(lambda: "working" in (tmp_path / "job.log").read_text(), what="job output")
    assert main(["jobs", "show", str(job_id), "--db", db]) == 0
    shown = capsys.readouterr().out
    assert "running" in shown and "launched by alice" in shown and "latest: step 3/9 loss 0.5000, ETA 12s" in shown
    assert "loss/itc\t0.25" in shown and "toy-sugarcrepe/swap_att\t0.75" in shown and shown.rstrip().endswith("working")
    assert main(["jobs", "cancel", str(job_id), "--db", db]) == 0
    assert f"job {job_id}: cancelled" in capsys.readouterr().out
    wait_for(lambda: not alive(store.get_job(job_id)["pid"]), timeout=15, what="cancelled process to end")
    assert main(["jobs", "launch", "train", "--config", str(tmp_path / "nope.yaml"), "--db", db]) == 2
    assert "does not exist" in capsys.readouterr().err
