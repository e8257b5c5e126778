"""`python -m backend jobs ...`: list, inspect, cancel and launch jobs, like the Train tab does.

Kept apart from `backend.cli` so that file stays a short index of subcommands;
nothing here imports torch, so these commands answer instantly.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import yaml

from backend import jobs
from backend.store import Store

METRIC_LINES = 20


def _store(args: argparse.Namespace) -> Store:
    return Store(args.db)


def _when(timestamp: float | None) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S") if timestamp else "-"


def _list(args: argparse.Namespace) -> int:
    store = _store(args)
    jobs.reconcile(store)
    rows = store.list_jobs(args.kind, limit=args.limit)
    if args.json:
        json.dump(rows, sys.stdout, indent=2, default=str)
        print()
        return 0
    print("id\tkind\tname\ttarget\tstatus\tprogress\tcreated")
    for job in rows:
        print(f"{job['id']}\t{job['kind']}\t{job['name']}\t{job['target']}\t{job['status']}\t"
              f"{100 * (job['progress'] or 0):.0f}%\t{_when(job['created_at'])}")
    return 0


def _show(args: argparse.Namespace) -> int:
    store = _store(args)
    jobs.reconcile(store)
    job = jobs.get(store, args.job_id)
    train, evals = store.latest_metrics(job["id"], "train"), store.latest_metrics(job["id"], "eval")
    if args.json:
        json.dump({"job": job, "train": train, "eval": evals, "log_tail": jobs.log_tail(job["log_path"])},
                  sys.stdout, indent=2, default=str)
        print()
        return 0
    print(f"job {job['id']} ({job['kind']}, {job['name']}) on {job['target']}: {job['status']}, "
          f"{100 * (job['progress'] or 0):.0f}% done")
    print(f"started {_when(job['started_at'])}, ended {_when(job['ended_at'])}, pid {job['pid'] or '-'}")
    for key in ("run_dir", "log_path"):
        if job.get(key):
            print(f"{key}: {job[key]}")
    if job.get("result"):
        print("result: " + json.dumps(job["result"]))
    if job.get("error") and job["status"] != "failed":
        print(f"note: {job['error']}")
    for title, values in (("latest train metrics", train), ("eval metrics", evals)):
        if values:
            print(f"{title}:")
            for name, value in list(values.items())[:METRIC_LINES]:
                print(f"  {name}\t{value:.4g}")
    tail = jobs.log_tail(job["log_path"])
    print("log tail:\n" + (tail or "(empty)"))
    return 0


def _cancel(args: argparse.Namespace) -> int:
    job = jobs.cancel(_store(args), args.job_id, grace=args.grace)
    print(f"job {job['id']}: {job['status']}")
    return 0


def _launch(args: argparse.Namespace) -> int:
    path = Path(args.config)
    if not path.is_file():
        raise jobs.JobError(f"Config file {path} does not exist")
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise jobs.JobError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(config, dict):
        raise jobs.JobError(f"{path} must hold a mapping of config keys to values")
    store = _store(args)
    job_id = jobs.launch(store, args.kind, config, target=args.target, nproc=args.nproc, name=args.name,
                         flavor=args.flavor, image=args.image)
    print(job_id, flush=True)
    if not args.follow:
        return 0
    status = jobs.follow(store, job_id, sys.stdout)
    print(f"job {job_id}: {status}", file=sys.stderr)
    return 0 if status == "done" else 1


def add_jobs_parser(subparsers) -> None:
    """Register `jobs list|show|cancel|launch` (a `PARSER_BUILDERS` entry of `backend.cli`)."""
    parser = subparsers.add_parser("jobs", help="list, inspect, cancel and launch background jobs",
                                   description="Background jobs (training runs) recorded in the SQLite store.")
    actions = parser.add_subparsers(dest="action", required=True)
    db_help = "SQLite store (default: $COMPLAB_DB or workspace/lab.db)"

    listing = actions.add_parser("list", help="jobs, newest first")
    listing.add_argument("--kind", default=None, help="only this kind, e.g. train")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    show = actions.add_parser("show", help="status, progress, latest metrics and log tail of one job")
    show.add_argument("job_id", type=int)
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)

    stop = actions.add_parser("cancel", help="stop a queued or running job")
    stop.add_argument("job_id", type=int)
    stop.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL")
    stop.set_defaults(handler=_cancel)

    start = actions.add_parser("launch", help="start a job; prints its id")
    start.add_argument("kind", choices=list(jobs.CONFIG_KINDS))
    start.add_argument("--config", required=True, help="YAML file of config keys (see backend/train/config.py)")
    start.add_argument("--target", choices=jobs.TARGETS, default="local")
    start.add_argument("--nproc", type=int, default=1, help="processes for --target torchrun")
    start.add_argument("--flavor", default=None, help="GPU flavor for --target hf (default a10g-small)")
    start.add_argument("--image", default=None, help="docker image for --target hf (default $COMPLAB_HF_IMAGE)")
    start.add_argument("--name", default="", help="job name (default: the config's name)")
    start.add_argument("--follow", action="store_true",
                       help="print the job's log until it ends; exit 0 only if it is done")
    start.set_defaults(handler=_launch)

    for sub in (listing, show, stop, start):
        sub.add_argument("--db", default=None, help=db_help)
