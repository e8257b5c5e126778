"""`python -m backend reproduce PAPER`: a paper's published table run on this machine, ours beside theirs.

The table is the paper's published rows (backend/benchmarks/reference.py, or ``--table FILE``, a JSON list of rows
in the same form); each checkpoint runs through the evaluate job's path (`job.evaluate_models` here, or with
``--job`` an `evaluate` job per checkpoint on any target), results stored for the leaderboard.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from backend.cli import options
from backend.cli.options import config_default
from backend.core.auth import cli_actor


def load_table(path: str) -> list[dict]:
    """Published rows from a JSON file: each with model, source, paper, checkpoint and fractions per metric."""
    try:
        rows = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read the table {path}: {error}") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError(f"{path}: expected a JSON list of rows (objects)")
    for n, row in enumerate(rows):
        lacking = [key for key in ("model", "source", "paper", "checkpoint") if not row.get(key)]
        bad = [key for key, value in row.items() if "/" in key and not (isinstance(value, float) and 0 <= value <= 1)]
        if lacking or bad:
            raise ValueError(f"{path}, row {n}: " + "; ".join(
                [*(f"lacks {key}" for key in lacking), *(f"{key} must be a fraction in [0, 1]" for key in bad)]))
    return rows


def _evaluator(args: argparse.Namespace, store):
    """(checkpoint, benchmarks) -> summaries, in this process or as an `evaluate` job followed to its end."""
    from backend.benchmarks.job import EvaluateConfig, evaluate_models

    def config(checkpoint: str, benchmarks: list[str]) -> EvaluateConfig:
        return EvaluateConfig.from_dict({"models": [checkpoint], "benchmarks": benchmarks, "limit": args.limit,
                                         "device": args.device or "", "precision": args.precision or "",
                                         "batch_size": args.batch_size, "workers": args.workers,
                                         "data_root": args.data_root or ""})

    def here(checkpoint: str, benchmarks: list[str]) -> list[dict]:
        from backend.cli.benchmarks import _progress_bar

        bar, update = _progress_bar()
        try:
            return evaluate_models(config(checkpoint, benchmarks), store, progress=update)
        finally:
            bar.close()

    def as_job(checkpoint: str, benchmarks: list[str]) -> list[dict]:
        from backend import jobs
        from backend.benchmarks.results import results

        job_id = jobs.submit(cli_actor(), "evaluate", config(checkpoint, benchmarks).to_dict(), args.target,
                             options.target_options(args), store=store)
        print(f"job {job_id}: {checkpoint} on {', '.join(benchmarks)}", file=sys.stderr, flush=True)
        status = jobs.follow(store, job_id, sys.stderr)
        if status != "done":
            raise RuntimeError(f"job {job_id} ended {status} (`python -m backend jobs log {job_id}`)")
        return [row for row in results(store, benchmarks, latest=False) if row["job_id"] == job_id]

    return as_job if args.job else here


def _reproduce(args: argparse.Namespace) -> int:
    from backend.benchmarks import reproduce as R
    from backend.benchmarks.reference import PUBLISHED
    from backend.core.store import Store

    rows = load_table(args.table) if args.table else list(PUBLISHED)
    if args.list:
        for paper in R.papers(rows):
            print(f"{paper}\t{', '.join(R.plan(R.paper_rows(paper, rows)))}")
        return 0
    if not args.paper:
        raise ValueError(f"name a paper: {', '.join(R.papers(rows))} (--list shows their checkpoints)")
    chosen = R.paper_rows(args.paper, rows)
    store = Store(args.db)
    lines = R.reproduce(chosen, _evaluator(args, store), args.data_root, args.limit)
    if args.json:
        options.print_json([{**line.__dict__, "difference": line.difference, "inside": line.inside}
                            for line in lines])
        return 0
    if args.limit:
        print(f"first {args.limit} items per subset: numbers not comparable with the published ones")
    csv.writer(sys.stdout, dialect="excel-tab").writerows(R.table(lines))
    for note in R.notes(lines):
        print(f"note: {note}")
    print("difference = ours - published, in points; CI: 95% percentile bootstrap over the benchmark's items")
    return 0


def add_parsers(subparsers) -> None:
    from backend.benchmarks.job import EvaluateConfig  # light: dataclasses, no torch

    parser = subparsers.add_parser(
        "reproduce", help="run a paper's published table here and print ours beside it",
        description="Evaluates the paper's released checkpoints on the benchmarks of its published table and "
                    "prints each published number, ours with its 95%% interval, and the difference. Needs the "
                    "checkpoints and the benchmarks' data (`benchmarks --check`); what is missing is reported.")
    parser.add_argument("paper", nargs="?", help="e.g. aro, clove, bivlc, dac (--list shows them)")
    parser.add_argument("--list", action="store_true", help="list the papers with a table, and their checkpoints")
    parser.add_argument("--table", default=None, metavar="FILE",
                        help="a JSON list of published rows instead of the built-in tables")
    parser.add_argument("--batch-size", type=int, default=config_default(EvaluateConfig, "batch_size"))
    parser.add_argument("--workers", type=int, default=config_default(EvaluateConfig, "workers"))
    options.add_db(parser)
    parser.add_argument("--job", action="store_true", help="run each checkpoint as an evaluate job")
    options.add_target(parser)
    options.add_device(parser)
    options.add_limit_and_data(parser)
    options.add_json(parser)
    parser.set_defaults(handler=_reproduce)
