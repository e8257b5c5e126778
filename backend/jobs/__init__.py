"""Long work (training) as jobs: each runs in its own process, its state lives in the SQLite store.

Why processes and not threads: a training run must survive the app restarting,
must be cancellable as a whole (torchrun spawns workers), and must not hold the
app's GIL. So a job is a detached process group (`start_new_session=True`) whose
stdout+stderr go to a log file. The *runner* (this module) owns the job's status
lifecycle: `running` + pid + started_at when the process starts, `done`/`failed`
+ ended_at (+ the log tail as error) when it exits. The job itself only reports
progress, metrics and its result (see `backend.train`).

Exit codes are only known to the launching process, so a watcher thread there
records them; any other process (the app after a restart, `jobs list`) calls
`reconcile`, which marks jobs whose process vanished unseen. A run that wrote
its result before vanishing is `done`; anything else is `failed` with its log tail.

Targets: "local" (one process), "torchrun" (`torch.distributed.run --standalone`
with N processes, same bookkeeping) and "hf" (Hugging Face Jobs, `backend.hf_jobs`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, TextIO

import yaml

from backend.store import Store

ROOT = Path(__file__).resolve().parents[1]
ACTIVE = ("queued", "running")
FINAL = ("done", "failed", "cancelled")
TARGETS = ("local", "torchrun", "hf")
TAIL_LINES = 30
# A job marked failed by `reconcile` carries this prefix, so the watcher (which knows
# the real exit code) may still correct it if it lost the race by a few milliseconds.
UNSEEN = "process ended while no watcher was running"
# A pid-less queued job younger than this is still being started by another process.
_START_WINDOW_S = 60.0


class JobError(ValueError):
    """A launch or cancel request that cannot be honoured; the message says why and what to do."""


def _train_args(args: dict) -> dict:
    from backend.train.config import TrainConfig  # light: dataclass + yaml
    return TrainConfig.from_dict(args).to_dict()


# Job kinds the runner can launch: kind -> validator returning the normalised args.
# Each kind is a `python -m backend <kind> --config FILE --job-id N --db DB` subcommand.
CONFIG_KINDS: dict[str, Callable[[dict], dict]] = {"train": _train_args}


def validate(kind: str, args: dict) -> dict:
    """Normalised args for `kind`, or a `JobError`/`ValueError` saying what is wrong (nothing is created)."""
    if kind not in CONFIG_KINDS:
        raise JobError(f"Unknown job kind {kind!r}; one of {', '.join(CONFIG_KINDS)}")
    return CONFIG_KINDS[kind](dict(args))


def launch(store: Store, kind: str, args: dict, target: str = "local", nproc: int = 1, *,
           name: str = "", flavor: str | None = None, image: str | None = None, api: Any = None,
           workdir: Path = ROOT, env: dict[str, str] | None = None) -> int:
    """Validate, create the job row, write its job.yaml and start it on `target`; return the job id.

    Bad input raises before anything is created. A train run's relative `output_dir`
    is resolved against `workdir` (the process's cwd). Launching into an existing run
    directory resumes that run (the trainer picks up its last checkpoint), but not
    while another active job still writes there.
    """
    if target not in TARGETS:
        raise JobError(f"Unknown target {target!r}; one of {', '.join(TARGETS)}")
    if target == "torchrun" and int(nproc) < 1:
        raise JobError("torchrun needs at least 1 process (--nproc)")
    args = validate(kind, args)
    if target == "hf":
        from backend import hf_jobs
        return hf_jobs.submit(store, kind, args, name=name, flavor=flavor, image=image, api=api)
    run_dir = _resolve_run_dir(kind, args, workdir)
    busy = [job["id"] for job in store.list_jobs(kind, limit=10_000)
            if run_dir is not None and job["status"] in ACTIVE and job.get("run_dir") == str(run_dir)]
    if busy:
        raise JobError(f"Job {busy[0]} is still writing to {run_dir}; cancel it or pick another run name")
    label = target if target == "local" else f"torchrun:{int(nproc)}"
    job_id = store.create_job(kind, args, name=name or args.get("name") or kind, target=label)
    job_dir = run_dir or store.path.parent / "jobs" / str(job_id)
    job_dir.mkdir(parents=True, exist_ok=True)
    config_path = job_dir / "job.yaml"
    config_path.write_text(yaml.safe_dump(args, sort_keys=False))
    command = ["-m", "backend", kind, "--config", str(config_path), "--job-id", str(job_id),
               "--db", str(store.path.resolve())]
    prefix = [] if target == "local" else torchrun_prefix(int(nproc))
    if run_dir is not None:
        store.update_job(job_id, run_dir=str(run_dir))
    run_local(store, job_id, [sys.executable, *prefix, *command], job_dir / "job.log", cwd=workdir, env=env)
    return job_id


def torchrun_prefix(nproc: int) -> list[str]:
    """Arguments after the interpreter that make `-m backend ...` run as `nproc` ranks on this machine."""
    return ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc)]


def _resolve_run_dir(kind: str, args: dict, workdir: Path) -> Path | None:
    if kind != "train":
        return None
    output_dir = Path(args["output_dir"])
    if not output_dir.is_absolute():
        output_dir = (workdir / output_dir).resolve()
        args["output_dir"] = str(output_dir)
    from backend.train.config import TrainConfig
    return TrainConfig.from_dict(args).run_dir


def run_local(store: Store, job_id: int, argv: list[str], log_path: Path, cwd: Path = ROOT,
              env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `argv` detached for an existing job, log to `log_path`, mark it running and watch it.

    This is the one place a local process is started; `launch` builds the argv.
    If the process cannot even start, the job is marked failed and the OSError re-raised.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    store.update_job(job_id, log_path=str(log_path))
    child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    try:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(argv, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        store.update_job(job_id, status="failed", error=f"could not start {argv[0]}: {error}",
                         ended_at=time.time())
        raise
    store.update_job(job_id, status="running", pid=process.pid, started_at=time.time())
    threading.Thread(target=_watch, args=(store.path, job_id, process), daemon=True,
                     name=f"job-{job_id}-watcher").start()
    return process


def _watch(db_path: Path, job_id: int, process: subprocess.Popen) -> None:
    # Own connection: the launching thread's Store may be in use concurrently.
    finish(Store(db_path), job_id, process.wait())


def finish(store: Store, job_id: int, exit_code: int) -> None:
    """Record a job's exit, unless someone already settled it (a cancel, or the job's own error)."""
    job = store.get_job(job_id)
    unseen = job["status"] == "failed" and (job.get("error") or "").startswith(UNSEEN)
    if job["status"] not in ACTIVE and not unseen:
        return
    if exit_code == 0:
        store.update_job(job_id, status="done", progress=1.0, ended_at=time.time(), error=None)
        return
    reason = (f"killed by {signal.Signals(-exit_code).name}" if exit_code < 0 and -exit_code in
              signal.valid_signals() else f"exit code {exit_code}")
    store.update_job(job_id, status="failed", ended_at=time.time(),
                     error=f"{reason}\n{log_tail(job.get('log_path'))}".rstrip())


def log_tail(path: str | Path | None, lines: int = TAIL_LINES) -> str:
    """The last lines of a log; progress bars' carriage-return redraws collapse to their last state."""
    if not path or not Path(path).exists():
        return ""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - 64 * 1024))
        text = handle.read().decode("utf-8", errors="replace")
    rows = [row.rsplit("\r", 1)[-1] for row in text.splitlines()]
    return "\n".join(row for row in rows[-lines:])


def process_state(pid: int | None, started_at: float | None = None) -> str | None:
    """None when `pid` is not this job's process any more; else its state letter.

    "Z" is a zombie whose parent (the launcher's watcher) has yet to reap it and record its exit code.

    Pids are reused (after a reboot, or a long time), so on Linux the process's start
    time must match the job's `started_at`; a stranger holding the pid counts as gone,
    which also keeps `cancel` from signalling an unrelated process.
    """
    if not pid:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:  # no procfs (macOS): signal 0 only tells whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return "?"
    fields = stat.rsplit(")", 1)[1].split()
    if started_at is not None:
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime"))
        began = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
        if abs(began - started_at) > 30:
            return None
    if fields[0] == "Z" and fields[1] == "1":  # orphaned zombie: no watcher will ever reap it
        return None
    return fields[0]


def reconcile(store: Store) -> list[int]:
    """Settle active local jobs whose process is gone; return their ids. Safe to call from any process.

    A zombie still has a parent that will reap it and record the real exit code, so it is left alone.
    """
    settled = []
    for job in store.list_jobs(limit=10_000):
        if job["status"] not in ACTIVE or str(job.get("target") or "").startswith("hf"):
            continue
        if job.get("pid") is None:
            if time.time() - job["created_at"] < _START_WINDOW_S:
                continue
            store.update_job(job["id"], status="failed", ended_at=time.time(),
                             error="the job was never started (its launcher exited first)")
        elif process_state(job["pid"], job.get("started_at")) is None:
            if isinstance(job.get("result"), dict) and job["result"]:
                store.update_job(job["id"], status="done", progress=1.0, ended_at=time.time())
            else:
                store.update_job(job["id"], status="failed", ended_at=time.time(),
                                 error=f"{UNSEEN} (exit code unknown)\n{log_tail(job.get('log_path'))}".rstrip())
        else:
            continue
        settled.append(job["id"])
    return settled


def get(store: Store, job_id: int) -> dict:
    """The job row, or a `JobError` naming the missing id."""
    from sqlite_utils.db import NotFoundError
    try:
        return store.get_job(int(job_id))
    except NotFoundError:
        raise JobError(f"No job {job_id}; `python -m backend jobs list` shows the existing ones") from None


def cancel(store: Store, job_id: int, grace: float = 10.0, api: Any = None) -> dict:
    """Stop a job: SIGTERM to its process group, SIGKILL after `grace` seconds; status `cancelled`.

    The status is written *before* signalling, so the watcher sees a settled job and
    does not record the signal as a failure. Hugging Face jobs are cancelled remotely.
    """
    job = get(store, job_id)
    if job["status"] not in ACTIVE:
        raise JobError(f"Job {job_id} is already {job['status']}; nothing to cancel")
    if str(job.get("target") or "").startswith("hf"):
        from backend import hf_jobs
        hf_jobs.cancel_remote(job, api)
    store.update_job(job["id"], status="cancelled", ended_at=time.time(), error="cancelled by the user")
    pid, started = job.get("pid"), job.get("started_at")
    if process_state(pid, started) not in (None, "Z"):
        _signal_group(pid, signal.SIGTERM)
        if not _wait_gone(pid, started, grace):
            _signal_group(pid, signal.SIGKILL)
            _wait_gone(pid, started, 5.0)
    return store.get_job(job["id"])


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:  # jobs lead their own session, so their group id is their pid (torchrun workers included)
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, started_at: float | None, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_state(pid, started_at) in (None, "Z"):
            return True
        time.sleep(0.1)
    return process_state(pid, started_at) in (None, "Z")


def finished_checkpoints(store: Store) -> list[str]:
    """Model specs (`local-dir:<dir>`) of finished train runs' best (else last) checkpoints, newest first."""
    specs: list[str] = []
    for job in store.list_jobs("train", limit=10_000):
        result = job.get("result")
        if job["status"] != "done" or not isinstance(result, dict):
            continue
        for key in ("best", "last"):
            if result.get(key) and Path(result[key]).is_dir():
                spec = f"local-dir:{result[key]}"
                if spec not in specs:
                    specs.append(spec)
                break
    return specs


def follow(store: Store, job_id: int, out: TextIO, poll: float = 0.5) -> str:
    """Copy a job's log to `out` as it grows until the job is settled; return its final status."""
    offset = 0
    while True:
        job = store.get_job(job_id)
        path = job.get("log_path")
        if path and Path(path).exists():
            with open(path, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
            offset += len(chunk)
            if chunk:
                out.write(chunk.decode("utf-8", errors="replace"))
                out.flush()
        if job["status"] in FINAL and not _pending(path, offset):
            return job["status"]
        time.sleep(poll)


def _pending(path: str | None, offset: int) -> bool:
    """Whether a log has bytes past `offset` (written between the last read and the status check)."""
    return bool(path) and Path(path).exists() and Path(path).stat().st_size > offset
