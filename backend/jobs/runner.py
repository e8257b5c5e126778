"""The one entry point that runs a job from its row: `python -m backend jobs run ID --db FILE`.

Every target starts this same command (torchrun starts it once per rank), so a
job's behaviour does not depend on where it runs. The row holds the kind and
the validated config; the kind's run function gets the config and a `Reporter`.
A bad config or input (a `ValueError`, e.g. a corrupt checkpoint, a loss gone
NaN, a full disk) ends the job with that message as its last log line and the
first line of its error, not a traceback.
"""
from __future__ import annotations

from backend.core import env
from backend.core.store import Store
from backend.jobs.kinds import get_kind
from backend.jobs.records import get
from backend.jobs.reporter import Reporter


def run(store: Store, job_id: int) -> int:
    """Run job `job_id` in this process; return the exit code (0 done, 2 refused input)."""
    job = get(store, job_id)
    kind = get_kind(job["kind"])
    reporter = Reporter(store, job["id"], rank=env.rank())
    try:
        config = kind.load_config(job["args"] or {})
        result = kind.runner()(config, reporter)
    except ValueError as error:
        reporter.failed(str(error))
        return 2
    reporter.result(result or {})
    return 0
