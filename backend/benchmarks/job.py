"""The `evaluate` job: several models on several benchmarks, every result stored for the leaderboard.

The CLI (`python -m backend evaluate`) and the Benchmarks tab run the same
`evaluate_models`; the job adds a process of its own (so a 25k-image
benchmark never blocks the app), progress in the job row, and results saved
with the job's id. Models are loaded one at a time: two ViT-L models and a
benchmark's workers would not fit beside each other on a small GPU.

Under torchrun every rank encodes its share of the distinct images and texts
(see `stream`), and rank 0 scores and stores.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from backend.jobs.kinds import check_known_keys

PRECISIONS = ("", "fp32", "bf16", "fp16")
RESULT_MARK = "[complab-result] "  # a log line carrying one result, for runs whose store stays remote (hf, slurm)


@dataclass
class EvaluateConfig:
    """What to evaluate. Blank device / precision: the best device; bf16 autocast on a GPU that runs bf16
    natively, else fp16 (MPS too); fp32 on CPU."""

    models: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)
    limit: int | None = None
    device: str = ""
    precision: str = ""
    batch_size: int = 256
    workers: int = 2
    data_root: str = ""

    @classmethod
    def from_dict(cls, values: dict) -> EvaluateConfig:
        check_known_keys(cls, values, "evaluate config")
        return cls(**values).validate()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def validate(self) -> EvaluateConfig:
        from backend.benchmarks import get_benchmark

        problems = []
        if not self.models:
            problems.append("pick at least one model")
        problems += _model_problems(self.models)
        if not self.benchmarks:
            problems.append("pick at least one benchmark")
        for name in self.benchmarks:
            try:
                get_benchmark(name)
            except ValueError as error:
                problems.append(str(error))
        if self.limit is not None and self.limit < 1:
            problems.append(f"limit must be a positive number of items, not {self.limit}")
        if self.precision not in PRECISIONS:
            problems.append(f"precision must be one of fp32, bf16, fp16 (or blank), not {self.precision!r}")
        if self.batch_size < 1 or self.workers < 0:
            problems.append("batch_size must be >= 1 and workers >= 0")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _model_problems(specs: list) -> list[str]:
    """A malformed spec or an architecture open_clip does not know fails now, not after other models were
    evaluated (what loading can reveal still fails at its load, with what was tried)."""
    from backend.benchmarks.blind import is_blind
    from backend.models.loading import check_spec
    from backend.models.spec import ModelLoadError

    problems = []
    for spec in specs:
        if is_blind(spec):  # a text scorer (blind:ngram, blind:<hub id>): its load says what went wrong
            continue
        try:
            check_spec(str(spec))
        except ModelLoadError as error:
            problems.append(str(error))
    return problems


Progress = Callable[[float, str], None]  # (fraction of the whole run, what is being done)


def evaluate_models(config: EvaluateConfig, store=None, job_id: int | None = None,
                    progress: Progress | None = None) -> list[dict]:
    """Evaluate every model on every benchmark; store each result (when a store is given). Returns summaries."""
    from backend.benchmarks.blind import identity, is_blind, not_applicable, run_blind, scorer_name
    from backend.benchmarks.evaluator import get_benchmark, prepare, run_task
    from backend.benchmarks.results import save_result
    from backend.benchmarks.stream import StreamEncoder, join_torchrun
    from backend.models.loading import load_model
    from backend.perturb.blind import load_scorer

    root = Path(config.data_root) if config.data_root else None
    tasks = {name: prepare(name, config.limit, root) for name in config.benchmarks}  # missing data fails first
    rank, _, rank_device = join_torchrun(config.device or None)
    summaries, steps = [], len(config.models) * len(config.benchmarks)
    for m, spec in enumerate(config.models):
        if is_blind(spec):  # a text scorer as the model: no image is encoded, the rule reads text likelihoods
            scorer = load_scorer(scorer_name(spec), config.device or None)
            skipped = [name for name, task in tasks.items() if not_applicable(task)]
            model_identity, notes = identity(spec), [f"text only: {scorer.name}", *(
                [f"skipped {', '.join(skipped)}: its items choose between images"] if skipped else [])]
            runner = functools.partial(run_blind, scorer=scorer, intervals=rank == 0)
        else:
            loaded = load_model(spec, device=rank_device or config.device or None,
                                precision=config.precision or None)
            encoder = StreamEncoder(loaded, batch_size=config.batch_size, workers=config.workers, shard=True)
            model_identity, notes = loaded.identity, list(loaded.notes)
            runner = functools.partial(run_task, encoder=encoder, intervals=rank == 0)
            del loaded, encoder  # the runner holds them until the next model
        for b, (name, task) in enumerate(tasks.items()):
            step = m * len(tasks) + b

            def report(done: int, total: int, step=step, name=name, spec=spec) -> None:
                if progress:
                    progress((step + done / max(total, 1)) / steps, f"{spec} on {name}: {done}/{total} encoded")

            if is_blind(spec) and not_applicable(task):
                report(1, 1)
                continue
            start = time.perf_counter()
            result = runner(task, progress=report)
            seconds = time.perf_counter() - start
            version = get_benchmark(name).version
            summary = {**model_identity, "benchmark": name, "version": version,
                       "limit": config.limit, "metrics": result.metrics,
                       "intervals": {k: list(v) for k, v in result.intervals.items()}, "seconds": round(seconds, 2),
                       "notes": notes}
            if store is not None and rank == 0:
                summary["result_id"] = save_result(store, model_identity, name, version, config.limit,
                                                   result.metrics, seconds, task, result.scores, result.correct,
                                                   job_id, notes, result.intervals)
            summaries.append(summary)
        del runner  # free the model before the next one loads
    return summaries


def run_job(config: EvaluateConfig, reporter) -> dict:
    """The job's body: progress and a log line per result into the job row; results into the store."""
    def progress(fraction: float, message: str) -> None:
        reporter.progress(fraction, message)

    summaries = evaluate_models(config, reporter.store, reporter.job_id, progress)
    for summary in summaries:
        headline = ", ".join(f"{k} {100 * v:.1f}" for k, v in list(summary["metrics"].items())[:4])
        reporter.log(f"{summary['model']} on {summary['benchmark']}: {headline} ({summary['seconds']} s)")
        reporter.log(RESULT_MARK + json.dumps({k: v for k, v in summary.items() if k != "result_id"}))
    return {"results": [{k: s[k] for k in ("model", "benchmark", "result_id") if k in s} for s in summaries]}


def collect_remote(store, job: dict, log_text: str) -> list[int]:
    """Store the results a remote run logged (metrics and identity; the items stay remote, so such a result has
    no failure browser). Called once when a Hugging Face or Slurm job completes."""
    from backend.benchmarks.results import save_result

    saved = []
    for line in log_text.splitlines():
        _, mark, payload = line.partition(RESULT_MARK)
        if not mark:
            continue
        summary = json.loads(payload)
        saved.append(save_result(store, summary, summary["benchmark"], summary["version"], summary["limit"],
                                 summary["metrics"], summary["seconds"], job_id=job["id"],
                                 notes=[*summary.get("notes", []), "run remotely: item scores not kept"],
                                 intervals=summary.get("intervals")))
    return saved
