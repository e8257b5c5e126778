"""Local job processes: start one detached, watch it, settle its row when it exits, stop it on cancel.

Why processes and not threads: a job must survive the app restarting, must be
cancellable as a whole (torchrun spawns workers), and must not hold the app's
GIL. So a job is a detached process group (`start_new_session=True`) whose
stdout+stderr go to a log file. This module owns a local job's status
lifecycle: `running` + pid + started_at when the process starts, `done`/`failed`
+ ended_at (+ the log tail as error) when it exits. The job itself only reports
progress, metrics and its result (`backend.jobs.reporter`).

Exit codes are only known to the launching process, so a watcher thread there
records them; any other process (the app after a restart, `jobs list`) calls
`settle_if_gone`, which marks jobs whose process vanished unseen. A run that
wrote its result before vanishing is `done`; anything else is `failed` with its
log tail, led by the job's own explanation, or else by how it ended and how to
resume it (`backend.jobs.resume`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from backend.core.gpu import job_environment
from backend.core.store import Store
from backend.jobs.kinds import resume_hint
from backend.jobs.records import ACTIVE, log_tail

# A job marked failed by `settle_if_gone` carries this prefix, so the watcher (which knows
# the real exit code) may still correct it if it lost the race by a few milliseconds.
UNSEEN = "process ended while no watcher was running"
# A pid-less queued job younger than this is still being started by another process.
START_WINDOW_S = 60.0


def start(store: Store, job_id: int, argv: list[str], log_path: Path, cwd: Path,
          env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `argv` detached for an existing job, log to `log_path`, mark it running and watch it.

    If the process cannot even start, the job is marked failed and the OSError re-raised.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    store.update_job(job_id, log_path=str(log_path))
    # Not the ZeroGPU variables: a job is not the web process and gets no ZeroGPU GPU (backend.core.gpu).
    child_env = {**job_environment(os.environ), **(env or {}), "PYTHONUNBUFFERED": "1"}
    try:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(argv, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        store.update_job(job_id, status="failed", error=f"could not start {argv[0]}: {error}", ended_at=time.time())
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
    store.update_job(job_id, status="failed", ended_at=time.time(), error=failure(job, reason))


def failure(job: dict, reason: str) -> str:
    """A failed job's error: a first line saying why, then its log tail.

    The first line is the job's own explanation when it gave one (the runner
    stores it before exiting: a non-finite loss, a full disk), else how the
    process ended and, for a kind that can continue, how to resume it.
    """
    said = job.get("error") if job["status"] in ACTIVE else None
    first = said or f"{reason}{resume_hint(job)}"
    return f"{first}\n{log_tail(job.get('log_path'))}".rstrip()


def process_state(pid: int | None, started_at: float | None = None) -> str | None:
    """None when `pid` is not this job's process any more; else its state letter.

    "Z" is a zombie whose parent (the launcher's watcher) has yet to reap it and record its exit code.

    Pids are reused (after a reboot, or a long time), so on Linux the process's start
    time must match the job's `started_at`; a stranger holding the pid counts as gone,
    which also keeps `stop` from signalling an unrelated process.
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


def settle_if_gone(store: Store, job: dict) -> bool:
    """Settle an active local job whose process is gone; True if it was settled.

    A zombie still has a parent that will reap it and record the real exit code, so it is left alone.
    """
    if job.get("pid") is None:
        if time.time() - job["created_at"] < START_WINDOW_S:
            return False
        store.update_job(job["id"], status="failed", ended_at=time.time(),
                         error="the job was never started (its launcher exited first)")
        return True
    if process_state(job["pid"], job.get("started_at")) is not None:
        return False
    if isinstance(job.get("result"), dict) and job["result"]:
        store.update_job(job["id"], status="done", progress=1.0, ended_at=time.time())
    else:
        store.update_job(job["id"], status="failed", ended_at=time.time(),
                         error=failure(job, f"{UNSEEN} (exit code unknown)"))
    return True


def stop(pid: int | None, started_at: float | None, grace: float) -> None:
    """SIGTERM to the job's process group, SIGKILL after `grace` seconds if it is still there."""
    if pid is None or process_state(pid, started_at) in (None, "Z"):
        return
    _signal_group(pid, signal.SIGTERM)
    if not _wait_gone(pid, started_at, grace):
        _signal_group(pid, signal.SIGKILL)
        _wait_gone(pid, started_at, 5.0)


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
