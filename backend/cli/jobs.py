"""`python -m backend jobs ...`: kinds, list, show, cancel, launch, resume, and run (what every target starts).

Nothing here imports torch, so these commands answer instantly. The command
line acts as the machine's own admin (`backend.core.auth.cli_actor`).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import yaml

from backend import jobs
from backend.cli import options
from backend.core.auth import cli_actor
from backend.core.errors import first_line
from backend.core.store import Store
from backend.jobs import runner
from backend.train import history

METRIC_LINES = 20


def _store(args: argparse.Namespace) -> Store:
    return Store(args.db)


def _when(timestamp: float | None) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S") if timestamp else "-"


def _kinds(args: argparse.Namespace) -> int:
    print("kind\twhat it does")
    for kind in jobs.KINDS.values():
        print(f"{kind.name}\t{kind.summary}")
    print("\ntarget\twhere it runs")
    for name in jobs.TARGET_NAMES:
        print(f"{name}\t{jobs.get_target(name).summary}")
    return 0


def _list(args: argparse.Namespace) -> int:
    store = _store(args)
    jobs.reconcile(store)
    rows = store.list_jobs(args.kind, limit=args.limit)
    if args.json:
        options.print_json(rows)
        return 0
    print("id\tkind\tname\ttarget\tstatus\tprogress\tcreated\tby")
    for job in rows:
        print(f"{job['id']}\t{job['kind']}\t{job['name']}\t{jobs.label(job)}\t{job['status']}\t"
              f"{100 * (job['progress'] or 0):.0f}%\t{_when(job['created_at'])}\t{job.get('actor') or '-'}")
    return 0


def _show(args: argparse.Namespace) -> int:
    store = _store(args)
    jobs.reconcile(store)
    job = jobs.get(store, args.job_id)
    train, evals = store.latest_metrics(job["id"], "train"), store.latest_metrics(job["id"], "eval")
    if args.json:
        options.print_json({"job": job, "train": train, "eval": evals, "log_tail": jobs.log_tail(job["log_path"]),
                            "against_base": history.run_against_base(store, job) if job["kind"] == "train" else []})
        return 0
    print(f"job {job['id']} ({job['kind']}, {job['name']}) on {jobs.label(job)}: {job['status']}, "
          f"{100 * (job['progress'] or 0):.0f}% done, launched by {job.get('actor') or '-'}")
    if job.get("message"):
        print(f"latest: {job['message']}")
    print(f"started {_when(job['started_at'])}, ended {_when(job['ended_at'])}, pid {job['pid'] or '-'}")
    for key in ("run_dir", "log_path"):
        if job.get(key):
            print(f"{key}: {job[key]}")
    if job.get("result"):
        print("result: " + json.dumps(job["result"]))
    if job.get("error"):  # a failed job's error goes on with the log tail printed below
        print(f"error: {first_line(job['error'], limit=10_000)}" if job["status"] == "failed" else
              f"note: {job['error']}")
    links = jobs.resume_links(store, job)
    if links:
        print(links)
    for title, values in (("latest train metrics", train), ("eval metrics", evals)):
        if values:
            print(f"{title}:")
            for name, value in list(values.items())[:METRIC_LINES]:
                print(f"  {name}\t{value:.4g}")
    against = history.run_against_base(store, job) if job["kind"] == "train" else []
    if against:
        print("against the base model (evaluated at step 0; percent):")
        for line in history.summary_lines(against):
            print(f"  {line}")
    tail = jobs.log_tail(job["log_path"])
    print("log tail:\n" + (tail or "(empty)"))
    return 0


def _cancel(args: argparse.Namespace) -> int:
    job = jobs.cancel(cli_actor(), args.job_id, store=_store(args), grace=args.grace)
    print(f"job {job['id']}: {job['status']}")
    return 0


def _read_config(path: Path) -> dict:
    if not path.is_file():
        raise jobs.JobError(f"Config file {path} does not exist")
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise jobs.JobError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(config, dict):
        raise jobs.JobError(f"{path} must hold a mapping of config keys to values")
    return config


def _launch(args: argparse.Namespace) -> int:
    store = _store(args)
    job_id = jobs.submit(cli_actor(), args.kind, _read_config(Path(args.config)), args.target,
                         options.target_options(args), store=store, name=args.name)
    return _started(store, job_id, args.follow)


def _resume(args: argparse.Namespace) -> int:
    store = _store(args)
    jobs.reconcile(store)  # a job whose process died unseen is still "running" until settled
    return _started(store, jobs.resume(cli_actor(), args.job_id, store=store), args.follow)


def _started(store: Store, job_id: int, follow: bool) -> int:
    """Print a started job's id; with `follow`, its log until it ends (exit 0 only if it is done)."""
    print(job_id, flush=True)
    if not follow:
        return 0
    status = jobs.follow(store, job_id, sys.stdout)
    print(f"job {job_id}: {status}", file=sys.stderr)
    return 0 if status == "done" else 1


def _run(args: argparse.Namespace) -> int:
    if args.spec:
        return runner.run_spec(Path(args.spec))
    return runner.run(_store(args), args.job_id)


def add_parsers(subparsers) -> None:
    """Register `jobs kinds|list|show|cancel|launch|resume|run`."""
    parser = subparsers.add_parser("jobs", help="list, inspect, cancel and launch background jobs",
                                   description="Background jobs (training runs, ...) recorded in the SQLite store.")
    actions = parser.add_subparsers(dest="action", required=True)

    kinds = actions.add_parser("kinds", help="the kinds of job and the targets they run on")
    kinds.set_defaults(handler=_kinds)

    listing = actions.add_parser("list", help="jobs, newest first")
    listing.add_argument("--kind", default=None, help="only this kind, e.g. train")
    listing.add_argument("--limit", type=int, default=50)
    options.add_json(listing)
    listing.set_defaults(handler=_list)

    show = actions.add_parser("show", help="status, progress, latest metrics and log tail of one job")
    show.add_argument("job_id", type=int)
    options.add_json(show)
    show.set_defaults(handler=_show)

    stop = actions.add_parser("cancel", help="stop a queued or running job")
    stop.add_argument("job_id", type=int)
    stop.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL")
    stop.set_defaults(handler=_cancel)

    start = actions.add_parser("launch", help="start a job; prints its id")
    start.add_argument("kind", choices=list(jobs.KINDS))
    start.add_argument("--config", required=True, help="YAML file of config keys (e.g. backend/train/config.py)")
    options.add_target(start, jobs.TARGET_NAMES, flavor=True)
    start.add_argument("--name", default="", help="job name (default: the config's name)")
    start.add_argument("--follow", action="store_true",
                       help="print the job's log until it ends; exit 0 only if it is done")
    start.set_defaults(handler=_launch)

    again = actions.add_parser("resume", help="continue a failed or cancelled train or generate job as a new job; "
                                              "prints its id",
                               description="Start a stopped job's kind, config and target again as a new job "
                                           "linked to it: a train run continues from its last checkpoint, a "
                                           "generate job draws only the images still missing.")
    again.add_argument("job_id", type=int)
    again.add_argument("--follow", action="store_true",
                       help="print the new job's log until it ends; exit 0 only if it is done")
    again.set_defaults(handler=_resume)

    run = actions.add_parser("run", help="run an existing job in this process (what every target starts)")
    run.add_argument("job_id", type=int)
    run.add_argument("--spec", default=None, help="the job.json a remote target wrote: run its kind and config, "
                                                  "reporting to events.jsonl beside it instead of the store")
    run.set_defaults(handler=_run)

    for sub in (listing, show, stop, start, again, run):
        options.add_db(sub)
