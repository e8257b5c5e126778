"""The interface every place where jobs run implements: check options, start, cancel, reconcile."""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from backend.core.settings import Settings
from backend.core.store import Store
from backend.jobs.records import JobError


class Target(ABC):
    """The interface; subclasses implement each step for one place where jobs run."""

    name = ""
    summary = ""

    def options(self, raw: dict, settings: Settings, kind: str = "") -> dict:
        """Validated options for this target and job kind (before any row exists); a `JobError` says what is
        wrong."""
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
    """The folder with a job's log and job.yaml: one of its own under the workspace, never the folder the job
    writes (a generate job writes a campaign's images, which the web app serves: its config and log must not be)."""
    return settings.workspace / "jobs" / str(job["id"])
