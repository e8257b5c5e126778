"""The Hugging Face Jobs target: the same job, run in a container on a rented GPU.

The container cannot see the local SQLite store or files, so the remote command
is this project's own local launcher (`jobs launch ... --follow`) against a
store inside the container: the trainer's contract stays the same everywhere,
and its log (which `--follow` copies to stdout) is what comes back. A thread
here streams that log into the local job's log file and maps the remote stage
onto the local status. Checkpoints stay in the container unless the run config
points `output_dir` at a mounted volume.

The API object is a parameter (default `huggingface_hub.HfApi()`), so tests drive
this module with a fake of the same methods and never contact the service.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from backend.jobs import ACTIVE, FINAL, JobError, log_tail
from backend.store import Store

CONFIG_ENV = "COMPLAB_JOB_CONFIG"
IMAGE_ENV = "COMPLAB_HF_IMAGE"
DEFAULT_FLAVOR = "a10g-small"
STAGES = {"SCHEDULING": "queued", "RUNNING": "running", "COMPLETED": "done", "ERROR": "failed",
          "CANCELED": "cancelled", "DELETED": "cancelled"}
POLL_S = 10.0
MAX_API_ERRORS = 30  # consecutive failures to reach the service before the job is given up as lost


def gpu_flavors() -> list[str]:
    """Hardware flavors with a GPU, as huggingface_hub knows them."""
    from huggingface_hub import JobHardware
    return [flavor.value for flavor in JobHardware if not flavor.value.startswith("cpu")]


def token_from_env() -> str:
    token = os.environ.get("HF_TOKEN", "").strip()
    if not token:
        raise JobError("HF_TOKEN is not set: export a Hugging Face token with Jobs access "
                       "(https://huggingface.co/settings/tokens) before launching on the 'hf' target")
    return token


def remote_command(kind: str) -> list[str]:
    """The container's command: write the config from the environment, run it, print its log."""
    script = (f'mkdir -p /tmp/complab && printf "%s" "${CONFIG_ENV}" > /tmp/complab/job.yaml && '
              f"exec python -m backend jobs launch {kind} --config /tmp/complab/job.yaml "
              "--db /tmp/complab/lab.db --follow")
    return ["sh", "-c", script]


def submit(store: Store, kind: str, args: dict, *, name: str = "", flavor: str | None = None,
           image: str | None = None, api: Any = None) -> int:
    """Create the local job row, submit the container job, start the log/status thread; return the id."""
    token = token_from_env()
    flavor = flavor or DEFAULT_FLAVOR
    if flavor not in gpu_flavors():
        raise JobError(f"Unknown GPU flavor {flavor!r}; one of {', '.join(gpu_flavors())}")
    image = image or os.environ.get(IMAGE_ENV, "")
    if not image:
        raise JobError(f"The 'hf' target needs a docker image containing this repository (build the "
                       f"Dockerfile and push it): pass --image or set {IMAGE_ENV}")
    if api is None:
        from huggingface_hub import HfApi
        api = HfApi()
    job_id = store.create_job(kind, args, name=name or args.get("name") or kind, target=f"hf:{flavor}")
    log_path = store.path.parent / "jobs" / str(job_id) / "job.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.touch()
    store.update_job(job_id, log_path=str(log_path))
    try:
        info = api.run_job(image=image, command=remote_command(kind),
                           env={CONFIG_ENV: yaml.safe_dump(args, sort_keys=False)},
                           secrets={"HF_TOKEN": token}, flavor=flavor, labels={"complab-job": str(job_id)},
                           token=token)
    except Exception as error:  # the service's refusal (auth, quota, image) is the user's to read
        store.update_job(job_id, status="failed", ended_at=time.time(), error=f"Hugging Face refused the job: {error}")
        raise JobError(f"Hugging Face refused the job: {error}") from error
    store.update_job(job_id, result={"hf_job": info.id, "url": getattr(info, "url", None)})
    threading.Thread(target=watch, args=(store.path, job_id, info.id, api, token, log_path), daemon=True,
                     name=f"job-{job_id}-hf-watcher").start()
    return job_id


def _stage(info: Any) -> tuple[str, str]:
    stage = getattr(info.status.stage, "value", info.status.stage)
    return STAGES.get(str(stage), "running"), info.status.message or ""


def watch(db_path: Path, job_id: int, hf_id: str, api: Any, token: str, log_path: Path) -> None:
    """Follow the remote job until it settles: stream its log once it runs, then record the outcome."""
    store, streamed, errors = Store(db_path), False, 0
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
            if errors >= MAX_API_ERRORS:
                status, message = "failed", f"lost contact with Hugging Face job {hf_id}"
            else:
                time.sleep(POLL_S)
                continue
        if status in FINAL:
            _settle(store, job_id, status, message, log_path)
            return
        time.sleep(POLL_S)


def _append(log_path: Path, lines) -> None:
    with open(log_path, "a", encoding="utf-8") as log:
        for line in lines:
            log.write(line if line.endswith("\n") else line + "\n")


def _settle(store: Store, job_id: int, status: str, message: str, log_path: Path) -> None:
    if store.get_job(job_id)["status"] not in ACTIVE:  # cancelled here first: keep that
        return
    fields: dict[str, Any] = {"status": status, "ended_at": time.time()}
    if status == "done":
        fields["progress"] = 1.0
    elif status == "failed":
        fields["error"] = f"{message or 'the remote job failed'}\n{log_tail(log_path)}".rstrip()
    else:
        fields["error"] = message or "cancelled on Hugging Face"
    store.update_job(job_id, **fields)


def cancel_remote(job: dict, api: Any = None) -> None:
    """Ask the service to cancel the job behind a local row (the caller marks the row cancelled)."""
    hf_id = (job.get("result") or {}).get("hf_job")
    if not hf_id:
        return  # never reached the service: nothing runs remotely
    if api is None:
        from huggingface_hub import HfApi
        api = HfApi()
    api.cancel_job(job_id=hf_id, token=token_from_env())
