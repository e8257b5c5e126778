"""The Hugging Face Jobs target: the same job, run in a container on a rented GPU.

The container cannot see the local SQLite store or files, so the remote command
is this project's own launcher (`jobs launch ... --follow`) against a store
inside the container: the job's contract stays the same everywhere, and its log
(which `--follow` copies to stdout) is what comes back. A thread here streams
that log into the local job's log file and maps the remote stage onto the
local status; after an app restart, `reconcile` starts that thread again.
Checkpoints stay in the container unless the config points its output at a
mounted volume.

The image comes from the settings (`hf_image`, default on a Space: the Space's
own image), never from a form: a visitor must not choose what runs with the
owner's token. The API object is a parameter (default `huggingface_hub.HfApi()`),
so tests drive this module with a fake of the same methods and never contact
the service.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import yaml

from backend.core.store import Store
from backend.jobs.base import Target, job_dir
from backend.jobs.records import ACTIVE, FINAL, JobError, log_tail

CONFIG_ENV = "COMPLAB_JOB_CONFIG"
STAGES = {"SCHEDULING": "queued", "RUNNING": "running", "COMPLETED": "done", "ERROR": "failed",
          "CANCELED": "cancelled", "DELETED": "cancelled"}
POLL_S = 10.0
MAX_API_ERRORS = 30  # consecutive failures to reach the service before the job is given up as lost
_WATCHED: set[tuple[str, int]] = set()  # (store path, job id) followed by a thread of this process
_WATCHED_LOCK = threading.Lock()


def gpu_flavors() -> list[str]:
    """Hardware flavors with a GPU, as huggingface_hub knows them."""
    from huggingface_hub import JobHardware
    return [flavor.value for flavor in JobHardware if not flavor.value.startswith("cpu")]


def make_api() -> Any:
    from huggingface_hub import HfApi
    return HfApi()


def remote_command(kind: str) -> list[str]:
    """The container's command: write the config from the environment, run it, print its log."""
    script = (f'mkdir -p /tmp/complab && printf "%s" "${CONFIG_ENV}" > /tmp/complab/job.yaml && '
              f"exec python -m backend jobs launch {kind} --config /tmp/complab/job.yaml "
              "--db /tmp/complab/lab.db --follow")
    return ["sh", "-c", script]


class HfTarget(Target):
    name, summary = "hf", "a container on a Hugging Face Jobs GPU"

    def options(self, raw, settings, kind=""):
        self.check_keys(raw, {"flavor"}, " (the image comes from the hf_image setting)")
        if not settings.hf_token:
            raise JobError("HF_TOKEN is not set: the 'hf' target needs a Hugging Face token with Jobs access "
                           "(https://huggingface.co/settings/tokens) in the server's settings")
        if not settings.default_hf_image:
            raise JobError("No image for Hugging Face Jobs: set COMPLAB_HF_IMAGE (or hf_image in the settings "
                           "file) to a Docker image containing this repository; on a Space the Space's own "
                           "image is used")
        flavor = raw.get("flavor") or settings.hf_flavor
        if flavor not in gpu_flavors():
            raise JobError(f"Unknown GPU flavor {flavor!r}; one of {', '.join(gpu_flavors())}")
        return {"flavor": flavor}

    def label(self, options):
        return f"hf {options.get('flavor', '')}".strip()

    def start(self, store, job, settings, *, api=None, env=None):
        api = api or make_api()
        log_path = job_dir(job, settings) / "job.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.touch()
        store.update_job(job["id"], log_path=str(log_path))
        try:
            info = api.run_job(image=settings.default_hf_image, command=remote_command(job["kind"]),
                               env={CONFIG_ENV: yaml.safe_dump(job["args"], sort_keys=False)},
                               secrets={"HF_TOKEN": settings.hf_token}, flavor=job["target_options"]["flavor"],
                               labels={"complab-job": str(job["id"])}, token=settings.hf_token)
        except Exception as error:  # the service's refusal (auth, quota, image) is the user's to read
            store.update_job(job["id"], status="failed", ended_at=time.time(),
                             error=f"Hugging Face refused the job: {error}")
            raise JobError(f"Hugging Face refused the job: {error}") from error
        store.update_job(job["id"], result={"hf_job": info.id, "url": getattr(info, "url", None)})
        _follow_in_thread(store.path, job["id"], info.id, api, settings.hf_token, log_path)

    def cancel(self, store, job, settings, *, grace, api=None):
        hf_id = (job.get("result") or {}).get("hf_job")
        if hf_id:  # a job that never reached the service runs nowhere
            if not settings.hf_token:
                raise JobError(f"Job {job['id']} runs on Hugging Face and HF_TOKEN is not set here: cannot cancel it")
            (api or make_api()).cancel_job(job_id=hf_id, token=settings.hf_token)
        store.update_job(job["id"], status="cancelled", ended_at=time.time(), error="cancelled by the user")

    def reconcile(self, store, job, settings):
        hf_id = (job.get("result") or {}).get("hf_job")
        if not hf_id:
            return False
        log_path = Path(job.get("log_path") or job_dir(job, settings) / "job.log")
        _follow_in_thread(store.path, job["id"], hf_id, make_api(), settings.hf_token, log_path)
        return False


def _follow_in_thread(db_path: Path, job_id: int, hf_id: str, api: Any, token: str, log_path: Path) -> None:
    """Start the watcher thread unless this process already follows that job."""
    key = (str(db_path), job_id)
    with _WATCHED_LOCK:
        if key in _WATCHED:
            return
        _WATCHED.add(key)
    threading.Thread(target=watch, args=(db_path, job_id, hf_id, api, token, log_path), daemon=True,
                     name=f"job-{job_id}-hf-watcher").start()


def _stage(info: Any) -> tuple[str, str]:
    stage = getattr(info.status.stage, "value", info.status.stage)
    return STAGES.get(str(stage), "running"), info.status.message or ""


def watch(db_path: Path, job_id: int, hf_id: str, api: Any, token: str, log_path: Path) -> None:
    """Follow the remote job until it settles: stream its log once it runs, then record the outcome."""
    store, streamed, errors = Store(db_path), False, 0
    try:
        while True:
            try:
                status, message = _stage(api.inspect_job(job_id=hf_id, token=token))
                if status == "running" and store.get_job(job_id)["status"] == "queued":
                    store.update_job(job_id, status="running", started_at=time.time())
                if not streamed and status in ("running", *FINAL):
                    _append(log_path, api.fetch_job_logs(job_id=hf_id, follow=status == "running", token=token))
                    streamed = True
                    if status == "running":
                        continue  # the stream ends when the job does: look at its stage right away
                errors = 0
            except Exception as error:  # network trouble: note it in the log, retry, give up eventually
                errors += 1
                _append(log_path, [f"[complab] could not reach Hugging Face Jobs: {error}"])
                if errors < MAX_API_ERRORS:
                    time.sleep(POLL_S)
                    continue
                status, message = "failed", f"lost contact with Hugging Face job {hf_id}"
            if status in FINAL:
                _settle(store, job_id, status, message, log_path)
                return
            time.sleep(POLL_S)
    finally:
        with _WATCHED_LOCK:
            _WATCHED.discard((str(db_path), job_id))


def _append(log_path: Path, lines) -> None:
    with open(log_path, "a", encoding="utf-8") as log:
        for line in lines:
            log.write(line if line.endswith("\n") else line + "\n")


def _collect(store: Store, job: dict, log_path: Path) -> None:
    """The container's store is gone with it: what the run logged is kept here (`kinds.collect_logged`)."""
    from backend.jobs.kinds import collect_logged

    if log_path.is_file():
        collect_logged(store, job, log_path.read_text(encoding="utf-8", errors="replace"))


def _settle(store: Store, job_id: int, status: str, message: str, log_path: Path) -> None:
    if store.get_job(job_id)["status"] not in ACTIVE:  # cancelled here first: keep that
        return
    fields: dict[str, Any] = {"status": status, "ended_at": time.time()}
    if status == "done":
        fields["progress"] = 1.0
        _collect(store, store.get_job(job_id), log_path)
    elif status == "failed":
        fields["error"] = f"{message or 'the remote job failed'}\n{log_tail(log_path)}".rstrip()
    else:
        fields["error"] = message or "cancelled on Hugging Face"
    store.update_job(job_id, **fields)
