"""`python -m backend train`: run a training config in this process (resuming from the run's last checkpoint).

A config is a YAML file of `backend.train.config.TrainConfig` fields, overridden by ``--set key=value`` pairs.
To run it as a job instead (another target, cancel, resume from the UI): ``python -m backend jobs launch train``.
"""
from __future__ import annotations

import argparse
import json

from backend.train.config import load_config


def _train(args: argparse.Namespace) -> int:
    from backend.train.loop import train

    result = train(load_config(args.config, args.set))
    print(json.dumps(result, indent=2))
    return 0


def add_parsers(subparsers) -> None:
    train = subparsers.add_parser("train", help="finetune a model (NegCLIP, CE-CLIP, HP+HN, TROHN-Img, CLIP)",
                                  description="Run a training config; resumes from the run's last checkpoint.")
    train.add_argument("--config", help="YAML file with TrainConfig fields")
    train.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                       help="override config fields (values read as YAML)")
    train.set_defaults(handler=_train)
