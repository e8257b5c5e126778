"""The job system's choke point: every launch, resume and cancel, from the UI or the CLI, comes through here.

`submit(actor, kind, config)` checks permission, confines every path the config
names, validates the config with its kind, checks the target's options, and
only then creates the row and starts the job. Bad input raises before anything
is created. `resume(actor, job_id)` starts a stopped job's config again through
`submit`, as a new job linked to the old one.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from backend.core import paths
from backend.core.auth import Actor, require_admin
from backend.core.settings import Settings, get_settings
from backend.core.store import Store
from backend.jobs.kinds import JobKind, get_kind
from backend.jobs.records import ACTIVE, JobError, get
from backend.jobs.targets import get_target
from backend.models.spec import ModelLoadError, local_path, parse_spec

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # owner/name, as a hub repo id is written (never with "..")


def submit(actor: Actor, kind: str, config: dict, target: str = "local", options: dict | None = None, *,
           store: Store, settings: Settings | None = None, name: str = "", api: Any = None,
           env: dict[str, str] | None = None, resumed_from: int | None = None) -> int:
    """Validate and start a job; return its id. Raises `PermissionDenied`, `PathError` or `JobError`/`ValueError`.

    `resumed_from` is the stopped job this one continues (set by `resume`).
    """
    require_admin(actor, f"launching a {kind} job")
    settings = settings or get_settings()
    job_kind = get_kind(kind)
    runner = get_target(target)
    target_options = runner.options(dict(options or {}), settings, kind)
    loaded = job_kind.load_config(confine_config(job_kind, dict(config), actor, settings))
    args = loaded.to_dict()
    folder = job_kind.folder(loaded)
    if folder is not None:
        folder = folder.resolve()
        busy = [job["id"] for job in store.list_jobs(kind, limit=None, statuses=ACTIVE)
                if job.get("run_dir") == str(folder)]
        if busy:
            raise JobError(f"Job {busy[0]} is still writing to {folder}; cancel it or pick another run name")
    job_id = store.create_job(kind, args, name=name or args.get("name") or kind, target=target, actor=actor.name,
                              target_options=target_options, resumed_from=resumed_from)
    if folder is not None:
        store.update_job(job_id, run_dir=str(folder))
    runner.start(store, store.get_job(job_id), settings, api=api, env=env)
    return job_id


def confine_config(kind: JobKind, config: dict, actor: Actor, settings: Settings) -> dict:
    """The config with its paths resolved (relative ones from the workspace) and checked against the allowed roots.

    The command line's own user may name any path (relative ones then mean the current folder);
    everyone else stays inside the settings' allowed roots. Blank folders become the kind's defaults
    from the settings (a run's output goes to `runs_dir`), so the job records where it writes.
    """
    base = Path.cwd() if actor.trusted_paths else settings.workspace
    for key, folder in kind.defaults.items():
        if not str(config.get(key) or "").strip():
            config[key] = str(getattr(settings, folder))
    for key, role in kind.paths.items():
        if role == "models":
            for spec in config.get(key) or []:
                _check_model(str(spec), actor, settings)
            continue
        value = str(config.get(key) or "").strip()
        if not value:
            continue
        if role == "model":
            _check_model(value, actor, settings)
            continue
        if role == "hub_or_dir" and HUB_ID.fullmatch(value) and ".." not in value and not (base / value).exists():
            continue  # a repo id, fetched by the job
        resolved = (base / value).resolve() if actor.trusted_paths else \
            paths.confine(value, settings.allowed_roots, what=key.replace("_", " "), base=base)
        if role == "hub_or_dir" and not resolved.is_dir():
            raise paths.PathError(f"{key.replace('_', ' ')} '{value}' is neither a Hugging Face repo id (owner/name) "
                                  f"nor an existing folder (looked for {resolved})")
        if role == "data":
            resolved.mkdir(parents=True, exist_ok=True)
        if role == "folder" and not resolved.is_dir():
            raise paths.PathError(f"{key.replace('_', ' ')} '{value}' is not a folder (looked for {resolved})")
        if role == "file" and not resolved.is_file():
            raise paths.PathError(f"{key.replace('_', ' ')} '{value}' does not exist (looked for {resolved})")
        config[key] = str(resolved)
    return config


def _check_model(spec: str, actor: Actor, settings: Settings) -> None:
    """A base model spec: a local path in it must exist and, for non-CLI users, lie inside the allowed roots."""
    try:
        location = local_path(parse_spec(spec))
    except ModelLoadError as error:
        raise JobError(str(error)) from None
    if location is None:
        return
    resolved = Path(location).resolve() if actor.trusted_paths else \
        paths.confine(location, settings.allowed_roots, what="base model path")
    if not resolved.exists():
        raise paths.PathError(f"base model path '{location}' does not exist")


def cancel(actor: Actor, job_id: int, *, store: Store, settings: Settings | None = None, grace: float = 10.0,
           api: Any = None) -> dict:
    """Stop a queued or running job (SIGTERM, then SIGKILL after `grace` s; remote jobs remotely); status
    `cancelled`."""
    require_admin(actor, "cancelling a job")
    job = get(store, job_id)
    if job["status"] not in ACTIVE:
        raise JobError(f"Job {job_id} is already {job['status']}; nothing to cancel")
    get_target(job["target"]).cancel(store, job, settings or get_settings(), grace=grace, api=api)
    return store.get_job(job["id"])


def resume(actor: Actor, job_id: int, *, store: Store, settings: Settings | None = None,
           env: dict[str, str] | None = None) -> int:
    """Continue a failed or cancelled job: its kind, config and target again, as a new job; return the new id.

    Why a new job and not the same row again: each attempt keeps its own pid,
    log position, times, error and metrics, so the crash stays on record and the
    new row's `resumed_from` links the chain. The kind's run picks up where the
    old one stopped (a train run from its last checkpoint, a generate job at the
    first missing image). The config passes `submit`'s checks again: the
    allowed folders may have changed since.
    """
    require_admin(actor, "resuming a job")
    job = get(store, job_id)
    kind = get_kind(job["kind"])
    if job["status"] in ACTIVE:
        raise JobError(f"Job {job['id']} is still {job['status']}; cancel it first, or wait for it to end")
    if job["status"] == "done":
        raise JobError(f"Job {job['id']} is done; nothing to resume")
    if not kind.resumes:
        raise JobError(f"A {kind.name} job does not resume (it would start over); launch it again instead")
    if job["target"] == "hf":
        raise JobError(f"Job {job['id']} ran on Hugging Face Jobs, whose run folder stayed in its container; "
                       "launch it again")
    later = store.resumed_by(job["id"])
    if later is not None:
        raise JobError(f"Job {job['id']} was already resumed as job {later['id']} ({later['status']}); "
                       f"resume that one if it stopped too")
    return submit(actor, kind.name, dict(job["args"] or {}), job["target"], job.get("target_options") or {},
                  store=store, settings=settings, name=job["name"], env=env, resumed_from=job["id"])


def reconcile(store: Store, settings: Settings | None = None) -> list[int]:
    """Bring every active job's row up to date (a process that died unseen is settled); return the settled ids.

    Safe to call from any process at any time: the app calls it at start and on refresh, the CLI before listing.
    """
    settings = settings or get_settings()
    settled = []
    for job in store.list_jobs(limit=None, statuses=ACTIVE):  # the Train tab's timer calls this: active rows only
        if get_target(job["target"]).reconcile(store, job, settings):
            settled.append(job["id"])
    return settled
