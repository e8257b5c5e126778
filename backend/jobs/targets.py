"""Where a job runs. One interface for every target: check options, start, cancel, reconcile.

`local` is one process on this machine, `torchrun` is N processes on this
machine (`torch.distributed.run --standalone`), `hf` is a container on a rented
GPU (`backend.jobs.hf`), `slurm` a batch job on a cluster (`backend.jobs.slurm`).
A job row stores the target's name and its options (`{"nproc": 2}`,
`{"flavor": "a10g-small"}`, `{"nodes": 2, "gpus_per_node": 4}`), never a string
to be parsed.
"""
from __future__ import annotations

import sys
import time

import yaml

from backend.core.settings import ROOT
from backend.jobs import process
from backend.jobs.base import Target, job_dir
from backend.jobs.hf import HfTarget
from backend.jobs.records import JobError
from backend.jobs.slurm import SlurmTarget


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

    def options(self, raw, settings, kind=""):
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


TARGETS: dict[str, Target] = {target.name: target for target in (LocalTarget(), TorchrunTarget(), HfTarget(),
                                                                   SlurmTarget())}
TARGET_NAMES = tuple(TARGETS)


def get_target(name: str) -> Target:
    if name not in TARGETS:
        raise JobError(f"Unknown target {name!r}; one of {', '.join(TARGETS)}")
    return TARGETS[name]


def label(job: dict) -> str:
    """How a job's target reads in lists: 'local', 'torchrun x2', 'hf a10g-small'."""
    try:
        return get_target(job["target"]).label(job.get("target_options") or {})
    except JobError:
        return str(job.get("target") or "")
