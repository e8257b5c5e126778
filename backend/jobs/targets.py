"""Where a job runs. One interface for every target: check options, start, cancel, reconcile.

`local` is one process on this machine, `torchrun` is N processes on this
machine (`torch.distributed.run --standalone`), `hf` is a container on a rented
GPU (`backend.jobs.hf`). A job row stores the target's name and its options
(`{"nproc": 2}`, `{"flavor": "a10g-small"}`), never a string to be parsed.
"""
from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import yaml

from backend.jobs import process
from backend.jobs.records import JobError
from backend.settings import ROOT, Settings
from backend.store import Store


class Target(ABC):
    """The interface; subclasses implement each step for one place where jobs run."""

    name = ""
    summary = ""

    def options(self, raw: dict, settings: Settings) -> dict:
        """Validated options for this target (before any row exists); a `JobError` says what is wrong."""
        self.check_keys(raw, set())
        return {}

    def check_keys(self, raw: dict, allowed: set[str], note: str = "") -> None:
        unknown = sorted(set(raw) - allowed)
        if unknown:
            takes = f"takes only {', '.join(sorted(allowed))}{note}" if allowed else "takes no options"
            raise JobError(f"target {self.name!r} {takes}, got {unknown}")

    def label(self, options: dict) -> str:
        return self.name

    @abstractmethod
    def start(self, store: Store, job: dict, settings: Settings, *, api: Any = None,
              env: dict[str, str] | None = None) -> None:
        """Start the job whose row exists (status queued); the row says `running` once it runs."""

    @abstractmethod
    def cancel(self, store: Store, job: dict, settings: Settings, *, grace: float, api: Any = None) -> None:
        """Stop an active job and mark it cancelled."""

    @abstractmethod
    def reconcile(self, store: Store, job: dict, settings: Settings) -> bool:
        """Bring an active job's row up to date with reality; True if it was settled."""


def job_dir(job: dict, settings: Settings) -> Path:
    """The folder with a job's log and job.yaml: the folder it owns (a run directory), else one of its own."""
    return Path(job["run_dir"]) if job.get("run_dir") else settings.workspace / "jobs" / str(job["id"])


class LocalTarget(Target):
    name, summary = "local", "one process on this machine"

    def prefix(self, options: dict) -> list[str]:
        """Arguments between the interpreter and `-m backend ...`."""
        return []

    def start(self, store, job, settings, *, api=None, env=None):
        folder = job_dir(job, settings)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "job.yaml").write_text(yaml.safe_dump(job["args"], sort_keys=False))
        argv = [sys.executable, *self.prefix(job.get("target_options") or {}), "-m", "backend", "jobs", "run",
                str(job["id"]), "--db", str(store.path.resolve())]
        process.start(store, job["id"], argv, folder / "job.log", cwd=ROOT, env=env)

    def cancel(self, store, job, settings, *, grace, api=None):
        # The status is written before signalling, so the watcher sees a settled job
        # and does not record the signal as a failure.
        store.update_job(job["id"], status="cancelled", ended_at=time.time(), error="cancelled by the user")
        process.stop(job.get("pid"), job.get("started_at"), grace)

    def reconcile(self, store, job, settings):
        return process.settle_if_gone(store, job)


class TorchrunTarget(LocalTarget):
    name, summary = "torchrun", "N processes on this machine (torch.distributed.run)"

    def options(self, raw, settings):
        self.check_keys(raw, {"nproc"})
        try:
            nproc = int(raw.get("nproc", 1))
        except (TypeError, ValueError):
            raise JobError(f"nproc must be a whole number, not {raw.get('nproc')!r}") from None
        if nproc < 1:
            raise JobError("torchrun needs at least 1 process (--nproc)")
        return {"nproc": nproc}

    def label(self, options):
        return f"torchrun x{options.get('nproc', 1)}"

    def prefix(self, options):
        return ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(options.get("nproc", 1))]


def _targets() -> dict[str, Target]:
    from backend.jobs.hf import HfTarget  # huggingface_hub is imported only when the hf target is used
    return {target.name: target for target in (LocalTarget(), TorchrunTarget(), HfTarget())}


TARGET_NAMES = ("local", "torchrun", "hf")


def get_target(name: str) -> Target:
    targets = _targets()
    if name not in targets:
        raise JobError(f"Unknown target {name!r}; one of {', '.join(targets)}")
    return targets[name]


def label(job: dict) -> str:
    """How a job's target reads in lists: 'local', 'torchrun x2', 'hf a10g-small'."""
    try:
        return get_target(job["target"]).label(job.get("target_options") or {})
    except JobError:
        return str(job.get("target") or "")
