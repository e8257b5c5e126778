"""Job kinds: what a job is (its config class and run function), registered by name.

A kind is named by strings ("module:attribute") so that listing kinds or
validating a launch imports only the light config class; the run function (and
torch) are imported only in the job's own process. `train` is registered here;
`evaluate`, `sweep` and `generate` register the same way.
"""
from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.jobs.records import JobError

# How `submit` treats a config value that names something on disk.
PATH_ROLES = {
    "file": "an existing file (a manifest, a campaign file)",
    "folder": "an existing folder the job reads (training shards)",
    "dir": "a folder the job writes (created if missing)",
    "model": "a model spec; when it names a local file or folder, that must exist",
    "hub_or_dir": "a Hugging Face repo id (owner/name), or a local folder that must exist",
    "models": "a list of model specs, each checked as a model",
    "data": "a folder the job reads (benchmark data); created empty if missing, so a benchmark says what to put there",
}


def check_known_keys(config_class: type, values: dict, what: str) -> None:
    """Refuse keys that are not fields of the dataclass `config_class` (a typo would otherwise be ignored)."""
    known = [f.name for f in dataclasses.fields(config_class)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"Unknown {what} keys: {', '.join(unknown)}; known: {', '.join(known)}")


def resolve(target: str) -> Any:
    """The object named by "package.module:attribute"."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class JobKind:
    """A kind of long work. `config` has `from_dict(values)` (validates) and `to_dict()`; `run(config, reporter)`
    returns the job's result."""

    name: str
    summary: str
    config: str
    run: str
    paths: dict[str, str] = field(default_factory=dict)  # config key -> role in PATH_ROLES
    defaults: dict[str, str] = field(default_factory=dict)  # blank config key -> the Settings folder it means
    work_dir: str | None = None  # config attribute naming the folder the job owns (one active job per folder)
    collect: str | None = None  # "module:function"(store, job, log_text): keep what a remote (hf, slurm) run logged
    # How running the same config again continues a stopped job (blank: it would start over, so `resume` refuses)
    resumes: str = ""
    distributed: bool = False  # runs as N ranks of one DDP job (torchrun, several Slurm nodes); else one process

    def load_config(self, values: dict) -> Any:
        """The validated config object; a `ValueError` names every problem."""
        return resolve(self.config).from_dict(dict(values))

    def runner(self) -> Callable[[Any, Any], dict]:
        return resolve(self.run)

    def folder(self, config: Any) -> Path | None:
        return Path(getattr(config, self.work_dir)) if self.work_dir else None


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    unknown = set(kind.paths.values()) - set(PATH_ROLES)
    if unknown:
        raise ValueError(f"job kind {kind.name!r}: unknown path roles {sorted(unknown)}")
    KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> JobKind:
    if name not in KINDS:
        raise JobError(f"Unknown job kind {name!r}; one of {', '.join(KINDS)}")
    return KINDS[name]


def collect_logged(store: Any, job: dict, log_text: str) -> None:
    """A run whose store stayed away from this one (Hugging Face, Slurm) logs its results: a kind that does
    (`JobKind.collect`) keeps them here, once the run is done."""
    kind = get_kind(job["kind"])
    if kind.collect:
        resolve(kind.collect)(store, job, log_text)


def resume_command(job_id: int | None) -> str:
    """What to type to continue a stopped job (a job run by hand, with no row, is simply run again)."""
    return f"`python -m backend jobs resume {job_id}`" if job_id is not None else "the same command again"


def resume_hint(job: dict) -> str:
    """The sentence a stopped job's error ends with when `jobs resume` can continue it; '' when it cannot.

    A Hugging Face job's run folder stayed in its container, so only local and torchrun jobs resume.
    """
    kind = KINDS.get(job.get("kind") or "")
    if kind is None or not kind.resumes or job.get("target") == "hf":
        return ""
    return f"; it can be resumed {kind.resumes}: {resume_command(job['id'])}"


register(JobKind(
    "train", "finetune a CLIP-like model (CLIP, NegCLIP, CE-CLIP, HP+HN, TROHN-Img)",
    config="backend.train.config:TrainConfig", run="backend.train.loop:run_job",
    paths={"manifest": "file", "shards": "folder", "output_dir": "dir", "base_model": "model"},
    defaults={"output_dir": "runs_dir"},
    work_dir="run_dir", resumes="from its run's last checkpoint", distributed=True))
register(JobKind(
    "evaluate", "run benchmarks on models; results go to the leaderboard",
    config="backend.benchmarks.job:EvaluateConfig", run="backend.benchmarks.job:run_job",
    paths={"models": "models", "data_root": "data"}, defaults={"data_root": "benchmarks_dir"},
    collect="backend.benchmarks.job:collect_remote"))
register(JobKind(
    "sweep", "interpolate a pretrained and a finetuned model (CLOVe patching) and trace the trade-off per alpha",
    config="backend.patching.config:SweepConfig", run="backend.patching.sweep:run_job",
    paths={"pretrained": "model", "finetuned": "model", "data_root": "data"},
    defaults={"data_root": "benchmarks_dir"}))
register(JobKind(
    "generate", "generate candidate images for an annotation campaign (diffusers or the built-in renderer)",
    config="backend.generate.job:GenerateConfig", run="backend.generate.job:run_job",
    paths={"data_dir": "dir", "db": "file", "model": "hub_or_dir", "assist_model": "model"},
    defaults={"data_dir": "data_dir"}, work_dir="campaign_dir",
    resumes="without redrawing the images already stored"))
