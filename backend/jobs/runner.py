"""The one entry point that runs a job: `python -m backend jobs run ID --db FILE` (or `--spec FILE`).

Every target starts this same command (torchrun starts it once per rank), so a
job's behaviour does not depend on where it runs. The row holds the kind and
the validated config; the kind's run function gets the config and a `Reporter`.
A job on another machine (Slurm) reads its kind and config from the job spec the
target wrote, ``job.json``, and reports to the events file beside it
(`backend.jobs.events`) instead of the store. A bad config or input (a
`ValueError`, e.g. a corrupt checkpoint, a loss gone NaN, a full disk) ends the
job with that message as its last log line and the first line of its error,
not a traceback.
"""
from __future__ import annotations

import json
from pathlib import Path

from backend.core import env
from backend.core.store import Store
from backend.jobs.events import EVENTS
from backend.jobs.kinds import get_kind
from backend.jobs.records import get
from backend.jobs.reporter import Reporter

SPEC = "job.json"


def run(store: Store, job_id: int) -> int:
    """Run job `job_id` in this process; return the exit code (0 done, 2 refused input)."""
    job = get(store, job_id)
    return execute(job["kind"], job["args"] or {}, Reporter(store, job["id"], rank=env.rank()))


def run_spec(spec_path: Path) -> int:
    """Run the job a target described in `spec_path` (kind and config), reporting to the events file beside it."""
    spec = json.loads(Path(spec_path).read_text())
    return execute(spec["kind"], spec["args"], Reporter(rank=env.rank(), events=Path(spec_path).parent / EVENTS))


def write_spec(folder: Path, job: dict) -> Path:
    """The job spec `run_spec` reads: what a job running away from the store needs of its row."""
    path = folder / SPEC
    path.write_text(json.dumps({"id": job["id"], "kind": job["kind"], "args": job["args"] or {}}, indent=2))
    return path


def execute(kind_name: str, args: dict, reporter: Reporter) -> int:
    """Validate the config, run the kind, report its result; the exit code."""
    kind = get_kind(kind_name)
    try:
        config = kind.load_config(args)
        result = kind.runner()(config, reporter)
    except ValueError as error:
        reporter.failed(str(error))
        return 2
    reporter.result(result or {})
    return 0
