"""`python -m backend train | shards | export-merged`: run a training config in this process (resuming from the
run's last checkpoint), write training data as shards, merge a LoRA checkpoint into a plain one.

A config is a YAML file of `backend.train.config.TrainConfig` fields, overridden by ``--set key=value`` pairs.
To run it as a job instead (another target, cancel, resume from the UI): ``python -m backend jobs launch train``.
"""
from __future__ import annotations

import argparse
import json
import sys

from backend.cli.options import config_default
from backend.train.config import TrainConfig, load_config


def _train(args: argparse.Namespace) -> int:
    from backend.train import history
    from backend.train.loop import train

    result = train(load_config(args.config, args.set))
    print(json.dumps(result, indent=2))
    against = history.against_base(result.get("baseline_metrics") or {}, result.get("final_metrics") or {})
    if against:  # on stderr: stdout stays one JSON document
        print("against the base model (evaluated at step 0; percent):", file=sys.stderr)
        for line in history.summary_lines(against):
            print(f"  {line}", file=sys.stderr)
    return 0


def _shards(args: argparse.Namespace) -> int:
    from backend.train.shard_writer import write_shards

    index = write_shards(args.source, args.out, args.shard_size, args.families, args.seed)
    print(f"{index['rows']} rows in {len(index['shards'])} shard(s) in {args.out}"
          + (f"; skipped {index['skipped']}" if index["skipped"] else ""))
    return 0


def _export_merged(args: argparse.Namespace) -> int:
    from backend.core.settings import get_settings
    from backend.models.loading import export_merged

    print(export_merged(args.checkpoint, args.name, args.models_dir or get_settings().models_dir))
    return 0


def add_parsers(subparsers) -> None:
    train = subparsers.add_parser("train", help="finetune a model (NegCLIP, CE-CLIP, HP+HN, TROHN-Img, CLIP)",
                                  description="Run a training config; resumes from the run's last checkpoint.")
    train.add_argument("--config", help="YAML file with TrainConfig fields")
    train.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                       help="override config fields (values read as YAML)")
    train.set_defaults(handler=_train)

    shards = subparsers.add_parser(
        "shards", help="write a manifest or a BiVLC-style dataset folder as WebDataset shards for training",
        description="Write training data as WebDataset tar shards (each image stored once, with its captions, "
                    "negatives, positives and negative images); train on them with data=shards shards=OUT.")
    shards.add_argument("source", help="a manifest (CSV/JSONL/JSON) or a `save_to_disk` folder in BiVLC's schema "
                                       "(a campaign export)")
    shards.add_argument("out", help="a new (or empty) folder for the shards")
    shards.add_argument("--shard-size", type=int, default=1000, help="rows per shard (whole images kept together)")
    shards.add_argument("--families", nargs="+", default=config_default(TrainConfig, "families"),
                        help="perturbation families of the generated hard negatives (rows without their own)")
    shards.add_argument("--seed", type=int, default=config_default(TrainConfig, "seed"))
    shards.set_defaults(handler=_shards)

    merged = subparsers.add_parser("export-merged", help="merge a LoRA checkpoint into its base: a plain checkpoint")
    merged.add_argument("checkpoint", metavar="SPEC", help="the LoRA checkpoint (local-dir:.../checkpoints/best)")
    merged.add_argument("--name", required=True)
    merged.add_argument("--models-dir", default=None, help="default: the models_dir setting")
    merged.set_defaults(handler=_export_merged)
