"""The Slurm target: the same job as a batch job on a cluster, N nodes x G GPUs, DDP across nodes.

Why a generated script and not submitit: the job is already a command
(`python -m backend jobs run ID --spec job.json`), so what Slurm needs is a batch
script, and a script written next to the job (``job.sbatch``) is what a cluster's
admins read, what a person can resubmit by hand, and what `sbatch` takes over ssh
on its standard input. submitit would pickle a Python callable into its own
folder layout, add its own requeue protocol on top of ours, and one more
dependency, for nothing the script does not do.

The script runs one `torchrun` per node under `srun` (a c10d rendezvous on the
first node, keyed by the Slurm job id) for a kind that trains as N ranks
(`JobKind.distributed`), else one process. Partition, account, time limit,
extra ``#SBATCH`` lines and setup lines come from the settings only, never from a
form: a visitor must not choose what the cluster runs or charges.

The compute nodes share the workspace's file system with the app but never write
its SQLite store: the job reports into ``events.jsonl`` in its Slurm folder
(`backend.jobs.events`), and a watcher thread here applies those lines to the
row, and maps Slurm's state (`squeue`, else `sacct`) onto the job's status.
After an app restart, `reconcile` looks once and starts that watcher again.

Preemption: the script is submitted with ``--requeue``. A requeued job runs the
same script again; a training run resumes from its last checkpoint (as every
train run does), and its log (opened in append mode) continues. Cancel is
`scancel`.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

from backend.core.gpu import job_environment
from backend.core.settings import ROOT, Settings
from backend.core.store import Store
from backend.jobs import events, runner
from backend.jobs.base import Target, job_dir
from backend.jobs.kinds import collect_logged, get_kind
from backend.jobs.process import START_WINDOW_S, failure
from backend.jobs.records import ACTIVE, FINAL, JobError

SLURM_ID = "slurm_job"  # the Slurm job id, kept with the target's options once submitted
MAX_NODES, MAX_GPUS = 256, 16
POLL_S = 10.0
MAX_ERRORS = 30  # consecutive failed queries (Slurm down, ssh unreachable) before the job is given up as lost
RDZV_PORT = 29500
ATTEMPT_MARK = "[complab] Slurm job "  # the log line each run of the script starts with (a requeue runs it again)
# Slurm's job states (squeue %T / sacct State) -> the job's status
STATES = {"PENDING": "queued", "CONFIGURING": "queued", "REQUEUED": "queued", "REQUEUE_HOLD": "queued",
          "REQUEUE_FED": "queued", "RESV_DEL_HOLD": "queued", "SUSPENDED": "queued", "STOPPED": "queued",
          "RESIZING": "running", "RUNNING": "running", "COMPLETING": "running", "SIGNALING": "running",
          "STAGE_OUT": "running", "COMPLETED": "done", "CANCELLED": "cancelled", "FAILED": "failed",
          "TIMEOUT": "failed", "NODE_FAIL": "failed", "PREEMPTED": "failed", "OUT_OF_MEMORY": "failed",
          "BOOT_FAIL": "failed", "DEADLINE": "failed", "REVOKED": "failed", "SPECIAL_EXIT": "failed"}
_WATCHED: set[tuple[str, int]] = set()
_WATCHED_LOCK = threading.Lock()


def slurm_folder(job: dict, settings: Settings) -> Path:
    """Where this job's script, spec and events live: beside its log in the job's own folder (never in the run
    folder, which a resumed job shares with the job it resumes)."""
    return job_dir(job, settings) / f"slurm-job{job['id']}"


def command(settings: Settings, *argv: str) -> list[str]:
    """A Slurm command as run here, or on the login node over ssh (`slurm_ssh`)."""
    if not settings.slurm_ssh:
        return list(argv)
    return ["ssh", "-o", "BatchMode=yes", settings.slurm_ssh, shlex.join(argv)]


def _call(settings: Settings, *argv: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(command(settings, *argv), input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=job_environment(os.environ))


def _whole(value, name: str, most: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise JobError(f"{name.replace('_', ' ')} must be a whole number, not {value!r}") from None
    if not 1 <= number <= most:
        raise JobError(f"{name.replace('_', ' ')} must be between 1 and {most}, not {number}")
    return number


def batch_script(job: dict, settings: Settings, spec: Path, log: Path) -> str:
    """The sbatch script of a job: resources and settings as #SBATCH lines, then one srun."""
    options = job.get("target_options") or {}
    nodes, gpus = options.get("nodes", 1), options.get("gpus_per_node", 1)
    distributed = get_kind(job["kind"]).distributed
    workers = int((job.get("args") or {}).get("workers") or 0)
    lines = ["#!/bin/bash", f"#SBATCH --job-name=complab-{job['id']}-{job['kind']}",
             f"#SBATCH --output={log}", "#SBATCH --open-mode=append", f"#SBATCH --chdir={ROOT}",
             f"#SBATCH --nodes={nodes}", "#SBATCH --ntasks-per-node=1",
             f"#SBATCH --cpus-per-task={gpus * (1 + workers)}", "#SBATCH --requeue",
             f"#SBATCH --partition={settings.slurm_partition}"]
    if settings.slurm_gpus:
        lines.append(f"#SBATCH --gpus-per-node={gpus}")
    if settings.slurm_account:
        lines.append(f"#SBATCH --account={settings.slurm_account}")
    if settings.slurm_time:
        lines.append(f"#SBATCH --time={settings.slurm_time}")
    lines += [f"#SBATCH {extra}" for extra in settings.slurm_sbatch]
    lines += ["set -eo pipefail", *settings.slurm_setup, "export PYTHONUNBUFFERED=1",
              f'echo "{ATTEMPT_MARK}$SLURM_JOB_ID (restart ${{SLURM_RESTART_COUNT:-0}}) on $SLURM_JOB_NODELIST"']
    job_command = f"-m backend jobs run {job['id']} --spec {shlex.quote(str(spec))}"
    python = shlex.quote(sys.executable)
    if distributed:
        lines += ['head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
                  f"srun --kill-on-bad-exit=1 {python} -m torch.distributed.run --nnodes=\"$SLURM_JOB_NUM_NODES\" "
                  f"--nproc_per_node={gpus} --rdzv_backend=c10d --rdzv_id=\"$SLURM_JOB_ID\" "
                  f"--rdzv_endpoint=\"$head:$(({RDZV_PORT} + SLURM_JOB_ID % 20000))\" {job_command}"]
    else:
        lines.append(f"srun {python} {job_command}")
    return "\n".join(lines) + "\n"


class SlurmTarget(Target):
    name, summary = "slurm", "a batch job on a Slurm cluster (sbatch; nodes x GPUs per node)"

    def options(self, raw, settings, kind=""):
        raw = {key: value for key, value in raw.items() if key != SLURM_ID}  # a resumed job's old Slurm id
        self.check_keys(raw, {"nodes", "gpus_per_node"},
                        " (partition, account and time limit come from the server's settings)")
        if not settings.slurm_configured:
            raise JobError("The slurm target is not configured on this server: set slurm_partition (and "
                           "slurm_account, slurm_time) in its settings (docs/SLURM.md)")
        nodes = _whole(raw.get("nodes", 1), "nodes", MAX_NODES)
        gpus = _whole(raw.get("gpus_per_node", 1), "gpus_per_node", MAX_GPUS)
        if kind and nodes * gpus > 1 and not get_kind(kind).distributed:
            raise JobError(f"A {kind} job runs as one process: ask for 1 node and 1 GPU per node, not "
                           f"{nodes} x {gpus}")
        return {"nodes": nodes, "gpus_per_node": gpus}

    def label(self, options):
        label = f"slurm {options.get('nodes', 1)}x{options.get('gpus_per_node', 1)}"
        return f"{label} (job {options[SLURM_ID]})" if options.get(SLURM_ID) else label

    def start(self, store, job, settings, *, api=None, env=None):
        folder = slurm_folder(job, settings)
        folder.mkdir(parents=True, exist_ok=True)
        log = job_dir(job, settings) / "job.log"
        log.touch()
        store.update_job(job["id"], log_path=str(log))
        script = batch_script(job, settings, runner.write_spec(folder, job), log)
        (folder / "job.sbatch").write_text(script)
        try:
            submitted = _call(settings, "sbatch", "--parsable", stdin=script)
        except (OSError, subprocess.TimeoutExpired) as error:
            submitted = subprocess.CompletedProcess([], 1, "", str(error))
        slurm_id = submitted.stdout.strip().split(";")[0]
        if submitted.returncode != 0 or not slurm_id.isdigit():
            message = f"Slurm refused the job: {(submitted.stderr or submitted.stdout).strip() or 'no answer'}"
            store.update_job(job["id"], status="failed", ended_at=time.time(), error=message)
            raise JobError(message)
        options = {**(job.get("target_options") or {}), SLURM_ID: int(slurm_id)}
        store.update_job(job["id"], target_options=options, message=f"submitted as Slurm job {slurm_id}")
        _watch_in_thread(store.path, job["id"], settings)

    def cancel(self, store, job, settings, *, grace, api=None):
        store.update_job(job["id"], status="cancelled", ended_at=time.time(), error="cancelled by the user")
        slurm_id = (job.get("target_options") or {}).get(SLURM_ID)
        if slurm_id is not None:
            cancelled = _call(settings, "scancel", str(slurm_id))
            if cancelled.returncode != 0 and "Invalid job id" not in cancelled.stderr:
                raise JobError(f"scancel {slurm_id} failed: {cancelled.stderr.strip()}")

    def reconcile(self, store, job, settings):
        if _watched(store.path, job["id"]):
            return False
        settled = poll(store, job["id"], settings)
        if not settled:
            _watch_in_thread(store.path, job["id"], settings)
        return settled


def slurm_state(slurm_id: int, settings: Settings) -> str | None:
    """The job's Slurm state: `squeue` while the controller remembers it, else `sacct` (the accounting database);
    None when neither knows it. Raises OSError/TimeoutExpired when Slurm cannot be asked at all."""
    queued = _call(settings, "squeue", "-h", "-j", str(slurm_id), "--states=all", "-o", "%T")
    if queued.returncode == 0 and queued.stdout.strip():
        return queued.stdout.split()[0]
    accounted = _call(settings, "sacct", "-n", "-X", "-P", "-j", str(slurm_id), "-o", "State")
    if accounted.returncode == 0 and accounted.stdout.strip():
        return accounted.stdout.split()[0]  # "CANCELLED by 0" -> CANCELLED
    return None


def poll(store: Store, job_id: int, settings: Settings) -> bool:
    """Apply the job's new reports, bring its status in line with Slurm's; True once the job is settled."""
    job = store.get_job(job_id)
    folder = slurm_folder(job, settings)
    events.apply_new(store, job_id, folder)
    if job["status"] not in ACTIVE:
        return True
    slurm_id = (job.get("target_options") or {}).get(SLURM_ID)
    if slurm_id is None:  # never submitted: its launcher is still at it, or died before sbatch answered
        if time.time() - job["created_at"] < START_WINDOW_S:
            return False
        store.update_job(job_id, status="failed", ended_at=time.time(), error="the job was never submitted to Slurm")
        return True
    state = slurm_state(slurm_id, settings)
    status = STATES.get(state, "running") if state else None
    if status is None or state is None:  # forgotten by the controller, no accounting: its own reports tell
        status, state = ("done", "COMPLETED") if events.result_of(folder) is not None else ("failed", "UNKNOWN")
    if status == "running" and job["status"] == "queued":
        store.update_job(job_id, status="running", started_at=job.get("started_at") or time.time())
    elif status == "queued" and job["status"] == "running":
        store.update_job(job_id, status="queued", message=f"requeued by Slurm ({state}); {_requeue_note(job)}")
    if status not in FINAL:
        return False
    events.apply_new(store, job_id, folder)  # what it reported just before it ended
    _settle(store, store.get_job(job_id), status, state, slurm_id)
    return True


def _requeue_note(job: dict) -> str:
    kind = get_kind(job["kind"])
    return f"it continues {kind.resumes} when it runs again" if kind.resumes else "it starts over when it runs again"


def _settle(store: Store, job: dict, status: str, state: str, slurm_id: int) -> None:
    fields: dict = {"status": status, "ended_at": time.time()}
    if status == "done":
        fields.update(progress=1.0, error=None)
        _collect(store, job)
    elif status == "cancelled":
        fields["error"] = f"Slurm job {slurm_id} was cancelled outside the lab (scancel)"
    else:
        fields["error"] = failure(job, f"Slurm job {slurm_id} ended {state}")
    store.update_job(job["id"], **fields)


def _collect(store: Store, job: dict) -> None:
    """What the run logged that its kind keeps (an evaluation's results: `kinds.collect_logged`), from the log's
    last attempt only (a requeued run logged its first attempt's lines above it)."""
    log = Path(job.get("log_path") or "")
    if log.is_file():
        text = log.read_text(encoding="utf-8", errors="replace")
        collect_logged(store, job, text[max(text.rfind(ATTEMPT_MARK), 0):])


def _watched(db_path: Path, job_id: int) -> bool:
    with _WATCHED_LOCK:
        return (str(db_path), job_id) in _WATCHED


def _watch_in_thread(db_path: Path, job_id: int, settings: Settings) -> None:
    key = (str(db_path), job_id)
    with _WATCHED_LOCK:
        if key in _WATCHED:
            return
        _WATCHED.add(key)
    threading.Thread(target=watch, args=(db_path, job_id, settings), daemon=True,
                     name=f"job-{job_id}-slurm-watcher").start()


def watch(db_path: Path, job_id: int, settings: Settings) -> None:
    """Poll the job until it is settled; give it up as lost after MAX_ERRORS failed queries in a row."""
    store, errors = Store(db_path), 0
    try:
        while True:
            try:
                if poll(store, job_id, settings):
                    return
                errors = 0
            except (OSError, subprocess.TimeoutExpired) as error:
                errors += 1
                if errors >= MAX_ERRORS:
                    store.update_job(job_id, status="failed", ended_at=time.time(),
                                     error=f"lost contact with Slurm: {error}")
                    return
            time.sleep(POLL_S)
    finally:
        with _WATCHED_LOCK:
            _WATCHED.discard((str(db_path), job_id))
