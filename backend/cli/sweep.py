"""`python -m backend sweep-export JOB`: a finished sweep job's results as files (the Sweep tab's download), and the
``--csv``/``--figure`` options the in-process ``sweep`` command shares with it (`backend.patching.exports`)."""
from __future__ import annotations

import argparse
import sys

from backend import jobs
from backend.cli import options
from backend.core.store import Store


def add_export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--csv", default=None, metavar="PATH", help="write every metric per alpha as CSV (percent)")
    parser.add_argument("--figure", nargs="+", default=[], metavar="PATH",
                        help="write the trade-off figure: a .png or .svg file (several paths: several formats)")


def check_exports(args: argparse.Namespace) -> None:
    """Refuse a figure path that names no known format before any work (a sweep's results are not lost to a typo)."""
    from backend.patching.exports import FIGURE_SUFFIXES

    for path in args.figure:
        if not path.lower().endswith(FIGURE_SUFFIXES):
            raise ValueError(f"--figure {path!r}: name a .png or .svg file")


def write_exports(args: argparse.Namespace, result: dict) -> None:
    """The files `--csv` and `--figure` ask for, each path printed once written (on stderr: stdout may be JSON)."""
    from backend.patching import exports

    written = [exports.write_csv(result, args.csv)] if args.csv else []
    written += [exports.write_figure(result, path) for path in args.figure]
    for path in written:
        print(f"wrote {path}", file=sys.stderr)


def _export(args: argparse.Namespace) -> int:
    check_exports(args)
    job = jobs.get(Store(args.db), args.job_id)
    if job["kind"] != "sweep":
        raise ValueError(f"job {job['id']} is a {job['kind']} job, not a sweep")
    result = jobs.result_of(job)
    if not result.get("rows"):
        raise ValueError(f"sweep {job['id']} is {job['status']}: its results export once it is done")
    if not (args.csv or args.figure):
        raise ValueError("name what to write: --csv PATH and/or --figure PATH.png/.svg")
    write_exports(args, result)
    return 0


def add_parsers(subparsers) -> None:
    export = subparsers.add_parser("sweep-export", help="a finished sweep job's results as CSV and a PNG/SVG figure",
                                   description="Write a sweep job's table (every metric per alpha, the recommended "
                                               "one marked) and its trade-off figure, as the Sweep tab downloads them.")
    export.add_argument("job_id", type=int, help="the sweep job (`jobs list --kind sweep`)")
    add_export_options(export)
    options.add_db(export)
    export.set_defaults(handler=_export)
