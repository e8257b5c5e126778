"""`python -m backend ...`: the command-line face of everything the app does, one module per subcommand.

Each module has ``add_parsers(subparsers)``; plug-ins add theirs through `backend.plugins` (the built-in world's
``pretrain`` and ``finetune``). Handlers import torch and open_clip inside themselves, so ``--help`` and the
job commands answer at once. Input the user must fix (a `ValueError`, a refusal) is printed as ``error: ...``
with exit code 2, never a traceback.
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence

from backend import plugins
from backend.cli import benchmarks, campaign, jobs, probe, reproduce, settings, sweep, train
from backend.core.auth import PermissionDenied
from backend.core.store import damaged

COMMANDS = (probe, benchmarks, reproduce, sweep, train, jobs, settings, campaign)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m backend", description="Compositionality Lab: probe, benchmark and finetune CLIP-like models.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_parsers(subparsers)
    for add_parsers in plugins.hooks().commands:
        plugins.resolve(add_parsers)(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, PermissionDenied) as error:  # input errors (ProbeInputError is one) are the user's to fix
        print(f"error: {error}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as error:  # a store damaged where opening it did not look
        print(f"error: {damaged(None, f'SQLite: {error}')}", file=sys.stderr)
        return 2
