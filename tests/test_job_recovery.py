"""Long jobs that crash or fill the disk, and `jobs resume`: real job processes, a real SQLite store, the tiny
built-in model and the toy renderer.

A crash is SIGKILL to the job's process group at a moment the test does not
choose (after the first checkpoint, after some images): no handler runs, as
with the OOM killer or a power cut of the job alone. The full disk is a real
one: a size-limited tmpfs mounted over the campaign's data folder (root only;
skipped elsewhere, with the reason).
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from PIL import Image
from safetensors.torch import load_file

from backend import jobs
from backend.annotate.db import rows as db_rows
from backend.cli import main
from backend.core.auth import Actor, PermissionDenied
from backend.core.settings import ROOT
from backend.core.store import Store
from backend.generate import regenerate
from backend.generate.job import GenerateConfig, run_job
from backend.generate.storage import png_bytes
from backend.jobs.reporter import Reporter
from backend.models import checkpoint
from backend.train.config import TrainConfig
from backend.train.loop import train
from tests.support import tiny_diffusion
from tests.support.appserver import workspace_settings
from tests.support.crashes import (
    candidate_rows,
    kill_job,
    partial_files,
    settled,
    stored_files,
    toy_campaign,
    wait_for_candidates,
)
from tests.support.waiting import wait_for

ADMIN = Actor("alice", "admin", "password")
# 24 steps, a checkpoint every 3: the kill lands after the first one with 21 steps to spare (about a second on an
# idle machine with torch on one thread, against the test's 50 ms polling); workers=0: two DataLoader processes per
# run cost more than they save on data this small.
STEPS, EVERY = 24, 3
CRASHING_RUN = {"base_model": "toyworld:random", "data": "toyworld-finetune", "steps": STEPS, "batch_size": 8,
                "dataset_size": 32, "eval_every": EVERY, "eval_benchmarks": [], "warmup_steps": 5, "lr": 1e-3,
                "workers": 0, "augment": "open_clip", "name": "crashing"}
CAMPAIGN_ITEMS = 45  # 180 toy images: a few seconds of drawing to kill in the middle of


def _loss_by_step(db_rows: list[dict]) -> dict[int, float]:
    return {row["step"]: row["value"] for row in db_rows if row["name"] == "loss"}


@pytest.mark.system
def test_a_killed_training_job_resumes_from_its_last_checkpoint_and_ends_as_if_never_stopped(tmp_path, capsys):
    settings = workspace_settings(tmp_path / "ws")
    store, db = Store(settings.db), str(settings.db)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({**CRASHING_RUN, "output_dir": str(settings.runs_dir)}))
    launched = subprocess.run([sys.executable, "-m", "backend", "jobs", "launch", "train", "--config", str(config),
                               "--db", db], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert launched.returncode == 0, launched.stderr
    job_id = int(launched.stdout.split()[-1])  # the launcher has exited: no process watches the job
    last = settings.runs_dir / "crashing" / "checkpoints" / "last"
    wait_for(last.exists, 300, "the first checkpoint")
    kill_job(store, job_id)
    saved = checkpoint.load_trainer_state(last)["step"]
    assert EVERY <= saved < STEPS and saved % EVERY == 0

    assert main(["jobs", "show", str(job_id), "--db", db]) == 0
    shown = capsys.readouterr().out
    assert f"job {job_id} (train, crashing) on local: failed" in shown
    assert ("error: process ended while no watcher was running (exit code unknown); it can be resumed from its "
            f"run's last checkpoint: `python -m backend jobs resume {job_id}`") in shown

    assert main(["jobs", "resume", str(job_id), "--db", db]) == 0
    resumed = int(capsys.readouterr().out.split()[-1])
    straight = TrainConfig.from_dict({**CRASHING_RUN, "output_dir": str(tmp_path / "straight")})
    train(straight)  # the same run, never interrupted (here, while the resumed job runs in its own process)
    job = settled(store, resumed)
    assert job["status"] == "done" and job["resumed_from"] == job_id, job["error"]
    assert f"resuming from step {saved} ({last})" in Path(job["log_path"]).read_text()
    losses = _loss_by_step(store.metrics(resumed, "train"))
    stopped = _loss_by_step(store.metrics(job_id, "train"))
    carried = {step: loss for step, loss in losses.items() if step <= saved}
    assert carried and carried == {step: loss for step, loss in stopped.items() if step <= saved}  # the history
    assert max(losses) == STEPS
    ran = [int(step) for step in re.findall(rf"step (\d+)/{STEPS} loss", Path(job["log_path"]).read_text())]
    assert ran and min(ran) > saved  # nothing before the checkpoint ran again
    assert checkpoint.load_trainer_state(last)["step"] == STEPS
    assert main(["jobs", "show", str(job_id), "--db", db]) == 0
    assert f"resumed as job {resumed} (done)" in capsys.readouterr().out

    # exact resume makes the resumed run and the uninterrupted one identical on CPU
    reference = load_file(straight.run_dir / "checkpoints" / "last" / checkpoint.WEIGHTS)
    weights = load_file(last / checkpoint.WEIGHTS)
    assert reference.keys() == weights.keys() and all((reference[k] == weights[k]).all() for k in reference)
    straight_losses = [row for row in map(json.loads, (straight.run_dir / "metrics.jsonl").open())
                       if row["split"] == "train"]
    assert losses[STEPS] == straight_losses[-1]["loss"] and straight_losses[-1]["step"] == STEPS


def test_resume_refuses_what_it_cannot_continue(tmp_path):
    settings = workspace_settings(tmp_path / "ws")
    store = Store(settings.db)
    done = store.create_job("train", {}, name="finished")
    store.update_job(done, status="done")
    running = store.create_job("train", {}, name="live")
    store.update_job(running, status="running")
    sweep = store.create_job("sweep", {}, name="a sweep")
    store.update_job(sweep, status="failed")
    remote = store.create_job("train", {}, name="remote", target="hf")
    store.update_job(remote, status="failed")
    failed = store.create_job("train", {}, name="twice")
    store.update_job(failed, status="failed")
    again = store.create_job("train", {}, name="twice", resumed_from=failed)
    store.update_job(again, status="running")
    for job_id, message in ((done, "is done; nothing to resume"), (running, "is still running"),
                            (sweep, "A sweep job does not resume"), (remote, "ran on Hugging Face Jobs"),
                            (failed, f"was already resumed as job {again} \\(running\\)"),
                            (4242, "No job 4242")):
        with pytest.raises(jobs.JobError, match=message):
            jobs.resume(ADMIN, job_id, store=store, settings=settings)
    with pytest.raises(PermissionDenied, match="Resuming a job needs an admin"):
        jobs.resume(Actor("visitor"), failed, store=store, settings=settings)
    assert len(store.list_jobs()) == 6


# How a campaign's images are drawn in the kill-and-resume test: the toy renderer (a few milliseconds an image), or
# the tiny SDXL pipeline three images per call (its images are pixel-identical to one uninterrupted run's only
# when drawn in the same batches, which a resumed run forms from what is still missing: same seeds, and each image
# regenerates from its record's batch).
DRAWINGS = {"toyworld": ({}, CAMPAIGN_ITEMS, 20),
            "diffusers in batches of 3": ({"preset": "custom", "steps": 2, "batch_size": 3}, 6, 6)}


def _drawn_straight(tmp_path: Path, n_items: int, values: dict) -> dict[tuple[int, int], dict]:
    """(item id, slot) -> candidate row of one uninterrupted run on the same campaign in a store of its own."""
    db = tmp_path / "straight" / "lab.db"
    toy_campaign(db, tmp_path / "straight" / "data", n_items)
    run_job(GenerateConfig.from_dict({"campaign": "c1", "data_dir": str(tmp_path / "straight" / "data"), **values}),
            Reporter(Store(db)))
    return {(row["item_id"], row["slot"]): row for row in candidate_rows(db, "c1")}


@pytest.mark.system
@pytest.mark.parametrize("drawing", DRAWINGS)
def test_a_killed_generate_job_resumes_without_redrawing_and_ends_as_one_run(tmp_path, capsys, drawing):
    values, n_items, kill_after = DRAWINGS[drawing]
    settings = workspace_settings(tmp_path / "ws")
    if "preset" in values:  # the model folder inside the workspace (jobs read only its folders)
        values = {**values, "model": str(tiny_diffusion.save_tiny_sdxl(tmp_path / "ws" / "models" / "tiny-sdxl"))}
    store = Store(settings.db)
    folder = toy_campaign(settings.db, settings.data_dir, n_items)
    total = 4 * n_items
    job_id = jobs.submit(ADMIN, "generate", {"campaign": "c1", **values}, store=store, settings=settings)
    wait_for_candidates(settings.db, "c1", kill_after)
    kill_job(store, job_id)
    failed = settled(store, job_id)  # this process launched it: its watcher records the signal
    assert failed["status"] == "failed"
    assert failed["error"].splitlines()[0] == (
        "killed by SIGKILL; it can be resumed without redrawing the images already stored: "
        f"`python -m backend jobs resume {job_id}`")
    before, files = candidate_rows(settings.db, "c1"), stored_files(folder)
    assert kill_after <= len(before) < total

    assert main(["jobs", "resume", str(job_id), "--db", str(settings.db)]) == 0
    resumed_id = int(capsys.readouterr().out.split()[-1])
    straight = _drawn_straight(tmp_path, n_items, values)  # drawn here while the resumed job draws in its process
    resumed = settled(store, resumed_id)
    assert resumed["status"] == "done", resumed["error"]
    assert (resumed["result"]["images_skipped"], resumed["result"]["images_generated"]) == \
        (len(before), total - len(before))
    after = candidate_rows(settings.db, "c1")
    by_id = {row["id"]: row for row in after}
    assert [by_id[row["id"]] for row in before] == before and len(after) == total  # the rows there are untouched
    now = stored_files(folder)
    assert {name: now[name] for name in files} == files  # and so are their files
    assert len(now) == 2 * total and not partial_files(folder)  # a write the kill cut short is cleaned up
    assert {(row["item_id"], row["slot"]): row["seed"] for row in after} == \
        {key: row["seed"] for key, row in straight.items()}
    if "batch_size" not in values:
        assert {(row["item_id"], row["slot"]): row["sha256"] for row in after} == \
            {key: row["sha256"] for key, row in straight.items()}
        return
    # batched: an image of the killed run, and the resumed run's first and last, each from its record's batch
    drawn_again = [before[0]["id"], after[len(before)]["id"], after[-1]["id"]]
    for row in db_rows(settings.db, f"select * from candidates where id in ({', '.join(map(str, drawn_again))})"):
        assert hashlib.sha256(png_bytes(regenerate(row))).hexdigest() == row["sha256"]


def _mount_tmpfs(folder: Path, options: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                          text=True)


@pytest.fixture
def small_disk(tmp_path):
    """A 300 kB filesystem (tmpfs) at tmp_path/small, unmounted afterwards."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = _mount_tmpfs(folder, "size=300k") if shutil.which("mount") else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("a full disk needs a size-limited tmpfs, and mounting one needs root: "
                    f"{mounted.stderr.strip() if mounted else 'no mount command'}")
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=True)  # lazy: a job that failed a check may hold files


@pytest.mark.system
def test_a_full_disk_stops_generation_cleanly_and_resume_finishes_once_space_is_freed(tmp_path, small_disk, capsys):
    settings = workspace_settings(tmp_path / "ws", COMPLAB_DATA_DIR=str(small_disk))  # the store stays off it
    store = Store(settings.db)
    folder = toy_campaign(settings.db, settings.data_dir, 12)
    job_id = jobs.submit(ADMIN, "generate", {"campaign": "c1"}, store=store, settings=settings)
    failed = settled(store, job_id)
    stored = candidate_rows(settings.db, "c1")
    assert failed["status"] == "failed" and 0 < len(stored) < 48
    first = failed["error"].splitlines()[0]
    assert first.startswith(f"no space left on device while writing {folder}/")
    assert first.endswith(f"; {len(stored)} of 48 images stored; free space on the disk holding {folder}, then "
                          f"resume: `python -m backend jobs resume {job_id}`")
    assert main(["jobs", "show", str(job_id), "--db", str(settings.db)]) == 0
    assert f"error: {first}" in capsys.readouterr().out
    assert not partial_files(folder)  # the failed write removed its temporary file
    for name in stored_files(folder):  # every file under its final name is complete
        with Image.open(folder / name) as image:
            image.load()
        if name.endswith(".png"):
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == Path(name).stem
    assert all((folder / row["path"]).is_file() and (folder / row["display_path"]).is_file() for row in stored)

    assert _mount_tmpfs(small_disk, "remount,size=4m").returncode == 0  # space freed
    resumed = settled(store, jobs.resume(ADMIN, job_id, store=store, settings=settings))
    assert resumed["status"] == "done", resumed["error"]
    assert resumed["result"]["images_generated"] == 48 - len(stored)
    assert resumed["result"]["images_missing_after"] == 0
    by_id = {row["id"]: row for row in candidate_rows(settings.db, "c1")}
    assert [by_id[row["id"]] for row in stored] == stored and len(by_id) == 48
