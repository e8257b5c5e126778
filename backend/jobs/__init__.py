"""Long work as jobs: kinds (what runs), targets (where), one runner, one reporter, one choke point.

Each job runs in its own process; its state lives in the SQLite store, so the
app, the CLI and the job itself all see the same row. Launch, resume and cancel only
through `submit`, `resume` and `cancel`, which check who is asking.
"""
from backend.jobs.kinds import KINDS, JobKind, get_kind, register
from backend.jobs.records import (
    ACTIVE,
    FINAL,
    JobError,
    follow,
    get,
    log_tail,
    result_of,
    resume_links,
)
from backend.jobs.reporter import Reporter
from backend.jobs.service import cancel, reconcile, resume, submit
from backend.jobs.targets import TARGET_NAMES, get_target, label

__all__ = ["ACTIVE", "FINAL", "KINDS", "TARGET_NAMES", "JobError", "JobKind", "Reporter", "cancel",
           "follow", "get", "get_kind", "get_target", "label", "log_tail", "reconcile",
           "register", "result_of", "resume", "resume_links", "submit"]
