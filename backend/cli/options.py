"""Options several subcommands share, defined once: where models run, how results print, which store, where a
job runs. Defaults come from the config dataclasses (`config_default`), never from a copy here."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

TARGETS = ("local", "torchrun", "hf", "slurm")


def config_default(config_class: type, name: str) -> Any:
    """The default of field `name` of a config dataclass (its factory's value for a list)."""
    for field in dataclasses.fields(config_class):
        if field.name == name:
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
            return field.default
    raise KeyError(f"{config_class.__name__} has no field {name!r}")


def add_device(parser: argparse.ArgumentParser) -> None:
    """--device and --precision: where and how a model runs."""
    parser.add_argument("--device", default=None, help="cuda, cuda:1, mps or cpu (default: the best available)")
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default=None,
                        help="default: bf16 (fp16 where the GPU lacks native bf16) autocast on GPU, fp32 on CPU; "
                             "scores are computed in fp32 either way")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_limit_and_data(parser: argparse.ArgumentParser) -> None:
    """--limit and --data-root: how much of which benchmark data."""
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N items per subset (quick looks; numbers not comparable)")
    parser.add_argument("--data-root", default=None,
                        help="benchmark data folder (default: the benchmarks_dir setting)")


def add_db(parser: argparse.ArgumentParser, path_type: type = str) -> None:
    parser.add_argument("--db", type=path_type, default=None, help="SQLite store (default: the db setting, "
                                                                   "$COMPLAB_DB)")


def add_target(parser: argparse.ArgumentParser, targets: tuple[str, ...] = TARGETS, flavor: bool = False) -> None:
    """--target, --nproc, --nodes and --gpus-per-node (and --flavor where Hugging Face Jobs may run it): where a job
    runs."""
    parser.add_argument("--target", choices=targets, default="local", help="where the job runs")
    parser.add_argument("--nproc", type=int, default=1, help="processes (GPUs) for --target torchrun")
    parser.add_argument("--nodes", type=int, default=1, help="nodes for --target slurm (a train job's DDP spans them)")
    parser.add_argument("--gpus-per-node", type=int, default=1,
                        help="GPUs (processes) per node for --target slurm; partition, account and time limit come "
                             "from the settings")
    if flavor:
        parser.add_argument("--flavor", default=None, help="GPU flavor for --target hf (default: the hf_flavor "
                                                           "setting; the image is the hf_image setting)")


def target_options(args: argparse.Namespace) -> dict:
    """The target's options from --nproc / --nodes / --gpus-per-node / --flavor, as `backend.jobs.submit` takes
    them."""
    if args.target == "torchrun":
        return {"nproc": args.nproc}
    if args.target == "slurm":
        return {"nodes": args.nodes, "gpus_per_node": args.gpus_per_node}
    flavor = getattr(args, "flavor", None)
    return {"flavor": flavor} if args.target == "hf" and flavor else {}


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, default=str)
    print()
